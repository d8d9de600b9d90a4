"""Pictures, PDFs and voice notes through the running server: a ``FILE`` webhook becomes a turn whose
model request carries the file as the model's own input (a picture made at most 2,048 px, a PDF as a
document, a voice note as words); a file it cannot take gets a short answer and nothing else is lost;
a URL off the file hosts is never fetched; history keeps a line in place of the bytes."""

from __future__ import annotations

import io
from collections.abc import AsyncIterator
from typing import Any

import pytest
from PIL import Image
from pydantic_ai.messages import (
    BinaryContent,
    ModelMessage,
    ModelRequest,
    ModelResponse,
    TextPart,
    ToolCallPart,
    ToolReturnPart,
    UserPromptPart,
)
from pydantic_ai.models.function import AgentInfo, FunctionModel

from tests.channels.test_images import png_claiming
from tests.fakes.files import FILES_TOKEN, FakeFiles
from tests.fakes.transcription import FakeTranscription, voice_note
from tests.support import BOT, CALENDAR_ARGS, JWT_SECRET, Harness, file_payload, served
from truloop_assistant.auth import issue_token
from truloop_assistant.store.history import History


def picture(width: int, height: int, kind: str = "JPEG") -> bytes:
    out = io.BytesIO()
    Image.new("RGB", (width, height), (200, 120, 40)).save(out, format=kind)
    return out.getvalue()


PDF = b"%PDF-1.4\n1 0 obj << /Type /Catalog >> endobj\ntrailer << /Root 1 0 R >>\n%%EOF\n"


class SeeingModel:
    """Answers what it was sent: each model request's user content is kept."""

    def __init__(self) -> None:
        self.sent: list[list[Any]] = []

    def model(self) -> FunctionModel:
        def answer(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
            last = messages[-1]
            assert isinstance(last, ModelRequest)
            prompt = next(p for p in reversed(last.parts) if isinstance(p, UserPromptPart))
            content = [prompt.content] if isinstance(prompt.content, str) else list(prompt.content)
            self.sent.append(content)
            text = " ".join(c for c in content if isinstance(c, str))
            files = [c for c in content if isinstance(c, BinaryContent)]
            return ModelResponse(parts=[TextPart(f"got {len(files)} file(s): {text[:120]}")])

        return FunctionModel(answer)

    def binaries(self, request: int = -1) -> list[BinaryContent]:
        return [c for c in self.sent[request] if isinstance(c, BinaryContent)]


@pytest.fixture
async def files() -> AsyncIterator[FakeFiles]:
    async with served(FakeFiles()) as fake:
        yield fake


def _host(fake: FakeFiles) -> str:
    return fake.url.removeprefix("http://")


async def _answered(h: Harness, channel: str = "ch-1") -> list[str]:
    await h.replies(1, channel)
    await h.idle()
    return h.texts(channel)


async def test_a_picture_that_needs_auth_reaches_the_model_as_an_image(
    start_server: Any, files: FakeFiles
) -> None:
    model = SeeingModel()
    url = files.put("/ap-2/photo.jpg", picture(640, 480), content_type="image/jpeg", needs_token=True)
    async with start_server(model=model.model(), sendbird_file_hosts=_host(files)) as h:
        payload = file_payload(url, name="poster.jpg", require_auth=True, text="이거 일정에 넣어줘")
        assert (await h.post_webhook(payload)).status_code == 200
        [answer] = await _answered(h)
    [image] = model.binaries()
    assert image.is_image and image.media_type == "image/jpeg"
    assert Image.open(io.BytesIO(image.data)).size == (640, 480)
    [(_, headers)] = files.requests
    assert headers["api-token"] == FILES_TOKEN  # the key went with the one request, to the file's host
    assert "이거 일정에 넣어줘" in model.sent[-1][0] and "poster.jpg" in model.sent[-1][0]
    assert answer.startswith("got 1 file(s)")


async def test_a_large_picture_reaches_the_model_at_most_2048_px_with_its_shape_kept(
    start_server: Any, files: FakeFiles
) -> None:
    model = SeeingModel()
    sent = picture(3000, 2000, "PNG")
    url = files.put("/big.png", sent, content_type="image/png")
    async with start_server(model=model.model(), sendbird_file_hosts=_host(files)) as h:
        assert (
            await h.post_webhook(file_payload(url, name="big.png", media_type="image/png"))
        ).status_code == 200
        await _answered(h)
    [image] = model.binaries()
    width, height = Image.open(io.BytesIO(image.data)).size
    assert max(width, height) <= 2048 and (width, height) == (2048, 1365)
    assert len(image.data) < len(sent)


async def test_a_pdf_reaches_the_model_as_a_document_and_history_keeps_a_line_not_its_bytes(
    start_server: Any, files: FakeFiles
) -> None:
    model = SeeingModel()
    url = files.put("/invitation.pdf", PDF, content_type="application/pdf")
    async with start_server(model=model.model(), sendbird_file_hosts=_host(files)) as h:
        payload = file_payload(url, name="invitation.pdf", media_type="application/pdf", message_id=77)
        assert (await h.post_webhook(payload)).status_code == 200
        await _answered(h)
        history = await History(h.redis, max_messages=50).load("ch-1", "jeff")
    [document] = model.binaries()
    assert document.is_document and document.media_type == "application/pdf" and document.data == PDF
    prompt = next(p for p in history[0].parts if isinstance(p, UserPromptPart))
    assert not any(isinstance(c, BinaryContent) for c in prompt.content)  # no bytes in Redis
    assert "invitation.pdf" in str(prompt.content) and "file:77:0 not kept: application/pdf" in str(
        prompt.content
    )


@pytest.mark.parametrize(
    ("served_as", "refused_in"),
    [
        ({"data": b"\x00" * (21 * 1024 * 1024), "content_type": "image/png"}, "too big"),
        ({"data": b"MZ\x90\x00" + b"\x00" * 200, "content_type": "image/png"}, "can't read"),
        ({"data": png_claiming(100_000, 100_000), "content_type": "image/png"}, "too big"),
    ],
    ids=["21 MiB", "an executable named .png", "a decompression bomb"],
)
async def test_a_file_it_cannot_take_gets_a_short_answer_and_the_caption_is_still_answered(
    start_server: Any, files: FakeFiles, served_as: dict[str, Any], refused_in: str
) -> None:
    model = SeeingModel()
    url = files.put("/photo.png", **served_as)
    async with start_server(model=model.model(), sendbird_file_hosts=_host(files)) as h:
        payload = file_payload(url, name="photo.png", media_type="image/png", text="what is this?")
        assert (await h.post_webhook(payload)).status_code == 200
        await h.replies(2)
        await h.idle()
        said = h.texts("ch-1")
    assert any(refused_in in line and "photo.png" in line for line in said)
    assert model.binaries() == [] and "what is this?" in model.sent[-1][0]  # the words still went
    assert len(said) == 2


async def test_a_url_off_the_file_hosts_is_never_fetched(start_server: Any, files: FakeFiles) -> None:
    model = SeeingModel()
    async with served(FakeFiles()) as elsewhere:
        url = elsewhere.put("/photo.jpg", picture(64, 64))
        async with start_server(model=model.model(), sendbird_file_hosts=_host(files)) as h:
            assert (await h.post_webhook(file_payload(url, name="photo.jpg"))).status_code == 200
            [said] = await _answered(h)
        assert elsewhere.requests == []  # nothing was asked of it
    assert "photo.jpg" in said and model.sent == []  # a file alone, not taken: no model request


async def test_a_redirect_off_the_file_hosts_is_not_followed(start_server: Any, files: FakeFiles) -> None:
    async with served(FakeFiles()) as elsewhere:
        target = elsewhere.put("/photo.jpg", picture(64, 64))
        url = files.redirect("/moved.jpg", target)
        async with start_server(model=SeeingModel().model(), sendbird_file_hosts=_host(files)) as h:
            assert (await h.post_webhook(file_payload(url, name="moved.jpg"))).status_code == 200
            await _answered(h)
        assert elsewhere.requests == []


async def test_a_voice_note_is_transcribed_and_answered_as_words(
    start_server: Any, files: FakeFiles, monkeypatch: pytest.MonkeyPatch
) -> None:
    model = SeeingModel()
    url = files.put("/voice.m4a", voice_note("내일 오후 세시에 회의 잡아줘", "m4a"), content_type="audio/m4a")
    async with served(FakeTranscription()) as heard:
        for name, value in heard.env().items():
            monkeypatch.setenv(name, value)
        settings = {
            "sendbird_file_hosts": _host(files),
            "transcription_model": "openai:gpt-4o-mini-transcribe",
        }
        async with start_server(model=model.model(), **settings) as h:
            payload = file_payload(url, name="voice.m4a", media_type="audio/m4a")
            assert (await h.post_webhook(payload)).status_code == 200
            [answer] = await _answered(h)
    assert model.sent[-1] == ["(voice note) 내일 오후 세시에 회의 잡아줘"]  # words, no audio
    assert "내일 오후 세시에 회의 잡아줘" in answer


async def test_a_voice_note_without_a_transcriber_gets_a_short_answer(
    start_server: Any, files: FakeFiles
) -> None:
    model = SeeingModel()
    url = files.put("/voice.m4a", voice_note("hello", "m4a"), content_type="audio/m4a")
    async with start_server(model=model.model(), sendbird_file_hosts=_host(files)) as h:
        assert (
            await h.post_webhook(file_payload(url, name="voice.m4a", media_type="audio/m4a"))
        ).status_code == 200
        [said] = await _answered(h)
    assert "voice" in said and model.sent == []


async def test_a_picture_sent_again_by_sendbird_is_one_turn(start_server: Any, files: FakeFiles) -> None:
    model = SeeingModel()
    url = files.put("/photo.jpg", picture(64, 64))
    async with start_server(model=model.model(), sendbird_file_hosts=_host(files)) as h:
        payload = file_payload(url, message_id=31)
        statuses = [(await h.post_webhook(payload)).json()["status"] for _ in range(2)]
        await _answered(h)
    assert statuses == ["queued", "duplicate"] and len(model.sent) == 1 and len(files.requests) == 1


async def test_in_a_group_a_picture_goes_only_to_its_senders_next_mention(
    start_server: Any, files: FakeFiles
) -> None:
    model = SeeingModel()
    url = files.put("/poster.jpg", picture(300, 400))
    group = {"members": ["jeff", "mina", BOT], "channel": "g-1"}
    async with start_server(model=model.model(), sendbird_file_hosts=_host(files)) as h:
        unmentioned = file_payload(url, name="poster.jpg", message_id=500, **group)
        assert (await h.post_webhook(unmentioned)).json() == {"status": "ignored"}
        assert (
            await h.user_says("@bot what is on?", user="mina", mentions=[BOT], **group)
        ).status_code == 200
        await h.replies(1, "g-1")
        assert model.binaries() == []  # mina's turn never sees jeff's picture
        assert (await h.user_says("@bot add this", mentions=[BOT], **group)).status_code == 200
        await h.replies(2, "g-1")
        await h.idle()
        [image] = model.binaries()
        assert image.is_image and "add this" in model.sent[-1][0] and "poster.jpg" in model.sent[-1][0]
        assert (await h.user_says("@bot and now?", mentions=[BOT], **group)).status_code == 200
        await h.replies(3, "g-1")
        assert model.binaries() == []  # taken once


async def test_the_offline_model_says_what_it_was_sent_and_that_it_cannot_look_at_it(
    start_server: Any, files: FakeFiles
) -> None:
    url = files.put("/poster.png", picture(200, 200, "PNG"))
    async with start_server(sendbird_file_hosts=_host(files)) as h:  # the offline model
        assert (
            await h.post_webhook(file_payload(url, name="poster.png", media_type="image/png"))
        ).status_code == 200
        [said] = await _answered(h)
    assert "poster.png" in said and "can't look at pictures" in said


async def test_erasing_me_forgets_the_files_i_sent(start_server: Any, files: FakeFiles) -> None:
    url = files.put("/secret-receipt.jpg", picture(100, 100))
    group = {"members": ["jeff", "mina", BOT], "channel": "g-2"}
    async with start_server(model=SeeingModel().model(), sendbird_file_hosts=_host(files)) as h:
        assert (await h.post_webhook(file_payload(url, name="secret-receipt.jpg"))).status_code == 200
        await _answered(h)
        await h.post_webhook(file_payload(url, name="secret-receipt.jpg", message_id=600, **group))
        token = issue_token(JWT_SECRET, "jeff")
        r = await h.http.delete("/api/v1/agent/me", headers={"authorization": f"Bearer {token}"})
        assert r.status_code == 204
        left = [key async for key in h.redis.scan_iter() if await _holds(h, key, b"secret-receipt")]
    assert left == []


async def _holds(h: Harness, key: bytes, needle: bytes) -> bool:
    kind = await h.redis.type(key)
    if kind == b"string":
        value = await h.redis.get(key)
        return value is not None and needle in value
    if kind == b"list":
        return any(needle in item for item in await h.redis.lrange(key, 0, -1))
    if kind == b"hash":
        return any(needle in v for v in (await h.redis.hgetall(key)).values())
    if kind == b"zset":
        return any(needle in m for m in await h.redis.zrange(key, 0, -1))
    if kind == b"set":
        return any(needle in m for m in await h.redis.smembers(key))
    return False


async def test_a_turn_that_waits_for_the_phone_sees_its_picture_again_when_it_resumes(
    start_server: Any, files: FakeFiles
) -> None:
    seen: list[int] = []  # pictures in each model request's messages

    def fn(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        seen.append(
            sum(
                1
                for m in messages
                if isinstance(m, ModelRequest)
                for p in m.parts
                if isinstance(p, UserPromptPart) and not isinstance(p.content, str)
                for c in p.content
                if isinstance(c, BinaryContent)
            )
        )
        if any(isinstance(p, ToolReturnPart) for p in messages[-1].parts):
            return ModelResponse(parts=[TextPart("free then")])
        return ModelResponse(parts=[ToolCallPart("get_calendar_events", CALENDAR_ARGS)])

    url = files.put("/poster.jpg", picture(800, 600))
    async with start_server(model=FunctionModel(fn), sendbird_file_hosts=_host(files)) as h:
        assert (
            await h.post_webhook(file_payload(url, name="poster.jpg", text="am I free?"))
        ).status_code == 200
        [rpc] = await h.rpc_requests(1)
        paused = [await h.redis.hgetall(k) async for k in h.redis.scan_iter(match="*:turn:*")]
        assert paused and not any(b"base64" in v or len(v) > 100_000 for t in paused for v in t.values())
        assert (await h.answer(rpc["id"], result={"events": []})).status_code == 202
        [answer] = await _answered(h)
    assert seen == [1, 1] and answer == "free then"  # the resume read the picture again
    assert len(files.requests) == 2

"""The dev chat's files: a picture, PDF or voice note is kept, posted as a message's files, queued with
the turn and served back typed by its bytes; too big a file, or a message of nothing, is refused.

The conversation's drain is held elsewhere while a test looks, so what was queued stays in the inbox
to be read (what the worker then makes of a file is not what these tests are about).
"""

from __future__ import annotations

import struct
import zlib
from typing import Any

from tests.support import Harness
from truloop_assistant.protocol.files import Attachment
from truloop_assistant.store import keys
from truloop_assistant.store.inbox import MessageEvent

CHANNEL = "demo"
PDF = b"%PDF-1.4\n1 0 obj << /Type /Catalog >> endobj\ntrailer << /Root 1 0 R >>\n%%EOF\n"


def png(width: int = 2, height: int = 2) -> bytes:
    """A real PNG picture (grey pixels), as a phone's photo would be one, only smaller."""

    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))

    rows = b"".join(b"\x00" + b"\x80" * width for _ in range(height))
    header = struct.pack(">IIBBBBB", width, height, 8, 0, 0, 0, 0)
    return (
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", header)
        + chunk(b"IDAT", zlib.compress(rows))
        + chunk(b"IEND", b"")
    )


async def hold_the_drain(h: Harness, channel: str = CHANNEL) -> None:
    """Another drain owns the conversation: what is queued waits in its inbox."""
    await h.redis.set(keys.owner(keys.conversation_tag(channel)), "drain:elsewhere", px=60_000)


async def inbox(h: Harness, channel: str = CHANNEL) -> list[MessageEvent]:
    raw = await h.redis.lrange(keys.inbox(keys.conversation_tag(channel)), 0, -1)
    return [MessageEvent.model_validate_json(r) for r in raw]


async def upload(
    h: Harness, data: bytes, *, name: str, stated: str, channel: str = CHANNEL
) -> dict[str, Any]:
    r = await h.http.post(
        f"/dev/api/channels/{channel}/uploads",
        params={"name": name},
        content=data,
        headers={"content-type": stated},
    )
    assert r.status_code == 201, r.text
    return r.json()


async def post(h: Harness, body: dict[str, Any], channel: str = CHANNEL) -> Any:
    return await h.http.post(f"/dev/api/channels/{channel}/messages", json={"user_id": "jeff", **body})


async def listed(h: Harness, channel: str = CHANNEL) -> list[dict[str, Any]]:
    return (await h.http.get(f"/dev/api/channels/{channel}/messages")).json()["messages"]


def served_at(url: str, channel: str = CHANNEL) -> str:
    return f"/dev/api/channels/{channel}/uploads/{url.removeprefix('upload:')}"


async def test_a_picture_with_a_caption_is_one_turn_that_carries_it(start_server: Any) -> None:
    picture = png()
    async with start_server(channel="local") as h:
        await hold_the_drain(h)
        kept = await upload(h, picture, name="IMG_0412.png", stated="image/png")
        assert kept["media_type"] == "image/png"
        file = kept["file"]
        assert file["url"].startswith("upload:") and file["size"] == len(picture)

        r = await post(h, {"message": "what is in this picture?", "files": [file]})
        assert r.status_code == 202 and r.json()["status"] == "queued", r.text
        message_id = r.json()["message_id"]

        [event] = await inbox(h)
        attachment = Attachment(
            url=file["url"], name="IMG_0412.png", stated_type="image/png", size=len(picture)
        )
        assert (event.message_id, event.text, event.files) == (
            message_id,
            "what is in this picture?",
            [attachment],
        )
        # The page lists the message with its file, and gets the picture back to show it.
        [shown] = await listed(h)
        assert shown["message"] == "what is in this picture?"
        assert shown["files"] == [attachment.model_dump(exclude={"require_auth"})]
        back = await h.http.get(served_at(file["url"]))
        assert back.status_code == 200 and back.content == picture
        assert back.headers["content-type"] == "image/png"
        assert back.headers["x-content-type-options"] == "nosniff"


async def test_a_file_is_served_as_its_bytes_say_and_only_in_its_own_channel(start_server: Any) -> None:
    async with start_server(channel="local") as h:
        await hold_the_drain(h)
        # A PDF named and stated as a picture is a PDF.
        disguised = await upload(h, PDF, name="photo.png", stated="image/png")
        assert disguised["media_type"] == "application/pdf"
        back = await h.http.get(served_at(disguised["file"]["url"]))
        assert back.headers["content-type"] == "application/pdf" and back.content == PDF
        # Bytes of no type the assistant reads are kept, and served to be saved, never shown.
        program = await upload(h, b"MZ\x90\x00" + b"\x00" * 60, name="cat.jpg", stated="image/jpeg")
        assert program["media_type"] is None
        back = await h.http.get(served_at(program["file"]["url"]))
        assert back.headers["content-type"] == "application/octet-stream"
        assert back.headers["content-disposition"] == "attachment"
        assert back.headers["x-content-type-options"] == "nosniff"

        # A message of files alone (no caption) is a turn; the sizes are the kept files'.
        files = [disguised["file"], {**program["file"], "size": 1}]
        r = await post(h, {"files": files})
        assert r.status_code == 202 and r.json()["status"] == "queued", r.text
        [event] = await inbox(h)
        assert event.text == "" and [(f.name, f.size) for f in event.files or []] == [
            ("photo.png", len(PDF)),
            ("cat.jpg", 64),
        ]

        # Another channel can neither show nor send this channel's files.
        elsewhere = await h.http.get(served_at(disguised["file"]["url"], channel="team"))
        assert elsewhere.status_code == 404 and elsewhere.json()["error"]["code"] == "unknown_upload"
        r = await post(h, {"message": "look", "files": [disguised["file"]]}, channel="team")
        assert r.status_code == 400 and r.json()["error"]["code"] == "unknown_upload"
        assert await listed(h, "team") == [] and await inbox(h, "team") == []
        # Nor does a made-up URL, or one that is not an upload, pass.
        for url in ("upload:nosuchfile", "https://example.com/a.png"):
            r = await post(h, {"message": "look", "files": [{"url": url}]})
            assert r.status_code == 400, r.text
        assert len(await listed(h)) == 1


async def test_too_big_a_file_and_a_message_of_nothing_are_refused_and_nothing_is_queued(
    start_server: Any,
) -> None:
    async with start_server(channel="local", max_file_bytes=1024) as h:
        await hold_the_drain(h)
        info = (await h.http.get("/dev/api/info")).json()
        assert info["max_file_bytes"] == 1024  # the page refuses a bigger file before sending it

        big = png() + b"\x00" * 1024
        r = await h.http.post(
            f"/dev/api/channels/{CHANNEL}/uploads", content=big, headers={"content-type": "image/png"}
        )
        assert r.status_code == 413, r.text
        error = r.json()["error"]
        assert error["code"] == "file_too_large" and "1024 bytes" in error["message"]
        assert [k async for k in h.redis.scan_iter(match="*:upload:*")] == []
        empty = await h.http.post(f"/dev/api/channels/{CHANNEL}/uploads", content=b"")
        assert empty.status_code == 400 and empty.json()["error"]["code"] == "empty_file"

        for body in ({}, {"message": ""}, {"message": "", "files": []}):
            r = await post(h, body)
            assert r.status_code == 400 and r.json()["error"]["code"] == "empty_message", r.text
        eleven = [(await upload(h, png(), name=f"{i}.png", stated="image/png"))["file"] for i in range(11)]
        assert len([k async for k in h.redis.scan_iter(match="*:upload:*")]) == 11
        r = await post(h, {"message": "all of them", "files": eleven})
        assert r.status_code == 400 and r.json()["error"]["code"] == "invalid_request"

        assert await listed(h) == [] and await inbox(h) == []
        # The page still sends what fits.
        r = await post(h, {"message": "just these", "files": eleven[:10]})
        assert r.status_code == 202 and r.json()["status"] == "queued"
        [event] = await inbox(h)
        assert len(event.files or []) == 10

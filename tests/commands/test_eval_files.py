"""``eval`` with files: a case sends a picture or a voice note, read as the server reads a person's."""

from __future__ import annotations

import io
import json
from collections.abc import AsyncIterator
from pathlib import Path
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
    UserPromptPart,
)
from pydantic_ai.models.function import AgentInfo, FunctionModel

from tests.commands.test_eval import cases_file, returned, tomorrow_at, use_model
from tests.fakes.transcription import FakeTranscription, voice_note
from tests.support import served
from truloop_assistant.agent.agents import build_member_agent
from truloop_assistant.backends.events import RedisEventStore
from truloop_assistant.backends.transcription import audio_format
from truloop_assistant.cli import main
from truloop_assistant.commands.evaluation.case_files import EVAL_FILES
from truloop_assistant.commands.evaluation.cases import DEFAULT_CASES, EvalDataset, load_cases, member_tools
from truloop_assistant.commands.evaluation.played_files import NO_TRANSCRIBER
from truloop_assistant.commands.evaluation.running import evaluate
from truloop_assistant.commands.evaluation.scoring import Answered, KeyArguments, ToolSelection, outcomes
from truloop_assistant.config import load_settings
from truloop_assistant.local.embedded_redis import RedisServer
from truloop_assistant.redis_client import connect

POSTER_EVENT = {
    "title": "Design Review",
    "start_time": "2027-12-09T15:00:00+09:00",
    "end_time": "2027-12-09T16:00:00+09:00",
    "location": "Room 4B, Gangnam Office",
}
"""What the bundled poster says, as a model that read it would book it."""
SPOKEN = "내일 오후 네 시에 디자인 리뷰 잡아줘"
EVALUATORS = [ToolSelection(), KeyArguments(), Answered()]


def picture(width: int, height: int) -> bytes:
    out = io.BytesIO()
    Image.new("RGB", (width, height), (200, 120, 40)).save(out, format="JPEG")
    return out.getvalue()


def user_prompt(messages: list[ModelMessage]) -> str | list[Any]:
    """What the run was given as the user's message."""
    [part] = [
        p for m in messages if isinstance(m, ModelRequest) for p in m.parts if isinstance(p, UserPromptPart)
    ]
    return part.content if isinstance(part.content, str) else list(part.content)


class Booker:
    """Books ``event`` once it was sent what ``sees`` accepts, then says so; keeps every prompt it got."""

    def __init__(self, sees: Any, event: dict[str, Any]) -> None:
        self.sees, self.event = sees, event
        self.prompts: list[str | list[Any]] = []

    def model(self) -> FunctionModel:
        def answer(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
            results = returned(messages)
            if "create_event" in results:
                return ModelResponse(parts=[TextPart(f"Added: {json.dumps(results['create_event'])}")])
            prompt = user_prompt(messages)
            self.prompts.append(prompt)
            if not self.sees(prompt):
                return ModelResponse(parts=[TextPart("I could not tell what to add.")])
            return ModelResponse(parts=[ToolCallPart("create_event", self.event)])

        return FunctionModel(answer)


def pictures(prompt: str | list[Any]) -> list[BinaryContent]:
    return [part for part in prompt if isinstance(part, BinaryContent)] if isinstance(prompt, list) else []


def shows_a_picture(prompt: str | list[Any]) -> bool:
    return any(part.is_image for part in pictures(prompt))


def bundled(agent: Any, text: str) -> EvalDataset:
    """The bundled case whose request is ``text`` (or shows ``text``), alone."""
    dataset = load_cases(DEFAULT_CASES, member_tools(agent), EVALUATORS)
    dataset.cases = [case for case in dataset.cases if case.inputs.shown == text]
    assert len(dataset.cases) == 1
    return dataset


def test_the_bundled_poster_and_voice_note_are_what_their_cases_send() -> None:
    poster = (EVAL_FILES / "poster.png").read_bytes()
    with Image.open(io.BytesIO(poster)) as image:
        assert (image.format, image.size) == ("PNG", (1000, 1400))
    assert len(poster) < 100_000
    found = audio_format((EVAL_FILES / "design_review.ogg").read_bytes())
    assert found is not None and found.extension == "ogg"


async def test_a_picture_case_sends_the_model_the_poster_and_the_event_it_says_is_created() -> None:
    booker = Booker(shows_a_picture, POSTER_EVENT)
    agent = build_member_agent(booker.model(), tool_timeout_s=5)
    dataset = bundled(agent, "이거 내 일정에 넣어줘 [picture poster.png]")
    with RedisServer() as server:
        report = await evaluate(
            dataset, agent, server.url, load_settings(channel="local", jwt_secret="s" * 32)
        )
        redis = connect(server.url)  # the only case ran on database 0, which keeps what it made
        try:
            made = await RedisEventStore(redis).list_events(
                "jeff", tomorrow_at(0), tomorrow_at(0).replace(year=2028)
            )
        finally:
            await redis.aclose()
    [outcome] = outcomes(report)
    assert outcome.passed, outcome.reason
    [prompt] = booker.prompts
    assert (
        isinstance(prompt, list)
        and prompt[0] == "이거 내 일정에 넣어줘\n[picture file:1:0 poster.png, 1000x1400]"
    )
    [poster] = pictures(prompt)
    assert poster.media_type == "image/png" and poster.data == (EVAL_FILES / "poster.png").read_bytes()
    # Played through the confirmation to the event, as the text cases are.
    assert outcome.turn is not None and outcome.turn.steps == 2
    review = next(event for event in made if event.title == "Design Review")
    assert review.start_time.isoformat() == POSTER_EVENT["start_time"]
    assert review.location == POSTER_EVENT["location"]


async def test_a_large_picture_reaches_the_model_scaled_as_the_server_scales_it(tmp_path: Path) -> None:
    (tmp_path / "whiteboard.jpg").write_bytes(picture(4000, 3000))
    booker = Booker(shows_a_picture, {**POSTER_EVENT, "title": "Whiteboard follow-up"})
    agent = build_member_agent(booker.model(), tool_timeout_s=5)
    case = {
        "group": "files",
        "request": "Put this on my calendar",
        "picture": "whiteboard.jpg",  # beside the cases file
        "expect": {"create_event": {"title": "whiteboard"}},
    }
    dataset = load_cases(cases_file(tmp_path, case), member_tools(agent), EVALUATORS)
    with RedisServer() as server:
        report = await evaluate(
            dataset, agent, server.url, load_settings(channel="local", jwt_secret="s" * 32)
        )
    [outcome] = outcomes(report)
    assert outcome.passed, outcome.reason
    [prompt] = booker.prompts
    assert prompt[0] == "Put this on my calendar\n[picture file:1:0 whiteboard.jpg, 2000x1500]"
    [sent] = pictures(prompt)
    with Image.open(io.BytesIO(sent.data)) as image:
        assert max(image.size) <= 2048 and image.size == (2000, 1500)  # decoded at half scale, 4:3 kept


@pytest.fixture
async def transcription(monkeypatch: pytest.MonkeyPatch) -> AsyncIterator[FakeTranscription]:
    async with served(FakeTranscription()) as fake:
        for name, value in fake.env().items():
            monkeypatch.setenv(name, value)
        yield fake


async def test_a_voice_case_is_heard_by_the_transcription_model_and_the_model_gets_the_words(
    tmp_path: Path, transcription: FakeTranscription
) -> None:
    (tmp_path / "note.m4a").write_bytes(voice_note(SPOKEN, "m4a"))
    event = {
        "title": "디자인 리뷰",
        "start_time": tomorrow_at(16).isoformat(),
        "end_time": tomorrow_at(17).isoformat(),
    }
    booker = Booker(lambda prompt: prompt == f"(voice note) {SPOKEN}", event)
    agent = build_member_agent(booker.model(), tool_timeout_s=5)
    case = {
        "group": "files",
        "voice": "note.m4a",
        "expect": {"create_event": {"title": "디자인 리뷰", "start_time": "T16:00"}},
    }
    dataset = load_cases(cases_file(tmp_path, case), member_tools(agent), EVALUATORS)
    settings = load_settings(
        channel="local", jwt_secret="s" * 32, transcription_model="openai:gpt-4o-mini-transcribe"
    )
    with RedisServer() as server:
        report = await evaluate(dataset, agent, server.url, settings)
    [outcome] = outcomes(report)
    assert outcome.passed, outcome.reason
    assert booker.prompts == [f"(voice note) {SPOKEN}"]  # the words, no audio
    [heard] = transcription.requests
    assert (heard["model"], heard["filename"]) == ("gpt-4o-mini-transcribe", "voice.m4a")


def test_without_a_transcription_model_a_voice_case_is_skipped_with_the_reason(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.delenv("TRULOOP_TRANSCRIPTION_MODEL", raising=False)
    (tmp_path / "note.m4a").write_bytes(voice_note(SPOKEN, "m4a"))
    event = {
        "title": "Focus",
        "start_time": tomorrow_at(16).isoformat(),
        "end_time": tomorrow_at(17).isoformat(),
    }
    booker = Booker(lambda prompt: True, event)
    use_model(monkeypatch, booker.model())
    path = cases_file(
        tmp_path,
        {"group": "files", "voice": "note.m4a", "expect": {"create_event": {}}},
        {"group": "events", "request": "Block tomorrow 4pm for focus", "expect": {"create_event": {}}},
    )
    out = tmp_path / "eval.json"
    assert main(["eval", "--model", "function", "--cases", str(path), "--json", str(out)]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert f'  skip  [files] "[voice note note.m4a]": {NO_TRANSCRIBER}' in lines
    assert lines[-2:] == ["events   1/1  100 %", "overall  1/1  100 %"]  # counted in no figure
    assert booker.prompts == ["Block tomorrow 4pm for focus"]  # the model never got the voice note
    voice, _ = json.loads(out.read_text(encoding="utf-8"))["cases"]
    assert voice["request"] == "" and voice["files"] == [{"kind": "voice", "name": "note.m4a"}]
    assert (voice["skipped"], voice["passed"], voice["reason"], voice["calls"]) == (
        True,
        False,
        NO_TRANSCRIBER,
        [],
    )


@pytest.mark.parametrize(
    ("case", "problem"),
    [
        ({"picture": "missing.png"}, "picture: no file 'missing.png' beside the cases file ("),
        ({"picture": "notes.txt"},
         "notes.txt is not a picture (JPEG, PNG, GIF, WebP or HEIC): its bytes are no type the server reads"),
        ({"voice": "poster.png"},
         "poster.png is not a recording (m4a, mp3, ogg/opus, wav, webm): its bytes are image/png"),
        ({"voice": {"words": "hi", "format": "m4a"}}, "voice: expected the name of a recording (m4a, mp3"),
        ({"picture": []}, "picture: expected the name of a picture"),
        ({}, "request: a non-empty text is required (it may be left out beside a picture or voice)"),
        ({"request": "hi", "pdf": "a.pdf"},
         "unknown key 'pdf' (a case has group, request, expect; optionally phone, picture, voice)"),
    ],
)  # fmt: skip
def test_a_bad_file_in_a_case_exits_2_naming_the_entry(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], case: dict[str, Any], problem: str
) -> None:
    (tmp_path / "notes.txt").write_text("not a picture")
    path = cases_file(tmp_path, {"group": "files", "expect": {}, **case})
    assert main(["eval", "--model", "offline", "--cases", str(path)]) == 2
    captured = capsys.readouterr()
    assert captured.out == "" and captured.err.count("\n") == 1
    assert captured.err.startswith(f"truloop-assistant eval: {path}: entry 0")
    assert problem in captured.err

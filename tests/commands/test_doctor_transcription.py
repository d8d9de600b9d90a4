"""``doctor`` asks the transcription endpoint for its model when ``TRULOOP_TRANSCRIPTION_MODEL`` is set."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from tests.commands.test_doctor import doctor
from tests.commands.test_doctor_embedding import local_env
from tests.fakes.transcription import FakeTranscription
from tests.support import served

MODEL = "openai:gpt-4o-mini-transcribe"


@pytest.fixture
async def fake() -> AsyncIterator[FakeTranscription]:
    async with served(FakeTranscription()) as fake:
        yield fake


async def test_the_key_and_the_model_are_accepted(
    tmp_path: Path, redis_url: str, fake: FakeTranscription
) -> None:
    code, lines = await doctor(
        tmp_path, **local_env(redis_url, TRULOOP_TRANSCRIPTION_MODEL=MODEL, **fake.env())
    )
    assert code == 0, lines
    assert lines[3] == (
        f"ok    transcription: {MODEL}: key accepted, model gpt-4o-mini-transcribe found "
        "(voice notes are read as text)"
    )
    assert fake.requests == []  # no audio was sent


async def test_a_refused_key_or_an_unknown_model_fails(
    tmp_path: Path, redis_url: str, fake: FakeTranscription
) -> None:
    env = local_env(redis_url, TRULOOP_TRANSCRIPTION_MODEL=MODEL, **fake.env())
    code, lines = await doctor(tmp_path, **{**env, "OPENAI_API_KEY": "sk-revoked"})
    assert code == 1, lines
    assert lines[3] == (
        f"FAIL  transcription: {MODEL}: the provider refused the key (401: Incorrect API key provided.): "
        "check OPENAI_API_KEY: fix TRULOOP_TRANSCRIPTION_MODEL or the provider's key (OPENAI_API_KEY, "
        "OPENAI_BASE_URL); until then voice notes get an answer saying they could not be read"
    )

    code, lines = await doctor(tmp_path, **{**env, "TRULOOP_TRANSCRIPTION_MODEL": "openai:whisper-9"})
    assert code == 1, lines
    assert lines[3].startswith(
        "FAIL  transcription: openai:whisper-9: the endpoint has no model 'whisper-9' (404)"
    )


async def test_without_a_transcription_model_there_is_no_transcription_line(
    tmp_path: Path, redis_url: str
) -> None:
    code, lines = await doctor(tmp_path, **local_env(redis_url))
    assert code == 0, lines
    assert not any("transcription" in line for line in lines)

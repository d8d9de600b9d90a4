"""Voice notes as text: OpenAI's transcription endpoint (the local fake, over real HTTP), and the setting.

The fake hears what ``voice_note`` put in the audio (``tests/fakes/transcription.py``).
"""

from __future__ import annotations

import time
from collections.abc import AsyncIterator

import pytest
from openai import AsyncOpenAI

from tests.fakes.transcription import TRANSCRIPTION_KEY, FakeTranscription, voice_note
from tests.support import JWT_SECRET, served
from truloop_assistant.backends.transcription import (
    MAX_AUDIO_BYTES,
    OpenAITranscriber,
    TranscriptionError,
    transcriber_for,
)
from truloop_assistant.config import ConfigError, Settings, load_settings

WORDS = "내일 오후 세 시에 민아랑 회의 잡아 줘"
PNG = b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" + b"\x00" * 64
ADTS_AAC = b"\xff\xf1\x50\x80\x02\x1f\xfc" + b"\x00" * 64
"""Raw AAC (an ADTS stream): audio, but none of the formats the endpoint takes."""
LOCAL = {"channel": "local", "jwt_secret": JWT_SECRET}
"""Settings that start without Sendbird."""


@pytest.fixture
async def fake() -> AsyncIterator[FakeTranscription]:
    async with served(FakeTranscription()) as fake:
        yield fake


def transcriber(
    fake: FakeTranscription,
    model: str = "gpt-4o-mini-transcribe",
    *,
    key: str = TRANSCRIPTION_KEY,
    timeout_s: float = 10.0,
) -> OpenAITranscriber:
    client = AsyncOpenAI(base_url=f"{fake.url}/v1", api_key=key)
    return OpenAITranscriber(model, client=client, timeout_s=timeout_s)


async def test_a_voice_note_comes_back_as_its_words(
    fake: FakeTranscription, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name, value in fake.env().items():  # the provider's own variables, as pydantic-ai reads them
        monkeypatch.setenv(name, value)
    settings = Settings(**LOCAL, transcription_model="openai:gpt-4o-mini-transcribe")
    found = transcriber_for(settings)
    assert found is not None and found.model == "openai:gpt-4o-mini-transcribe"

    transcript = await found.transcribe(voice_note(WORDS, "m4a"), "audio/m4a", language_hint="ko")
    assert transcript.text == WORDS
    [sent] = fake.requests
    assert sent["model"] == "gpt-4o-mini-transcribe" and sent["language"] == "ko"
    assert sent["filename"] == "voice.m4a"  # the endpoint reads the format from the name

    for kind in ("ogg", "mp3", "wav", "webm"):  # named by their bytes, whatever the media type says
        spoken = f"{kind} says hello"
        assert (await found.transcribe(voice_note(spoken, kind), "application/octet-stream",
                                       language_hint=None)).text == spoken  # fmt: skip
        assert fake.requests[-1]["filename"] == f"voice.{kind}" and "language" not in fake.requests[-1]


async def test_whisper_says_the_language_and_the_length(fake: FakeTranscription) -> None:
    transcript = await transcriber(fake, "whisper-1").transcribe(
        voice_note(WORDS, "ogg"), "audio/ogg; codecs=opus", language_hint="xx-not-a-code"
    )
    assert (transcript.text, transcript.language) == (WORDS, "korean")
    assert transcript.seconds == pytest.approx(len(WORDS.split()) * 0.4)
    assert "language" not in fake.requests[0]  # a hint that is no ISO 639-1 code is not sent


async def test_without_transcription_model_voice_notes_are_not_read() -> None:
    assert transcriber_for(Settings(**LOCAL, transcription_model="")) is None
    assert transcriber_for(Settings(**LOCAL)) is None


async def test_a_bad_key_is_a_clear_error(fake: FakeTranscription) -> None:
    with pytest.raises(TranscriptionError) as raised:
        await transcriber(fake, key="sk-revoked").transcribe(
            voice_note(WORDS), "audio/m4a", language_hint=None
        )
    assert raised.value.status == 401 and raised.value.sent
    assert str(raised.value) == (
        "openai:gpt-4o-mini-transcribe: the provider refused the key (401: Incorrect API key provided.): "
        "check OPENAI_API_KEY"
    )


async def test_no_key_at_all_is_said_before_anything_is_sent(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    with pytest.raises(TranscriptionError, match="no key: set OPENAI_API_KEY") as raised:
        await OpenAITranscriber("gpt-4o-mini-transcribe").transcribe(
            voice_note(WORDS), "audio/m4a", language_hint=None
        )
    assert not raised.value.sent


async def test_an_unsupported_format_is_refused_before_any_request(fake: FakeTranscription) -> None:
    found = transcriber(fake)
    for audio, media_type in ((PNG, "audio/m4a"), (ADTS_AAC, "audio/aac"), (b"", "audio/ogg")):
        with pytest.raises(TranscriptionError, match="is not audio the server reads") as raised:
            await found.transcribe(audio, media_type, language_hint=None)
        assert not raised.value.sent
    too_long = voice_note(WORDS) + b"\x00" * MAX_AUDIO_BYTES
    with pytest.raises(TranscriptionError, match="takes at most 25,000,000") as raised:
        await found.transcribe(too_long, "audio/m4a", language_hint=None)
    assert not raised.value.sent
    assert fake.requests == []


async def test_a_429_then_an_answer_is_retried_once(fake: FakeTranscription) -> None:
    fake.statuses = [429]
    assert (
        await transcriber(fake).transcribe(voice_note(WORDS), "audio/m4a", language_hint="ko")
    ).text == WORDS
    assert len(fake.requests) == 2

    fake.requests.clear()
    fake.statuses = [500, 500, 500]
    with pytest.raises(TranscriptionError) as raised:
        await transcriber(fake).transcribe(voice_note(WORDS), "audio/m4a", language_hint="ko")
    assert raised.value.status == 500 and "not answering (500: " in str(raised.value)
    assert str(raised.value).endswith(", twice")
    assert len(fake.requests) == 2  # one retry, never a third request
    assert fake.statuses == [500]


async def test_a_provider_that_hangs_times_out(fake: FakeTranscription) -> None:
    fake.hold = 1
    started = time.monotonic()
    with pytest.raises(TranscriptionError, match=r"no answer within 0\.5 s"):
        await transcriber(fake, timeout_s=0.5).transcribe(voice_note(WORDS), "audio/m4a", language_hint=None)
    assert fake.holding.is_set()
    assert time.monotonic() - started < 5


async def test_silence_is_no_transcript(fake: FakeTranscription) -> None:
    with pytest.raises(TranscriptionError, match="no words heard"):
        await transcriber(fake).transcribe(voice_note(""), "audio/m4a", language_hint=None)


def test_only_supported_providers_are_accepted_at_start() -> None:
    with pytest.raises(ConfigError) as raised:
        load_settings(build_models=False, **LOCAL, transcription_model="groq:whisper-large-v3")
    message = str(raised.value)
    assert "TRULOOP_TRANSCRIPTION_MODEL" in message
    assert "cannot transcribe with provider 'groq'; the supported providers are openai:" in message
    with pytest.raises(ConfigError, match="is not a transcription model: use provider:model"):
        load_settings(build_models=False, **LOCAL, transcription_model="gpt-4o-mini-transcribe")
    settings = load_settings(build_models=False, **LOCAL, transcription_model=" openai:whisper-1 ")
    assert settings.transcription_parts() == ("openai", "whisper-1")

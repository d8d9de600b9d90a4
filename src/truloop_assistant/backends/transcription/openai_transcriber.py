"""OpenAI's transcription endpoint (``POST /v1/audio/transcriptions``), through the ``openai`` SDK.

The client is the one pydantic-ai builds for the ``openai:`` models (``OPENAI_API_KEY``, and
``OPENAI_BASE_URL`` for an OpenAI-compatible endpoint), without the SDK's own retries: one voice note
gets at most two requests (a second after a 429 or a 5xx, soon), all within one time limit, so a
provider in trouble is not asked again and again while the person waits.

What is refused here, before anything is sent: bytes that are none of the accepted formats
(``formats.py``), and audio above :data:`MAX_AUDIO_BYTES` (OpenAI's reference: "File uploads are
currently limited to 25 MB"; the endpoint counts the whole request against 26,214,400 bytes, so the
audio keeps room for the form around it).
"""

from __future__ import annotations

import asyncio
import re
from typing import TYPE_CHECKING, Any

from .formats import NAMES, AudioFormat, audio_format, plain_media_type
from .port import Transcript, TranscriptionError

if TYPE_CHECKING:
    from openai import APIStatusError, AsyncOpenAI
    from openai.types.audio import Transcription, TranscriptionVerbose

MAX_AUDIO_BYTES = 25_000_000
"""The largest voice note sent (25 MB)."""
TIMEOUT_S = 30.0
"""The longest one voice note is waited for, retry included."""
RETRY_PAUSE_S = 0.5
"""The pause before the one retry, unless the provider's ``Retry-After`` asks for longer."""
MAX_RETRY_PAUSE_S = 2.0
"""The longest pause before the retry, whatever ``Retry-After`` says (the person is waiting)."""
_LANGUAGE = re.compile(r"[a-z]{2}")


class OpenAITranscriber:
    """Transcription by an OpenAI model (``gpt-4o-mini-transcribe``, ``gpt-4o-transcribe``, ``whisper-1``)."""

    def __init__(self, model_name: str, *, client: AsyncOpenAI | None = None, timeout_s: float = TIMEOUT_S):
        self.model = f"openai:{model_name}"
        self._name = model_name
        self._timeout_s = timeout_s
        self._client = None if client is None else client.with_options(max_retries=0, timeout=timeout_s)

    async def transcribe(self, audio: bytes, media_type: str, *, language_hint: str | None) -> Transcript:
        """The words of ``audio``: refused here when it is no accepted format or too large."""
        found = audio_format(audio)
        if found is None:
            shown = plain_media_type(media_type) or "this file"
            raise TranscriptionError(
                f"{shown} is not audio the server reads (its bytes are none of {NAMES})", sent=False
            )
        if len(audio) > MAX_AUDIO_BYTES:
            raise TranscriptionError(
                f"the voice note is {len(audio):,} bytes; {self.model} takes at most {MAX_AUDIO_BYTES:,}",
                sent=False,
            )
        client = self._openai()
        language = language_hint if language_hint and _LANGUAGE.fullmatch(language_hint) else None
        try:
            async with asyncio.timeout(self._timeout_s):
                answer = await self._with_one_retry(client, audio, found, language)
        except TimeoutError:
            raise TranscriptionError(f"{self.model}: no answer within {self._timeout_s:g} s") from None
        transcript = _transcript(answer)
        if not transcript.text.strip():
            raise TranscriptionError(f"{self.model}: no words heard in the voice note")
        return transcript

    async def check(self) -> str:
        """Ask for the model itself (``GET /v1/models/{model}``): the key's test, no audio, no cost."""
        import openai

        client = self._openai()
        try:
            async with asyncio.timeout(self._timeout_s):
                found = await client.models.retrieve(self._name)
        except TimeoutError:
            raise TranscriptionError(f"no answer within {self._timeout_s:g} s") from None
        except openai.NotFoundError as exc:
            raise TranscriptionError(f"the endpoint has no model {self._name!r} (404)", status=404) from exc
        except openai.APIStatusError as exc:
            raise _refused(self.model, exc) from None
        except openai.APIConnectionError as exc:
            raise TranscriptionError(f"the endpoint is unreachable ({exc})") from None
        return f"key accepted, model {found.id} found"

    async def aclose(self) -> None:
        """Nothing to close: the connection pool is pydantic-ai's, shared with the ``openai:`` models."""

    def _openai(self) -> AsyncOpenAI:
        """The client, built at first use (so a missing key is this voice note's error, not the start's)."""
        if self._client is None:
            from pydantic_ai.exceptions import UserError
            from pydantic_ai.providers.openai import OpenAIProvider

            try:
                client = OpenAIProvider().client
            except UserError:
                raise TranscriptionError(
                    f"{self.model}: no key: set OPENAI_API_KEY (or OPENAI_BASE_URL for an OpenAI-compatible "
                    "endpoint)",
                    sent=False,
                ) from None
            self._client = client.with_options(max_retries=0, timeout=self._timeout_s)
        return self._client

    async def _with_one_retry(
        self, client: AsyncOpenAI, audio: bytes, found: AudioFormat, language: str | None
    ) -> Transcription | TranscriptionVerbose:
        import openai

        for attempt in (1, 2):
            try:
                return await self._create(client, audio, found, language)
            except (openai.RateLimitError, openai.InternalServerError) as exc:
                if attempt == 2:
                    raise _refused(self.model, exc, retried=True) from None
                await asyncio.sleep(_pause(exc))
            except openai.APIStatusError as exc:
                raise _refused(self.model, exc) from None
            except openai.APITimeoutError:
                raise TranscriptionError(f"{self.model}: no answer within {self._timeout_s:g} s") from None
            except openai.APIConnectionError as exc:
                raise TranscriptionError(f"{self.model}: the endpoint is unreachable ({exc})") from None
        raise AssertionError("unreachable: the second attempt returns or raises")

    async def _create(
        self, client: AsyncOpenAI, audio: bytes, found: AudioFormat, language: str | None
    ) -> Transcription | TranscriptionVerbose:
        """One request. ``whisper-1`` answers ``verbose_json`` (language, duration); the ``gpt-4o`` models
        take only ``json`` (the reference's ``response_format``), whose ``usage`` may carry the seconds."""
        from openai import omit

        upload = (f"voice.{found.extension}", audio, found.media_type)
        spoken = language if language is not None else omit
        if self._name.startswith("whisper"):
            return await client.audio.transcriptions.create(
                model=self._name, file=upload, language=spoken, response_format="verbose_json"
            )
        return await client.audio.transcriptions.create(
            model=self._name, file=upload, language=spoken, response_format="json"
        )


def _transcript(answer: Transcription | TranscriptionVerbose) -> Transcript:
    from openai.types.audio import TranscriptionVerbose

    if isinstance(answer, TranscriptionVerbose):
        return Transcript(answer.text, language=answer.language or None, seconds=answer.duration)
    languages = answer.languages or []
    seconds = getattr(answer.usage, "seconds", None) if answer.usage is not None else None
    return Transcript(
        answer.text,
        language=languages[0].code if languages else None,
        seconds=float(seconds) if isinstance(seconds, int | float) else None,
    )


def _refused(model: str, exc: APIStatusError, *, retried: bool = False) -> TranscriptionError:
    """The provider's answer as an error naming the status, its reason, and what to fix."""
    reason = _reason(exc.body) or exc.message
    status = exc.status_code
    if status in (401, 403):
        detail = f"{model}: the provider refused the key ({status}: {reason}): check OPENAI_API_KEY"
    elif status == 429 or status >= 500:
        detail = f"{model}: the provider is not answering ({status}: {reason})" + (
            ", twice" if retried else ""
        )
    else:
        detail = f"{model}: the provider refused the voice note ({status}: {reason})"
    return TranscriptionError(detail, status=status)


def _reason(body: Any) -> str | None:
    """``error.message`` of an OpenAI error body."""
    error = body.get("error", body) if isinstance(body, dict) else None
    message = error.get("message") if isinstance(error, dict) else None
    return message if isinstance(message, str) and message else None


def _pause(exc: APIStatusError) -> float:
    """``Retry-After`` (seconds) when the provider sent it, within :data:`MAX_RETRY_PAUSE_S`."""
    try:
        asked = float(exc.response.headers.get("retry-after", RETRY_PAUSE_S))
    except ValueError:
        asked = RETRY_PAUSE_S
    return min(max(asked, 0.0), MAX_RETRY_PAUSE_S)

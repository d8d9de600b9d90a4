"""What a transcriber is: audio bytes in, the person's words out, or a :class:`TranscriptionError`."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

from ...errors import ServiceError


@dataclass(frozen=True)
class Transcript:
    """A voice note's words, and what the provider said about it when it said so."""

    text: str
    language: str | None = None
    """The spoken language as the provider names it (``ko``, or ``korean``), when it says."""
    seconds: float | None = None
    """How long the audio is, when the provider says."""


class TranscriptionError(ServiceError):
    """A voice note was not transcribed: refused before it was sent (format, size) or by the provider
    (key, request), or the provider did not answer (5xx, 429, timeout, connection)."""

    def __init__(self, message: str, *, sent: bool = True, status: int | None = None) -> None:
        super().__init__(message)
        self.sent = sent
        """Whether the audio went to the provider (False: refused here, nothing was asked)."""
        self.status = status
        """The provider's HTTP status, when it answered with one."""


class Transcriber(Protocol):
    """A provider's transcription endpoint."""

    model: str
    """``provider:model``, as ``TRULOOP_TRANSCRIPTION_MODEL`` names it."""

    async def transcribe(self, audio: bytes, media_type: str, *, language_hint: str | None) -> Transcript:
        """The words of ``audio``; ``language_hint`` (ISO 639-1, e.g. ``ko``) when the language is likely."""
        ...

    async def check(self) -> str:
        """Whether the key is accepted, cheaply (no audio sent): a line saying what was found."""
        ...

    async def aclose(self) -> None:
        """Close the HTTP client."""
        ...

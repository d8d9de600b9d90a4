"""Voice notes as text: a :class:`Transcriber` for ``TRULOOP_TRANSCRIPTION_MODEL``, or none when unset.

``port.py`` says what a transcriber is (and its :class:`TranscriptionError`), ``formats.py`` which
audio is read, ``openai_transcriber.py`` is OpenAI's endpoint (the one provider the settings allow).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .formats import ACCEPTED, NAMES, AudioFormat, audio_format
from .openai_transcriber import MAX_AUDIO_BYTES, OpenAITranscriber
from .port import Transcriber, Transcript, TranscriptionError

if TYPE_CHECKING:
    from ...config import Settings


def transcriber_for(settings: Settings) -> Transcriber | None:
    """The transcriber ``TRULOOP_TRANSCRIPTION_MODEL`` names, or None: voice notes are not read."""
    parts = settings.transcription_parts()
    if parts is None:
        return None
    provider, model = parts
    if provider == "openai":  # the settings refuse every other provider at start
        return OpenAITranscriber(model)
    raise AssertionError(f"unsupported transcription provider {provider!r} passed the settings")


__all__ = [
    "ACCEPTED",
    "MAX_AUDIO_BYTES",
    "NAMES",
    "AudioFormat",
    "OpenAITranscriber",
    "Transcriber",
    "Transcript",
    "TranscriptionError",
    "audio_format",
    "transcriber_for",
]

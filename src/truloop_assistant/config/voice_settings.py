"""Voice notes: which provider's transcription endpoint turns a person's audio into their words."""

from __future__ import annotations

import re

from pydantic import field_validator

from .log_settings import LogSettings

TRANSCRIPTION_PROVIDERS = ("openai",)
"""The providers whose transcription endpoint the server speaks (``openai:``: OpenAI's own, or any
OpenAI-compatible one through ``OPENAI_BASE_URL``)."""
_MODEL_FORM = re.compile(r"([a-z][a-z0-9_-]*):(\S+)")


class VoiceSettings(LogSettings):
    """Voice notes read as the person's words."""

    transcription_model: str | None = None
    """The model that turns a voice note (m4a, mp3, ogg/opus, wav, webm) into the person's words, as
    ``provider:model``, e.g. ``openai:gpt-4o-mini-transcribe`` or ``openai:whisper-1``, asked through the
    provider's transcription endpoint with its variables as pydantic-ai reads them (``OPENAI_API_KEY``,
    and ``OPENAI_BASE_URL`` for an OpenAI-compatible endpoint); ``doctor`` checks the key. Only
    ``openai:`` is supported: another prefix stops the server at start. Unset: a voice note gets a
    short answer saying voice notes are not read here."""

    @field_validator("transcription_model")
    @classmethod
    def _supported_provider(cls, value: str | None) -> str | None:
        """``provider:model`` of a provider the server speaks; empty means unset."""
        value = (value or "").strip() or None
        if value is None:
            return None
        supported = ", ".join(f"{name}:" for name in TRANSCRIPTION_PROVIDERS)
        found = _MODEL_FORM.fullmatch(value)
        if found is None:
            raise ValueError(
                f"{value!r} is not a transcription model: use provider:model, e.g. "
                f"openai:gpt-4o-mini-transcribe (supported providers: {supported})"
            )
        if found.group(1) not in TRANSCRIPTION_PROVIDERS:
            raise ValueError(
                f"{value!r}: the server cannot transcribe with provider {found.group(1)!r}; the supported "
                f"providers are {supported} (e.g. openai:gpt-4o-mini-transcribe; any OpenAI-compatible "
                "endpoint through OPENAI_BASE_URL)"
            )
        return value

    def transcription_parts(self) -> tuple[str, str] | None:
        """``(provider, model)`` of ``TRULOOP_TRANSCRIPTION_MODEL``, or None when voice notes are not read."""
        if self.transcription_model is None:
            return None
        provider, _, model = self.transcription_model.partition(":")
        return provider, model

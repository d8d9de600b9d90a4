"""With ``TRULOOP_TRANSCRIPTION_MODEL`` set: does the provider accept the key and know the model?"""

from __future__ import annotations

from .outcome import Check

TRANSCRIPTION_TIMEOUT_S = 10.0


def check_transcription(model: str) -> Check:
    """Ask for the model itself (OpenAI's ``GET /v1/models/{model}``): the key is tested, no audio is sent
    and nothing is billed."""
    import asyncio

    from ...backends.transcription import OpenAITranscriber, TranscriptionError

    provider, _, name = model.partition(":")
    if provider != "openai":  # the settings refuse it; doctor shows the values given even then
        return Check("transcription", "FAIL", f"{model}: only openai: transcription models are supported")
    transcriber = OpenAITranscriber(name, timeout_s=TRANSCRIPTION_TIMEOUT_S)
    try:
        found = asyncio.run(transcriber.check())
    except TranscriptionError as exc:
        reason = str(exc).removeprefix(f"{model}: ")
        return Check(
            "transcription",
            "FAIL",
            f"{model}: {reason}: fix TRULOOP_TRANSCRIPTION_MODEL or the provider's key (OPENAI_API_KEY, "
            "OPENAI_BASE_URL); until then voice notes get an answer saying they could not be read",
        )
    return Check("transcription", "ok", f"{model}: {found} (voice notes are read as text)")

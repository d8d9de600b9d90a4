"""A local OpenAI transcription endpoint (``POST /v1/audio/transcriptions``, ``GET /v1/models/{model}``).

It behaves as OpenAI's API reference describes it (https://platform.openai.com/docs/api-reference):
- "Create transcription": a multipart form with ``file`` and ``model`` (and optional ``language``,
  ``response_format``); ``json`` (the default) answers ``{"text": ..., "usage": ...}`` (``usage`` of
  type ``duration`` with ``seconds`` for ``whisper-1``, of type ``tokens`` for the ``gpt-4o`` models),
  ``verbose_json`` answers ``{"task", "language", "duration", "text", "segments"}`` and is
  ``whisper-1``'s only: "For gpt-4o-transcribe and gpt-4o-mini-transcribe, the only supported format
  is json", so the fake answers 400 as the API does;
- the format is read from the file name's extension (flac, mp3, mp4, mpeg, mpga, m4a, ogg, oga, wav,
  webm); another is 400 ``Invalid file format. Supported formats: [...]``, the API's own message;
- "File uploads are currently limited to 25 MB": a request body over 26,214,400 bytes is 413
  ``Maximum content size limit (26214400) exceeded``;
- "Retrieve model": ``{"id", "object": "model", "created", "owned_by"}``, 404 ``model_not_found`` for
  a model it does not have;
- the error codes guide: 401 ``invalid_api_key`` for a key it does not know (checked before anything
  else), 429 ``rate_limit_exceeded`` and 500 ``server_error`` (``statuses`` answers the next requests
  with them), and a request may hang (``hold``).

The fake "hears" what :func:`voice_note` put in the audio: a file in any accepted format whose bytes
carry its words, so that a test's voice note comes back as its words.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from typing import Any

from starlette.applications import Starlette
from starlette.datastructures import UploadFile
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

TRANSCRIPTION_KEY = "sk-test-transcription"
MODELS = ("gpt-4o-mini-transcribe", "gpt-4o-transcribe", "whisper-1")
SUPPORTED = ["flac", "m4a", "mp3", "mp4", "mpeg", "mpga", "oga", "ogg", "wav", "webm"]
MAX_CONTENT = 26_214_400
SECONDS_PER_WORD = 0.4
_WORDS = b"\x00words:"

HEADS = {
    "m4a": b"\x00\x00\x00\x20ftypM4A \x00\x00\x02\x00",
    "mp3": b"ID3\x04\x00\x00\x00\x00\x00\x00",
    "ogg": b"OggS\x00\x02\x00\x00\x00\x00\x00\x00\x00\x00OpusHead",
    "wav": b"RIFF\x24\x00\x00\x00WAVEfmt ",
    "webm": b"\x1a\x45\xdf\xa3\x9f\x42\x86\x81\x01webm",
}
"""The first bytes of each format, as a recorder writes them."""


def voice_note(words: str, kind: str = "m4a") -> bytes:
    """A voice note in ``kind`` (m4a, mp3, ogg, wav, webm) that says ``words``."""
    return HEADS[kind] + b"\x00" * 32 + _WORDS + words.encode()


def heard(audio: bytes) -> str:
    """The words a :func:`voice_note` says (nothing for other audio: silence)."""
    _, found, words = audio.partition(_WORDS)
    return words.decode(errors="replace").strip() if found else ""


@dataclass
class FakeTranscription:
    api_key: str = TRANSCRIPTION_KEY
    requests: list[dict[str, Any]] = field(default_factory=list)
    """Every transcription request that reached it (past the key): its form fields and file."""
    statuses: list[int] = field(default_factory=list)
    """HTTP statuses to answer the next transcription requests with (429, 500), before answering."""
    hold: int = 0
    """How many of the next transcription requests hang (a provider that does not answer)."""
    holding: asyncio.Event = field(default_factory=asyncio.Event)
    """Set once a request is being held."""
    url: str = ""

    def app(self) -> Starlette:
        return Starlette(routes=self.routes())

    def routes(self) -> list[Route]:
        """Its routes, to serve beside another fake of the same OpenAI base URL."""
        return [
            Route("/v1/audio/transcriptions", self._transcribe, methods=["POST"]),
            Route("/v1/models/{model:path}", self._model, methods=["GET"]),
        ]

    def env(self) -> dict[str, str]:
        """The variables that make ``openai:`` ask this fake."""
        return {"OPENAI_BASE_URL": f"{self.url}/v1", "OPENAI_API_KEY": self.api_key}

    async def _transcribe(self, request: Request) -> JSONResponse:
        if (refused := self._refused_key(request)) is not None:
            return refused
        if int(request.headers.get("content-length") or 0) > MAX_CONTENT:
            size = request.headers["content-length"]
            return _error(413, f"Maximum content size limit ({MAX_CONTENT}) exceeded ({size} bytes read)")
        form = await request.form()
        upload, model = form.get("file"), form.get("model")
        if not isinstance(model, str) or not model:
            return _error(400, "you must provide a model parameter", param="model")
        if not isinstance(upload, UploadFile):
            return _error(400, "you must provide a file parameter", param="file")
        audio = await upload.read()
        fields = {key: value for key, value in form.items() if isinstance(value, str)}
        self.requests.append({**fields, "filename": upload.filename, "bytes": len(audio)})
        if self.hold > 0:
            self.hold -= 1
            self.holding.set()
            await asyncio.sleep(3600)
        if self.statuses:
            return _error(self.statuses.pop(0), "")
        if (upload.filename or "").rpartition(".")[2].lower() not in SUPPORTED:
            return _error(400, f"Invalid file format. Supported formats: {SUPPORTED}")
        if model not in MODELS:
            return _error(404, f"The model '{model}' does not exist", param="model", code="model_not_found")
        words = heard(audio)
        seconds = round(max(1, len(words.split())) * SECONDS_PER_WORD, 2)
        answer = fields.get("response_format", "json")
        if answer == "verbose_json":
            if model != "whisper-1":
                return _error(
                    400,
                    f"response_format 'verbose_json' is not compatible with model '{model}'. "
                    "Use 'json' or 'text' instead.",
                    param="response_format",
                )
            language = "korean" if any("\uac00" <= c <= "\ud7a3" for c in words) else "english"
            segment = {"id": 0, "start": 0.0, "end": seconds, "text": words}
            return JSONResponse(
                {"task": "transcribe", "language": language, "duration": seconds, "text": words,
                 "segments": [segment]}
            )  # fmt: skip
        if answer != "json":
            return _error(400, f"The fake answers json or verbose_json, not {answer!r}")
        if model == "whisper-1":
            usage: dict[str, Any] = {"type": "duration", "seconds": seconds}
        else:
            tokens = len(words.split())
            usage = {
                "type": "tokens",
                "input_tokens": 50,
                "output_tokens": tokens,
                "total_tokens": 50 + tokens,
            }
        return JSONResponse({"text": words, "usage": usage})

    async def _model(self, request: Request) -> JSONResponse:
        if (refused := self._refused_key(request)) is not None:
            return refused
        model = request.path_params["model"]
        if model not in MODELS:
            return _error(404, f"The model '{model}' does not exist", param="model", code="model_not_found")
        return JSONResponse({"id": model, "object": "model", "created": 1_740_000_000, "owned_by": "system"})

    def _refused_key(self, request: Request) -> JSONResponse | None:
        if request.headers.get("authorization") == f"Bearer {self.api_key}":
            return None
        return _error(401, "Incorrect API key provided.", code="invalid_api_key")


_DEFAULT_MESSAGES = {
    429: ("Rate limit reached for requests", "requests", "rate_limit_exceeded"),
    500: ("The server had an error while processing your request. Sorry about that!", "server_error", None),
}


def _error(status: int, message: str, *, param: str | None = None, code: str | None = None) -> JSONResponse:
    kind, default_code = "invalid_request_error", code
    if status in _DEFAULT_MESSAGES:
        default_message, kind, default_code = _DEFAULT_MESSAGES[status]
        message = message or default_message
    elif status >= 500:
        kind, message = "server_error", message or "The server is overloaded."
    body = {"error": {"message": message, "type": kind, "param": param, "code": code or default_code}}
    return JSONResponse(body, status)

"""What the provider fakes share: a script that decides each answer, and the record of what they saw.

Each fake stands in for one provider API. It checks every request the way that API does and answers
an invalid one with that API's 400; a valid one is read into a :class:`Prompt` (the same for every
API) and answered with whatever the script says: text, or tool calls, as one JSON body or, when the
request asks to stream, as the API's server-sent events.
"""

from __future__ import annotations

import json
from abc import ABC, abstractmethod
from collections.abc import AsyncIterator, Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar

from pydantic_ai.models import Model
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route


@dataclass(frozen=True)
class ToolCall:
    name: str
    args: dict[str, Any]


@dataclass(frozen=True)
class ToolResult:
    name: str
    """The name of the tool whose call this answers (looked up by the call's id)."""
    output: str
    is_error: bool = False
    """Whether the request marks it as an error (only some APIs can say so)."""


@dataclass(frozen=True)
class Prompt:
    """A request as the model reads it, whatever the API."""

    user_text: str
    """The latest thing the user wrote ('' when nothing)."""
    results: tuple[ToolResult, ...]
    """The tool results that came in since the model last answered, in order."""
    tools: tuple[str, ...]
    """The names of the tools offered."""


Reply = str | Sequence[ToolCall]
"""Text, or the tool calls of one response (several are parallel calls)."""
Script = Callable[[Prompt], Reply]


class InvalidRequest(Exception):
    """What the API says about a request it does not accept."""

    def __init__(self, message: str, *, param: str | None = None, code: str | None = None, status: int = 400):
        super().__init__(message)
        self.message = message
        self.param = param
        self.code = code
        self.status = status


@dataclass(frozen=True)
class Rejection:
    body: dict[str, Any]
    status: int
    message: str


@dataclass
class ScriptedProvider(ABC):
    """A provider API on 127.0.0.1 that validates every request and answers as ``script`` says."""

    script: Script
    url: str = ""
    requests: list[dict[str, Any]] = field(default_factory=list)
    """Every request body received, in order."""
    rejections: list[Rejection] = field(default_factory=list)
    """The requests answered with an error, and why."""
    prompts: list[Prompt] = field(default_factory=list)
    """The valid requests as the script read them, in order."""
    answers: list[Reply] = field(default_factory=list)
    """What the script answered to them, in order."""

    path: ClassVar[str]

    def app(self) -> Starlette:
        return Starlette(routes=[Route(self.path, self._handle, methods=["POST"])])

    @abstractmethod
    def model(self) -> Model:
        """A pydantic-ai model that talks to this fake (``self.url`` is set once it is served)."""

    @abstractmethod
    def check(self, headers: dict[str, str], body: dict[str, Any]) -> None:
        """Raise :class:`InvalidRequest` where the real API would refuse the request."""

    @abstractmethod
    def prompt(self, body: dict[str, Any]) -> Prompt:
        """Read a valid request the way the model would."""

    @abstractmethod
    def render(self, body: dict[str, Any], reply: Reply) -> dict[str, Any]:
        """The API's success response carrying ``reply``."""

    @abstractmethod
    def events(self, response: dict[str, Any]) -> Iterable[tuple[str | None, Any]]:
        """``response`` (from :meth:`render`) as the API streams it: (event name, data) pairs."""

    @abstractmethod
    def error(self, problem: InvalidRequest) -> dict[str, Any]:
        """The API's error body for ``problem``."""

    async def _handle(self, request: Request) -> Response:
        raw = await request.body()
        try:
            body = json.loads(raw)
            if not isinstance(body, dict):
                raise ValueError("not an object")
        except ValueError:
            return self._reject({"raw": raw.decode(errors="replace")}, InvalidRequest("invalid JSON body"))
        self.requests.append(body)
        try:
            self.check({k.lower(): v for k, v in request.headers.items()}, body)
        except InvalidRequest as problem:
            return self._reject(body, problem)
        prompt = self.prompt(body)
        reply = self.script(prompt)
        self.prompts.append(prompt)
        self.answers.append(reply)
        response = self.render(body, reply)
        if body.get("stream") is True:
            return StreamingResponse(_sse(self.events(response)), media_type="text/event-stream")
        return JSONResponse(response)

    def _reject(self, body: dict[str, Any], problem: InvalidRequest) -> JSONResponse:
        self.rejections.append(Rejection(body, problem.status, problem.message))
        return JSONResponse(self.error(problem), status_code=problem.status)


def text_of(content: Any) -> str:
    """The text of a message content that is a string or a list of text parts."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(p.get("text", "") for p in content if isinstance(p, dict))
    return ""


async def _sse(events: Iterable[tuple[str | None, Any]]) -> AsyncIterator[str]:
    for name, data in events:
        line = data if isinstance(data, str) else json.dumps(data)
        yield (f"event: {name}\n" if name else "") + f"data: {line}\n\n"

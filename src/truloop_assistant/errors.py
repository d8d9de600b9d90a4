"""One rooted error hierarchy. What a client can act on is translated to HTTP in exactly one place
(``app.py``); the rest say what failed and what to do about it, for the log or the operator's shell.

    TruloopError                    every error the package raises on purpose
    ├── AppError                    a client can act on it: ``status`` and a stable ``code``
    │   ├── BadRequest              400
    │   ├── Unauthorized            401
    │   ├── Forbidden               403
    │   ├── NotFound                404
    │   ├── Conflict                409
    │   ├── Gone                    410
    │   ├── PayloadTooLarge         413
    │   ├── Unprocessable           422
    │   ├── TooManyRequests         429
    │   └── ServiceUnavailable      503
    ├── ConfigError                 settings the server cannot run with (config)
    ├── ServiceError                a service outside the process failed or refused
    │   ├── ChannelSendError        a send to the chat channel (channels.base)
    │   ├── RelayError              a message the assistant relays or an invitation (channels.relay)
    │   │   ├── NoSuchUser          Sendbird has no user with that id: no channel was made
    │   │   └── ChannelJoinLimit    Sendbird's limit of group channels a user may join is reached
    │   ├── PlatformTransportError  no answer from the Sendbird Platform API (channels.platform_http)
    │   │   └── PlatformThrottled   no slot for the call in the app-wide Sendbird budget
    │   ├── Throttled               the pacer found no slot for a call (channels.pacing)
    │   ├── PaceTooFar              no slot for a text within the longest wait (channels.sms_pace)
    │   ├── UserDirectoryError      the user directory (backends.users)
    │   ├── MemoryBackendError      the memory store (backends.memory)
    │   ├── KnowledgeBaseError      the knowledge base (backends.knowledge)
    │   ├── EmbeddingError          the embedding model (backends.knowledge.embedding)
    │   ├── TranscriptionError      a voice note's transcription (backends.transcription)
    │   ├── NotionError             the Notion API (backends.knowledge.notion)
    │   ├── PlacesError             the places search (backends.places)
    │   └── RedisProblem            Redis, as a command reports it (commands.doctor)
    │       └── RedisUnreachable    nothing answered at its URL: worth retrying
    ├── EventNotFoundError          no such event (backends.events); also a ``LookupError``
    ├── SchemaTooCostly             a declared schema too costly (protocol.schema_limits); a ``ValueError``
    ├── SidePortRefused             a side port's request refused before its app (runtime.side_port_http)
    ├── Skipped                     an evaluation case this run cannot play (commands.evaluation.harness)
    └── OperatorError               what an operator's command was given cannot be used
        ├── UsersFileError          a users file (backends.users.file); also a ``ValueError``
        ├── CasesFileError          an evaluation cases file (commands.evaluation.cases)
        ├── RetrievalCasesError     a retrieval cases file (commands.knowledge.retrieval)
        ├── SetupError              ``sendbird setup`` (commands.sendbird)
        ├── NotDevsRedis            a Redis ``dev`` was given that holds what is not its own (local.dev_redis)
        ├── DeadLetterError         no dead letter answers to what was asked (operations.replay)
        └── NotAPhoneNumber         what was given to erase is no phone number (operations.guest_erasure)

Outside the tree, because they are signals rather than errors: ``commands.startup.Stop`` (a
``BaseException``, like ``KeyboardInterrupt``: SIGTERM before a command handles it), and the tool
wrappers' ``ToolCrashed`` and ``ToolTimedOut`` (pydantic-ai's ``ToolFailed``: a failed tool result
the model reads).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import Any


class TruloopError(Exception):
    """The root of every error the package raises on purpose."""


class ConfigError(TruloopError):
    """Settings the server cannot run with; the message names each variable and what is wrong."""


class ServiceError(TruloopError):
    """A service outside the process (Sendbird, a directory, a model provider, Redis) failed or refused."""


class OperatorError(TruloopError):
    """What an operator's command was given (a file, an id) cannot be used; the message says why."""


class AppError(TruloopError):
    """An error a client can act on. ``code`` is snake_case and stable; ``message`` is for people."""

    status: int = 500
    code: str = "internal_error"

    def __init__(
        self,
        message: str,
        *,
        code: str | None = None,
        status: int | None = None,
        headers: dict[str, str] | None = None,
    ) -> None:
        super().__init__(message)
        self.message = message
        self.headers = headers or {}
        if code is not None:
            self.code = code
        if status is not None:
            self.status = status


class BadRequest(AppError):
    status, code = 400, "bad_request"


class Unauthorized(AppError):
    status, code = 401, "unauthorized"


class Forbidden(AppError):
    status, code = 403, "forbidden"


class NotFound(AppError):
    status, code = 404, "not_found"


class Conflict(AppError):
    status, code = 409, "conflict"


class Gone(AppError):
    status, code = 410, "gone"


class PayloadTooLarge(AppError):
    status, code = 413, "payload_too_large"


class Unprocessable(AppError):
    status, code = 422, "invalid_result"


class TooManyRequests(AppError):
    status, code = 429, "rate_limited"


class ServiceUnavailable(AppError):
    status, code = 503, "unavailable"


def validation_problems(
    errors: Iterable[Mapping[str, Any]],
    *,
    where: Callable[[str], str] = lambda loc: loc,
    default_where: str = "",
) -> list[str]:
    """Pydantic's error details (``exc.errors()``) as ``"field.path: what is wrong"`` lines.

    ``where`` renames a dotted field path for the reader (e.g. a setting's variable name).
    """
    lines = []
    for error in errors:
        loc = ".".join(str(p) for p in error.get("loc", ()))
        name = where(loc) if loc else default_where
        msg = str(error.get("msg", "invalid")).removeprefix("Value error, ")
        lines.append(f"{name}: {msg}" if name else msg)
    return lines


def first_problem(errors: Iterable[Mapping[str, Any]], *, default_where: str = "") -> str:
    """The first of :func:`validation_problems` (clients fix one thing at a time)."""
    return next(iter(validation_problems(errors, default_where=default_where)), "invalid input")


def repeated(values: Iterable[str]) -> list[str]:
    """The values that appear more than once, sorted (for a message naming them)."""
    seen: set[str] = set()
    twice: set[str] = set()
    for value in values:
        (twice if value in seen else seen).add(value)
    return sorted(twice)

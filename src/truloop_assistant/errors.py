"""One rooted error hierarchy; translated to HTTP in exactly one place (``app.py``)."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import Any


class AppError(Exception):
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

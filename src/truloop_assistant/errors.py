"""One rooted error hierarchy; translated to HTTP in exactly one place (``app.py``)."""

from __future__ import annotations


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

"""The bounds of a turn (model requests, time, device calls) and what the user reads when a run fails."""

from __future__ import annotations

from dataclasses import dataclass

from pydantic_ai import ModelQuotaExceededError, ModelRateLimitError, ModelTimeoutError

from ..config import Settings
from ..i18n import Text, texts


@dataclass(frozen=True)
class TurnLimits:
    max_model_requests: int
    """Model requests per run; a looping model ends with a polite answer."""
    model_timeout_s: float
    """One model request."""
    turn_timeout_s: float
    """One whole run."""
    max_calls_per_turn: int
    """Device calls one step may send; the rest fail at once (the model is told)."""
    max_client_failures: int
    """A device tool that failed this many times in a row on a person's devices is not sent again."""

    @classmethod
    def from_settings(cls, settings: Settings) -> TurnLimits:
        return cls(
            max_model_requests=settings.max_model_requests,
            model_timeout_s=settings.model_timeout_s,
            turn_timeout_s=settings.turn_timeout_s,
            max_calls_per_turn=settings.max_calls_per_turn,
            max_client_failures=settings.max_client_failures,
        )


def failure_text(exc: BaseException) -> tuple[str, Text]:
    """What kind of failure ended a run, and what the user reads then."""
    if isinstance(exc, BaseExceptionGroup):  # every fallback model failed: named when all failed alike
        kinds = [failure_text(inner) for inner in exc.exceptions]
        if all(kind == kinds[0][0] for kind, _ in kinds):
            return kinds[0]
        return "server_error", texts.SERVER_ERROR
    if isinstance(exc, TimeoutError | ModelTimeoutError):
        return "timeout", texts.TIMED_OUT
    if isinstance(exc, ModelRateLimitError | ModelQuotaExceededError):
        return "rate_limited", texts.MODEL_RATE_LIMITED
    return "server_error", texts.SERVER_ERROR

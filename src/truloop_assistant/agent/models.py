"""Turns ``TRULOOP_MODEL`` (and ``TRULOOP_FALLBACK_MODELS``) into a pydantic-ai model."""

from __future__ import annotations

from collections.abc import Sequence
from zoneinfo import ZoneInfo

from pydantic_ai.exceptions import (
    ModelConnectionError,
    ModelHTTPError,
    ModelRateLimitError,
    ModelRequestTimeout,
    ModelServerError,
    ModelUnavailableError,
)
from pydantic_ai.models import Model, infer_model
from pydantic_ai.models.fallback import FallbackModel

from .offline import build_offline_model

PROVIDER_TROUBLE = (
    ModelRateLimitError,
    ModelServerError,
    ModelUnavailableError,
    ModelConnectionError,  # and its ModelTimeoutError
    ModelRequestTimeout,
)
"""Failures of the provider, not of the request: the next model may well answer."""


def resolve_model(name: str, *, timezone: ZoneInfo, fallbacks: Sequence[str] = ()) -> Model:
    """The model ``name``, or one that tries ``fallbacks`` in order when it fails with a provider error."""
    primary = _one_model(name, timezone)
    if not fallbacks:
        return primary
    return FallbackModel(
        primary, *(_one_model(fallback, timezone) for fallback in fallbacks), fallback_on=falls_back
    )


def falls_back(exc: Exception) -> bool:
    """5xx, 429, timeouts and lost connections move on to the next model; a rejected request does not."""
    if isinstance(exc, ModelHTTPError):
        return exc.status_code == 429 or exc.status_code >= 500
    return isinstance(exc, PROVIDER_TROUBLE)


def _one_model(name: str, timezone: ZoneInfo) -> Model:
    """``offline`` is the built-in rule-based model; anything else is a pydantic-ai model string."""
    if name == "offline":
        return build_offline_model(timezone=timezone)
    return infer_model(name)

"""Turns ``TRULOOP_MODEL`` (and ``TRULOOP_FALLBACK_MODELS``) into a pydantic-ai model."""

from __future__ import annotations

import time
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
from pydantic_ai.messages import ModelMessage, ModelResponse
from pydantic_ai.models import Model, ModelRequestParameters, infer_model
from pydantic_ai.models.fallback import FallbackModel
from pydantic_ai.models.wrapper import WrapperModel
from pydantic_ai.settings import ModelSettings

from ..metrics import MODEL_REQUEST_SECONDS, MODEL_TOKENS
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


class TimedModel(WrapperModel):
    """Counts each model request's time and tokens (``truloop_model_request_seconds``, ``…tokens_total``)."""

    async def request(
        self,
        messages: list[ModelMessage],
        model_settings: ModelSettings | None,
        model_request_parameters: ModelRequestParameters,
    ) -> ModelResponse:
        started = time.perf_counter()
        outcome = "error"
        try:
            response = await super().request(messages, model_settings, model_request_parameters)
            outcome = "ok"
        finally:
            MODEL_REQUEST_SECONDS.labels(outcome).observe(time.perf_counter() - started)
        MODEL_TOKENS.labels("input").inc(response.usage.input_tokens)
        MODEL_TOKENS.labels("output").inc(response.usage.output_tokens)
        return response


def timed(model: Model | str) -> Model | str:
    """``model`` with its requests measured (a model string is measured once pydantic-ai makes it a model)."""
    return TimedModel(model) if isinstance(model, Model) and not isinstance(model, TimedModel) else model

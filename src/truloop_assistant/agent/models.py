"""Turns ``TRULOOP_MODEL`` into a pydantic-ai model."""

from __future__ import annotations

from zoneinfo import ZoneInfo

from pydantic_ai.models import Model, infer_model

from .offline import build_offline_model


def resolve_model(name: str, *, timezone: ZoneInfo) -> Model:
    """``offline`` is the built-in rule-based model; anything else is a pydantic-ai model string."""
    if name == "offline":
        return build_offline_model(timezone=timezone)
    return infer_model(name)

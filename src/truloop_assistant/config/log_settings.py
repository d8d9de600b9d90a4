"""How the commands log: the settings read first, so that even a command that fails logs as asked."""

from __future__ import annotations

from typing import Any

from pydantic import field_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

from ..logs import LEVELS, LogFormat


class LogSettings(BaseSettings):
    """How the commands log: read first, so that even a command that fails logs as asked."""

    # Errors never quote the values given: some are secrets. Each setting's docstring is its
    # description, from which the docs' settings page is written (config/reference.py).
    model_config = SettingsConfigDict(
        env_prefix="TRULOOP_",
        env_file=".env",
        extra="ignore",
        hide_input_in_errors=True,
        use_attribute_docstrings=True,
    )

    log_level: str = "INFO"
    """Log level of the commands: ``DEBUG``, ``INFO``, ``WARNING``, ``ERROR``, ``CRITICAL``."""
    log_format: LogFormat = "text"
    """``text``, or ``json`` (one object per line) for log shippers."""

    @field_validator("log_level", mode="before")
    @classmethod
    def _known_level(cls, value: Any) -> Any:
        if isinstance(value, str):
            level = value.strip().upper()
            if level == "WARN":
                level = "WARNING"
            if level not in LEVELS:
                raise ValueError(f"{value!r} is not a log level: use {', '.join(LEVELS)}")
            return level
        return value

    @field_validator("log_format", mode="before")
    @classmethod
    def _known_format(cls, value: Any) -> Any:
        if isinstance(value, str):
            fmt = value.strip().lower()
            if fmt not in ("text", "json"):
                raise ValueError(f"{value!r} is not a log format: use text or json")
            return fmt
        return value

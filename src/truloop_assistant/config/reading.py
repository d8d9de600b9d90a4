"""Reading the settings once, with every problem turned into one readable :class:`ConfigError`."""

from __future__ import annotations

import os
from functools import lru_cache
from typing import Any

from pydantic import ValidationError
from pydantic_settings import DotEnvSettingsSource, EnvSettingsSource

from ..errors import ConfigError, validation_problems
from .log_settings import LogSettings
from .model_strings import VALID_MODELS, model_problem
from .secret_files import FILE_SUFFIX, SecretFiles, read_secret_file, secret_fields
from .settings import Settings


def load_settings(*, build_models: bool = True, **overrides: Any) -> Settings:
    """Build settings, turning validation errors into one readable :class:`ConfigError`.

    ``build_models``: also build every model string as a worker will (its provider's package and key;
    this imports the provider's client). Without it a model string is only read (its form, a known
    provider): for ``serve``, which runs no model and starts in a fraction of the time.
    """
    try:
        settings = Settings(**overrides)
    except ValidationError as exc:
        lines = validation_problems(exc.errors(), where=_variable)
        if len(lines) == 1:
            raise ConfigError(f"invalid settings: {lines[0]}") from None
        raise ConfigError("invalid settings:\n  " + "\n  ".join(lines)) from None
    if build_models:
        for name, value in settings.named_model_strings():
            if problem := model_problem(value):
                raise ConfigError(f"invalid settings: {name}={value!r}: {problem}; {VALID_MODELS}")
    return settings


def _variable(loc: str) -> str:
    """A setting's field path as its variable, e.g. ``TRULOOP_MCP_SERVERS[0].url``."""
    name, *rest = loc.split(".")
    inside = "".join(f"[{part}]" if part.isdigit() else f".{part}" for part in rest)
    return f"TRULOOP_{name.upper()}{inside}"


def load_log_settings() -> LogSettings:
    """``TRULOOP_LOG_LEVEL`` and ``TRULOOP_LOG_FORMAT``; a bad value is a :class:`ConfigError` naming it."""
    try:
        return LogSettings()
    except ValidationError as exc:
        lines = validation_problems(exc.errors(), where=lambda loc: f"TRULOOP_{loc.upper()}")
        raise ConfigError("invalid settings: " + "; ".join(lines)) from None


def given_settings(*, strict: bool = True) -> dict[str, Any]:
    """The settings set in ``.env`` or the environment (which wins), unchecked and without defaults.

    Secrets kept in files (``TRULOOP_X_FILE``) are read too; a file that cannot be used raises a
    :class:`ConfigError`, or with ``strict=False`` is left out.
    """
    return {
        **DotEnvSettingsSource(Settings)(),
        **EnvSettingsSource(Settings)(),
        **SecretFiles(Settings, strict=strict)(),
    }


def environment_settings() -> dict[str, Any]:
    """The settings set in the process's environment itself, unchecked: what ``.env`` says is left out.

    A secret counts when it or its ``TRULOOP_X_FILE`` is in the environment (the file is read; one that
    cannot be used raises a :class:`ConfigError`).
    """
    found: dict[str, Any] = EnvSettingsSource(Settings)()
    for name in secret_fields(Settings):
        variable = f"TRULOOP_{name.upper()}{FILE_SUFFIX}"
        if name not in found and (path := os.environ.get(variable)):
            found[name] = read_secret_file(variable, path)
    return found


@lru_cache(maxsize=1)
def get_settings() -> Settings:
    return load_settings()

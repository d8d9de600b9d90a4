"""``TRULOOP_X_FILE`` beside every secret setting ``TRULOOP_X``: the secret kept in a file.

Docker and Kubernetes mount secrets as files; the file's content is the value, one trailing newline
stripped. Setting both, or naming a file that cannot be read or is empty, is a :class:`ConfigError`
naming the variable and the path (never what the file holds).
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from pathlib import Path
from typing import Any, get_args

from pydantic import SecretStr
from pydantic.fields import FieldInfo
from pydantic_settings import (
    BaseSettings,
    DotEnvSettingsSource,
    EnvSettingsSource,
    PydanticBaseSettingsSource,
)

from ..errors import ConfigError

FILE_SUFFIX = "_FILE"


def secret_fields(settings_cls: type[BaseSettings]) -> list[str]:
    """The settings whose values are secrets (typed ``SecretStr``), in their order."""
    return [
        name
        for name, field in settings_cls.model_fields.items()
        if field.annotation is SecretStr or SecretStr in get_args(field.annotation)
    ]


def read_secret_file(variable: str, path: str) -> str:
    """The secret in ``path`` (named by ``variable``), one trailing newline stripped."""
    try:
        text = Path(path).read_text(encoding="utf-8")
    except OSError as exc:
        reason = exc.strerror or type(exc).__name__
        raise ConfigError(f"invalid settings: {variable}={path!r} cannot be read ({reason})") from None
    except UnicodeDecodeError:
        raise ConfigError(f"invalid settings: {variable}={path!r} is not UTF-8 text") from None
    text = text.removesuffix("\n").removesuffix("\r") if text.endswith("\n") else text
    if not text:
        raise ConfigError(f"invalid settings: {variable}={path!r} is empty")
    return text


class SecretFiles(PydanticBaseSettingsSource):
    """The secrets named by ``TRULOOP_X_FILE`` variables (in the environment or ``.env``).

    ``given`` are the settings passed in code: their files are not read. With ``strict=False`` a file
    that cannot be used is left out instead of raising (for a report that goes on regardless).
    """

    def __init__(
        self, settings_cls: type[BaseSettings], *, given: Collection[str] = (), strict: bool = True
    ) -> None:
        super().__init__(settings_cls)
        self.given = set(given)
        self.strict = strict

    def get_field_value(self, field: FieldInfo, field_name: str) -> tuple[Any, str, bool]:
        """Unused: :meth:`__call__` reads every secret at once."""
        return None, field_name, False

    def __call__(self) -> dict[str, Any]:
        prefix = str(self.settings_cls.model_config.get("env_prefix", ""))
        variables = {
            **DotEnvSettingsSource(self.settings_cls).env_vars,
            **EnvSettingsSource(self.settings_cls).env_vars,
        }
        found: dict[str, Any] = {}
        for name in secret_fields(self.settings_cls):
            if name in self.given:
                continue
            try:
                value = _from_file(f"{prefix}{name}".upper(), variables)
            except ConfigError:
                if self.strict:
                    raise
                continue
            if value is not None:
                found[name] = value
        return found


def _from_file(variable: str, variables: Mapping[str, str | None]) -> str | None:
    """The secret of ``variable`` from its ``_FILE`` variable; None when that is not set."""
    path = variables.get(f"{variable}{FILE_SUFFIX}".lower())
    if not path:
        return None
    if variables.get(variable.lower()):
        raise ConfigError(
            f"invalid settings: {variable} and {variable}{FILE_SUFFIX} are both set: "
            "keep one of them (the value itself, or the file holding it)"
        )
    return read_secret_file(f"{variable}{FILE_SUFFIX}", path)

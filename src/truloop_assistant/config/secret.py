"""Secret settings are ``SecretStr``: no repr, log line or error shows them; :func:`reveal` where sent."""

from __future__ import annotations

from pydantic import SecretStr


def reveal(value: SecretStr | str | None) -> str:
    """The text of a secret, for the request that sends it (a plain string as it is; ``""`` when unset)."""
    if value is None:
        return ""
    return value.get_secret_value() if isinstance(value, SecretStr) else value

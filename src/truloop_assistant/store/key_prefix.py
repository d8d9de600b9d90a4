"""The start of every key name, so that several deployments can share one Redis."""

_prefix = "ta"

DEV_KEY_PREFIX = "ta-dev"
"""The prefix of ``truloop-assistant dev``'s keys, whatever ``TRULOOP_KEY_PREFIX`` says: its sample
users (one an admin) never land among a deployment's."""


def prefix() -> str:
    """The start of every key of this process (``TRULOOP_KEY_PREFIX``)."""
    return _prefix


def set_prefix(value: str) -> None:
    """Name every key of this process under ``value``; set through ``keys.use_prefix``."""
    global _prefix
    _prefix = value

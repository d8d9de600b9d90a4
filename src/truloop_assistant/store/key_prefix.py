"""The start of every key name, so that several deployments can share one Redis."""

_prefix = "ta"


def prefix() -> str:
    """The start of every key of this process (``TRULOOP_KEY_PREFIX``)."""
    return _prefix


def set_prefix(value: str) -> None:
    """Name every key of this process under ``value``; set through ``keys.use_prefix``."""
    global _prefix
    _prefix = value

"""The device protocol's versions: dates, the first the baseline, the last the one the server speaks.

An app says which version it speaks (``"protocol"`` in its ``PUT /api/v1/agent/client-tools``, or
the :data:`HEADER` of that request); a built-in method goes to it only when the method appeared in
that version or an earlier one (``since`` of its :class:`~.device_methods.DeviceMethod`), or when
its ``builtin`` names it. Within a version the published document only grows: each version's is
kept in ``data/protocol/<version>.json``, and ``python -m truloop_assistant.deferred.publish`` (as
the tests) refuses any other change (:mod:`..deferred.protocol_changes`). docs/protocol.md keeps the
changelog.
"""

from __future__ import annotations

import re
from datetime import date
from typing import Annotated

from pydantic import AfterValidator

PROTOCOL_VERSIONS = ("2026-12-01",)
"""Every published version, oldest first."""
BASELINE = PROTOCOL_VERSIONS[0]
"""What an app that names no version speaks: apps made before versions existed speak this one."""
PROTOCOL_VERSION = PROTOCOL_VERSIONS[-1]
"""The version the server publishes (``protocol_version`` of ``GET /api/v1/agent/protocol``)."""
HEADER = "X-Truloop-Protocol"
"""The request header an app may name its version in (``PUT /api/v1/agent/client-tools`` reads it)."""

_DATE = re.compile(r"\d{4}-\d{2}-\d{2}")


def checked_version(text: str) -> str:
    """``text`` when it is a version (a date ``YYYY-MM-DD``); ``ValueError`` saying the fix otherwise.

    Any date is taken: one after :data:`PROTOCOL_VERSION` is an app newer than the server (it is
    sent what the server's version has), one between versions speaks the older of the two."""
    try:
        if _DATE.fullmatch(text):
            date.fromisoformat(text)
            return text
    except ValueError:
        pass
    raise ValueError(
        f"{text[:40]!r} is not a protocol version: give the date of the version the app speaks, "
        f'YYYY-MM-DD, such as "{PROTOCOL_VERSION}"'
    )


ProtocolVersion = Annotated[str, AfterValidator(checked_version)]
"""A protocol version as an app names it."""


def spoken(declared: str | None) -> str:
    """The version an app that named ``declared`` is taken to speak: the baseline when it named none
    (or one before it), the server's own when it named a newer one."""
    if declared is None or declared < BASELINE:
        return BASELINE
    return min(declared, PROTOCOL_VERSION)


def speaks(declared: str | None, since: str) -> bool:
    """Whether an app that named ``declared`` knows a method that appeared in version ``since``."""
    return since <= spoken(declared)

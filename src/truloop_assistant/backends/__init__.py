"""Ports to the systems the tools use, each with a default that runs with no accounts or keys.

Every domain package defines a ``Protocol`` (the port, in ``port.py``), a default implementation
and, where a real outside service exists, a production adapter beside it. ``Backends`` is what the
tools see through ``ctx.deps.backends``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .events import EventStore
    from .knowledge import KnowledgeBase
    from .memory import MemoryStore
    from .places import PlacesSearch
    from .users import UserDirectory


@dataclass
class Backends:
    users: UserDirectory
    events: EventStore
    knowledge: KnowledgeBase
    memory: MemoryStore
    places: PlacesSearch | None
    """None when no places provider is configured: the tool says so."""

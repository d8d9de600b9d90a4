"""Events kept by the app itself (not the phone's calendar): an owner, invitees, guests, availability.

Invitees are people in the user directory; guests are chat users outside it, who answer with the
dates they are available. What an event is and the store's port are :mod:`.port`;
:class:`RedisEventStore` (:mod:`.redis`) is the default store.
"""

from __future__ import annotations

from .port import (
    REMINDER_LEAD,
    Event,
    EventNotFoundError,
    EventStore,
    EventTime,
    reminder_at,
    reminder_member,
)
from .redis import RedisEventStore

__all__ = [
    "REMINDER_LEAD",
    "Event",
    "EventNotFoundError",
    "EventStore",
    "EventTime",
    "RedisEventStore",
    "reminder_at",
    "reminder_member",
]

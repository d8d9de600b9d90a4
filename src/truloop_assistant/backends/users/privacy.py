"""Whose e-mail and phone a member may see.

Names, usernames, groups, titles and ids are for every member. A person's e-mail and phone are
shown only to themselves, to admins of the directory, to everyone for the fields the person marks as
``shared``, and through an event in the app's event store where both sides chose it: the invitees of
an event see its organizer's (who invited them), and the organizer sees an invitee's once that
invitee has answered the invitation (given their dates, even none). Being invited reveals nothing of
the invitee, to the organizer or to the others invited with them: anyone can be invited.
"""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime
from typing import TYPE_CHECKING

from .port import ContactField, UserDirectory, UserProfile

if TYPE_CHECKING:
    from ..events import EventStore

CONTACT_FIELDS: tuple[ContactField, ...] = ("email", "phone")

_ALL_TIME = (datetime.min.replace(tzinfo=UTC), datetime.max.replace(tzinfo=UTC))


async def event_peers(events: EventStore, user_id: str) -> set[str]:
    """The people whose contact details the user sees through events: the organizers of the events
    they are invited to, and the invitees who answered the events they organize.

    Two reads of the store however many people are asked about; events count while the store keeps
    them (until ``keys.EVENT_RETENTION_S`` after they end) and are not cancelled.
    """
    invited, organized = await asyncio.gather(
        events.list_invited(user_id), events.list_events(user_id, *_ALL_TIME)
    )
    peers = {event.owner_id for event in invited}
    peers.update(p for event in organized for p in event.guest_availability if event.is_invited(p))
    peers.discard(user_id)
    return peers


class ContactVisibility:
    """Which contact details one viewer may see; asks the backends only when it must, and once."""

    def __init__(self, viewer_id: str, directory: UserDirectory, events: EventStore | None) -> None:
        self.viewer_id = viewer_id
        self._directory = directory
        self._events = events
        self._admin: bool | None = None
        self._peers: set[str] | None = None

    async def hidden(self, profile: UserProfile) -> list[ContactField]:
        """The contact fields of ``profile`` the viewer may not see (only fields that have a value)."""
        private = [f for f in CONTACT_FIELDS if getattr(profile, f) and f not in profile.shared]
        if not private or profile.user_id == self.viewer_id:
            return []
        if await self._is_admin() or profile.user_id in await self._event_peers():
            return []
        return private

    async def _is_admin(self) -> bool:
        if self._admin is None:
            self._admin = await self._directory.is_admin(self.viewer_id)
        return self._admin

    async def _event_peers(self) -> set[str]:
        if self._peers is None:
            self._peers = set() if self._events is None else await event_peers(self._events, self.viewer_id)
        return self._peers

"""Where a turn's device requests are posted: never where people other than the one asked can read them.

A request carries what it asks (a dialog's text, the people to invite, the message to relay). In a
1:1 channel of the person and the assistant it is posted right there. In a channel of several
people it goes to the person's own 1:1 channel with the assistant (created if missing, as
invitations are), and the group only hears, in a neutral line, that something waits for them there.
"""

from __future__ import annotations

import logging

from ..backends.users import UserDirectory, UserDirectoryError
from ..channels.members import Members
from ..channels.relay import Relay, RelayError

log = logging.getLogger(__name__)


class PrivateRequests:
    """Finds the channel a person's device requests go to, and how the group names that person."""

    def __init__(self, *, members: Members, relay: Relay, users: UserDirectory, bot_user_id: str) -> None:
        self.members = members
        self.relay = relay
        self.users = users
        self.bot_user_id = bot_user_id

    async def channel_for(self, channel_url: str, user_id: str) -> str | None:
        """The person's 1:1 channel with the assistant when ``channel_url`` is not one (None: it is).

        Members that cannot be known count as several people: a request is never shown to a group
        by mistake. Raises :class:`RelayError` when the 1:1 channel cannot be had.
        """
        if await self.alone_with(channel_url, user_id):
            return None
        try:
            direct = await self.relay.direct_channel(user_id)
        except ValueError as exc:  # an empty id: no channel to be had
            raise RelayError(str(exc)) from exc
        return None if direct == channel_url else direct

    async def alone_with(self, channel_url: str, user_id: str) -> bool:
        """Whether the channel is the person's own with the assistant (members that cannot be known
        count as several people)."""
        ids = await self.members.of(channel_url)
        return ids is not None and self.bot_user_id in ids and set(ids) - {self.bot_user_id} <= {user_id}

    async def name_of(self, user_id: str) -> str:
        """How the group is told whom a request went to: the person's name, else their user id."""
        try:
            profile = await self.users.get_profile(user_id)
        except UserDirectoryError:
            log.warning("could not look up the name of %s", user_id, exc_info=True)
            return user_id
        return profile.name if profile is not None and profile.name else user_id

"""What the user directory says about the person a turn is for: their profile, time zone and membership
(member or guest)."""

from __future__ import annotations

from dataclasses import dataclass

from ..backends.users import DirectoryReads, UserDirectory, UserDirectoryError, UserProfile
from ..protocol.addresses import phone_of
from ..store.reads import Batch, Slot
from ..store.records import Membership


@dataclass(frozen=True)
class Person:
    """The person a step runs for, as the directory knows them: looked up once per step."""

    profile: UserProfile | None
    membership: Membership


async def profile_of(users: UserDirectory, user_id: str) -> UserProfile | None:
    """The person's directory profile; None when unknown, or when the directory cannot say."""
    try:
        return await users.get_profile(user_id)
    except UserDirectoryError:
        return None


async def person_of(users: UserDirectory, user_id: str) -> Person:
    """The person's profile and membership in one lookup: 'member' for people in the directory, 'guest' for
    everyone else (invited guests); with no directory at all (nothing imported, no users API)
    everyone is a member. A person reached by phone (``tel:``) is always a guest: no directory id is one.

    A directory that cannot say fails the step (it is retried): a member is never taken for a guest.
    """
    if phone_of(user_id) is not None:
        return Person(None, "guest")
    profile = await users.get_profile(user_id)
    return _person(profile, profile is None and await users.has_users())


def _person(profile: UserProfile | None, has_users: bool) -> Person:
    return Person(None, "guest") if profile is None and has_users else Person(profile, "member")


class PersonLookup:
    """:func:`person_of` or :func:`profile_of`, sent with a step's other reads when the directory is
    in the server's Redis (no round trip of its own), else asked of the directory when awaited."""

    def __init__(self, users: UserDirectory, batch: Batch, user_id: str, *, membership: bool = False) -> None:
        self._users, self._user_id = users, user_id
        self._profile: Slot[UserProfile | None] | None = None
        self._has_users: Slot[bool] | None = None
        if isinstance(users, DirectoryReads):
            self._profile = batch.add(users.profile_read(user_id))
            if membership:
                self._has_users = batch.add(users.has_users_read())

    async def person(self) -> Person:
        """As :func:`person_of` (the lookup was made with ``membership=True``)."""
        if self._profile is None or self._has_users is None or phone_of(self._user_id) is not None:
            return await person_of(self._users, self._user_id)
        return _person(self._profile.value, self._has_users.value)

    async def profile(self) -> UserProfile | None:
        """As :func:`profile_of`."""
        if self._profile is None:
            return await profile_of(self._users, self._user_id)
        return self._profile.value

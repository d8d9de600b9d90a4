"""What the user directory says about the person a turn is for: their profile, time zone and role."""

from __future__ import annotations

from dataclasses import dataclass

from ..backends.users import UserDirectory, UserDirectoryError, UserProfile
from ..store.records import AgentRole


@dataclass(frozen=True)
class Person:
    """The person a step runs for, as the directory knows them: looked up once per step."""

    profile: UserProfile | None
    role: AgentRole


async def profile_of(users: UserDirectory, user_id: str) -> UserProfile | None:
    """The person's directory profile; None when unknown, or when the directory cannot say."""
    try:
        return await users.get_profile(user_id)
    except UserDirectoryError:
        return None


async def person_of(users: UserDirectory, user_id: str) -> Person:
    """The person's profile and role in one lookup: 'member' for people in the directory, 'guest' for
    everyone else (invited guests); with no directory at all (nothing imported, no users API)
    everyone is a member.

    A directory that cannot say fails the step (it is retried): a member is never taken for a guest.
    """
    profile = await users.get_profile(user_id)
    if profile is not None or not await users.has_users():
        return Person(profile, "member")
    return Person(None, "guest")

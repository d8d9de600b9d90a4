"""What the user directory says about the person a turn is for: their profile, time zone and role."""

from __future__ import annotations

from zoneinfo import ZoneInfo

from ..backends.users import UserDirectory, UserDirectoryError, UserProfile
from ..store.records import AgentRole
from ..tools.event_messages import zone_of


async def profile_of(users: UserDirectory, user_id: str) -> UserProfile | None:
    """The person's directory profile; None when unknown, or when the directory cannot say."""
    try:
        return await users.get_profile(user_id)
    except UserDirectoryError:
        return None


async def zone_from_directory(users: UserDirectory, user_id: str, default: ZoneInfo) -> ZoneInfo:
    """The person's time zone from the directory; ``default`` when unknown or invalid."""
    return zone_of(await profile_of(users, user_id), default)


async def role_of(users: UserDirectory, user_id: str) -> AgentRole:
    """'member' for people in the directory, 'guest' for everyone else (invited guests).

    With no directory at all (nothing imported, no users API) everyone is a member.
    """
    if await users.is_member(user_id) or not await users.has_users():
        return "member"
    return "guest"

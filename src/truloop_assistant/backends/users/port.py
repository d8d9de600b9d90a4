"""What the tools see of the user directory: a profile, the directory's interface, its error."""

from __future__ import annotations

from typing import Literal, Protocol, runtime_checkable

from pydantic import BaseModel, Field

from ...errors import ServiceError
from ...store.reads import Read

SearchField = Literal["contact", "username", "group", "name"]
ContactField = Literal["email", "phone"]
DirectoryRole = Literal["member", "admin"]


class UserProfile(BaseModel):
    """A person in the app: how to address and reach them, their groups and their external id."""

    user_id: str = Field(min_length=1)
    name: str
    username: str
    eid: str | None = Field(default=None, description="External (employee) id")
    email: str | None = Field(default=None, description="Contact e-mail address")
    phone: str | None = Field(default=None, description="Contact phone number")
    groups: list[str] = Field(default_factory=list)
    title: str | None = None
    timezone: str | None = Field(default=None, description="IANA time zone, e.g. 'Asia/Seoul'")
    role: DirectoryRole = Field(
        default="member", description="'admin': sees everyone's contact details, gets the admin rate limit"
    )
    shared: list[ContactField] = Field(
        default_factory=list, description="Contact details this person shows to every member"
    )


class UserDirectoryError(ServiceError):
    """The user directory failed or answered something unexpected; the message says what."""


class UserDirectory(Protocol):
    """Who is in the app: profiles by id, search, and external ids."""

    async def get_profile(self, user_id: str) -> UserProfile | None:
        """The user's profile, or None for an unknown user."""
        ...

    async def search(
        self, query: str, *, by: SearchField | None = None, limit: int = 10
    ) -> list[UserProfile]:
        """Users matching the query on one field (or any), best first."""
        ...

    async def get_eids(self, user_ids: list[str]) -> dict[str, str | None]:
        """Known users' eids (None: known, no eid); unknown ids are left out."""
        ...

    async def phone_owners(self, numbers: list[str], *, region: str) -> dict[str, list[str]]:
        """E.164 number -> the ids of the members whose phone it is, compared as numbers (a member's
        number written without a country code is read in ``region``); numbers nobody has are left out."""
        ...

    async def is_member(self, user_id: str) -> bool:
        """Whether the directory knows the user."""
        ...

    async def is_admin(self, user_id: str) -> bool:
        """Whether the directory gives the user the admin role.

        False for an unknown user, and when the directory cannot say (the failure is logged): being
        taken for a member is the safe mistake, and a rate limit or a lookup never fails over it.
        """
        ...

    async def has_users(self) -> bool:
        """False for a directory nobody was loaded into: then there are no guests, only members."""
        ...


@runtime_checkable
class DirectoryReads(Protocol):
    """A directory kept in the server's own Redis: its lookups can ride with a step's other reads."""

    def profile_read(self, user_id: str) -> Read[UserProfile | None]: ...

    def admin_read(self, user_id: str) -> Read[bool]: ...

    def has_users_read(self) -> Read[bool]: ...


async def unknown_user_ids(directory: UserDirectory, user_ids: list[str]) -> list[str]:
    """The ids among ``user_ids`` that the directory does not know, in the given order."""
    if not user_ids:
        return []
    known = await directory.get_eids(user_ids)
    return [user_id for user_id in user_ids if user_id not in known]

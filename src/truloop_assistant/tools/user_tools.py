"""Tools to look people up in the app's user directory.

Every member sees everyone's name, username, groups, title and ids; e-mail and phone follow
:mod:`..backends.users.privacy` (withheld fields come back null, with a note the model can explain).
"""

from __future__ import annotations

from collections.abc import Awaitable
from typing import Annotated, TypeVar

from pydantic import BaseModel, Field, StringConstraints
from pydantic_ai import FunctionToolset, RunContext, ToolFailed

from ..backends.users import (
    ContactField,
    ContactVisibility,
    SearchField,
    UserDirectoryError,
    UserProfile,
    found_only_by_fragment,
    unknown_user_ids,
)
from .agent_deps import AgentDeps
from .arguments import UserId, UserIds

user_toolset: FunctionToolset[AgentDeps] = FunctionToolset()

MAX_SEARCH_LIMIT = 50
"""Most users one search lists."""

T = TypeVar("T")


class Person(BaseModel):
    """A directory entry as the current user may see it."""

    user_id: str
    name: str
    username: str
    eid: str | None = Field(description="External (employee) id")
    email: str | None = None
    phone: str | None = None
    groups: list[str]
    title: str | None
    timezone: str | None = Field(description="IANA time zone")
    contact_hidden: str | None = Field(
        default=None, description="Why e-mail or phone is null although the directory has it"
    )

    @classmethod
    def of(cls, profile: UserProfile, hidden: list[ContactField]) -> Person:
        """The profile with the ``hidden`` contact fields left out and a note saying why."""
        shown = profile.model_dump(exclude={"role", "shared", *hidden})
        if not hidden:
            return cls(**shown)
        note = (
            f"{' and '.join(hidden)} not shown: contact details are visible only to the person, admins, "
            "the people they invited to an event and organizers whose invitation they answered, unless "
            "the person shares them"
        )
        return cls(**shown, contact_hidden=note)


class UserSearchResult(BaseModel):
    users: list[Person] = Field(description="Matching users, best matches first; empty if none match")
    count: int = Field(description="How many users are listed")
    more: bool = Field(description="True when more users match than are listed")
    note: str | None = Field(default=None, description="Set when more users match: what to do about it")


class UserEids(BaseModel):
    eids: dict[str, str | None] = Field(description="User id -> external (employee) id; null if none")
    unknown_user_ids: list[str] = Field(
        default_factory=list, description="Requested ids that are not in the directory"
    )


async def directory_call(call: Awaitable[T]) -> T:
    """Await a directory call, turning a directory failure into a failed tool result."""
    try:
        return await call
    except UserDirectoryError as exc:
        raise ToolFailed(f"the user directory is not available right now: {exc}") from None


async def check_users_exist(ctx: RunContext[AgentDeps], user_ids: list[str], *, field: str) -> None:
    """Fail the call, naming them, when some of ``user_ids`` are not in the directory."""
    unknown = await directory_call(unknown_user_ids(ctx.deps.require_backends().users, user_ids))
    if unknown:
        raise ToolFailed(
            f"{field}: no user with id {', '.join(repr(u) for u in unknown)} in the directory; "
            "find the right ids with search_users or ask the user"
        )


def _visibility(ctx: RunContext[AgentDeps]) -> ContactVisibility:
    backends = ctx.deps.require_backends()
    return ContactVisibility(ctx.deps.user_id, backends.users, backends.events)


@user_toolset.tool
async def get_user_profile(ctx: RunContext[AgentDeps], user_id: UserId | None = None) -> Person:
    """A profile (contacts, groups, title, time zone) by user id; without one, the user's own."""
    target = user_id if user_id is not None else ctx.deps.user_id
    profile = await directory_call(ctx.deps.require_backends().users.get_profile(target))
    if profile is None:
        who = "the current user" if user_id is None else f"user {target!r}"
        raise ToolFailed(f"{who} is not in the user directory")
    return Person.of(profile, await directory_call(_visibility(ctx).hidden(profile)))


@user_toolset.tool
async def search_users(
    ctx: RunContext[AgentDeps],
    query: Annotated[str, StringConstraints(strip_whitespace=True, min_length=1, max_length=200)],
    by: Annotated[SearchField | None, Field(description="Only this field; contact: e-mail or phone")] = None,
    limit: Annotated[int, Field(ge=1, le=MAX_SEARCH_LIMIT)] = 10,
) -> UserSearchResult:
    """Directory people by name, username, group, e-mail or phone (partial match), best first, with
    user ids; count: how many are listed; more: if more match."""
    # One more than asked for tells whether there are more.
    users = await directory_call(ctx.deps.require_backends().users.search(query, by=by, limit=limit + 1))
    visibility = _visibility(ctx)
    found = []
    for user in users:
        hidden = await directory_call(visibility.hidden(user))
        if not found_only_by_fragment(query, by, user, hidden):
            found.append(Person.of(user, hidden))
    listed = found[:limit]
    if len(found) <= limit:
        return UserSearchResult(users=listed, count=len(listed), more=False)
    note = (
        f"more than {limit} users match; ask the user who they mean, narrow the query (or by), "
        f"or search again with a higher limit (at most {MAX_SEARCH_LIMIT})"
    )
    return UserSearchResult(users=listed, count=len(listed), more=True, note=note)


@user_toolset.tool
async def get_user_eids(
    ctx: RunContext[AgentDeps],
    user_ids: Annotated[UserIds, Field(min_length=1)],
) -> UserEids:
    """Employee ids (EIDs) in HR systems, not user ids: only when the user asks for an EID or
    employee number."""
    eids = await directory_call(ctx.deps.require_backends().users.get_eids(user_ids))
    unknown = [i for i in user_ids if i not in eids]
    if len(unknown) == len(user_ids):
        raise ToolFailed(f"no user with id {', '.join(repr(u) for u in unknown)} in the directory")
    return UserEids(eids={i: eids[i] for i in user_ids if i in eids}, unknown_user_ids=unknown)

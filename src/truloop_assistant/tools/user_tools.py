"""Tools to look people up in the app's user directory."""

from __future__ import annotations

from collections.abc import Awaitable
from typing import Annotated, TypeVar

from pydantic import BaseModel, Field, StringConstraints
from pydantic_ai import FunctionToolset, RunContext, ToolFailed

from ..backends.users import SearchField, UserDirectoryError, UserProfile, unknown_user_ids
from .arguments import MAX_USER_IDS, UserId, UserIds
from .deps import AgentDeps

user_toolset: FunctionToolset[AgentDeps] = FunctionToolset()

T = TypeVar("T")


class UserSearchResult(BaseModel):
    users: list[UserProfile] = Field(description="Matching users, best matches first; empty if none match")


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


@user_toolset.tool
async def get_user_profile(
    ctx: RunContext[AgentDeps],
    user_id: Annotated[UserId | None, Field(description="The user's id; omit for the current user")] = None,
) -> UserProfile:
    """Return a user's profile (name, username, contacts, groups, title, time zone) from the directory."""
    target = user_id if user_id is not None else ctx.deps.user_id
    profile = await directory_call(ctx.deps.require_backends().users.get_profile(target))
    if profile is None:
        who = "the current user" if user_id is None else f"user {target!r}"
        raise ToolFailed(f"{who} is not in the user directory")
    return profile


@user_toolset.tool
async def search_users(
    ctx: RunContext[AgentDeps],
    query: Annotated[
        str,
        StringConstraints(strip_whitespace=True, min_length=1, max_length=200),
        Field(description="What to look for: a name, username, group, e-mail or phone number"),
    ],
    by: Annotated[
        SearchField | None,
        Field(description="Field to search: 'contact' (e-mail or phone), 'username', 'group' or 'name'"),
    ] = None,
    limit: Annotated[int, Field(ge=1, le=50, description="Most users to return, 1 to 50")] = 10,
) -> UserSearchResult:
    """Find users in the directory by name, username, group or contact (partial, case-insensitive)."""
    users = await directory_call(ctx.deps.require_backends().users.search(query, by=by, limit=limit))
    return UserSearchResult(users=users)


@user_toolset.tool
async def get_user_eids(
    ctx: RunContext[AgentDeps],
    user_ids: Annotated[
        UserIds, Field(min_length=1, description=f"User ids to look up, 1 to {MAX_USER_IDS}")
    ],
) -> UserEids:
    """Return the external (employee) ids of users."""
    eids = await directory_call(ctx.deps.require_backends().users.get_eids(user_ids))
    unknown = [i for i in user_ids if i not in eids]
    if len(unknown) == len(user_ids):
        raise ToolFailed(f"no user with id {', '.join(repr(u) for u in unknown)} in the directory")
    return UserEids(eids={i: eids[i] for i in user_ids if i in eids}, unknown_user_ids=unknown)

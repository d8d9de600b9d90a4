"""The fake Sendbird's view of one user's group channels: listing them, and counting them.

What each behaviour is based on (Sendbird's Platform API v3 docs and SDKs, as read for this fake):

- ``GET /v3/users/{user_id}/my_group_channels``: docs, "List group channels by user"; its parameters
  and their allowed values from sendbird-platform-sdk-python ``docs/UserApi.md``
  (``list_my_group_channels``) and ``sendbird_platform_sdk/api/user_api.py`` (``allowed_values``):
  - only channels ``user_id`` is a member of, in the order they were made (``order=chronological``,
    the default, is the only order this fake knows);
  - ``limit`` 1 to 100 (default 10), ``token`` a page token; the answer is
    ``{"channels": [...], "next": "...", "ts": ...}`` (``docs/ListMyGroupChannelsResponse.md``). The
    docs call ``next`` the token of the next page; what the last page carries is not shown there:
    this fake answers ``""``;
  - ``members_exactly_in`` (comma-separated ids): channels whose members, besides ``user_id``, are
    exactly those (the Chat SDK docs, "Filter group channels by user IDs": with one id, the current
    user's 1-to-1 channels with that user). "Only user IDs that match those of existing users are used
    for channel search" (``docs/UserApi.md``): unknown ids are dropped. What Sendbird does when none is
    left is not stated; this fake then filters on members not at all, the worst case for a caller;
  - ``show_empty`` (default false): "Empty channels are channels that have been created but that don't
    have any messages" (docs, "List group channels"); here, a channel nothing was sent to;
  - ``show_member`` (default false): ``members`` only when true; ``show_frozen`` (default true);
  - ``distinct_mode`` all/distinct/nondistinct, ``super_mode`` all/super/nonsuper, ``public_mode``
    all/public/private (each default all); ``member_state_filter`` all/invited_only/joined_only/
    invited_by_friend/invited_by_non_friend, on ``user_id``'s own ``state`` (a member listed without
    one has joined; this fake has no friends, so the two "by friend" values list nothing);
    ``hidden_mode`` unhidden_only (default)/hidden_only/hidden_allow_auto_unhide/
    hidden_prevent_auto_unhide/all: nothing is ever hidden here, so ``hidden_only`` lists nothing.
    A value outside these: 400 with 400111 (the docs' InvalidValue; the code for it is not stated);
- ``GET /v3/users/{user_id}/group_channel_count``: docs, "Get number of channels by join status";
  sendbird-platform-sdk-python 2.0 ``docs/UserApi.md`` (``view_number_of_channels_by_join_status``) and
  ``docs/ViewNumberOfChannelsByJoinStatusResponse.md`` (``group_channel_count``). ``state`` joined or
  invited (the Chat SDK sends ``all`` when no filter is set: both), ``hidden_mode`` as above,
  ``super_mode`` all/super/nonsuper, ``custom_types`` comma-separated.
- Both: 401 with 400401 without the right ``Api-Token`` (as every endpoint of this fake); a
  ``user_id`` Sendbird does not know: 400 with 400201 (docs, Error codes: ResourceNotFound); each
  counts as a ``lookup`` against the fake's rate limits.
"""

from __future__ import annotations

import base64
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

if TYPE_CHECKING:
    from tests.fakes.sendbird import FakeSendbird

LISTING_MODES = {
    "distinct_mode": {"all", "distinct", "nondistinct"},
    "super_mode": {"all", "super", "nonsuper"},
    "public_mode": {"all", "public", "private"},
    "member_state_filter": {
        "all",
        "invited_only",
        "joined_only",
        "invited_by_friend",
        "invited_by_non_friend",
    },
    "hidden_mode": {
        "all",
        "unhidden_only",
        "hidden_only",
        "hidden_allow_auto_unhide",
        "hidden_prevent_auto_unhide",
    },
}
COUNT_MODES = {
    "state": {"all", "joined", "invited"},
    "super_mode": LISTING_MODES["super_mode"],
    "hidden_mode": LISTING_MODES["hidden_mode"],
}


@dataclass
class Listing:
    """A listing of a user's channels as it arrived: whose, and its query parameters."""

    user_id: str
    params: dict[str, str]
    at: float = field(default_factory=time.monotonic)


@dataclass
class UserChannels:
    """``my_group_channels`` and ``group_channel_count`` over the fake's channels."""

    listings: list[Listing] = field(default_factory=list)
    """Every listing that passed the token check, in arrival order (failed ones too)."""
    counts: int = 0
    """How many times a user's group channels were counted."""
    failures: list[int] = field(default_factory=list)
    """Statuses (a 429 or a 5xx) to answer the next listings with, before answering them."""

    def routes(self, fake: FakeSendbird) -> list[Route]:
        return [
            Route("/v3/users/{user_id}/my_group_channels", _handler(fake, self._list), methods=["GET"]),
            Route("/v3/users/{user_id}/group_channel_count", _handler(fake, self._count), methods=["GET"]),
        ]

    def _list(self, fake: FakeSendbird, user_id: str, query: dict[str, str]) -> JSONResponse:
        self.listings.append(Listing(user_id, query))
        if self.failures:
            status = self.failures.pop(0)
            return _error(status, 500910 if status == 429 else 500901, "Try again.")
        if (bad := _bad_modes(query, LISTING_MODES)) is not None:
            return bad
        try:
            limit = int(query.get("limit", "10"))
            start = int(base64.b64decode(query.get("token") or "MA==").decode())
        except ValueError:
            return _error(400, 400111, '"limit" or "token" is not valid.')
        if not 1 <= limit <= 100 or start < 0:
            return _error(400, 400111, '"limit" must be 1 to 100.')
        listed = [c for c in fake.channels.values() if _listed(fake, c, user_id, query)]
        page = listed[start : start + limit]
        following = start + limit
        token = base64.b64encode(str(following).encode()).decode() if following < len(listed) else ""
        with_members = query.get("show_member") == "true"
        channels = [c if with_members else {k: v for k, v in c.items() if k != "members"} for c in page]
        return JSONResponse({"channels": channels, "next": token, "ts": int(time.time() * 1000)})

    def _count(self, fake: FakeSendbird, user_id: str, query: dict[str, str]) -> JSONResponse:
        self.counts += 1
        if (bad := _bad_modes(query, COUNT_MODES)) is not None:
            return bad
        state = {"joined": "joined_only", "invited": "invited_only"}.get(query.get("state", "all"), "all")
        listing = {
            "member_state_filter": state,
            "super_mode": query.get("super_mode", "all"),
            "hidden_mode": query.get("hidden_mode", "unhidden_only"),
            "show_empty": "true",
        }
        types = {t for t in query.get("custom_types", "").split(",") if t}
        count = sum(
            1
            for c in fake.channels.values()
            if _listed(fake, c, user_id, listing) and (not types or c.get("custom_type", "") in types)
        )
        return JSONResponse({"group_channel_count": count})


Answer = Callable[["FakeSendbird", str, dict[str, str]], JSONResponse]


def _handler(fake: FakeSendbird, answer: Answer) -> Callable[[Request], Any]:
    """The checks every user-channel endpoint makes first: the rate limits, the token, the user."""

    async def handle(request: Request) -> JSONResponse:
        if (limited := fake._rate_limited("lookup")) is not None:
            return limited
        if (denied := fake._unauthorized(request)) is not None:
            return denied
        user_id = request.path_params["user_id"]
        if not fake.application.exists(user_id, known=fake.users):
            return _error(400, 400201, '"User" not found.')
        return answer(fake, user_id, dict(request.query_params))

    return handle


def _listed(fake: FakeSendbird, channel: dict[str, Any], user_id: str, query: dict[str, str]) -> bool:
    """Whether the channel is one of the user's that the query asks for."""
    members = {m.get("user_id"): m for m in channel.get("members", []) if isinstance(m, dict)}
    if user_id not in members:
        return False
    if (exactly := query.get("members_exactly_in")) is not None:
        wanted = {u for u in exactly.split(",") if u and fake.application.exists(u, known=fake.users)}
        if wanted and set(members) != wanted | {user_id}:
            return False
    if query.get("show_empty") != "true" and not fake.in_channel(channel["channel_url"]):
        return False
    if query.get("show_frozen") == "false" and channel.get("freeze"):
        return False
    if query.get("hidden_mode", "unhidden_only") not in ("unhidden_only", "all"):
        return False  # nothing is hidden here
    state = members[user_id].get("state", "joined")
    return all(
        _matches(query.get(name, "all"), value)
        for name, value in (
            ("distinct_mode", "distinct" if channel.get("is_distinct") else "nondistinct"),
            ("super_mode", "super" if channel.get("is_super") else "nonsuper"),
            ("public_mode", "public" if channel.get("is_public") else "private"),
            ("member_state_filter", f"{state}_only"),
        )
    )


def _matches(mode: str, value: str) -> bool:
    return mode == "all" or mode == value


def _bad_modes(query: dict[str, str], modes: dict[str, set[str]]) -> JSONResponse | None:
    for name, allowed in modes.items():
        if name in query and query[name] not in allowed:
            return _error(400, 400111, f'"{name}" must be one of {", ".join(sorted(allowed))}.')
    return None


def _error(status: int, code: int, message: str) -> JSONResponse:
    return JSONResponse({"error": True, "code": code, "message": message}, status_code=status)

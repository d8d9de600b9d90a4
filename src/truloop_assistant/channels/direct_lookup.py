"""Finding a person's existing 1:1 channel with the bot on Sendbird, whatever ``custom_type`` it has.

Sendbird's distinct match takes ``custom_type`` into account: creating a 1:1 channel with the relay's
own type beside one the app made with another gives the person a second chat with the assistant, and
takes one more of the group channels the bot user may join (2,000 by default). So before creating
one, the bot's own channels are listed, narrowed to those with exactly that person in them.

``GET /v3/users/{bot}/my_group_channels`` ("List group channels by user", Platform API v3;
sendbird-platform-sdk-python ``docs/UserApi.md``, ``list_my_group_channels``), with:

- ``members_exactly_in`` = the person: "the current user's distinct 1-to-1 group channels with the
  specified user" when it names one user (Chat SDK docs, "Filter group channels by user IDs"). Only
  ids of existing users are used for the search, so the members of every channel listed are checked
  here as well;
- ``show_empty=true``: a channel without messages yet (one the app just made) is listed too;
- ``show_member=true``, ``super_mode=nonsuper``, ``show_frozen=false``: the members to check, no
  Supergroups (their member list is a preview) and no frozen channels (the bot could not write there);
- ``hidden_mode=all``: a channel the bot hid still is its channel with the person;
- ``member_state_filter=joined_only``: channels the bot only was invited to are not its to write in;
- ``limit`` and ``token``: a page of results and the ``next`` page (``ListMyGroupChannelsResponse``:
  ``channels``, ``next``, ``ts``).

A look-up that cannot be had (429s, 5xx or no answer through its retries, or a refusal) is logged and
answered None: the caller creates the channel then, which for a distinct channel returns the one
Sendbird already has, so no delivery is lost to it.
"""

from __future__ import annotations

import logging
from typing import Any
from urllib.parse import quote

from .platform_http import PlatformClient, PlatformTransportError
from .platform_retry import request_retried

log = logging.getLogger(__name__)

PAGE_SIZE = 20
"""Channels asked for per page (Sendbird allows 1 to 100): a person rarely has more than one or two."""
MAX_PAGES = 3
"""Pages read at most before the look-up gives up and the channel is created (found nothing)."""


async def find_direct_channel(client: PlatformClient, *, bot_user_id: str, user_id: str) -> str | None:
    """The URL of a channel whose members are exactly the bot and ``user_id``; None when Sendbird has
    none, or could not say (see the module's docstring). Distinct ones first, then the oldest."""
    path = f"/v3/users/{quote(bot_user_id, safe='')}/my_group_channels"
    params = {
        "members_exactly_in": user_id,
        "show_empty": "true",
        "show_member": "true",
        "show_frozen": "false",
        "super_mode": "nonsuper",
        "hidden_mode": "all",
        "member_state_filter": "joined_only",
        "distinct_mode": "all",
        "limit": str(PAGE_SIZE),
    }
    for _ in range(MAX_PAGES):
        page = await _page(client, path, params, user_id=user_id)
        if page is None:
            return None
        channels = [c for c in page.get("channels") or [] if _is_direct(c, bot_user_id, user_id)]
        if channels:
            return str(min(channels, key=_preference)["channel_url"])
        token = page.get("next")
        if not isinstance(token, str) or not token:
            return None
        params = {**params, "token": token}
    log.warning("no 1:1 channel with %s among the first %d pages of the bot's channels", user_id, MAX_PAGES)
    return None


async def _page(
    client: PlatformClient, path: str, params: dict[str, str], *, user_id: str
) -> dict[str, Any] | None:
    """One page of the bot's channels; None (logged) when Sendbird gave none."""
    what = f"looking up the 1:1 channel with {user_id}"
    try:
        response = await request_retried(client, "GET", path, params=params, what=what)
    except PlatformTransportError as exc:
        log.warning("%s: no answer from Sendbird (%s); creating it instead", what, exc)
        return None
    try:
        body = response.json()
    except ValueError:
        body = None
    if response.status_code >= 400 or not isinstance(body, dict):
        said = body.get("message") if isinstance(body, dict) else response.text[:200]
        log.warning(
            "%s: Sendbird answered HTTP %d (%s); creating it instead", what, response.status_code, said
        )
        return None
    return body


def _is_direct(channel: Any, bot_user_id: str, user_id: str) -> bool:
    """A channel of exactly the bot and the person (two members), not a Supergroup, not frozen."""
    if not isinstance(channel, dict) or channel.get("is_super") or channel.get("freeze"):
        return False
    url, members = channel.get("channel_url"), channel.get("members")
    if not isinstance(url, str) or not url or not isinstance(members, list) or len(members) != 2:
        return False
    ids = {m.get("user_id") for m in members if isinstance(m, dict)}
    count = channel.get("member_count")
    return ids == {bot_user_id, user_id} and (not isinstance(count, int) or count == 2)


def _preference(channel: dict[str, Any]) -> tuple[bool, int]:
    """Distinct channels first (what Sendbird's own 1:1 creation returns), then the oldest."""
    created = channel.get("created_at")
    return (not channel.get("is_distinct"), created if isinstance(created, int) else 0)

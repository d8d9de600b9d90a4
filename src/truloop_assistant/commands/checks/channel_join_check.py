"""How many group channels the bot user has joined, beside how many Sendbird lets it join.

The bot is one Sendbird user and joins every person's 1:1 channel with it (and every group it is
added to). Sendbird lets a user join 2,000 group channels unless it raised that for the application
(``TRULOOP_SENDBIRD_CHANNEL_JOIN_LIMIT``); past it no new channel can be made (``Maximum "channel
join" count reached.``), so invitations and requests to people without a channel fail. The count is
``GET /v3/users/{user_id}/group_channel_count`` ("Get number of channels by join status", Platform API
v3; sendbird-platform-sdk-python 2.0 ``docs/UserApi.md``, ``view_number_of_channels_by_join_status``):
``state=joined`` counts the channels joined (not those only invited to), ``hidden_mode=all`` the
hidden ones too (the default counts only unhidden ones), ``super_mode=all`` Supergroups too; the
answer is ``{"group_channel_count": N}``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any
from urllib.parse import quote

from .outcome import Check

if TYPE_CHECKING:
    import httpx

    from ...config import SendbirdSettings

NAME = "sendbird channels"
WARN_PERCENT = 80
"""Past this share of the limit, doctor warns: there is still time to have it raised."""
HOW_TO_RAISE = (
    "ask Sendbird support (or your account manager) to raise the bot user's channel-join limit, then "
    "set TRULOOP_SENDBIRD_CHANNEL_JOIN_LIMIT to the new one; or delete group channels no longer used"
)


def check_channel_joins(client: httpx.Client, settings: SendbirdSettings) -> Check:
    """``ok`` well under the limit, ``WARN`` past ``WARN_PERCENT`` of it, ``FAIL`` at it; ``skip`` when
    Sendbird does not say."""
    import httpx

    bot = settings.sendbird_bot_user_id
    params = {"state": "joined", "hidden_mode": "all", "super_mode": "all"}
    try:
        response = client.get(f"/v3/users/{quote(bot, safe='')}/group_channel_count", params=params)
        body = response.json()
    except (httpx.HTTPError, ValueError) as exc:
        return Check(NAME, "skip", f"cannot count the bot user's group channels ({exc})")
    count = _count(body) if response.status_code == 200 else None
    if count is None:
        said = body.get("message") if isinstance(body, dict) else None
        return Check(
            NAME,
            "skip",
            f"cannot count the bot user's group channels: Sendbird answered {response.status_code}"
            + (f" ({said})" if said else ""),
        )
    limit = settings.sendbird_channel_join_limit
    joined = f"bot user {bot!r} has joined {count:,} of the {limit:,} group channels Sendbird lets it join"
    percent = count * 100 // limit
    if count >= limit:
        return Check(
            NAME,
            "FAIL",
            f"{joined}: no new 1:1 channel can be made, so invitations and requests to people who have "
            f"none fail. To go on, {HOW_TO_RAISE}",
        )
    if count * 100 > limit * WARN_PERCENT:
        return Check(
            NAME,
            "WARN",
            f"{joined} ({percent} %, past {WARN_PERCENT} %): once it is reached, no new 1:1 channel can "
            f"be made. Before then, {HOW_TO_RAISE}",
        )
    return Check(NAME, "ok", f"{joined} ({percent} %)")


def _count(body: Any) -> int | None:
    """``group_channel_count`` (a number, per the SDK's model) as a whole number; None if absent."""
    value = body.get("group_channel_count") if isinstance(body, dict) else None
    if isinstance(value, bool) or not isinstance(value, int | float) or value < 0:
        return None
    return int(value)

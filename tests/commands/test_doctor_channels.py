"""``doctor`` shows how many group channels the bot user has joined beside Sendbird's limit, and
warns while there is time to have it raised."""

from __future__ import annotations

from pathlib import Path

from tests.commands.test_doctor import doctor, sendbird_env
from tests.fakes.sendbird import FakeSendbird
from tests.support import BOT
from truloop_assistant.commands.sendbird import WEBHOOK_CATEGORIES


def joined(sendbird: FakeSendbird, n: int) -> None:
    """The bot user in ``n`` group channels (1:1 channels with people, and one group)."""
    sendbird.users[BOT] = {"user_id": BOT, "nickname": "Truloop"}
    for i in range(n - 1):
        sendbird.add_app_direct_channel(f"dm-{i}", f"person-{i}", bot=BOT)
    sendbird.add_channel("team", [BOT, "jeff", "mina"])
    sendbird.add_channel("theirs", ["jeff", "mina"])  # not the bot's: not counted


def channels_line(lines: list[str]) -> str:
    [line] = [line for line in lines if line[6:].startswith("sendbird channels:")]
    return line


async def test_well_under_the_limit_the_count_is_shown_and_nothing_more(
    tmp_path: Path, redis_url: str, sendbird: FakeSendbird
) -> None:
    joined(sendbird, 8)
    sendbird.application.webhook["enabled_events"] = list(WEBHOOK_CATEGORIES)  # as `sendbird setup` sets

    code, lines = await doctor(tmp_path, **sendbird_env(redis_url, sendbird))

    assert code == 0, lines
    assert channels_line(lines) == (
        f"ok    sendbird channels: bot user {BOT!r} has joined 8 of the 2,000 group channels Sendbird "
        "lets it join (0 %)"
    )
    assert not any(line.startswith(("WARN", "FAIL")) for line in lines), lines


async def test_past_80_percent_of_a_raised_limit_it_warns_and_says_how_to_raise_it(
    tmp_path: Path, redis_url: str, sendbird: FakeSendbird
) -> None:
    joined(sendbird, 9)
    env = sendbird_env(redis_url, sendbird, TRULOOP_SENDBIRD_CHANNEL_JOIN_LIMIT="10")

    code, lines = await doctor(tmp_path, **env)

    assert code == 0, lines  # a warning: everything still works
    assert channels_line(lines) == (
        f"WARN  sendbird channels: bot user {BOT!r} has joined 9 of the 10 group channels Sendbird lets "
        "it join (90 %, past 80 %): once it is reached, no new 1:1 channel can be made. Before then, ask "
        "Sendbird support (or your account manager) to raise the bot user's channel-join limit, then set "
        "TRULOOP_SENDBIRD_CHANNEL_JOIN_LIMIT to the new one; or delete group channels no longer used"
    )

    # At 80 % exactly it is not past it yet.
    code, lines = await doctor(tmp_path, **{**env, "TRULOOP_SENDBIRD_CHANNEL_JOIN_LIMIT": "12"})
    assert code == 0
    assert channels_line(lines).startswith("ok    sendbird channels: ")


async def test_at_the_limit_doctor_fails_with_what_stops_working(
    tmp_path: Path, redis_url: str, sendbird: FakeSendbird
) -> None:
    joined(sendbird, 10)
    env = sendbird_env(redis_url, sendbird, TRULOOP_SENDBIRD_CHANNEL_JOIN_LIMIT="10")

    code, lines = await doctor(tmp_path, **env)

    assert code == 1
    line = channels_line(lines)
    assert line.startswith(
        f"FAIL  sendbird channels: bot user {BOT!r} has joined 10 of the 10 group channels Sendbird lets "
        "it join: no new 1:1 channel can be made, so invitations and requests to people who have none fail"
    )
    assert "ask Sendbird support" in line and "delete group channels no longer used" in line


async def test_a_count_sendbird_does_not_give_is_skipped(
    tmp_path: Path, redis_url: str, sendbird: FakeSendbird
) -> None:
    joined(sendbird, 3)
    sendbird.throttle("lookup", 1)

    code, lines = await doctor(tmp_path, **sendbird_env(redis_url, sendbird))

    assert code == 0, lines
    assert channels_line(lines) == (
        "skip  sendbird channels: cannot count the bot user's group channels: Sendbird answered 429 "
        "(Too many requests (scope: app).)"
    )

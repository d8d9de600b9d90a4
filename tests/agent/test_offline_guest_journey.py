"""The guest flow with no LLM key, through the server: the organizer invites a guest in a group
channel, the guest answers in their own chat, the organizer sees it and cancels."""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any
from zoneinfo import ZoneInfo

from tests.support import BOT, Harness

GUEST = "guest-kim"
SEOUL = ZoneInfo("Asia/Seoul")


async def says(h: Harness, words: str, *, user: str, channel: str, **kwargs: Any) -> str:
    """``user`` writes ``words`` in ``channel``; the assistant's answer there."""
    answered = len(h.texts(channel))
    assert (await h.user_says(words, user=user, channel=channel, **kwargs)).status_code == 200
    return (await h.replies(answered + 1, channel=channel))[answered].text


async def confirms(h: Harness, words: str, *, user: str, channel: str, **kwargs: Any) -> tuple[str, str]:
    """``user`` asks for something that needs their yes, and says yes: the dialog's text and the answer.

    In a group (``mentions`` given) the dialog is asked in the user's 1:1 channel, and the group first
    hears that it went there.
    """
    asked, answered = sum(m.is_rpc for m in h.sendbird.messages), len(h.texts(channel))
    await h.user_says(words, user=user, channel=channel, **kwargs)
    await h.sendbird.wait_for(lambda msgs: sum(m.is_rpc for m in msgs) > asked)
    sent = [m for m in h.sendbird.messages if m.is_rpc][asked]
    assert sent.channel_url == (h.direct_channel(user) if "mentions" in kwargs else channel)
    assert sent.rpc["method"] == "interaction.confirm"
    await h.answer(sent.rpc["id"], result={"confirmed": True}, user=user)
    answered += "mentions" in kwargs
    return sent.rpc["params"]["message"], (await h.replies(answered + 1, channel=channel))[answered].text


async def test_a_guest_is_invited_answers_with_dates_and_hears_of_the_cancellation(
    start_server: Any, directory: Any
) -> None:
    group = {"members": ["jeff", "mina", BOT], "mentions": [BOT]}
    async with start_server() as h:
        _, created = await confirms(
            h, f"@{BOT} 내일 12시에 점심 잡아줘 @mina 게스트 @{GUEST}", user="jeff", channel="team", **group
        )
        assert created.startswith("일정을 만들었어요: “점심” ")
        assert created.endswith(f"게스트 {GUEST}님에게 대화방으로 초대장을 보냈어요.")

        await h.idle()
        chat = h.direct_channel(GUEST)
        [invitation] = h.texts(chat)
        assert "점심" in invitation

        listed = await says(h, "what am I invited to?", user=GUEST, channel=chat)
        assert listed.startswith("You're invited to:\n- ") and "점심 · organized by Jeff Kim" in listed

        today = datetime.now(SEOUL).date()
        days = [today + timedelta(days=d) for d in (2, 3)]
        saved = await says(
            h, f"I can make it on {days[0].isoformat()} and {days[1].isoformat()}", user=GUEST, channel=chat
        )
        assert saved.startswith("Saved your dates for “점심”: ") and saved.endswith(
            "The organizer can see them."
        )

        details = await says(
            h, "점심 약속에 게스트들이 가능하다고 한 날짜 자세히 보여줘", user="jeff", channel="jeff-1"
        )
        assert f"- {GUEST}: {days[0].month}월 {days[0].day}일" in details

        _, cancelled = await confirms(h, "점심 약속 취소해줘", user="jeff", channel="jeff-1")
        assert cancelled.endswith(f"“점심” 일정을 취소했어요. mina, {GUEST}님에게 알렸어요.")
        await h.idle()
        assert len(h.texts(chat)) == 4  # the invitation, two answers, and the cancellation
        assert "점심" in h.texts(chat)[-1]

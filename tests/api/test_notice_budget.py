"""Notes from the server itself (too long, too fast) are metered: any chat user can provoke them,
so they count against the sender's rate, a person gets a few at most in all their channels, and they go
only from budget the app has to spare, never at the cost of someone's answer.
"""

from __future__ import annotations

import asyncio
import time
from typing import Any

from tests.api.test_limits import echo
from tests.fakes.sendbird import FakeSendbird
from tests.support import BOT

NOTES = 3
"""Notes a person gets per ten minutes (``keys.NOTICES_PER_WINDOW``)."""


def notes_to(sendbird: FakeSendbird, prefix: str) -> list[str]:
    return [m.text for m in sendbird.messages if m.channel_url.startswith(prefix)]


async def test_sixty_over_long_messages_bring_a_few_notes_and_others_answers_are_not_held_back(
    start_server: Any, sendbird: FakeSendbird
) -> None:
    sendbird.enforce_plan("free-trial")
    async with start_server(model=echo(), sendbird_rates=None, max_message_chars=100) as h:
        flood = [
            h.user_says("x" * 200, user="mallory", channel=f"mallory-{n % 6}", members=["mallory", BOT])
            for n in range(60)
        ]
        assert {r.status_code for r in await asyncio.gather(*flood)} == {200}
        started = time.monotonic()
        await h.user_says("hello", user="jeff", channel="jeff-1", members=["jeff", BOT])
        [reply] = await h.replies(1, channel="jeff-1")
        waited = time.monotonic() - started
        await h.idle()
        await asyncio.sleep(0.5)  # the notes go in the background: any still coming has arrived
    notes = notes_to(sendbird, "mallory-")
    assert 1 <= len(notes) <= NOTES, notes  # (60 notes before)
    assert reply.text and waited < 3.0, waited


async def test_a_person_is_told_they_send_too_fast_once_wherever_they_write(start_server: Any) -> None:
    async with start_server(model=echo(), rate_limit_user="3/minute") as h:
        statuses = []
        for n in range(4):  # three turns in their own channel, then the limit
            r = await h.user_says(f"hi {n}", user="mallory", channel="mallory-0", members=["mallory", BOT])
            statuses.append(r.json()["status"])
        for n in range(5):  # five new channels: no new note in each (before: one per channel)
            r = await h.user_says("hi", user="mallory", channel=f"mallory-new-{n}", members=["mallory", BOT])
            statuses.append(r.json()["status"])
        await h.idle()
        await asyncio.sleep(0.5)
        notes = [t for t in notes_to(h.sendbird, "mallory-") if t != "ok"]
    assert statuses == ["queued"] * 3 + ["ignored"] * 6
    assert len(notes) == 1 and notes[0].startswith("You're sending messages too fast"), notes


async def test_an_over_long_message_counts_against_the_senders_rate(start_server: Any) -> None:
    async with start_server(model=echo(), rate_limit_user="3/minute", max_message_chars=100) as h:
        for _ in range(3):
            r = await h.user_says("x" * 200, user="mallory", channel="mallory-0", members=["mallory", BOT])
            assert r.json() == {"status": "ignored"}
        r = await h.user_says("a short one", user="mallory", channel="mallory-0", members=["mallory", BOT])
        # The three refused ones counted: the fourth message is over the rate, and not run.
        assert r.json() == {"status": "ignored"}
        await h.idle()
        assert "ok" not in h.texts("mallory-0")


async def test_a_note_goes_only_from_spare_budget(start_server: Any, sendbird: FakeSendbird) -> None:
    sendbird.enforce_plan("free-trial")
    async with start_server(model=echo(), sendbird_rates=None, max_message_chars=100) as h:
        users = [f"user-{n}" for n in range(12)]
        await asyncio.gather(
            *(h.user_says("hello", user=u, channel=f"chat-{u}", members=[u, BOT]) for u in users)
        )
        await sendbird.wait_for(lambda ms: len(ms) >= 5, timeout=20)
        # Answers wait for the POST budget: a note asked for now is skipped, not queued behind them.
        await h.user_says("x" * 200, user="mallory", channel="mallory-0", members=["mallory", BOT])
        for u in users:
            await h.replies(1, channel=f"chat-{u}", timeout=20)
        await h.idle()
        await asyncio.sleep(1.5)  # (a note queued would have gone by now)
    assert notes_to(sendbird, "mallory") == []
    # Unpaced, 7 of the 12 answers would meet a 429 at once. Paced, a send meets one only when the
    # machine delays it past the pacer's margin on its way to the fake (a loaded machine can).
    assert len(sendbird.limited) < len(users) // 2

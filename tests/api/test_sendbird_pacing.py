"""Sendbird's app-wide rate limits, end to end: the server paces its own calls across its processes,
answers go first, every 429 is waited out and tried again, and typing never adds to the queue.

The fake Sendbird limits writes (sends, updates, channel creations) app-wide per second and answers
429 (code 500910, X-RateLimit-* headers) beyond it, as Sendbird does.
"""

from __future__ import annotations

import asyncio
import time
from collections import Counter
from datetime import timedelta
from typing import Any

from pydantic_ai.messages import ModelMessage, ModelResponse, TextPart, UserPromptPart
from pydantic_ai.models.function import AgentInfo, FunctionModel

from tests.api.test_guest_journey import Script, call, confirmed, lunch, remind
from tests.fakes.sendbird import FakeSendbird
from tests.support import BOT

GUESTS = [f"guest-{n:02d}" for n in range(1, 13)]
CONVERSATIONS = 20


async def test_twenty_conversations_and_twelve_invitations_all_arrive_under_five_writes_a_second(
    start_server: Any, directory: Any, sendbird: FakeSendbird
) -> None:
    sendbird.write_limit = 5
    script = Script()

    async def model(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        [*_, prompt] = [str(p.content) for p in messages[-1].parts if isinstance(p, UserPromptPart)] or [""]
        if prompt.startswith("hello from "):
            await asyncio.sleep(0.4)  # long enough to show typing, when there is budget for it
            return ModelResponse(parts=[TextPart(f"hi {prompt.removeprefix('hello from ')}")])
        return script._respond(messages, info)

    async with start_server(model=FunctionModel(model), sendbird_write_rate=5) as h:
        began = time.monotonic()

        async def conversation(n: int) -> None:
            user, channel = f"user-{n:02d}", f"chat-{n:02d}"
            await h.user_says(f"hello from {user}", user=user, channel=channel, members=[user, BOT])

        async def organizer() -> None:
            words = "set up the design lunch"
            script.plans[words] = [call("create_event", **lunch(guest_user_ids=GUESTS))]
            await h.user_says(words, user="jeff", channel="jeff-1")
            [rpc] = await h.rpc_requests(1, channel="jeff-1", timeout=20)
            await h.answer(rpc["id"], result={"confirmed": True})
            await h.replies(1, channel="jeff-1", timeout=20)

        await asyncio.gather(organizer(), *(conversation(n) for n in range(CONVERSATIONS)))
        for n in range(CONVERSATIONS):
            [reply] = await h.replies(1, channel=f"chat-{n:02d}", timeout=20)
            assert reply.text == f"hi user-{n:02d}"
        [created] = script.results["set up the design lunch"]
        assert created.outcome == "success", created
        assert created.json()["invitations"] == dict.fromkeys(GUESTS, "sent")
        await h.idle(timeout=20)
        for guest in GUESTS:
            channel = h.direct_channel(guest)
            assert channel is not None and len(h.texts(channel)) == 1, guest
        took = time.monotonic() - began

        # At most a handful of calls met Sendbird's limit; each was tried again, nothing was lost.
        assert len(sendbird.limited) <= 5, Counter(sendbird.limited)
        # The direct channels were created once per guest, not once per look-up and per message.
        assert sendbird.calls["creation"] <= len(GUESTS) + sendbird.limited.count("creation") + 1
        # Typing: at most one start and one stop per step, and no stop without its start.
        for n in range(CONVERSATIONS):
            calls = sendbird.typing_in(f"chat-{n:02d}")
            starts = sum(c.started for c in calls)
            assert starts <= 1 and len(calls) - starts == starts, [c.started for c in calls]
        assert took < 20


async def test_a_reminder_that_meets_a_429_is_delivered_later(
    start_server: Any, directory: Any, sendbird: FakeSendbird
) -> None:
    script = Script()
    async with start_server(model=script.model()) as h:
        await confirmed(
            h, script, "set up the design lunch", call("create_event", **lunch(guest_user_ids=["guest-lee"]))
        )
        await h.idle()
        lee = h.direct_channel("guest-lee")
        assert lee is not None and len(h.texts(lee)) == 1  # the invitation

        # A day later Sendbird refuses every try of the reminder with 429 (its channel is known).
        later = time.time() + timedelta(days=1, hours=1).total_seconds()
        sendbird.throttle("send", 10)
        assert await remind(h, later) == 0
        assert sendbird.throttled["send"] < 10  # it did try, and was told to wait
        sendbird.throttle("send", 0)

        # Not dropped: once the scanner's claim lapses the reminder goes out, once.
        assert await remind(h, later + 61) == 1
        assert await remind(h, later + 200) == 0
        await h.idle()
        [_, reminder] = h.texts(lee)
        assert reminder.startswith("A reminder: Jeff Kim is waiting for the dates")

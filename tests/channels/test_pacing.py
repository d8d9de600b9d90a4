"""The app-wide pacer against the fake Sendbird enforcing a plan's limits per HTTP method: a burst within
budget waits on nothing, no second ever holds more than the budget (across processes), what people wait
for goes first, a caller that gives up holds nothing, and Sendbird's 429s and stated limits are heeded.

Each ``Pacer`` with its own client stands for a process: they share nothing but Redis.
"""

from __future__ import annotations

import asyncio
import time
from collections import Counter
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import AsyncExitStack, asynccontextmanager

import pytest
from prometheus_client import REGISTRY
from redis.asyncio import Redis

from tests.fakes.sendbird import FakeSendbird
from tests.support import API_TOKEN, BOT
from truloop_assistant.channels.pacing import Pacer, background
from truloop_assistant.channels.platform_http import PlatformClient
from truloop_assistant.channels.sendbird import SendbirdChannel, platform_client
from truloop_assistant.config.sendbird_plans import PLANS
from truloop_assistant.store import keys

FREE_TRIAL = PLANS["free-trial"]
SOME_429S = 2
"""429s a test may meet, each waited out and tried again: the window's margin covers how much calls'
times vary, and a loaded machine (this test's event loop also runs the fake) can vary more."""


async def until(check: Callable[[], Awaitable[int]], timeout: float = 5.0) -> None:
    """Wait until ``check`` answers something true (polled: Redis tells nobody)."""
    async with asyncio.timeout(timeout):
        while not await check():  # noqa: ASYNC110  (Redis is polled: nothing here can be awaited)
            await asyncio.sleep(0.01)


def paced(method: str, kind: str, outcome: str) -> float:
    labels = {"method": method, "kind": kind, "outcome": outcome}
    return REGISTRY.get_sample_value("truloop_sendbird_paced_total", labels) or 0.0


@asynccontextmanager
async def processes(
    sendbird: FakeSendbird, redis: Redis, n: int = 2, budgets: dict[str, float] = FREE_TRIAL
) -> AsyncIterator[list[SendbirdChannel]]:
    """``n`` channels, each with its own client and pacer (one per process), sharing one Redis."""
    async with AsyncExitStack() as stack:
        clients: list[PlatformClient] = [
            await stack.enter_async_context(
                platform_client(sendbird.url, API_TOKEN, pacer=Pacer(redis, budgets))
            )
            for _ in range(n)
        ]
        yield [SendbirdChannel(c, bot_user_id=BOT, backoff_base_s=0.01, backoff_cap_s=0.05) for c in clients]


@pytest.mark.parametrize("redis_url", ["standalone", "cluster"], indirect=True)
async def test_a_burst_within_the_budget_waits_on_nothing_and_no_second_holds_more_than_it(
    sendbird: FakeSendbird, redis: Redis
) -> None:
    sendbird.enforce_plan("free-trial")
    async with processes(sendbird, redis) as (one, other):
        before = paced("POST", "answer", "now")
        await asyncio.gather(
            *(c.send_text(f"ch-{n}", f"m{n}", dedup_id=f"d{n}") for n, c in enumerate([one, other] * 2))
        )
        burst = paced("POST", "answer", "now") - before
        # Twelve more, from both processes at once: they go at Sendbird's pace, none refused.
        await asyncio.gather(
            *(
                c.send_text(f"ch-{n}", f"m{n}", dedup_id=f"d{n}")
                for n, c in enumerate([one, other] * 6, start=4)
            )
        )
    assert burst == 4  # four calls of a budget of five: no schedule to wait on
    assert len(sendbird.messages) == 16 and len(sendbird.limited) <= SOME_429S
    assert sendbird.max_in_a_second("POST") <= 5


async def test_each_method_has_a_budget_of_its_own(sendbird: FakeSendbird, redis: Redis) -> None:
    sendbird.enforce_plan("free-trial")
    async with processes(sendbird, redis, n=1) as (sb,):
        sends = [asyncio.create_task(sb.send_text(f"ch-{n}", "hi", dedup_id=f"d{n}")) for n in range(15)]
        await sendbird.wait_for(lambda m: len(m) >= 5)
        before = paced("PUT", "update", "now") + paced("DELETE", "answer", "now")
        # POST is booked for two seconds; the updates (PUT) and a deletion (DELETE) are not behind it.
        await asyncio.gather(*(sb.settle_rpc("ch-0", 1, data="{}", text="done") for _ in range(4)))
        await sb.delete_message("ch-0", 1)
        at_once = paced("PUT", "update", "now") + paced("DELETE", "answer", "now") - before
        await asyncio.gather(*sends)
    assert at_once == 5
    assert len(sendbird.limited) <= SOME_429S and sendbird.max_in_a_second("POST") <= 5


async def test_callers_that_give_up_waiting_leave_the_budget_to_the_next(
    sendbird: FakeSendbird, redis: Redis
) -> None:
    sendbird.enforce_plan("free-trial")
    async with processes(sendbird, redis) as (one, other):
        await asyncio.gather(*(one.send_text("ch-0", f"m{n}", dedup_id=f"d{n}") for n in range(5)))
        # Thirty invitations wait for the next slots, and their tool's time runs out: all cancelled.
        with background():
            waiting = [
                asyncio.create_task(one.send_text(f"guest-{n}", "come", dedup_id=f"i{n}")) for n in range(30)
            ]
        await asyncio.sleep(0.3)
        for task in waiting:
            task.cancel()
        await asyncio.gather(*waiting, return_exceptions=True)
        await asyncio.sleep(0.9)  # the first five are out of the window
        before = paced("POST", "answer", "now")
        await asyncio.gather(*(other.send_text(f"ch-{n}", "hi", dedup_id=f"a{n}") for n in range(1, 6)))
    # Nobody holds the slots the cancelled callers waited for: the next five go at once.
    assert paced("POST", "answer", "now") - before == 5
    assert not any(m.channel_url.startswith("guest-") for m in sendbird.messages)


async def test_answers_go_first_and_invitations_take_at_most_half_the_budget_meanwhile(
    sendbird: FakeSendbird, redis: Redis
) -> None:
    sendbird.enforce_plan("free-trial")
    async with processes(sendbird, redis) as (inviter, answerer):

        async def invitations() -> None:
            with background():
                await asyncio.gather(
                    *(inviter.send_text(f"guest-{n:02d}", "come", dedup_id=f"i{n}") for n in range(20))
                )

        invited = asyncio.create_task(invitations())
        # The invitations take the whole budget while nobody else wants it; then eight answers come.
        await sendbird.wait_for(lambda m: len(m) >= 5)
        await asyncio.gather(*(answerer.send_text(f"chat-{n}", "hi", dedup_id=f"a{n}") for n in range(8)))
        await invited
    order = ["answer" if m.channel_url.startswith("chat-") else "invitation" for m in sendbird.messages[5:]]
    last_answer = max(i for i, what in enumerate(order) if what == "answer")
    # The answers did not wait behind the fifteen invitations still waiting: all of them were out
    # before the last ten invitations, and they had at least half of the slots while both waited.
    assert order[last_answer + 1 :].count("invitation") >= 10, order
    assert order[: last_answer + 1].count("answer") >= order[: last_answer + 1].count("invitation"), order
    assert len(sendbird.messages) == 28 and len(sendbird.limited) <= SOME_429S
    assert sendbird.max_in_a_second("POST") <= 5


async def test_growing_answers_share_the_spare_budget_fairly(sendbird: FakeSendbird, redis: Redis) -> None:
    sendbird.enforce_plan("free-trial")
    async with processes(sendbird, redis) as pair:
        ids = {}
        for n in range(10):
            ids[n] = await pair[n % 2].post_streamed(f"ch-{n}", "Once", dedup_id=f"s{n}", streaming=True)
        shown: Counter[int] = Counter()

        async def stream(n: int) -> None:
            for tick in range(10):  # an update every 0.3 s for 3 s: ten streams want 33 a second
                if await pair[n % 2].update_streamed(f"ch-{n}", ids[n], f"Once {tick}", streaming=True):
                    shown[n] += 1
                await asyncio.sleep(0.3)

        await asyncio.gather(*(stream(n) for n in range(10)))
    assert len(sendbird.limited) <= SOME_429S and sendbird.max_in_a_second("PUT") <= 5
    assert sum(shown.values()) >= 12  # the budget (about 5 a second) was used
    assert (
        min(shown[n] for n in range(10)) >= 1 and max(shown.values()) - min(shown[n] for n in range(10)) <= 2
    ), shown


async def test_typing_is_skipped_rather_than_queued_while_the_budget_is_short(
    sendbird: FakeSendbird, redis: Redis
) -> None:
    sendbird.enforce_plan("free-trial")
    async with processes(sendbird, redis) as (one, other):
        assert await one.typing_started("ch-0") is True  # an idle budget spares a typing start
        sends = [asyncio.create_task(one.send_text(f"ch-{n}", "hi", dedup_id=f"d{n}")) for n in range(8)]
        await sendbird.wait_for(lambda m: len(m) >= 4)
        assert await other.typing_started("ch-1") is False  # booked: skipped, nothing to stop
        await asyncio.gather(*sends)
    assert [t.channel_url for t in sendbird.typing] == ["ch-0"]
    assert len(sendbird.limited) <= SOME_429S


@pytest.mark.parametrize(("header", "value", "at_least"), [
    ("X-RateLimit-RetryAfter", "0.4", 0.4),  # seconds, as Sendbird's error text gives it
    ("X-RateLimit-RetryAfter", "1400", 1.4),  # a value past 1000 is read as milliseconds
    ("Retry-After", "1", 1.0),
])  # fmt: skip
async def test_a_429_holds_that_method_back_in_every_process_and_no_other(
    sendbird: FakeSendbird, redis: Redis, header: str, value: str, at_least: float
) -> None:
    sendbird.failures = [(429, {header: value})]
    async with processes(sendbird, redis, budgets=PLANS["100k"]) as (one, other):
        started = time.monotonic()
        first = asyncio.create_task(one.send_text("ch-1", "first", dedup_id="d1"))
        hold = keys.platform_pace_keys("POST", "")[2]
        await until(lambda: redis.exists(hold))
        before = paced("DELETE", "answer", "now")
        await other.delete_message("ch-1", 99)  # DELETE is not held back
        await other.send_text("ch-2", "second", dedup_id="d2")  # another process: it waits too
        await first
    assert paced("DELETE", "answer", "now") - before == 1 and sendbird.calls["deletion"] == 1
    assert sorted(m.text for m in sendbird.messages) == ["first", "second"]
    assert min(m.at for m in sendbird.messages) - started >= at_least - 0.05


async def test_a_limit_sendbird_states_becomes_the_methods_budget_in_every_process(
    sendbird: FakeSendbird, redis: Redis
) -> None:
    sendbird.method_limits = {"PUT": 3}  # Sendbird holds this app to 3 updates a second
    wrong = {**FREE_TRIAL, "PUT": 10}  # and the server was told 10
    async with processes(sendbird, redis, budgets=wrong) as pair:
        one = pair[0]
        for n in range(1, 10):
            await one.send_text("ch-1", f"m{n}", dedup_id=f"d{n}")
        await asyncio.gather(*(one.update_streamed("ch-1", n, "x", streaming=False) for n in range(1, 7)))
        refused = len(sendbird.limited)
        updates = [c.update_streamed("ch-1", n, "y", streaming=False) for n in range(1, 10) for c in pair]
        await asyncio.gather(*updates)
    assert 1 <= refused <= 3  # until the first 429 said "3;w=1"
    assert len(sendbird.limited) == refused  # after it, both processes keep to three a second
    assert sendbird.max_in_a_second("PUT") <= 3

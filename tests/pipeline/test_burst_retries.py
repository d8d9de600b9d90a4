"""Several messages in a row after a crash: the job's retry runs the same turn (its first message's),
with every message it had and any that came meanwhile; a turn that had already run answers only the
messages it took then, and the ones that came since are the next turn, not lost."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic_ai.messages import (
    ModelMessage,
    ModelRequest,
    ModelResponse,
    RetryPromptPart,
    TextPart,
    ToolCallPart,
    ToolReturnPart,
    UserPromptPart,
)
from pydantic_ai.models.function import AgentInfo, FunctionModel
from redis.asyncio import Redis

from tests.factories import make_drainer, make_runner
from tests.support import CALENDAR_ARGS, ON_STANDALONE_AND_CLUSTER, make_settings
from truloop_assistant.channels.local import LocalChannel
from truloop_assistant.store import keys
from truloop_assistant.store.inbox import MessageEvent

pytestmark = ON_STANDALONE_AND_CLUSTER

URL = "ch-retry"


class Model:
    """Asks for the calendar when the person's words name it, and says it could not be read once the
    call came back; answers anything else with "re: <what it read>". Notes what each request read."""

    def __init__(self) -> None:
        self.read: list[str] = []

    def model(self) -> FunctionModel:
        def answer(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
            last = messages[-1]
            assert isinstance(last, ModelRequest)
            if any(isinstance(p, ToolReturnPart | RetryPromptPart) for p in last.parts):
                self.read.append("(the call's result)")
                return ModelResponse(parts=[TextPart("your calendar could not be read")])
            text = str(next(p.content for p in reversed(last.parts) if isinstance(p, UserPromptPart)))
            self.read.append(text)
            if "calendar" in text:
                return ModelResponse(parts=[ToolCallPart("get_calendar_events", CALENDAR_ARGS)])
            return ModelResponse(parts=[TextPart(f"re: {text}")])

        return FunctionModel(answer)


def said(message_id: str, text: str) -> MessageEvent:
    return MessageEvent(message_id=message_id, user_id="jeff", text=text)


async def _answers(redis: Redis, settings: Any) -> list[str]:
    channel = LocalChannel(redis, bot_user_id=settings.sendbird_bot_user_id)
    return [m["message"] for m in await channel.messages(URL)]


async def test_a_retry_after_a_crash_answers_the_messages_it_had_and_those_that_came_meanwhile_once(
    redis: Redis, redis_url: str, sendbird: Any
) -> None:
    settings = make_settings(redis_url, sendbird.url, channel="local")
    model = Model()
    runner = make_runner(redis, settings, model=model.model())
    drainer = make_drainer(redis, settings, runner=runner)
    _, owner = await drainer.inbox.push(URL, said("1", "meet tomorrow at 3"))
    await drainer.inbox.push(URL, said("2", "actually 4"))
    assert owner is not None

    real_run, died = runner.model_step.run, []

    async def dies_once(*args: Any, **kwargs: Any) -> bool:
        if not died:  # the worker dies in the step, before it wrote anything; a message comes meanwhile
            died.append(True)
            await drainer.inbox.push(URL, said("3", "call it design review"))
            raise RuntimeError("the worker died")
        return await real_run(*args, **kwargs)

    runner.model_step.run = dies_once  # type: ignore[method-assign]
    with pytest.raises(RuntimeError):
        await drainer.drain(URL, owner)
    await drainer.drain(URL, owner)  # the job's retry, with the same owner

    together = "meet tomorrow at 3\nactually 4\ncall it design review"
    assert model.read == [together]
    assert await _answers(redis, settings) == [f"re: {together}"]  # one answer for the three
    assert await redis.llen(keys.inbox(keys.conversation_tag(URL))) == 0
    [turn] = await drainer.ledger.turns(URL)
    assert turn.turn_id == "m1" and turn.message_ids == ["1", "2", "3"]


async def test_a_turn_that_had_run_answers_only_its_own_messages_and_the_next_one_runs_after(
    redis: Redis, redis_url: str, sendbird: Any
) -> None:
    settings = make_settings(redis_url, sendbird.url, channel="local")
    model = Model()
    runner = make_runner(redis, settings, model=model.model())
    drainer = make_drainer(redis, settings, runner=runner)
    # The calendar failed on jeff's phone too often: the server fails the call itself, and the turn
    # is stored to be resumed at once with its messages still in the inbox.
    await redis.hset(keys.client_failures("jeff"), "get_calendar_events", settings.max_client_failures)
    _, owner = await drainer.inbox.push(URL, said("1", "what's on my calendar"))
    await drainer.inbox.push(URL, said("2", "this week"))
    assert owner is not None

    real_resume, died = runner.resume, []

    async def dies_once(*args: Any, **kwargs: Any) -> None:
        if not died:  # the worker dies as the turn resumes; a message comes meanwhile
            died.append(True)
            await drainer.inbox.push(URL, said("3", "and where is the design review?"))
            raise RuntimeError("the worker died")
        await real_resume(*args, **kwargs)

    runner.resume = dies_once  # type: ignore[method-assign]
    with pytest.raises(RuntimeError):
        await drainer.drain(URL, owner)
    await drainer.drain(URL, owner)  # the retry hands out all three: the turn takes its own two

    assert model.read == [
        "what's on my calendar\nthis week",
        "(the call's result)",
        "and where is the design review?",  # its own turn, after: not swallowed by the first
    ]
    assert await _answers(redis, settings) == [
        "your calendar could not be read",
        "re: and where is the design review?",
    ]
    assert await redis.llen(keys.inbox(keys.conversation_tag(URL))) == 0
    turns = {t.turn_id: t.message_ids for t in await drainer.ledger.turns(URL)}
    assert turns == {"m1": ["1", "2"], "m3": ["3"]}

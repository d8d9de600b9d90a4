"""Running the cases against the real member agent, on keyless backends in a throwaway Redis."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from datetime import datetime, time, timedelta
from typing import Any, NoReturn
from zoneinfo import ZoneInfo

from pydantic_ai import (
    ModelMessage,
    ModelResponse,
    ToolCallPart,
    UnexpectedModelBehavior,
    UsageLimitExceeded,
    UsageLimits,
    capture_run_messages,
)
from redis.asyncio import Redis

from ...agent.agents import MemberAgent
from ...backends import Backends
from ...backends.events import RedisEventStore
from ...backends.knowledge import load_knowledge_base
from ...backends.memory import RedisMemoryStore
from ...backends.users import SAMPLE_USERS_FILE, RedisUserDirectory, load_users_file
from ...config import Settings
from ...redis_client import connect
from ...tools.deps import AgentDeps
from .cases import Calls, EvalDataset, EvalReport, ToolCall

EVAL_USER = "jeff"
"""The sample user the requests run as."""
SEED_EVENTS = (("팀 회의", time(10, 0)), ("Design review", time(15, 0)))
"""Events the user organizes tomorrow, for requests that change or invite to one."""
SEED_MEMORY = "나는 창가 자리를 좋아해"
"""A memory the user has, for requests that look it up or forget it."""
CONCURRENCY = 4
"""Cases run at once (a real model's rate limit is the bound)."""


class _NoRelay:
    """The relay writer of the evaluation: never called, a relay stops at the user's confirmation."""

    async def send(self, **kwargs: Any) -> NoReturn:
        raise RuntimeError("the evaluation does not relay messages")


def tool_calls(messages: Sequence[ModelMessage]) -> Calls:
    """Every tool call the model made in a run, in order."""
    return [
        ToolCall(part.tool_name, part.args_as_dict())
        for message in messages
        if isinstance(message, ModelResponse)
        for part in message.parts
        if isinstance(part, ToolCallPart)
    ]


def agent_task(
    agent: MemberAgent, backends: Backends, timezone: ZoneInfo, settings: Settings
) -> Callable[[str], Awaitable[Calls]]:
    """The evaluated task: one run of the member agent on a request, answered by the tools it called."""

    async def called_tools(request: str) -> Calls:
        deps = AgentDeps(
            user_id=EVAL_USER,
            channel_url="eval",
            timezone=timezone,
            backends=backends,
            relay_writer=_NoRelay(),
        )
        with capture_run_messages() as messages:
            try:
                await agent.run(
                    request,
                    deps=deps,
                    usage_limits=UsageLimits(request_limit=settings.max_model_requests),
                    model_settings={"timeout": settings.model_timeout_s},
                )
            except (UsageLimitExceeded, UnexpectedModelBehavior):
                pass  # out of budget or of retries: the calls made until then are the model's choice
        return tool_calls(messages)

    return called_tools


async def eval_backends(redis: Redis, timezone: ZoneInfo, now: datetime) -> Backends:
    """The keyless defaults on ``redis``, holding the sample directory, two events and one memory."""
    users = RedisUserDirectory(redis)
    await users.import_users(load_users_file(SAMPLE_USERS_FILE))
    events = RedisEventStore(redis)
    tomorrow = now.astimezone(timezone).date() + timedelta(days=1)
    for title, at in SEED_EVENTS:
        start = datetime.combine(tomorrow, at, tzinfo=timezone)
        end = start + timedelta(hours=1)
        await events.create(EVAL_USER, title=title, start_time=start.isoformat(), end_time=end.isoformat())
    memory = RedisMemoryStore(redis)
    await memory.save(EVAL_USER, SEED_MEMORY)
    return Backends(
        users=users, events=events, knowledge=load_knowledge_base(None), memory=memory, places=None
    )


async def evaluate(
    dataset: EvalDataset, agent: MemberAgent, redis_url: str, settings: Settings
) -> EvalReport:
    """Run every case of the dataset against the agent, with the evaluation's backends on that Redis."""
    timezone = ZoneInfo(settings.timezone)
    redis = connect(redis_url)
    try:
        backends = await eval_backends(redis, timezone, datetime.now(timezone))
        task = agent_task(agent, backends, timezone, settings)
        return await dataset.evaluate(task, max_concurrency=CONCURRENCY)
    finally:
        await redis.aclose()

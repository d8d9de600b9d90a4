"""Memory tools through an agent: what the model gets back is what the user hears."""

from __future__ import annotations

from typing import Any
from zoneinfo import ZoneInfo

import httpx
import pytest
from pydantic_ai import Agent, models
from redis.asyncio import Redis

from tests.tools.support import calls, retried
from truloop_assistant.backends import Backends
from truloop_assistant.backends.memory import MemoryStore, RedisMemoryStore, SupermemoryStore
from truloop_assistant.tools.agent_deps import AgentDeps
from truloop_assistant.tools.memory_tools import memory_toolset

SEOUL = ZoneInfo("Asia/Seoul")

models.ALLOW_MODEL_REQUESTS = False


async def ask(store: MemoryStore, tool: str, user: str = "jeff", **args: Any) -> str:
    agent = Agent(calls(tool, args), deps_type=AgentDeps, toolsets=[memory_toolset])
    backends = Backends(users=None, events=None, knowledge=None, memory=store, places=None)  # type: ignore[arg-type]
    result = await agent.run(
        "hi", deps=AgentDeps(user_id=user, channel_url="c", backends=backends, timezone=SEOUL)
    )
    return result.output


@pytest.fixture
def store(redis: Redis) -> RedisMemoryStore:
    return RedisMemoryStore(redis)


async def test_a_remembered_fact_is_found_later(store: RedisMemoryStore) -> None:
    saved = await ask(store, "save_memory", text="내 강아지 이름은 보리야")
    assert saved.startswith("success:") and "mem_" in saved

    await ask(store, "save_memory", text="My favorite coffee is an oat flat white")
    answer = await ask(store, "search_memories", query="강아지 이름이 뭐였지?")
    assert answer.startswith("success:")
    assert "보리" in answer and "coffee" not in answer

    recent = await ask(store, "search_memories")
    assert "보리" in recent and "coffee" in recent


async def test_memories_are_per_user(store: RedisMemoryStore) -> None:
    await ask(store, "save_memory", user="amy", text="my locker code is 1357")
    answer = await ask(store, "search_memories", query="locker code")
    assert answer == 'success: {"memories":[]}'


async def test_forget_deletes_the_memory(store: RedisMemoryStore) -> None:
    memory = await store.save("jeff", "I'm allergic to peanuts")
    answer = await ask(store, "forget_memory", memory_id=memory.memory_id)
    assert answer.startswith("success:") and '"forgotten":true' in answer
    assert "peanut" not in await ask(store, "search_memories", query="peanut allergy")


async def test_forgetting_an_unknown_memory_goes_back_to_the_model_before_any_dialog(
    store: RedisMemoryStore,
) -> None:
    """Someone else's memory, or one that does not exist: checked before the confirmation dialog."""
    amy = await store.save("amy", "my passport ends in 77")
    for memory_id in ("mem_000000000000", amy.memory_id):
        answer = await ask(store, "forget_memory", memory_id=memory_id)
        assert answer.startswith("retried:")
        assert f"there is no memory '{memory_id}' for this user" in answer
    assert await store.list_recent("amy") == [amy]


@pytest.mark.parametrize(
    ("tool", "args", "field", "message"),
    [
        ("search_memories", {"query": "x", "limit": 50}, "limit", "Input should be less than or equal to 20"),
        ("search_memories", {"query": "x" * 1001}, "query", "String should have at most 1000 characters"),
        ("save_memory", {"text": ""}, "text", "String should have at least 1 character"),
        ("save_memory", {"text": "   "}, "text", "String should have at least 1 character"),
        ("save_memory", {"text": "x" * 1001}, "text", "String should have at most 1000 characters"),
        ("forget_memory", {"memory_id": " "}, "memory_id", "String should have at least 1 character"),
    ],
)
async def test_bad_arguments_are_sent_back_to_fix(
    store: RedisMemoryStore, tool: str, args: dict[str, Any], field: str, message: str
) -> None:
    problems = retried(await ask(store, tool, **args))
    assert list(problems) == [field] and message in problems[field]
    assert await store.list_recent("jeff") == []


async def test_the_saved_text_is_trimmed(store: RedisMemoryStore) -> None:
    await ask(store, "save_memory", text="  I take the 8:10 bus  ")
    [memory] = await store.list_recent("jeff")
    assert memory.text == "I take the 8:10 bus"


async def test_a_failing_memory_service_is_explained() -> None:
    def down(request: httpx.Request) -> httpx.Response:
        return httpx.Response(503, json={"error": "maintenance"})

    async with httpx.AsyncClient(transport=httpx.MockTransport(down)) as client:
        answer = await ask(
            SupermemoryStore("http://sm.test", "sm_key", client, key_prefix="ta"), "save_memory", text="x"
        )
    assert answer.startswith("failed: the memory service is not available right now")
    assert "HTTP 503" in answer and "sm_key" not in answer

"""User directory tools through an agent: what the model gets back is what the user hears."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic_ai import models
from redis.asyncio import Redis

from tests.tools.support import content, run_tool
from truloop_assistant.backends import Backends
from truloop_assistant.backends.users import SAMPLE_USERS_FILE, RedisUserDirectory, load_users_file
from truloop_assistant.tools.user_tools import user_toolset

models.ALLOW_MODEL_REQUESTS = False


@pytest.fixture
async def directory(redis: Redis) -> RedisUserDirectory:
    directory = RedisUserDirectory(redis)
    await directory.import_users(load_users_file(SAMPLE_USERS_FILE))
    return directory


async def ask(directory: RedisUserDirectory | None, tool: str, user: str = "jeff", **args: Any) -> str:
    backends = Backends(users=directory, events=None, knowledge=None, memory=None, places=None)  # type: ignore[arg-type]
    return await run_tool(user_toolset, backends if directory is not None else None, tool, user=user, **args)


async def test_own_profile_without_an_id(directory: RedisUserDirectory) -> None:
    profile = content(await ask(directory, "get_user_profile"))
    assert profile["user_id"] == "jeff" and profile["name"] == "Jeff Kim"
    assert profile["phone"] == "010-1234-5678" and profile["email"] == "jeff.kim@example.com"
    assert content(await ask(directory, "get_user_profile", user_id="mina"))["name"] == "박민아"


async def test_unknown_profile_fails_naming_who(directory: RedisUserDirectory) -> None:
    assert await ask(directory, "get_user_profile", user_id="ghost") == (
        "failed: user 'ghost' is not in the user directory"
    )
    assert await ask(directory, "get_user_profile", user="stranger") == (
        "failed: the current user is not in the user directory"
    )


async def test_search_by_phone_with_dashes_finds_the_user(directory: RedisUserDirectory) -> None:
    found = content(await ask(directory, "search_users", query="010-2345-6789", by="contact"))
    assert [u["user_id"] for u in found["users"]] == ["mina"]
    found = content(await ask(directory, "search_users", query="01023456789"))
    assert [u["user_id"] for u in found["users"]] == ["mina"]


async def test_search_by_group_and_limit(directory: RedisUserDirectory) -> None:
    found = content(await ask(directory, "search_users", query="design", by="group", limit=2))
    assert len(found["users"]) == 2
    assert content(await ask(directory, "search_users", query="nobody-like-this")) == {"users": []}


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ({"query": "mina", "limit": 0}, "limit=0 is out of range; use a number from 1 to 50"),
        ({"query": "mina", "limit": 51}, "limit=51 is out of range"),
        ({"query": "  "}, "query must not be empty"),
    ],
)
async def test_bad_search_arguments_ask_for_a_fix(
    directory: RedisUserDirectory, args: dict[str, Any], message: str
) -> None:
    answer = await ask(directory, "search_users", **args)
    assert answer.startswith("retried: ") and message in answer


async def test_eids_of_known_and_unknown_users(directory: RedisUserDirectory) -> None:
    found = content(await ask(directory, "get_user_eids", user_ids=["jeff", "david", "ghost", "jeff"]))
    assert found == {"eids": {"jeff": "E1001", "david": None}, "unknown_user_ids": ["ghost"]}
    assert await ask(directory, "get_user_eids", user_ids=["ghost", "phantom"]) == (
        "failed: no user with id 'ghost', 'phantom' in the directory"
    )


async def test_eids_need_one_to_a_hundred_ids(directory: RedisUserDirectory) -> None:
    assert "at least 1" in await ask(directory, "get_user_eids", user_ids=[])
    too_many = await ask(directory, "get_user_eids", user_ids=[f"u{i}" for i in range(101)])
    assert too_many.startswith("retried: ") and "at most 100" in too_many


async def test_without_backends_the_tool_says_it_is_unavailable() -> None:
    answer = await ask(None, "get_user_profile")
    assert answer == "failed: this tool is not available here (no backends are configured)"

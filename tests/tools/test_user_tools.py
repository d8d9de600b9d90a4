"""User directory tools through an agent: what the model gets back is what the user hears."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic_ai import models
from redis.asyncio import Redis

from tests.tools.support import content, retried, run_tool
from truloop_assistant.backends import Backends
from truloop_assistant.backends.users import SAMPLE_USERS_FILE, RedisUserDirectory, load_users_file
from truloop_assistant.tools.user_tools import user_toolset

models.ALLOW_MODEL_REQUESTS = False


@pytest.fixture
async def directory(redis: Redis) -> RedisUserDirectory:
    directory = RedisUserDirectory(redis)
    await directory.import_users(load_users_file(SAMPLE_USERS_FILE))
    return directory


async def ask(directory: Any, tool: str, user: str = "jeff", **args: Any) -> str:
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


class Counting:
    """The directory, counting the calls that reach it."""

    def __init__(self, directory: RedisUserDirectory) -> None:
        self.directory = directory
        self.calls = 0

    def __getattr__(self, name: str) -> Any:
        self.calls += 1
        return getattr(self.directory, name)


@pytest.mark.parametrize(
    ("tool", "args", "field", "message"),
    [
        (
            "search_users",
            {"query": "mina", "limit": 0},
            "limit",
            "Input should be greater than or equal to 1",
        ),
        ("search_users", {"query": "mina", "limit": 51}, "limit", "Input should be less than or equal to 50"),
        ("search_users", {"query": "  "}, "query", "String should have at least 1 character"),
        ("search_users", {"query": "x" * 201}, "query", "String should have at most 200 characters"),
        ("search_users", {"query": "mina", "by": "email"}, "by", "'contact', 'username', 'group' or 'name'"),
        ("search_users", {}, "query", "Field required"),
        ("get_user_profile", {"user_id": " "}, "user_id", "String should have at least 1 character"),
        ("get_user_eids", {"user_ids": []}, "user_ids", "should have at least 1 item"),
        (
            "get_user_eids",
            {"user_ids": ["jeff", ""]},
            "user_ids.1",
            "String should have at least 1 character",
        ),
        (
            "get_user_eids",
            {"user_ids": [f"u{i}" for i in range(101)]},
            "user_ids",
            "List should have at most 100 items",
        ),
    ],
)
async def test_bad_arguments_ask_for_a_fix_before_the_directory_is_asked(
    directory: RedisUserDirectory, tool: str, args: dict[str, Any], field: str, message: str
) -> None:
    counting = Counting(directory)
    problems = retried(await ask(counting, tool, **args))
    assert list(problems) == [field] and message in problems[field]
    assert counting.calls == 0


async def test_ids_are_trimmed_and_repeats_dropped(directory: RedisUserDirectory) -> None:
    found = content(await ask(directory, "get_user_eids", user_ids=[" jeff ", "mina", "jeff"]))
    assert found == {"eids": {"jeff": "E1001", "mina": "E1002"}, "unknown_user_ids": []}
    assert content(await ask(directory, "get_user_profile", user_id=" mina "))["name"] == "박민아"


async def test_eids_of_known_and_unknown_users(directory: RedisUserDirectory) -> None:
    found = content(await ask(directory, "get_user_eids", user_ids=["jeff", "david", "ghost", "jeff"]))
    assert found == {"eids": {"jeff": "E1001", "david": None}, "unknown_user_ids": ["ghost"]}
    assert await ask(directory, "get_user_eids", user_ids=["ghost", "phantom"]) == (
        "failed: no user with id 'ghost', 'phantom' in the directory"
    )


async def test_without_backends_the_tool_says_it_is_unavailable() -> None:
    answer = await ask(None, "get_user_profile")
    assert answer == "failed: this tool is not available here (no backends are configured)"

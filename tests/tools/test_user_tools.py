"""User directory tools through an agent: what the model gets back is what the user hears."""

from __future__ import annotations

from typing import Any
from zoneinfo import ZoneInfo

import pytest
from pydantic_ai import Agent, models
from redis.asyncio import Redis

from tests.tools.support import content, fixed, retried, run_tool
from truloop_assistant.agent.offline import build_offline_model
from truloop_assistant.backends import Backends
from truloop_assistant.backends.events import RedisEventStore
from truloop_assistant.backends.users import SAMPLE_USERS_FILE, RedisUserDirectory, load_users_file
from truloop_assistant.tools.agent_deps import AgentDeps
from truloop_assistant.tools.user_tools import user_toolset

models.ALLOW_MODEL_REQUESTS = False


@pytest.fixture
async def directory(redis: Redis) -> RedisUserDirectory:
    directory = RedisUserDirectory(redis)
    await directory.import_users(load_users_file(SAMPLE_USERS_FILE))
    return directory


@pytest.fixture
def store(redis: Redis) -> RedisEventStore:
    return RedisEventStore(redis, clock=fixed)


def backends_of(directory: Any, store: RedisEventStore | None = None) -> Backends:
    return Backends(users=directory, events=store, knowledge=None, memory=None, places=None)  # type: ignore[arg-type]


async def ask(
    directory: Any, tool: str, user: str = "jeff", *, store: RedisEventStore | None = None, **args: Any
) -> str:
    backends = backends_of(directory, store) if directory is not None else None
    return await run_tool(user_toolset, backends, tool, user=user, **args)


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
    everyone = content(await ask(directory, "search_users", query="design", by="group"))
    assert everyone["count"] == len(everyone["users"]) > 2 and everyone["more"] is False
    assert everyone["note"] is None
    found = content(await ask(directory, "search_users", query="design", by="group", limit=2))
    assert found["users"] == everyone["users"][:2]
    assert (found["count"], found["more"]) == (2, True)
    assert "more than 2 users match" in found["note"] and "higher limit (at most 50)" in found["note"]
    exactly = content(
        await ask(directory, "search_users", query="design", by="group", limit=everyone["count"])
    )
    assert (exactly["count"], exactly["more"]) == (everyone["count"], False)
    assert content(await ask(directory, "search_users", query="nobody-like-this")) == {
        "users": [],
        "count": 0,
        "more": False,
        "note": None,
    }


async def test_optional_arguments_left_empty_take_their_defaults(directory: RedisUserDirectory) -> None:
    mine = content(await ask(directory, "get_user_profile"))
    assert content(await ask(directory, "get_user_profile", user_id=" ")) == mine
    assert content(await ask(directory, "get_user_profile", user_id=None)) == mine
    plain = content(await ask(directory, "search_users", query="design"))
    assert content(await ask(directory, "search_users", query="design", by="", limit=None)) == plain


# -- whose contact details a member sees

SEOUL = ZoneInfo("Asia/Seoul")
TOMORROW = {"start_time": "2026-11-27T10:00:00+09:00", "end_time": "2026-11-27T11:00:00+09:00"}


def ids(found: dict[str, Any]) -> list[str]:
    return [u["user_id"] for u in found["users"]]


async def contacts_seen(
    directory: RedisUserDirectory, store: RedisEventStore, viewer: str, target: str
) -> tuple[str | None, str | None]:
    profile = content(await ask(directory, "get_user_profile", user=viewer, store=store, user_id=target))
    return profile["email"], profile["phone"]


async def test_a_member_sees_who_someone_is_but_not_how_to_reach_them(
    directory: RedisUserDirectory, store: RedisEventStore
) -> None:
    seojun = content(await ask(directory, "get_user_profile", store=store, user_id="seojun"))
    assert (seojun["name"], seojun["username"], seojun["groups"], seojun["title"], seojun["eid"]) == (
        "이서준",
        "seojun",
        ["engineering"],
        "Backend Engineer",
        "E1003",
    )
    assert seojun["email"] is None and seojun["phone"] is None
    assert seojun["contact_hidden"] == (
        "email and phone not shown: contact details are visible only to the person, admins, the people "
        "they invited to an event and organizers whose invitation they answered, unless the person "
        "shares them"
    )
    own = content(await ask(directory, "get_user_profile", store=store))
    assert own["phone"] == "010-1234-5678" and own["contact_hidden"] is None


async def test_what_a_person_shares_everyone_sees(
    directory: RedisUserDirectory, store: RedisEventStore
) -> None:
    mina = content(await ask(directory, "get_user_profile", store=store, user_id="mina"))
    assert mina["email"] == "mina.park@example.com" and mina["phone"] is None
    assert mina["contact_hidden"].startswith("phone not shown: ")


async def test_an_admin_sees_everyones_contact_details(
    directory: RedisUserDirectory, store: RedisEventStore
) -> None:
    assert await contacts_seen(directory, store, "hyunwoo", "seojun") == (
        "seojun.lee@example.com",
        "010-3456-7890",
    )
    found = content(
        await ask(directory, "search_users", user="hyunwoo", store=store, query="design", by="group")
    )
    assert sorted(ids(found)) == ["jiwoo", "mina", "yuna"]
    assert all(u["email"] and u["phone"] and u["contact_hidden"] is None for u in found["users"])


async def test_an_event_shows_contact_details_only_where_both_sides_chose_it(
    directory: RedisUserDirectory, store: RedisEventStore
) -> None:
    one_on_one = await store.create("jeff", title="1:1", invitee_user_ids=["seojun"], **TOMORROW)
    await store.create("mina", title="디자인 리뷰", invitee_user_ids=["jiwoo", "yuna"], **TOMORROW)
    seojun = ("seojun.lee@example.com", "010-3456-7890")

    # Invitees see their organizer's; inviting someone shows nothing of them, nor of the others invited.
    assert await contacts_seen(directory, store, "seojun", "jeff") == (
        "jeff.kim@example.com",
        "010-1234-5678",
    )
    assert await contacts_seen(directory, store, "yuna", "mina") == ("mina.park@example.com", "010-2345-6789")
    assert await contacts_seen(directory, store, "jeff", "seojun") == (None, None)
    assert await contacts_seen(directory, store, "mina", "yuna") == (None, None)
    assert await contacts_seen(directory, store, "jiwoo", "yuna") == (None, None)

    # An invitee who answered the invitation (even with no date) may be reached by its organizer only.
    await store.set_availability(one_on_one.event_id, "seojun", [])
    await store.set_availability((await store.list_invited("yuna"))[0].event_id, "yuna", ["2026-11-27"])
    assert await contacts_seen(directory, store, "jeff", "seojun") == seojun
    assert await contacts_seen(directory, store, "mina", "yuna") == ("yuna.han@example.com", "02-555-0199")
    assert await contacts_seen(directory, store, "jiwoo", "yuna") == (None, None)
    assert await contacts_seen(directory, store, "david", "seojun") == (None, None)

    found = content(await ask(directory, "search_users", store=store, query="engineering", by="group"))
    phones = {u["user_id"]: u["phone"] for u in found["users"]}
    assert phones == {"jeff": "010-1234-5678", "seojun": "010-3456-7890", "hyunwoo": None}

    # Taken off the event, or the event cancelled: hidden again.
    await store.update(one_on_one.event_id, invitee_user_ids=[])
    assert await contacts_seen(directory, store, "jeff", "seojun") == (None, None)
    await store.cancel(one_on_one.event_id)
    assert await contacts_seen(directory, store, "jeff", "seojun") == (None, None)
    assert await contacts_seen(directory, store, "seojun", "jeff") == (None, None)


async def test_someone_outside_the_directory_sees_no_contact_details(
    directory: RedisUserDirectory, store: RedisEventStore
) -> None:
    found = content(await ask(directory, "search_users", user="stranger", store=store, query="engineering"))
    assert sorted(ids(found)) == ["hyunwoo", "jeff", "seojun"]
    assert all(u["email"] is None and u["phone"] is None for u in found["users"])


async def test_a_hidden_contact_detail_cannot_be_guessed_piece_by_piece(
    directory: RedisUserDirectory, store: RedisEventStore
) -> None:
    # Part of yuna's number or address finds nobody; the whole of it finds her (still without it).
    for part in ("555-0199", "yuna.han@"):
        found = content(await ask(directory, "search_users", store=store, query=part, by="contact"))
        assert (found["users"], found["count"], found["more"]) == ([], 0, False)
    whole = content(await ask(directory, "search_users", store=store, query="02-555-0199"))
    assert ids(whole) == ["yuna"] and whole["users"][0]["phone"] is None
    # Her name and username still find her; a shared address or an admin's search may match by part.
    assert ids(content(await ask(directory, "search_users", store=store, query="yuna"))) == ["yuna"]
    assert ids(
        content(await ask(directory, "search_users", store=store, query="mina.park", by="contact"))
    ) == ["mina"]
    by_admin = await ask(directory, "search_users", user="hyunwoo", store=store, query="555-0199")
    assert ids(content(by_admin)) == ["yuna"]


async def test_the_offline_answer_about_a_person_shows_only_what_the_user_may_see(
    directory: RedisUserDirectory, store: RedisEventStore
) -> None:
    agent = Agent(
        build_offline_model(timezone=SEOUL, clock=fixed), deps_type=AgentDeps, toolsets=[user_toolset]
    )

    async def answer(user: str) -> str:
        deps = AgentDeps(
            user_id=user, channel_url="c", timezone=SEOUL, clock=fixed, backends=backends_of(directory, store)
        )
        return (await agent.run("seojun 연락처 알려줘", deps=deps)).output

    to_member = await answer("jiwoo")
    assert "이서준 (seojun)" in to_member and "010-" not in to_member and "@example.com" not in to_member
    assert "010-3456-7890" in await answer("hyunwoo")


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

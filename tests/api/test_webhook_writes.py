"""What a chat message leaves in Redis besides its turn: the role the app's user API gave its sender
(for the rate limit), written once the message is queued or refused, and the channel's line, written
with the turn's event; on a standalone Redis and on a Redis Cluster, where the two are in different
slots. A directory in the server's own Redis is read with the message's other reads: nothing is
remembered."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import pytest
from pydantic_ai.messages import ModelResponse, TextPart
from pydantic_ai.models.function import FunctionModel
from redis.asyncio import Redis

from tests.fakes.users_api import TOKEN, FakeUserApi
from tests.support import ON_STANDALONE_AND_CLUSTER, serve
from truloop_assistant.backends.users import RedisUserDirectory
from truloop_assistant.local.embedded_redis import free_port
from truloop_assistant.store import keys
from truloop_assistant.store.inbox import Inbox, MessageEvent
from truloop_assistant.store.transcript import Line, Transcript

pytestmark = ON_STANDALONE_AND_CLUSTER


def echo() -> FunctionModel:
    return FunctionModel(lambda messages, info: ModelResponse(parts=[TextPart("ok")]))


async def answered_and_told(h: Any) -> None:
    """Wait for the rate limit's notice and for every queued message to be answered (messages that
    waited in a row share one answer, so how many answers there are depends on the timing)."""
    await h.sendbird.wait_for(lambda msgs: any(m.text != "ok" for m in msgs))
    await h.idle()
    assert "ok" in h.texts("ch-1")


async def lines_of(redis: Redis, channel: str, user: str) -> list[Line]:
    raw = await redis.lrange(keys.transcript(keys.conversation_tag(channel)), 0, -1)
    return [line for line in map(Line.model_validate_json, raw) if line.user_id == user]


async def test_a_queued_turn_leaves_its_line_and_a_re_delivery_adds_none(
    start_server: Any, directory: Any
) -> None:
    async with start_server(model=echo()) as h:
        assert (await h.user_says("first words", user="hyunwoo", channel="dm-h", message_id=7)).json() == {
            "status": "queued"
        }
        [line] = await lines_of(h.redis, "dm-h", "hyunwoo")
        assert (line.text, line.turn) == ("first words", True)
        assert 0 < await h.redis.ttl(keys.transcript(keys.conversation_tag("dm-h"))) <= keys.HISTORY_TTL_S
        # The directory is in this Redis: its answer is read each time, not remembered.
        assert await h.redis.get(keys.admin_role("hyunwoo")) is None

        # A re-delivery is a duplicate and adds no line.
        again = await h.user_says("first words", user="hyunwoo", channel="dm-h", message_id=7)
        assert again.json() == {"status": "duplicate"}
        await h.replies(1, channel="dm-h")
        await h.idle()
        assert len(await lines_of(h.redis, "dm-h", "hyunwoo")) == 1


async def test_the_directory_in_redis_gives_the_admin_limit_from_the_next_message_on(
    start_server: Any, directory: Any
) -> None:
    async with start_server(model=echo(), rate_limit_user="1/minute", rate_limit_admin="3/minute") as h:
        assert (await h.user_says("one")).json() == {"status": "queued"}
        assert (await h.user_says("two")).json() == {"status": "ignored"}  # jeff is a member: 1/minute
        # jeff is made an admin: the very next message counts against the admin limit.
        jeff = await RedisUserDirectory(h.redis).get_profile("jeff")
        assert jeff is not None and jeff.role == "member"
        await RedisUserDirectory(h.redis).import_users([jeff.model_copy(update={"role": "admin"})])
        statuses = [(await h.user_says(f"message {i}")).json()["status"] for i in range(4)]
        assert statuses == ["queued"] * 3 + ["ignored"]  # the admin limit counts in a window of its own
        assert await h.redis.get(keys.admin_role("jeff")) is None
        await answered_and_told(h)


@pytest.fixture
async def user_api() -> AsyncIterator[tuple[FakeUserApi, dict[str, str]]]:
    """The app's user API (boss is an admin, jeff unknown) and the settings that make it the directory."""
    fake, port = FakeUserApi(), free_port()
    async with serve(fake.app(), port):
        yield fake, {"users_api_url": f"http://127.0.0.1:{port}/api", "users_api_token": TOKEN}


async def test_the_user_apis_role_is_remembered_for_a_minute(start_server: Any, user_api: Any) -> None:
    fake, api = user_api

    def asks() -> int:
        return sum(r["path"] == "/api/users/boss" for r in fake.requests)

    async with start_server(model=echo(), **api) as h:
        assert (await h.user_says("first words", user="boss", channel="dm-b")).json() == {"status": "queued"}
        # boss is an admin in the user API: remembered for a minute.
        assert await h.redis.get(keys.admin_role("boss")) == b"1"
        assert 0 < await h.redis.ttl(keys.admin_role("boss")) <= keys.ADMIN_ROLE_TTL_S
        await h.replies(1, channel="dm-b")
        await h.idle()
        first = asks()  # the webhook's and the worker's (the person's profile)
        assert (await h.user_says("more words", user="boss", channel="dm-b")).json() == {"status": "queued"}
        await h.replies(2, channel="dm-b")
        await h.idle()
        # The same turn again, but the webhook took the remembered role: one ask fewer.
        assert asks() - first == first - 1


async def test_a_message_over_the_rate_limit_still_remembers_the_role_and_adds_no_line(
    start_server: Any, user_api: Any
) -> None:
    _, api = user_api
    async with start_server(model=echo(), rate_limit_user="1/minute", **api) as h:
        assert (await h.user_says("one")).json() == {"status": "queued"}
        await h.redis.delete(keys.admin_role("jeff"))
        assert (await h.user_says("two")).json() == {"status": "ignored"}  # rate limited
        assert await h.redis.get(keys.admin_role("jeff")) == b"0"  # unknown to the API: not an admin
        await h.sendbird.wait_for(lambda msgs: len(msgs) >= 2)  # the answer and the notice
        await h.idle()
        assert [line.text for line in await lines_of(h.redis, "ch-1", "jeff")] == ["one"]


async def test_a_remembered_role_is_used_as_it_is(start_server: Any, user_api: Any) -> None:
    _, api = user_api
    async with start_server(
        model=echo(), rate_limit_user="1/minute", rate_limit_admin="3/minute", **api
    ) as h:
        # The API says jeff is nobody; a remembered "admin" is what counts for the next minute.
        await h.redis.set(keys.admin_role("jeff"), b"1", ex=keys.ADMIN_ROLE_TTL_S)
        statuses = [(await h.user_says(f"message {i}")).json()["status"] for i in range(4)]
        assert statuses == ["queued"] * 3 + ["ignored"]
        assert await h.redis.get(keys.admin_role("jeff")) == b"1"
        await answered_and_told(h)


async def test_a_message_too_long_asks_nobody_for_the_role(start_server: Any, user_api: Any) -> None:
    fake, api = user_api
    async with start_server(model=echo(), max_message_chars=10, **api) as h:
        assert (await h.user_says("x" * 11)).json() == {"status": "ignored"}
        await h.replies(1)  # the notice
        assert await h.redis.get(keys.admin_role("jeff")) is None
        assert fake.requests == []
        assert await lines_of(h.redis, "ch-1", "jeff") == []


async def test_a_transcript_keeps_its_newest_lines_cut_short_and_expiring(redis: Redis) -> None:
    transcript = Transcript(redis)
    for i in range(keys.TRANSCRIPT_MAX + 5):
        await transcript.add("ch-t", Line(user_id="jeff", text=f"line {i}"))
    long = "가" * (keys.TRANSCRIPT_LINE_CHARS + 10)
    # A turn's own words go with its event into the inbox.
    event = MessageEvent(message_id="m-1", user_id="mina", text=long)
    pushed = await Inbox(redis, owner_ttl_s=5).push(
        "ch-t", event, dedup_id="m-1", said=Line(user_id="mina", text=long, turn=True)
    )
    assert pushed[0] == "queued"
    lines = await transcript.recent("ch-t")
    assert len(lines) == keys.TRANSCRIPT_MAX
    assert [line.text for line in lines[:-1]] == [f"line {i}" for i in range(6, keys.TRANSCRIPT_MAX + 5)]
    assert lines[-1].user_id == "mina" and lines[-1].text == long[: keys.TRANSCRIPT_LINE_CHARS]
    assert 0 < await redis.ttl(keys.transcript(keys.conversation_tag("ch-t"))) <= keys.HISTORY_TTL_S

"""An answer that streams, on the /dev page: one bubble whose text grows in place, marked "writing…"
until its last update.

The test plays the server's part on the local channel itself (the dev server reads the same Redis,
an empty one of the test's, under dev's key prefix): the answer's first message with
``{"streaming":true}``, two in-place updates, then the final text with ``{"streaming":false}``, each
once the page showed the one before.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Iterator

import pytest
from redis.asyncio import Redis
from selenium.webdriver.common.by import By

from tests.support import BOT, running_dev_server
from truloop_assistant.channels.local import LocalChannel
from truloop_assistant.local.embedded_redis import RedisServer
from truloop_assistant.redis_client import connect
from truloop_assistant.store import keys

from .page import DevPage

GROWING = json.dumps({"streaming": True})
DONE = json.dumps({"streaming": False})


@pytest.fixture(scope="module")
def dev_redis() -> Iterator[str]:
    """An empty Redis of the test's: dev takes nothing else from the environment."""
    with RedisServer() as server:
        yield server.url


@pytest.fixture(scope="module")
def dev_server(dev_redis: str) -> Iterator[str]:
    """``truloop-assistant dev`` on the test's Redis, so the test can write in its local channel."""
    with running_dev_server(TRULOOP_REDIS_URL=dev_redis) as server:
        yield server.base


@pytest.fixture
async def server_side(dev_redis: str) -> AsyncIterator[LocalChannel]:
    """The local channel as the server writes in it, under dev's key prefix."""
    redis: Redis = connect(dev_redis)
    before = keys.PREFIX
    keys.use_prefix(keys.DEV_KEY_PREFIX)
    try:
        yield LocalChannel(redis, bot_user_id=BOT)
    finally:
        keys.use_prefix(before)
        await redis.aclose()


def shown(page: DevPage) -> list[tuple[str, bool]]:
    """Each assistant message the page shows: its text, and whether it is marked as being written."""
    rows = page.driver.find_elements(By.CSS_SELECTOR, "#log .row.assistant")
    return [
        (
            row.find_element(By.CSS_SELECTOR, ".bubble").text,
            bool(row.find_elements(By.CSS_SELECTOR, ".writing")),
        )
        for row in rows
    ]


async def test_a_streamed_answer_grows_in_one_bubble_and_loses_its_writing_mark_at_the_end(
    page: DevPage, server_side: LocalChannel
) -> None:
    channel = page.new_channel("stream")
    page.open(channel)
    first = await server_side.append(channel, user_id=BOT, message="이번 주 일정이에요.", data=GROWING)
    page.until(lambda d: shown(page) == [("이번 주 일정이에요.", True)], "the first sentence, being written")
    assert "writing…" in page.driver.find_element(By.CSS_SELECTOR, "#log .row.assistant .writing").text
    row = page.driver.find_element(By.CSS_SELECTOR, "#log .row.assistant")

    texts = [
        "이번 주 일정이에요.\n- 화 10:00 팀 미팅",
        "이번 주 일정이에요.\n- 화 10:00 팀 미팅\n- 목 12:00 Lunch",
    ]
    for text in texts:
        await server_side.update_text(channel, first["message_id"], text, data=GROWING)
        page.until(lambda d, text=text: shown(page) == [(text, True)], f"the answer grown to {text!r}")
    page.screenshot("streaming-answer-growing-phone")

    final = texts[-1] + " with Mina\n좋은 한 주 보내세요!"
    await server_side.update_text(channel, first["message_id"], final, data=DONE)
    page.until(lambda d: shown(page) == [(final, False)], "the final text, no longer being written")
    # the same message, changed in place: one row, the same one
    assert page.message_ids() == [first["message_id"]]
    assert page.driver.find_element(By.CSS_SELECTOR, "#log .row.assistant") == row
    assert not page.driver.find_elements(By.CSS_SELECTOR, "#log .writing")
    page.screenshot("streaming-answer-final-phone")

    # A reload shows the final text at once, unmarked.
    page.driver.refresh()
    page.open(channel)
    page.until(lambda d: shown(page) == [(final, False)], "the final text after a reload")

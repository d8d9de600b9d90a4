"""The guest page in a real headless Chromium at a phone's size, as a guest without the app uses it.

The server runs in a thread of its own (its own event loop: Selenium's calls block), against the
test Redis; the event is made in its event store and the link issued as an invitation's text gets
it. The browser runs in UTC while the organizer (jeff) is in Seoul: the page shows both.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Awaitable, Callable, Iterator
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any, TypeVar
from zoneinfo import ZoneInfo

import pytest
from selenium.webdriver import Chrome
from selenium.webdriver.common.by import By

from tests.support import make_settings, serve
from truloop_assistant.backends.events import Event, RedisEventStore
from truloop_assistant.backends.users import SAMPLE_USERS_FILE, RedisUserDirectory, load_users_file
from truloop_assistant.local.embedded_redis import free_port
from truloop_assistant.redis_client import connect
from truloop_assistant.store.guest_links import link_for

from .page import PHONE, DevPage

T = TypeVar("T")
SEOUL = ZoneInfo("Asia/Seoul")
GUEST = "tel:+821055501234"


class ServerThread:
    """The app served on 127.0.0.1 from a thread with its own event loop; ``run`` runs a coroutine
    against the same Redis from the test's thread."""

    def __init__(self, redis_url: str) -> None:
        self.redis_url = redis_url
        self.port = free_port()
        self.base = f"http://127.0.0.1:{self.port}"
        self._ready = threading.Event()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._stop: asyncio.Event | None = None
        self._thread = threading.Thread(target=lambda: asyncio.run(self._main()), daemon=True)

    async def _main(self) -> None:
        from truloop_assistant.app import create_app

        self._loop, self._stop = asyncio.get_running_loop(), asyncio.Event()
        settings = make_settings(self.redis_url, "http://127.0.0.1:9", channel="local")
        async with serve(create_app(settings), self.port):
            self._ready.set()
            await self._stop.wait()

    def __enter__(self) -> ServerThread:
        self._thread.start()
        if not self._ready.wait(30):
            raise AssertionError("the server did not start within 30 s")
        return self

    def __exit__(self, *exc: object) -> None:
        assert self._loop is not None and self._stop is not None
        self._loop.call_soon_threadsafe(self._stop.set)
        self._thread.join(15)

    def run(self, make: Callable[[Any], Awaitable[T]]) -> T:
        async def go() -> T:
            redis = connect(self.redis_url)
            try:
                return await make(redis)
            finally:
                await redis.aclose()

        return asyncio.run(go())


@pytest.fixture(scope="module")
def server(redis_url: str) -> Iterator[ServerThread]:
    with ServerThread(redis_url) as running:
        yield running


@pytest.fixture
def guest_page(browser: Chrome, server: ServerThread, screenshots: Path) -> Iterator[DevPage]:
    """A phone's screen at the server; the test fails if the page's script threw or broke its CSP."""
    browser.get_log("browser")  # what earlier tests left
    page = DevPage(browser, server.base, screenshots)
    page.as_phone()
    yield page
    problems = [
        e["message"]
        for e in browser.get_log("browser")
        if e["source"] == "javascript" or "Content Security Policy" in e["message"]
    ]
    browser.get("about:blank")  # no chat poll left waiting on the server when it stops
    assert not problems, f"the page's script failed: {problems}"


def open_page(page: DevPage, url: str) -> None:
    page.driver.get(url)
    page.until(
        lambda d: d.find_element(By.TAG_NAME, "body").get_attribute("data-ready") == "true", "the page"
    )


def ticked(page: DevPage) -> list[str]:
    boxes = page.driver.find_elements(By.CSS_SELECTOR, "#day-list input")
    return [b.get_attribute("value") or "" for b in boxes if b.is_selected()]


def test_a_guest_sees_the_event_in_two_zones_ticks_two_days_and_finds_them_kept(
    guest_page: DevPage, server: ServerThread
) -> None:
    page = guest_page
    today = datetime.now(SEOUL).replace(hour=0, minute=0, second=0, microsecond=0)
    start = today + timedelta(days=10, hours=19)  # 19:00 in Seoul is 10:00 UTC

    async def invite(redis: Any) -> tuple[Event, str]:
        await RedisUserDirectory(redis).import_users(load_users_file(SAMPLE_USERS_FILE))
        event = await RedisEventStore(redis).create(
            "jeff",
            title="팀 회식",
            start_time=start,
            end_time=start + timedelta(hours=2),
            location="강남 제주돈",
            availability_deadline=today + timedelta(days=5, hours=18),
            guests={GUEST: "ko"},
        )
        return event, await link_for(redis, server.base, event, GUEST)

    event, link = server.run(invite)
    open_page(page, link)
    assert page.js("return document.documentElement.clientWidth") == PHONE[0]
    assert page.js("return document.documentElement.scrollWidth") <= PHONE[0]  # nothing runs off the side
    assert page.by_id("title").text == "팀 회식" and page.by_id("where").text.endswith("강남 제주돈")
    assert page.js("return document.documentElement.lang") == "ko"  # the invitation's language

    organizer, mine = page.by_id("time-organizer").text, page.by_id("time-mine").text
    assert "Asia/Seoul" in organizer and "오후 7:00" in organizer, organizer
    assert "UTC" in mine and "오전 10:00" in mine, mine

    offered = [
        b.get_attribute("value") for b in page.driver.find_elements(By.CSS_SELECTOR, "#day-list input")
    ]
    first = today.date()
    assert offered == [(first + timedelta(days=n)).isoformat() for n in range(6)]
    days = page.driver.find_elements(By.CSS_SELECTOR, "#day-list label.day")
    assert all(d.size["height"] >= 44 for d in days)  # big enough for a thumb
    page.screenshot("guest-page-phone")

    picked = [offered[1], offered[3]]
    for value in picked:
        page.driver.find_element(By.CSS_SELECTOR, f"label.day:has(input[value='{value}'])").click()
    assert ticked(page) == picked
    page.by_id("save").click()
    page.until(lambda d: page.by_id("save-status").text == "저장했어요", "saved")

    stored = server.run(lambda redis: RedisEventStore(redis).get(event.event_id))
    assert stored is not None and stored.guest_availability == {GUEST: picked}

    page.driver.refresh()
    open_page(page, link)
    assert ticked(page) == picked
    page.screenshot("guest-page-saved-phone")

    # The guest writes to the assistant: their message shows in the page's chat.
    box = page.by_id("message")
    box.click()
    box.send_keys("주차 되나요?")
    page.by_id("send").click()
    page.until(
        lambda d: (
            [b.text for b in d.find_elements(By.CSS_SELECTOR, "#log .bubble.guest")] == ["주차 되나요?"]
        ),
        "the guest's message in the chat",
    )
    assert page.by_id("message").get_attribute("value") == ""


def test_a_link_that_does_not_work_shows_a_page_that_says_so(
    guest_page: DevPage, server: ServerThread
) -> None:
    guest_page.driver.get(f"{server.base}/g/{'A' * 32}")
    text = guest_page.driver.find_element(By.TAG_NAME, "body").text
    assert "This link does not work" in text and "링크가 열리지 않아요" in text

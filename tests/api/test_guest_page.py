"""The guest page over HTTP: a guest without the app opens their link, sees the event, ticks days.

The event is made in the server's event store as the assistant makes one (``RedisEventStore``, the
default backend), its link issued as an invitation's text gets it (``store.guest_links.link_for``);
everything else goes through the running server. Days are relative to today in Seoul (jeff's zone).
"""

from __future__ import annotations

import time
from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta
from typing import Any
from zoneinfo import ZoneInfo

import httpx
import pytest
from pydantic_ai.messages import ModelMessage, ModelResponse, TextPart
from pydantic_ai.models.function import AgentInfo, FunctionModel

from tests.support import ON_STANDALONE_AND_CLUSTER, Harness
from truloop_assistant.backends.events import Event, RedisEventStore
from truloop_assistant.protocol.guest_links import TOKEN_CHARS
from truloop_assistant.store.guest_links import GuestLinks, link_for

SEOUL = ZoneInfo("Asia/Seoul")
GUEST = "tel:+821055501234"
SECURITY = {"referrer-policy": "no-referrer", "x-robots-tag": "noindex, nofollow"}


def answering(text: str = "네, 확인했어요") -> FunctionModel:
    def fn(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        return ModelResponse(parts=[TextPart(text)])

    return FunctionModel(fn)


@pytest.fixture
async def h(start_server: Any, directory: Any) -> AsyncIterator[Harness]:
    async with start_server(model=answering()) as harness:
        yield harness


def today() -> datetime:
    return datetime.now(SEOUL).replace(hour=0, minute=0, second=0, microsecond=0)


async def dinner(h: Harness, *, owner: str = "jeff", **changes: Any) -> Event:
    """Dinner in 10 days in Seoul, answers due in 5 days, the guest invited by phone in Korean."""
    start = today() + timedelta(days=10, hours=19)
    values: dict[str, Any] = {
        "title": "Team dinner <at Jeju>",
        "start_time": start,
        "end_time": start + timedelta(hours=2),
        "location": "Jeju Black Pork, Gangnam",
        "availability_deadline": today() + timedelta(days=5, hours=18),
        "guests": {GUEST: "ko"},
    } | changes
    return await RedisEventStore(h.redis).create(owner, **values)


async def path_of(h: Harness, event: Event, person: str = GUEST) -> str:
    url = await link_for(h.redis, str(h.http.base_url).rstrip("/"), event, person)
    return httpx.URL(url).path


def days(first: int, last: int, zone: ZoneInfo = SEOUL) -> list[str]:
    now = datetime.now(zone).date()
    return [(now + timedelta(days=n)).isoformat() for n in range(first, last + 1)]


async def test_the_guest_s_page_names_the_event_and_lists_the_days_up_to_the_deadline(h: Harness) -> None:
    event = await dinner(h)
    path = await path_of(h, event)

    page = await h.http.get(path)
    assert page.status_code == 200 and page.headers["content-type"].startswith("text/html")
    assert '<h1 id="title">Team dinner &lt;at Jeju&gt;</h1>' in page.text
    assert SECURITY.items() <= page.headers.items()
    csp = page.headers["content-security-policy"]
    assert "script-src 'self'" in csp and "unsafe-inline" not in csp
    for asset in ("assets/guest.js", "assets/guest.css"):
        assert asset in page.text
        assert (await h.http.get(f"/g/{asset}")).status_code == 200

    data = (await h.http.get(f"{path}/api")).json()
    assert data["event"] == {
        "title": "Team dinner <at Jeju>",
        "start_time": event.start_time.isoformat(),
        "end_time": event.end_time.isoformat(),
        "location": "Jeju Black Pork, Gangnam",
        "availability_deadline": event.availability_deadline.isoformat(),  # type: ignore[union-attr]
    }
    assert data["dates"] == days(0, 5)  # today up to the deadline's day, in the organizer's zone
    assert data["mine"] == []
    assert data["organizer_zone"] == "Asia/Seoul" and data["language"] == "ko"
    assert data["cancelled"] is False


async def test_without_a_zone_or_deadline_the_days_run_to_the_event_in_its_own_offset(h: Harness) -> None:
    # An organizer the directory does not know: the days are counted in the offset of the event's start.
    new_york = ZoneInfo("America/New_York")
    start = datetime.now(new_york).replace(microsecond=0) + timedelta(days=3)
    event = await dinner(
        h,
        owner="someone-else",
        start_time=start.astimezone(new_york),
        end_time=start + timedelta(hours=1),
        availability_deadline=None,
    )
    data = (await h.http.get(f"{await path_of(h, event)}/api")).json()
    assert data["organizer_zone"] is None
    assert data["dates"] == days(0, 3, new_york)


@ON_STANDALONE_AND_CLUSTER
async def test_two_days_ticked_and_saved_are_the_guest_s_availability(h: Harness) -> None:
    event = await dinner(h)
    path = await path_of(h, event)
    picked = days(1, 1) + days(4, 4)

    saved = await h.http.put(f"{path}/api/availability", json={"dates": [picked[1], picked[0], picked[1]]})
    assert saved.status_code == 200, saved.text
    assert saved.json() == {"dates": picked}
    stored = await RedisEventStore(h.redis).get(event.event_id)
    assert stored is not None and stored.guest_availability == {GUEST: picked}
    assert (await h.http.get(f"{path}/api")).json()["mine"] == picked

    # Saving again replaces them.
    again = await h.http.put(f"{path}/api/availability", json={"dates": days(0, 0)})
    assert again.json() == {"dates": days(0, 0)}
    assert (await h.http.get(f"{path}/api")).json()["mine"] == days(0, 0)


@pytest.mark.parametrize(
    ("body", "says"),
    [
        ({"dates": days(6, 6)}, "cannot be picked"),  # after the deadline's day
        ({"dates": days(-1, -1)}, "cannot be picked"),  # yesterday
        ({"dates": ["2026-13-01"]}, "real day"),
        ({"dates": ["tomorrow"]}, "dates"),
        ({"dates": "2026-01-01"}, "dates"),
        ({"dates": [f"2026-01-{n:02d}" for n in range(1, 29)] * 3}, "dates"),  # too many
        ({"dates": [], "mine": []}, "mine"),
        ({}, "dates"),
        (b"{not json", "json"),
    ],
)
async def test_days_that_cannot_be_given_are_refused_and_nothing_is_saved(
    h: Harness, body: Any, says: str
) -> None:
    event = await dinner(h)
    path = await path_of(h, event)
    await h.http.put(f"{path}/api/availability", json={"dates": days(2, 2)})

    kwargs: dict[str, Any] = {"content": body} if isinstance(body, bytes) else {"json": body}
    refused = await h.http.put(f"{path}/api/availability", **kwargs)
    assert refused.status_code == 422, refused.text
    assert says in refused.json()["error"]["message"].lower()
    assert (await h.http.get(f"{path}/api")).json()["mine"] == days(2, 2)


async def test_a_cancelled_event_s_page_says_so_and_takes_no_days(h: Harness) -> None:
    event = await dinner(h)
    path = await path_of(h, event)
    await RedisEventStore(h.redis).cancel(event.event_id, reason="rain")

    assert (await h.http.get(path)).status_code == 200
    data = (await h.http.get(f"{path}/api")).json()
    assert data["cancelled"] is True and data["dates"] == []
    refused = await h.http.put(f"{path}/api/availability", json={"dates": days(1, 1)})
    assert refused.status_code == 422 and "cancelled" in refused.json()["error"]["message"]


async def test_after_the_deadline_no_day_can_be_given(h: Harness) -> None:
    event = await dinner(h, availability_deadline=datetime.now(UTC) - timedelta(minutes=1))
    path = await path_of(h, event)
    data = (await h.http.get(f"{path}/api")).json()
    assert data["dates"] == [] and data["deadline_passed"] is True
    refused = await h.http.put(f"{path}/api/availability", json={"dates": days(0, 0)})
    assert refused.status_code == 422 and "deadline" in refused.json()["error"]["message"]


async def _all_404(h: Harness, path: str) -> list[bytes]:
    """Every route of a page: each answers 404; their bodies."""
    answers = [
        await h.http.get(path),
        await h.http.get(f"{path}/api"),
        await h.http.put(f"{path}/api/availability", json={"dates": []}),
        await h.http.post(f"{path}/api/messages", json={"text": "hello"}),
        await h.http.get(f"{path}/api/messages"),
    ]
    assert [a.status_code for a in answers] == [404] * 5, [(a.status_code, a.text) for a in answers]
    assert all(a.headers["referrer-policy"] == "no-referrer" for a in answers)
    return [a.content for a in answers]


async def test_a_bad_tampered_lapsed_or_withdrawn_link_is_the_same_404_everywhere(h: Harness) -> None:
    store = RedisEventStore(h.redis)
    event = await dinner(h, guests={GUEST: "ko", "tel:+821055505678": "ko"})
    good = await path_of(h, event)
    token = good.rsplit("/", 1)[1]
    tampered = token[:-1] + ("A" if token[-1] != "A" else "B")
    withdrawn = await path_of(h, event, "tel:+821055505678")
    await store.update(event.event_id, guests={GUEST: "ko"})  # that guest was taken off the event
    lapsing = await dinner(h, title="Last week's lunch")
    lapsed = await path_of(h, lapsing)
    # Moved to have ended 8 days ago, answers due before it: its link lapsed a day ago.
    ended = datetime.now(UTC) - timedelta(days=8)
    await store.update(
        lapsing.event_id,
        start_time=ended - timedelta(hours=1),
        end_time=ended,
        availability_deadline=ended - timedelta(days=1),
    )

    bodies = {
        name: await _all_404(h, path)
        for name, path in {
            "bad": "/g/not-a-token",
            "made up": "/g/" + "A" * TOKEN_CHARS,
            "tampered": f"/g/{tampered}",
            "withdrawn": withdrawn,
            "lapsed": lapsed,
        }.items()
    }
    assert len({tuple(b) for b in bodies.values()}) == 1, bodies  # nothing tells them apart
    assert (await h.http.get(f"{good}/api")).status_code == 200


@ON_STANDALONE_AND_CLUSTER
async def test_one_link_per_invitation_and_an_erased_guest_loses_it(h: Harness) -> None:
    event, other = await dinner(h), await dinner(h, title="Picnic")
    base = str(h.http.base_url).rstrip("/")
    first = await link_for(h.redis, base, event, GUEST)
    assert first.startswith(f"{base}/g/") and len(first.rsplit("/", 1)[1]) == TOKEN_CHARS
    assert await link_for(h.redis, base, event, GUEST) == first  # the same invitation, the same link
    assert await link_for(h.redis, base, other, GUEST) != first

    links = GuestLinks(h.redis)
    assert await links.forget_person(GUEST) == 2
    await _all_404(h, httpx.URL(first).path)
    renewed = await link_for(h.redis, base, event, GUEST)
    assert renewed != first and (await h.http.get(f"{httpx.URL(renewed).path}/api")).status_code == 200


async def test_a_link_lapses_seven_days_after_its_event_unless_the_event_moves_later(h: Harness) -> None:
    event = await dinner(h)
    token = (await path_of(h, event)).rsplit("/", 1)[1]
    lapses = event.end_time + timedelta(days=7)

    def at(moment: datetime) -> GuestLinks:
        return GuestLinks(h.redis, clock=moment.timestamp)

    assert await at(lapses - timedelta(minutes=1)).read(token) is not None
    assert await at(lapses).read(token) is None

    later = await RedisEventStore(h.redis).update(
        event.event_id,
        start_time=event.start_time + timedelta(days=30),
        end_time=event.end_time + timedelta(days=30),
    )
    assert (await h.http.get(f"/g/{token}/api")).json()["event"]["start_time"] == later.start_time.isoformat()
    assert await at(lapses + timedelta(days=29)).read(token) is not None


@ON_STANDALONE_AND_CLUSTER
async def test_the_guest_s_message_shows_in_the_page_s_chat_once_and_is_queued(h: Harness) -> None:
    path = await path_of(h, await dinner(h))
    posted = await h.http.post(f"{path}/api/messages", json={"text": "주차 되나요?", "id": "c1"})
    assert posted.status_code == 202 and posted.json()["status"] == "queued"
    again = await h.http.post(f"{path}/api/messages", json={"text": "주차 되나요?", "id": "c1"})
    assert again.json()["status"] == "duplicate"

    listed = (await h.http.get(f"{path}/api/messages", params={"after": 0})).json()["messages"]
    # Once, however quickly the assistant's answer follows it.
    assert [m["text"] for m in listed if m["from"] == "guest"] == ["주차 되나요?"]
    empty = await h.http.post(f"{path}/api/messages", json={"text": "   "})
    assert empty.status_code == 422
    bad_id = await h.http.post(f"{path}/api/messages", json={"text": "hi", "id": "no spaces"})
    assert bad_id.status_code == 422


async def test_the_assistant_answers_in_the_page_s_chat(h: Harness) -> None:
    path = await path_of(h, await dinner(h))
    await h.http.post(f"{path}/api/messages", json={"text": "몇 시예요?", "id": "c2"})
    deadline = time.monotonic() + 15
    after, answers = 0, []
    while not answers and time.monotonic() < deadline:
        found = (await h.http.get(f"{path}/api/messages", params={"after": after, "wait": 5})).json()
        for message in found["messages"]:
            after = max(after, message["id"])
            if message["from"] == "assistant":
                answers.append(message["text"])
    assert answers == ["네, 확인했어요"]


async def test_a_page_s_requests_are_limited_per_link(h: Harness) -> None:
    path = await path_of(h, await dinner(h))
    other = await path_of(h, await dinner(h, title="Picnic"))
    statuses = [(await h.http.get(f"{path}/api/messages")).status_code for _ in range(61)]
    assert statuses == [200] * 60 + [429]
    limited = await h.http.get(f"{path}/api")
    assert limited.status_code == 429 and int(limited.headers["retry-after"]) >= 1
    assert (await h.http.get(f"{other}/api")).status_code == 200  # another link has its own window

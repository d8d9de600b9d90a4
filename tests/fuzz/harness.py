"""The server under fuzzing, and running a property against it from a worker thread.

``fuzz_server`` starts the app (API + embedded worker) with a scripted model, opens pending calls
when asked, and after the run checks that the server is still alive and logged no error.
``run_property`` runs a hypothesis property in the calling thread (a worker thread, see the package
docstring); the property sends its requests with ``Fuzz.post``, a blocking client call.
The test's time bound (``@pytest.mark.timeout``) is made to end the test even when the event loop
hangs in a task of the server (``tests.fuzz.timeouts``).
"""

from __future__ import annotations

import asyncio
import logging
import os
import threading
import time
from collections import Counter
from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import Any

import httpx
from hypothesis import HealthCheck, given, note, seed, settings
from hypothesis import strategies as st
from pydantic_ai.messages import (
    ModelMessage,
    ModelRequest,
    ModelResponse,
    TextPart,
    ToolCallPart,
    ToolReturnPart,
    UserPromptPart,
)
from pydantic_ai.models.function import AgentInfo, FunctionModel

from tests.fuzz.oracle import check_contract
from tests.fuzz.timeouts import TimedOut, timeout_until_it_lands
from tests.support import Harness

SCALE = max(1, int(os.environ.get("TRULOOP_FUZZ_SCALE", "1")))
SEED = os.environ.get("TRULOOP_FUZZ_SEED")
# No rate limit gets in the way of a few hundred requests a minute from one test user, and the error
# answers the fuzzing sends on purpose never turn the user's calendar off (device failures are
# counted per person, so a fresh conversation would not get it back).
GENEROUS = {
    "rate_limit_user": "1000000/minute",
    "rate_limit_admin": "1000000/minute",
    "max_client_failures": 1_000_000,
}


def fuzz_settings(max_examples: int) -> settings:
    return settings(
        max_examples=max_examples * SCALE,
        deadline=None,
        derandomize=SEED is None,
        database=None,
        suppress_health_check=list(HealthCheck),
        print_blob=False,
    )


def run_property(test: Callable[..., None], max_examples: int, *strategies: Any) -> int:
    """Run ``test`` under hypothesis (in the calling thread); returns how many examples ran."""
    ran = 0

    def counted(args: tuple[Any, ...]) -> None:
        nonlocal ran
        ran += 1
        test(*args)

    prop = fuzz_settings(max_examples)(given(st.tuples(*strategies))(counted))
    if SEED is not None:
        prop = seed(int(SEED))(prop)
    prop()
    return ran


def _prompt(message: ModelMessage) -> str | None:
    for part in message.parts:
        if isinstance(part, UserPromptPart):
            return part.content if isinstance(part.content, str) else str(part.content)
    return None


def fuzz_model() -> FunctionModel:
    """'calendar' asks the phone for events (one call), 'calendar x2' with two calls; else echo."""

    def call(n: int) -> ToolCallPart:
        args = {
            "notification_message": "…",
            "start_date": f"2026-11-{23 + n}T00:00:00+09:00",
            "end_date": "2026-11-29T00:00:00+09:00",
        }
        return ToolCallPart("get_calendar_events", args)

    def fn(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        last = messages[-1]
        text = _prompt(last) if isinstance(last, ModelRequest) else None
        if text == "calendar":
            return ModelResponse(parts=[call(0)])
        if text == "calendar x2":
            return ModelResponse(parts=[call(0), call(1)])
        if text is not None:
            return ModelResponse(parts=[TextPart(f"echo: {text}")])
        if any(isinstance(p, ToolReturnPart) for p in last.parts):
            return ModelResponse(parts=[TextPart("done")])
        return ModelResponse(parts=[TextPart("ok")])

    return FunctionModel(fn)


class ErrorLog(logging.Handler):
    """Collects ERROR records logged while the server runs (unhandled request errors, failed turns)."""

    def __init__(self) -> None:
        super().__init__(logging.ERROR)
        self.records: list[logging.LogRecord] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.records.append(record)


@dataclass
class Fuzz:
    """What the fuzzing thread works with: a blocking client, the harness, and the running tally."""

    h: Harness
    loop: asyncio.AbstractEventLoop
    client: httpx.Client
    errors: ErrorLog
    statuses: Counter[tuple[str, int]] = field(default_factory=Counter)
    codes: Counter[str] = field(default_factory=Counter)
    requests: int = 0
    slowest: tuple[float, str] = (0.0, "")
    # pending calls of user jeff, by slot; a slot's channel gets a new call once its call is answered
    live: list[str] = field(default_factory=list)
    slot_channels: list[str] = field(default_factory=list)
    answered: list[str] = field(default_factory=list)
    superseded: str = ""
    timed_out: threading.Event = field(default_factory=threading.Event)
    _refills: list[Any] = field(default_factory=list)
    _refilling: set[int] = field(default_factory=set)
    _opened: int = 0

    def post(
        self,
        path: str,
        content: bytes | Iterator[bytes],
        headers: list[tuple[bytes, bytes]],
        codes: dict[int, set[str]],
    ) -> httpx.Response:
        """Send one request from the fuzzing thread, tally it, and hold the answer to the contract."""
        if self.timed_out.is_set():
            raise TimedOut("the test ran past its time bound: no more requests")
        headers = [(name, value.strip()) for name, value in headers]
        shown_body = content[:300] if isinstance(content, bytes) else "(chunked)"
        shown = f"POST {path} headers={headers!r} body={shown_body!r}"
        started = time.perf_counter()
        try:
            r = self.client.post(path, content=content, headers=headers)
        except httpx.TransportError as exc:  # the server dropped the connection: as bad as a 500
            raise AssertionError(f"{shown} -> {type(exc).__name__}: {exc}") from exc
        self.slowest = max(self.slowest, (time.perf_counter() - started, shown[:300]))
        self.requests += 1
        self.statuses[(path.rsplit("/", 1)[-1], r.status_code)] += 1
        note(f"{shown} -> {r.status_code} {r.text[:300]!r}")
        try:
            check_contract(r, codes)
        except AssertionError as exc:
            raise AssertionError(f"{shown} -> {exc}") from None
        if r.status_code >= 400:
            self.codes[r.json()["error"]["code"]] += 1
        return r

    # -- pending calls -------------------------------------------------------------------------

    @property
    def known_ids(self) -> set[str]:
        return {*self.live, *self.answered, self.superseded}

    def consumed(self, call_id: str) -> None:
        """A live call was answered: remember it, and open a new call in its channel (in the background)."""
        if call_id in self.answered:
            return
        self.answered.append(call_id)
        for slot, live in enumerate(self.live):
            if live == call_id and slot not in self._refilling and slot < len(self.slot_channels):
                self._refilling.add(slot)
                self._refills.append(asyncio.run_coroutine_threadsafe(self._refill(slot), self.loop))

    async def _refill(self, slot: int) -> None:
        # A new conversation each time, so that a refill never waits behind an earlier turn.
        self._opened += 1
        channel = f"fz-{slot}-{self._opened}"
        r = await self.h.user_says("calendar", channel=channel)
        assert r.status_code == 200 and r.json() == {"status": "queued"}, r.text
        [rpc] = await self.h.rpc_requests(1, channel=channel)
        self.live[slot] = rpc["id"]
        self._refilling.discard(slot)

    async def settle(self) -> None:
        await asyncio.gather(*(asyncio.wrap_future(f) for f in self._refills))

    def summary(self, name: str, examples: int) -> str:
        statuses = ", ".join(f"{p}:{s}={n}" for (p, s), n in sorted(self.statuses.items()))
        return (
            f"[fuzz] {name}: {examples} examples, {self.requests} requests; {statuses}; "
            f"codes {dict(sorted(self.codes.items()))}; slowest request {self.slowest[0]:.2f}s"
        )


async def open_calls(fz: Fuzz) -> None:
    """Pending calls for jeff: four one-call turns, a two-call turn, and one call superseded."""
    h = fz.h
    for i in range(4):
        channel = f"fz-{i}"
        await h.user_says("calendar", channel=channel)
        [rpc] = await h.rpc_requests(1, channel=channel)
        fz.live.append(rpc["id"])
        fz.slot_channels.append(channel)
    await h.user_says("calendar x2", channel="fz-two")
    fz.live.extend(rpc["id"] for rpc in await h.rpc_requests(2, channel="fz-two"))
    await h.user_says("calendar", channel="fz-sup")
    [old] = await h.rpc_requests(1, channel="fz-sup")
    await h.user_says("a newer message", channel="fz-sup")
    await h.replies(1, channel="fz-sup")
    fz.superseded = old["id"]
    r = await h.answer(fz.superseded, result={"events": []})
    assert r.status_code == 410, r.text


@asynccontextmanager
async def fuzz_server(start_server: Any, *, calls: bool = False) -> AsyncIterator[Fuzz]:
    """The app for one fuzz test; ``calls=True`` opens jeff's pending calls first (``open_calls``)."""
    errors = ErrorLog()
    errors.setFormatter(logging.Formatter("%(name)s: %(message)s"))
    root = logging.getLogger()
    root.addHandler(errors)
    timed_out = threading.Event()
    try:
        with timeout_until_it_lands(timed_out):
            async with start_server(model=fuzz_model(), **GENEROUS) as h:
                base_url = str(h.http.base_url)
                with httpx.Client(base_url=base_url, timeout=30) as client:
                    fz = Fuzz(
                        h=h,
                        loop=asyncio.get_running_loop(),
                        client=client,
                        errors=errors,
                        timed_out=timed_out,
                    )
                    if calls:
                        await open_calls(fz)
                    yield fz
                    await fz.settle()
                    await still_alive(fz)
    finally:
        root.removeHandler(errors)
    # No request ended in an unhandled error, and the worker logged no error for anything it was fed.
    assert not errors.records, [errors.format(r) for r in errors.records[:5]]


async def still_alive(fz: Fuzz) -> None:
    """The API answers and the worker still runs turns after everything it was fed."""
    h = fz.h
    r = await h.http.get("/healthz")
    assert r.status_code == 200 and r.json() == {"status": "ok"}
    r = await h.user_says("are you still there?", channel="fz-alive", user="alive-check", message_id=424242)
    assert r.status_code == 200 and r.json() == {"status": "queued"}, r.text
    [reply] = await h.replies(1, channel="fz-alive", timeout=30)
    assert reply.text == "echo: are you still there?"

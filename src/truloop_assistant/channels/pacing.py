"""App-wide pacing of the Platform API calls, in Redis: every process shares one budget per HTTP method.

Sendbird limits an application per HTTP method: GET, POST, PUT and DELETE each have their own
calls per second (``config.sendbird_plans``), whichever process calls. Each method's budget is a
moving window in Redis (as the ``limits`` library's moving window keeps one: a list of the calls'
times, newest first), kept by one script in one round trip: a call goes out at once while fewer than
the budget went out in the last second (and a margin, ``MARGIN_S``; a burst of a whole second's
worth waits on nothing), so no one-second window at Sendbird ever holds more than the budget, whether
it counts in fixed or sliding seconds. Nothing is booked ahead: a call beyond the budget sleeps until
a slot frees and asks again, so a caller that is cancelled or times out holds nothing. Waiting
callers are noted (each with a deadline, so a vanished one lapses by itself) and the script serves
them in this order:

- ``ANSWER``: what a person is waiting for (answers, requests to the phone, look-ups, deletions, an
  answer's final text). Waiting answers are served in the order they came.
- ``UPDATE``: a request's message updated to ``agent-rpc-settled`` (and ``TYPING_STOP``, the stop of
  a typing start that went out). It yields to waiting answers, and waits at most ``SHORT_WAIT_S``:
  the answer behind it in its conversation must not wait on it (the outbox tries it again later).
- ``BULK``: invitations, reminders and relayed messages (calls made inside :func:`background`). While
  answers or updates wait they take at most half of the method's budget; otherwise all of it.
- ``STREAM``: an update of an answer that is still growing. It takes only a slot that nobody waiting
  needs, else it is skipped (the next update, or the final text, carries its text); growing answers
  share those slots fairly: the one updated longest ago goes first.
- ``TYPING``: a typing start, only while a good part of the budget is spare; else skipped. For as
  long as a method is known to be busy a start is skipped without asking Redis at all.
- ``NOTICE``: a note from the server itself (calls made inside :func:`spare_only`: why a message was
  not answered), as a typing start: from spare budget only, else skipped.

A 429 holds the method back for every process for the wait Sendbird asked for. Message sends are also
paced per channel (a user may send Sendbird five messages a second to one channel). Where a response
carries ``X-RateLimit-Limit`` for a method's plan budget (``N;w=1``), the budget learns it.
"""

from __future__ import annotations

import asyncio
import enum
import functools
import logging
import os
import time
from collections import deque
from collections.abc import Iterator, Mapping
from contextlib import AbstractContextManager, contextmanager
from contextvars import ContextVar

from prometheus_client import Counter
from redis.asyncio import Redis
from redis.exceptions import RedisError

from ..errors import ServiceError
from ..metrics import SENDBIRD_PACED
from ..store import keys
from .pacing_scripts import FORGET, HOLD, TAKE

log = logging.getLogger(__name__)


class Kind(enum.Enum):
    """What a call is, for its place in its method's budget (see the module)."""

    ANSWER = "answer"
    UPDATE = "update"
    TYPING_STOP = "typing-stop"
    BULK = "bulk"
    STREAM = "stream"
    TYPING = "typing"
    NOTICE = "notice"

    @property
    def rank(self) -> int:
        """Its priority in the script (0 first); a typing stop ranks as an update."""
        return _RANKS[self]

    @property
    def waits(self) -> bool:
        """Whether it waits for a slot (a growing update, a typing start and a notice never do)."""
        return self not in (Kind.STREAM, Kind.TYPING, Kind.NOTICE)


_RANKS = {
    Kind.ANSWER: 0,
    Kind.UPDATE: 1,
    Kind.TYPING_STOP: 1,
    Kind.BULK: 2,
    Kind.STREAM: 3,
    Kind.TYPING: 4,
    Kind.NOTICE: 4,
}

SECOND_S = 1.0
"""The window Sendbird counts a budget in."""
MARGIN_S = (0.05, 0.5)
"""What a process adds to Sendbird's second: at least the first, and as much more as the time calls
of the method took to answer lately (``LATENCIES`` of them) varied, within the second. A call reaches
Sendbird at some moment before its answer comes back, so two calls a window apart then cannot reach
Sendbird within one second, even when the first waited on a new connection's handshake (or a busy
event loop) and the second on none."""
LATENCIES = 20
"""Calls of a method whose time to answer a process remembers."""
GRACE_S = 2.0
"""How long a waiting caller's note outlives the time it was told to ask again: one that is late by
more (its process died, or was too busy) loses its place. A caller that gives up waiting takes its
note away at once."""
SHORT_WAIT_S = 1.0
"""The longest an update or a typing stop (whose start went out) waits; beyond it, it is skipped."""
MAX_WAIT_S = 60.0
"""The longest any call waits; beyond it the call fails as a transport error (and is retried)."""
TYPING_SPARE = 0.4
"""A typing start goes out only while this share of the budget (at least two calls) is spare."""
CHANNEL_SENDS_PER_S = 5
"""Message sends to one channel per second: Sendbird's per-user limit ("a user can send up to five
messages per second to a group channel", the Chat SDKs' "Rate limits" pages); the bot is one user."""
LEARNED_FOR_S = 3600
"""How long a budget learned from ``X-RateLimit-Limit`` is kept."""
STREAM_SEEN_S = 3.0
"""A growing answer that asked for no update this long has ended: it no longer counts for fairness."""

_standing: ContextVar[Kind | None] = ContextVar("truloop_paced_as", default=None)


@contextmanager
def paced_as(kind: Kind) -> Iterator[None]:
    """Answers (the default kind) sent inside are paced as ``kind``."""
    token = _standing.set(kind)
    try:
        yield
    finally:
        _standing.reset(token)


def background() -> AbstractContextManager[None]:
    """Calls made inside are ``BULK``: they go after what people in a conversation wait for."""
    return paced_as(Kind.BULK)


def spare_only() -> AbstractContextManager[None]:
    """Calls made inside are ``NOTICE``: they go only from spare budget, else they are skipped."""
    return paced_as(Kind.NOTICE)


def kind_now(kind: Kind) -> Kind:
    """An answer's kind inside :func:`background` or :func:`spare_only` is theirs."""
    return (_standing.get() or kind) if kind is Kind.ANSWER else kind


class Throttled(ServiceError):
    """The call found no slot it could take (a typing start, a growing update, or a wait past its bound)."""


class Pacer:
    """Takes each Platform API call's slot in its method's app-wide budget (Redis), waiting if need be."""

    def __init__(self, redis: Redis, budgets: Mapping[str, float]) -> None:
        self.budgets = {method.upper(): rate for method, rate in budgets.items()}
        self._redis = redis
        self._take = redis.register_script(TAKE)
        self._hold = redis.register_script(HOLD)
        self._forget_script = redis.register_script(FORGET)
        self._busy_until: dict[str, float] = {}
        """Method -> until when (``time.monotonic``) it is known to be busy: typing is skipped."""
        self._learned: dict[str, tuple[float, float]] = {}
        """Method -> the limit Sendbird last said, and when (``time.monotonic``) it was kept in Redis."""
        self._latencies: dict[str, deque[float]] = {}
        self._tasks: set[asyncio.Task[None]] = set()
        self._names: dict[str, list[str]] = {}

    async def acquire(self, method: str, kind: Kind, *, channel: str = "", stream: str = "") -> float:
        """Wait for the call's slot (``channel``: a message send's channel; ``stream``: the growing
        message's id); raise :class:`Throttled` when it gets none (see the module). Returns when
        (``time.monotonic``) the slot was asked for: the call's time to answer counts from there."""
        kind = kind_now(kind)
        method = method.upper()
        if kind is Kind.TYPING and time.monotonic() < self._busy_until.get(method, 0.0):
            _counted(method, kind, "skipped").inc()
            raise Throttled("no budget to spare for typing")
        caller = stream or os.urandom(8).hex()
        started = time.monotonic()
        bound = SHORT_WAIT_S if kind.rank == 1 else MAX_WAIT_S
        waited = False
        try:
            while True:
                asked = time.monotonic()
                wait_s = await self._ask(method, kind, caller, channel, waited=waited)
                if wait_s is None:
                    _counted(method, kind, "waited" if waited else "now").inc()
                    return asked
                if kind.waits:
                    self._busy_until[method] = time.monotonic() + wait_s
                if not kind.waits or time.monotonic() + wait_s - started > bound:
                    _counted(method, kind, "skipped").inc()
                    if kind.waits:
                        self._forget(method, kind, caller)
                        raise Throttled(f"Sendbird's {method} budget had no slot within {bound:g} s")
                    raise Throttled(f"no {method} budget to spare for {kind.name.lower()}")
                waited = True
                await asyncio.sleep(wait_s)
        except asyncio.CancelledError:
            if kind.waits:
                self._forget(method, kind, caller)
            raise

    def _keys(self, method: str) -> list[str]:
        if (names := self._names.get(method)) is None:
            names = self._names[method] = keys.platform_pace_keys(method, "")
        return names

    def window_s(self, method: str) -> float:
        """The window this process counts ``method``'s budget in: a second and a margin (``MARGIN_S``)."""
        took = self._latencies.get(method)
        spread = (max(took) - min(took) if len(took) > 1 else took[0]) if took else 0.0
        return SECOND_S + min(MARGIN_S[1], MARGIN_S[0] + spread)

    def answered(self, method: str, took_s: float) -> None:
        """A call of ``method`` was answered ``took_s`` after its slot was asked for."""
        self._latencies.setdefault(method.upper(), deque(maxlen=LATENCIES)).append(took_s)

    async def _ask(self, method: str, kind: Kind, caller: str, channel: str, *, waited: bool) -> float | None:
        """One round trip: None when the call may go now, else the seconds until it asks again."""
        budget = self.budgets.get(method) or min(self.budgets.values())  # a learned one is in Redis
        names = self._keys(method)
        if channel:
            names = [*names[:-1], keys.platform_pace_channel(channel)]
        try:
            answer = int(
                await self._take(
                    keys=names,
                    args=[
                        budget,
                        kind.rank,
                        caller,
                        _micros(self.window_s(method)),
                        _micros(GRACE_S),
                        CHANNEL_SENDS_PER_S if channel else 0,
                        TYPING_SPARE,
                        1 if kind.waits else 0,
                        _micros(STREAM_SEEN_S),
                        _micros(SECOND_S + MARGIN_S[1]),
                        1 if waited else 0,
                    ],
                )
            )
        except (RedisError, OSError) as exc:  # Sendbird's own limit still holds: the call goes out
            # With the exception attached, an outage is one line per outage, not one per call.
            log.warning("could not pace a Sendbird call (%s %s)", method, kind.name.lower(), exc_info=exc)
            return None
        return None if answer >= 0 else -answer / 1e6

    def _forget(self, method: str, kind: Kind, caller: str) -> None:
        """A caller that stops waiting is no longer noted as waiting (in the background: it lapses
        by itself soon anyway)."""
        if kind.rank > 2:
            return
        names = self._keys(method)
        waiting = [names[4 + kind.rank], names[7 + kind.rank]]
        task = asyncio.get_running_loop().create_task(self._unnote(waiting, caller))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _unnote(self, waiting: list[str], caller: str) -> None:
        try:
            await self._forget_script(keys=waiting, args=[caller])
        except (RedisError, OSError):
            pass

    async def hold(self, method: str, seconds: float) -> None:
        """Sendbird answered 429: no process calls ``method`` before ``seconds`` from now."""
        method = method.upper()
        self._busy_until[method] = time.monotonic() + seconds
        try:
            await self._hold(keys=[self._keys(method)[2]], args=[_micros(seconds)])
        except (RedisError, OSError) as exc:
            log.warning("could not hold Sendbird %s calls back", method, exc_info=exc)

    async def learn(self, method: str, limit: float) -> None:
        """Sendbird said the method's budget (``X-RateLimit-Limit``): every process keeps to it."""
        method = method.upper()
        said, kept_at = self._learned.get(method, (None, 0.0))
        now = time.monotonic()
        if said == limit and now - kept_at < LEARNED_FOR_S / 2:  # kept while Sendbird keeps saying it
            return
        self._learned[method] = (limit, now)
        if said != limit and limit != self.budgets.get(method):
            log.info("Sendbird's %s budget is %g per second (it said so in X-RateLimit-Limit)", method, limit)
        try:
            await self._redis.set(self._keys(method)[3], limit, ex=LEARNED_FOR_S)
        except (RedisError, OSError) as exc:
            log.warning("could not keep Sendbird's %s budget", method, exc_info=exc)


@functools.cache
def _counted(method: str, kind: Kind, outcome: str) -> Counter:
    return SENDBIRD_PACED.labels(method, kind.value, outcome)


def _micros(seconds: float) -> int:
    return max(0, round(seconds * 1_000_000))

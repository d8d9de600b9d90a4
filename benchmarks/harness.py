"""What the benchmarks share: Redis (standalone or cluster), the fake model's process, the server's
processes, the fake Sendbird the load generator serves itself, the phone, and CPU read from /proc.

Where each piece runs, and why:

- **The fake model** (``benchmarks.fakes``) runs in a process of its own, so its CPU is counted
  neither in the server's processes nor in the bare pydantic-ai process. It logs each request's
  think time by turn, which the load generator fetches at the end (``GET /log``).
- **The fake Sendbird** runs inside the load generator's event loop: the load generator must see
  every message the moment it arrives (the phone answers the ``agent-rpc`` request at once, and the
  answer's arrival ends the turn), and one clock then times both ends of a turn. Its CPU is the load
  generator's, which no figure counts.
- **The server** is the real ``truloop-assistant serve`` and ``truloop-assistant worker`` processes,
  configured through the environment only (``server_env``; started in the scenario's log directory,
  so no ``.env`` applies), their output in log files there.

Everything listens on 127.0.0.1 only.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import logging
import os
import random
import re
import statistics
import sys
import time
from collections import Counter
from collections.abc import AsyncIterator, Callable, Iterable, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

import httpx
from redis.asyncio import Redis
from starlette.requests import ClientDisconnect, Request
from starlette.responses import JSONResponse

from tests.fakes.sendbird import FakeSendbird, SentMessage
from tests.support import API_TOKEN, serve, sign, webhook_payload
from truloop_assistant.auth import issue_token
from truloop_assistant.local import embedded_redis
from truloop_assistant.local.embedded_redis import RedisServer, free_port
from truloop_assistant.store import keys

SECRET = "benchmark-secret-0123456789-abcdefghij"
DEFAULT_PLAN = "free-trial"
"""The Sendbird plan a newcomer's server paces to (``TRULOOP_SENDBIRD_PLAN`` unset)."""
MODEL = "openai-chat:fake-model"
QUEUE = "truloop"
EVENTS = {
    "events": [
        {
            "id": "e1",
            "title": "Standup",
            "start": {"dateTime": "2026-11-24T10:00:00+09:00"},
            "end": {"dateTime": "2026-11-24T10:15:00+09:00"},
        }
    ]
}
"""What the phone answers ``get_calendar_events`` with."""
ROOT = Path(__file__).resolve().parent.parent


def percentile(values: Sequence[float], q: float) -> float:
    """The nearest-rank ``q`` quantile (``q`` in 0..1); NaN for no values."""
    if not values:
        return float("nan")
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(q * (len(ordered) - 1))))]


def median(values: Sequence[float]) -> float:
    return statistics.median(values) if values else float("nan")


# -- CPU from /proc

CLOCK_TICKS = os.sysconf("SC_CLK_TCK")


def _proc_stats() -> dict[int, tuple[int, float]]:
    """pid -> (parent pid, CPU seconds: utime + stime) of every process now."""
    found: dict[int, tuple[int, float]] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", encoding="ascii", errors="replace") as f:
                raw = f.read()
        except OSError:
            continue  # it ended meanwhile
        fields = raw.rsplit(")", 1)[1].split()  # after the command name, which may hold anything
        found[int(entry)] = (int(fields[1]), (int(fields[11]) + int(fields[12])) / CLOCK_TICKS)
    return found


def tree_cpu_s(roots: Iterable[int]) -> float:
    """CPU seconds used so far by these processes and all their descendants alive now."""
    stats = _proc_stats()
    children: dict[int, list[int]] = {}
    for pid, (parent, _) in stats.items():
        children.setdefault(parent, []).append(pid)
    total, todo, seen = 0.0, list(roots), set()
    while todo:
        pid = todo.pop()
        if pid in seen or pid not in stats:
            continue
        seen.add(pid)
        total += stats[pid][1]
        todo.extend(children.get(pid, ()))
    return total


# -- Redis


class Unavailable(Exception):
    """A scenario cannot run here (say why)."""


@dataclass
class RedisUnderTest:
    """The Redis the server uses (``url``), and a plain client to each of its primaries for the figures."""

    kind: str
    url: str
    nodes: list[Redis]

    async def _info(self, section: str) -> list[dict[str, Any]]:
        return [await node.info(section) for node in self.nodes]

    async def commands(self) -> int:
        """Commands processed so far, all primaries together."""
        return sum(int(info["total_commands_processed"]) for info in await self._info("stats"))

    async def commandstats(self) -> Counter[str]:
        """Calls so far per command (``INFO commandstats``), all primaries together."""
        calls: Counter[str] = Counter()
        for info in await self._info("commandstats"):
            for name, stats in info.items():
                calls[name.removeprefix("cmdstat_")] += int(stats["calls"])
        return calls

    async def cpu_s(self) -> float:
        return sum(float(i["used_cpu_sys"]) + float(i["used_cpu_user"]) for i in await self._info("cpu"))

    async def clients(self) -> int:
        """Connected clients, all primaries together."""
        return sum(int(info["connected_clients"]) for info in await self._info("clients"))

    async def scan(self, match: str) -> AsyncIterator[tuple[Redis, bytes]]:
        """Every key matching ``match``, with the primary that holds it."""
        for node in self.nodes:
            async for key in node.scan_iter(match=match, count=1000):
                yield node, key

    async def busy(self) -> list[str]:
        """What the server still has to do (as ``tests.support.busy``, on every primary)."""
        found = []
        async for node, key in self.scan("*incomplete"):  # saq's, wherever the queue keeps its keys
            if count := await node.zcard(key):
                found.append(f"{count} unfinished job(s)")
        async for node, key in self.scan(f"{keys.PREFIX}:{{c:*}}:inbox"):
            if count := await node.llen(key):
                found.append(f"{count} event(s) in {key.decode()}")
        async for _, key in self.scan(f"{keys.PREFIX}:{{c:*}}:owner"):
            found.append(f"a drain owns {key.decode()}")
        return found

    async def idle(self, timeout: float) -> list[str]:
        """Wait until nothing is queued, running or waiting in an inbox; what is still busy at the timeout."""
        deadline = time.monotonic() + timeout
        while True:
            pending = await self.busy()
            if not pending or time.monotonic() > deadline:
                return pending
            await asyncio.sleep(0.05)


def cluster_server_class() -> type[Any] | None:
    """``embedded_redis.RedisClusterServer`` when this tree has it."""
    return getattr(embedded_redis, "RedisClusterServer", None)


@asynccontextmanager
async def redis_under_test(kind: str) -> AsyncIterator[RedisUnderTest]:
    """A throwaway Redis (``standalone``) or Redis Cluster of three primaries (``cluster``)."""
    server: Any
    if kind == "standalone":
        server = RedisServer()
    else:
        cls = cluster_server_class()
        if cls is None:
            raise Unavailable("truloop_assistant.local.embedded_redis has no RedisClusterServer in this tree")
        server = cls()
    server.start()  # from this thread, which keeps it (the nodes die with the thread that spawned them)
    try:
        ports = [server.port] if kind == "standalone" else list(server.ports)
        nodes = [Redis(host="127.0.0.1", port=port) for port in ports]
        try:
            yield RedisUnderTest(kind=kind, url=server.url, nodes=nodes)
        finally:
            for node in nodes:
                await node.aclose()
    finally:
        server.stop()


@dataclass(frozen=True)
class Footprint:
    """``MEMORY USAGE`` of one conversation's keys."""

    tagged: int
    """All keys carrying the conversation's hash tag ``{c:…}``, history included."""
    history: int
    """Its history key(s) (``…:history:<user>``)."""
    untagged: int
    """Keys of the conversation without its tag: call index entries (``ta:call:<id>``, holding the tag),
    and keys of its only user (``ta:{u:…}:…``)."""
    by_kind: dict[str, int]
    """Tagged bytes by kind of key (``turn``, ``pending``, ``settled``, ``ledger`` …)."""

    @property
    def beyond_history(self) -> int:
        return self.tagged - self.history


def _hash_tag(key: str) -> str:
    """The ``{…}`` part of a key name ('' if none)."""
    start = key.find("{")
    end = key.find("}", start)
    return key[start : end + 1] if start >= 0 and end > start else ""


_IDS = re.compile(r"\{[a-z]:[0-9a-f]+\}|[0-9a-f]{12,}|\d+")


async def other_keys(redis: RedisUnderTest) -> Counter[str]:
    """Bytes of every key that carries no conversation's hash tag, by key pattern (ids made ``*``)."""
    sizes: Counter[str] = Counter()
    async for node, key in redis.scan("*"):
        name = key.decode(errors="replace")
        if "{c:" not in name:
            sizes[_IDS.sub("*", name)] += int(await node.memory_usage(key) or 0)
    return sizes


async def footprints(redis: RedisUnderTest, users: dict[str, str]) -> dict[str, Footprint]:
    """Per channel of ``users`` (channel -> its one user), what its keys take in Redis."""
    by_tag = {keys.conversation_tag(channel): channel for channel in users}
    user_tags = {_hash_tag(keys.user_channels(user)): channel for channel, user in users.items()}
    tagged: Counter[str] = Counter()
    history: Counter[str] = Counter()
    untagged: Counter[str] = Counter()
    kinds: dict[str, Counter[str]] = {channel: Counter() for channel in users}
    async for node, key in redis.scan(f"{keys.PREFIX}:*"):
        name = key.decode()
        size = int(await node.memory_usage(key) or 0)
        parts = name.split(":")
        tag = _hash_tag(name)
        if (channel := by_tag.get(tag)) is not None:
            tagged[channel] += size
            kind = parts[3] if len(parts) > 3 else "?"
            if kind in ("ledger", "inbox", "outbox") and len(parts) > 4:
                kind += ":" + parts[4]
            kinds[channel][kind] += size
            if kind == "history":
                history[channel] += size
        elif (channel := user_tags.get(tag)) is not None:
            untagged[channel] += size
        elif name.startswith(f"{keys.PREFIX}:call:"):
            owner = await node.get(key)
            owner_tag = owner.decode() if isinstance(owner, bytes) else str(owner)
            if (channel := by_tag.get(owner_tag)) is not None:
                untagged[channel] += size
    return {
        channel: Footprint(tagged[channel], history[channel], untagged[channel], dict(kinds[channel]))
        for channel in users
    }


# -- processes


def _log_file(path: Path) -> IO[bytes]:
    return open(path, "ab")


def errors(path: Path) -> list[str]:
    """The log's ERROR and CRITICAL lines."""
    try:
        text = path.read_text(errors="replace")
    except OSError:
        return []
    return [line for line in text.splitlines() if " ERROR " in line or " CRITICAL " in line]


def tail(path: Path, lines: int = 15) -> str:
    try:
        return "".join(path.read_text(errors="replace").splitlines(keepends=True)[-lines:])
    except OSError:
        return "(no log)"


@dataclass
class Process:
    """A subprocess whose output goes to a log file."""

    name: str
    proc: asyncio.subprocess.Process
    log: Path

    @property
    def pid(self) -> int:
        return self.proc.pid

    def check(self) -> None:
        if self.proc.returncode is not None:
            raise RuntimeError(f"{self.name} exited with {self.proc.returncode}; log tail:\n{tail(self.log)}")

    async def stop(self, timeout: float = 40.0) -> None:
        if self.proc.returncode is None:
            self.proc.terminate()
            try:
                async with asyncio.timeout(timeout):
                    await self.proc.wait()
            except TimeoutError:
                self.proc.kill()
                await self.proc.wait()


async def start_process(
    name: str, args: Sequence[str], env: dict[str, str], logs: Path, *, cwd: Path = ROOT
) -> Process:
    log = logs / f"{name}.log"
    with _log_file(log) as out:
        proc = await asyncio.create_subprocess_exec(
            *args, env=env, cwd=cwd, stdin=asyncio.subprocess.DEVNULL, stdout=out, stderr=out
        )
    return Process(name, proc, log)


@asynccontextmanager
async def fake_model(think_ms: float, jitter: float, logs: Path) -> AsyncIterator[FakeModel]:
    """``benchmarks.fakes`` in its own process; yields once it answers."""
    port = free_port()
    args = [sys.executable, "-m", "benchmarks.fakes", "--llm-port", str(port)]
    process = await start_process(
        "fake-model", [*args, "--think-ms", str(think_ms), "--jitter", str(jitter)], clean_env(), logs
    )
    model = FakeModel(port=port, process=process)
    try:
        async with httpx.AsyncClient() as http:
            for _ in range(300):
                process.check()
                try:
                    (await http.get(f"{model.url}/log?since=999999999")).raise_for_status()
                    break
                except httpx.HTTPError:
                    await asyncio.sleep(0.05)
            else:
                raise RuntimeError("the fake model did not start")
        yield model
    finally:
        await process.stop(5)


@dataclass
class FakeModel:
    port: int
    process: Process

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    async def think_times(self) -> dict[str, list[float]]:
        """Turn key -> the think time of each model request of that turn so far."""
        async with httpx.AsyncClient() as http:
            log = (await http.get(f"{self.url}/log")).json()
        times: dict[str, list[float]] = {}
        for key, think in log:
            times.setdefault(key, []).append(think)
        return times


def clean_env() -> dict[str, str]:
    """This environment without settings that would change what is measured (``TRULOOP_*``, tracing,
    the model provider's)."""
    ours = ("TRULOOP_", "OTEL_", "LOGFIRE_", "OPENAI_")
    return {k: v for k, v in os.environ.items() if not k.startswith(ours)}


def model_env(model_url: str) -> dict[str, str]:
    """What points ``MODEL`` (an OpenAI-compatible model string) at the fake model."""
    return {"OPENAI_BASE_URL": f"{model_url}/v1", "OPENAI_API_KEY": "fake"}


def server_env(
    redis_url: str, model_url: str, sendbird_url: str, *, plan: str = DEFAULT_PLAN
) -> dict[str, str]:
    """The server's whole configuration; nothing is taken from the caller's ``TRULOOP_*``, tracing is off.
    ``plan``: the Sendbird plan it paces to (the default one is left unset, as a newcomer leaves it)."""
    return {
        **clean_env(),
        **model_env(model_url),
        "TRULOOP_REDIS_URL": redis_url,
        "TRULOOP_CHANNEL": "sendbird",
        "TRULOOP_SENDBIRD_APP_ID": "bench",
        "TRULOOP_SENDBIRD_API_TOKEN": API_TOKEN,
        "TRULOOP_SENDBIRD_API_URL": sendbird_url,
        "TRULOOP_JWT_SECRET": SECRET,
        "TRULOOP_MODEL": MODEL,
        "TRULOOP_QUEUE_NAME": QUEUE,
        "TRULOOP_LOG_LEVEL": "WARNING",
        # The benchmark measures turns, not the limiter's refusals (a conversation sends back to back).
        "TRULOOP_RATE_LIMIT_USER": "1000000/minute",
        **({} if plan == DEFAULT_PLAN else {"TRULOOP_SENDBIRD_PLAN": plan} if plan else UNPACED),
    }


UNPACED = {"TRULOOP_SENDBIRD_RATES": "GET=1000000,POST=1000000,PUT=1000000,DELETE=1000000"}
"""The pacer as good as switched off."""


@dataclass
class Server:
    """``truloop-assistant serve`` and ``truloop-assistant worker`` as subprocesses."""

    api: Process
    worker: Process
    port: int

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def pids(self) -> list[int]:
        return [self.api.pid, self.worker.pid]

    def cpu_s(self) -> float:
        """CPU seconds of the API and worker process trees (``--processes`` children included)."""
        return tree_cpu_s(self.pids)

    def api_cpu_s(self) -> float:
        return tree_cpu_s([self.api.pid])

    def check(self) -> None:
        self.api.check()
        self.worker.check()


@asynccontextmanager
async def server(
    env: dict[str, str], logs: Path, *, processes: int = 1, concurrency: int | None = None
) -> AsyncIterator[Server]:
    """The API and the worker (its default concurrency unless ``concurrency`` is given); yields once the
    API is ready (the worker may still be starting: send a first turn and wait for its answer)."""
    cli = [sys.executable, "-m", "truloop_assistant.cli"]
    port = free_port()
    worker_args = [*cli, "worker"]
    if processes != 1:
        worker_args += ["--processes", str(processes)]
    if concurrency is not None:
        worker_args += ["--concurrency", str(concurrency)]
    # Started in the log directory: a developer's .env in the work tree must not change what is measured.
    api = await start_process("serve", [*cli, "serve", "--port", str(port)], env, logs, cwd=logs)
    worker = await start_process("worker", worker_args, env, logs, cwd=logs)
    running = Server(api=api, worker=worker, port=port)
    try:
        async with httpx.AsyncClient() as http:
            for _ in range(600):
                running.check()
                try:
                    if (await http.get(f"{running.url}/readyz")).status_code == 200:
                        break
                except httpx.HTTPError:
                    pass
                await asyncio.sleep(0.05)
            else:
                raise RuntimeError(f"the API did not become ready; log tail:\n{tail(api.log)}")
        yield running
    finally:
        await asyncio.gather(api.stop(), worker.stop())


# -- the fake Sendbird and the phone


@dataclass
class Sendbird(FakeSendbird):
    """The fake Sendbird, with its messages indexed by channel so that thousands of waiters stay cheap
    (``FakeSendbird.wait_for`` re-checks every waiter on every message)."""

    by_channel: dict[str, list[SentMessage]] = field(default_factory=dict)
    abandoned: int = 0
    """Requests the server gave up on before they were answered (set when it stops serving)."""
    _indexed: int = 0
    _arrived: dict[str, asyncio.Event] = field(default_factory=dict)
    api_delay_s: float = 0.0
    """How long each message send, update and typing call takes (the real API's round trip)."""

    async def _send(self, request: Request) -> JSONResponse:
        await asyncio.sleep(self.api_delay_s)
        return await super()._send(request)

    async def _update(self, request: Request) -> JSONResponse:
        await asyncio.sleep(self.api_delay_s)
        return await super()._update(request)

    async def _typing(self, request: Request) -> JSONResponse:
        await asyncio.sleep(self.api_delay_s)
        return await super()._typing(request)

    async def _notify(self) -> None:
        while self._indexed < len(self.messages):
            message = self.messages[self._indexed]
            self._indexed += 1
            self.by_channel.setdefault(message.channel_url, []).append(message)
            if (arrived := self._arrived.pop(message.channel_url, None)) is not None:
                arrived.set()

    async def message(self, channel: str, index: int, deadline: float) -> SentMessage | None:
        """The channel's ``index``-th message (from 0), once it is there; None past ``deadline``."""
        while len(self.by_channel.get(channel, ())) <= index:
            arrived = self._arrived.setdefault(channel, asyncio.Event())
            try:
                async with asyncio.timeout(deadline - time.monotonic()):
                    await arrived.wait()
            except TimeoutError:
                return None
        return self.by_channel[channel][index]


@dataclass
class Turn:
    """One message of a person and what became of it (times are ``time.monotonic()``)."""

    channel: str
    user: str
    text: str
    sent: float
    ack_s: float = float("nan")
    rpc_at: float | None = None
    answered: float | None = None
    problem: str | None = None
    pause: bool = False
    """The phone was told not to answer: the turn is meant to stay paused."""

    @property
    def expected(self) -> str:
        return f"answer to: {self.text}"

    @property
    def latency_s(self) -> float:
        return (self.answered - self.sent) if self.answered is not None else float("nan")


@dataclass
class Outcome:
    """What the channels show, against the turns that were sent."""

    turns: int
    answered: int
    lost: int
    duplicated: int
    """Turns answered more than once."""
    extra_requests: int
    """Device requests (``agent-rpc``) beyond one per turn."""
    unexpected: int
    """Messages that answer no turn (an error, a notice, a wrong text)."""
    resent: int
    """Sends Sendbird shows once because their ``dedup_id`` repeated (retries; harmless)."""
    problems: list[str]


@dataclass
class Load:
    """Sends turns as Sendbird and answers device requests as the phone; keeps every turn."""

    http: httpx.AsyncClient
    sendbird: Sendbird
    deadline_s: float
    turns: list[Turn] = field(default_factory=list)
    _cursor: dict[str, int] = field(default_factory=dict)
    _message_ids: itertools.count[int] = field(default_factory=lambda: itertools.count(1))
    _tokens: dict[str, str] = field(default_factory=dict)

    async def turn(self, channel: str, user: str, text: str, *, pause: bool = False) -> Turn:
        """One turn: the webhook, the device request, the phone's answer (unless ``pause``), the answer."""
        body = json.dumps(
            webhook_payload(text, user=user, channel=channel, message_id=next(self._message_ids))
        ).encode()
        turn = Turn(channel=channel, user=user, text=text, sent=time.monotonic(), pause=pause)
        self.turns.append(turn)
        try:
            r = await self.http.post(
                "/api/v1/webhooks/sendbird", content=body, headers={"x-sendbird-signature": sign(body)}
            )
        except httpx.HTTPError as exc:
            turn.problem = f"webhook: {exc!r}"
            return turn
        turn.ack_s = time.monotonic() - turn.sent
        if r.status_code != 200 or r.json() != {"status": "queued"}:
            turn.problem = f"webhook answered {r.status_code} {r.text[:200]}"
            return turn
        deadline = turn.sent + self.deadline_s
        rpc = await self._next(channel, deadline, lambda m: m.is_rpc)
        if rpc is None:
            turn.problem = "no device request"
            return turn
        turn.rpc_at = rpc.at
        if pause:
            return turn
        answer = {"jsonrpc": "2.0", "id": rpc.rpc["id"], "result": EVENTS}
        try:
            r = await self.http.post(
                "/api/v1/agent/tool-message",
                content=json.dumps(answer).encode(),
                headers={"authorization": f"Bearer {self._token(user)}", "content-type": "application/json"},
            )
        except httpx.HTTPError as exc:
            turn.problem = f"tool-message: {exc!r}"
            return turn
        if r.status_code != 202:
            turn.problem = f"tool-message answered {r.status_code} {r.text[:200]}"
            return turn
        reply = await self._next(channel, deadline, lambda m: not m.is_rpc and m.text == turn.expected)
        if reply is None:
            turn.problem = "no answer"
            return turn
        turn.answered = reply.at
        return turn

    async def _next(
        self, channel: str, deadline: float, wanted: Callable[[SentMessage], bool]
    ) -> SentMessage | None:
        """The channel's next message that is ``wanted`` (others are passed over: the tally counts them)."""
        while True:
            index = self._cursor.get(channel, 0)
            message = await self.sendbird.message(channel, index, deadline)
            if message is None:
                return None
            self._cursor[channel] = index + 1
            if wanted(message):
                return message

    def _token(self, user: str) -> str:
        if user not in self._tokens:
            self._tokens[user] = issue_token(SECRET, user)
        return self._tokens[user]

    def outcome(self) -> Outcome:
        """Count lost, duplicated and unexpected answers over every turn sent so far."""
        answers: Counter[tuple[str, str]] = Counter()
        rpcs: Counter[str] = Counter()
        for message in self.sendbird.messages:
            if message.is_rpc:
                rpcs[message.channel_url] += 1
            else:
                answers[(message.channel_url, message.text)] += 1
        expected = {(t.channel, t.expected) for t in self.turns}
        per_channel = Counter(t.channel for t in self.turns)
        lost = [t for t in self.turns if t.answered is None and not (t.pause and t.rpc_at is not None)]
        problems = Counter(t.problem or "late answer" for t in lost)
        return Outcome(
            turns=len(self.turns),
            answered=sum(1 for t in self.turns if t.answered is not None),
            lost=len(lost),
            duplicated=sum(1 for t in self.turns if answers[(t.channel, t.expected)] > 1),
            extra_requests=sum(max(0, n - per_channel[channel]) for channel, n in rpcs.items()),
            unexpected=sum(n for key, n in answers.items() if key not in expected),
            resent=self.sendbird.requests - len(self.sendbird.messages),
            problems=[f"{n} × {problem}" for problem, n in problems.most_common(5)],
        )


class _Abandoned(logging.Filter):
    """Counts, instead of printing, requests the server gave up on mid-way (its 2 s typing timeout)."""

    def __init__(self) -> None:
        super().__init__()
        self.count = 0

    def filter(self, record: logging.LogRecord) -> bool:
        if record.exc_info and isinstance(record.exc_info[1], ClientDisconnect):
            self.count += 1
            return False
        return True


@asynccontextmanager
async def served_sendbird(
    api_delay_s: float = 0.0, *, plan: str | None = DEFAULT_PLAN
) -> AsyncIterator[tuple[Sendbird, str]]:
    """The fake Sendbird (each API call taking ``api_delay_s``, holding the app to ``plan``'s limits as
    Sendbird does; None: to none), served in this loop; and its URL."""
    sendbird, port = Sendbird(api_delay_s=api_delay_s), free_port()
    if plan is not None:
        sendbird.enforce_plan(plan)
    abandoned = _Abandoned()
    logging.getLogger("uvicorn.error").addFilter(abandoned)
    try:
        async with serve(sendbird.app(), port):
            yield sendbird, f"http://127.0.0.1:{port}"
    finally:
        logging.getLogger("uvicorn.error").removeFilter(abandoned)
        sendbird.abandoned = abandoned.count


@asynccontextmanager
async def load_generator(
    server_url: str, sendbird: Sendbird, *, connections: int, deadline_s: float
) -> AsyncIterator[Load]:
    """An HTTP client to the API, as Sendbird's webhooks and as the phones."""
    limits = httpx.Limits(max_connections=connections, max_keepalive_connections=connections)
    async with httpx.AsyncClient(base_url=server_url, limits=limits, timeout=60) as http:
        yield Load(http=http, sendbird=sendbird, deadline_s=deadline_s)


async def spread(seconds: float) -> None:
    """Wait a random part of ``seconds`` (conversations do not all start in the same instant)."""
    await asyncio.sleep(random.uniform(0, seconds))

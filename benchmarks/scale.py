"""How the real server scales: latency beyond the model's own time, throughput, CPU per turn against
bare pydantic-ai, nothing lost or doubled, and what Redis holds per paused conversation.

Every scenario starts its own Redis (``--redis standalone``, or a Redis Cluster of three primaries
with ``--redis cluster``), the fake model in a process of its own (``benchmarks.fakes``), the real
``truloop-assistant serve`` and ``truloop-assistant worker`` processes (the worker with its default
``--concurrency`` unless ``--concurrency`` is given here), and serves the fake Sendbird in this
process, which also plays the phones (see ``benchmarks.harness`` for why each runs where it does).
Every turn is deferred: the model asks the phone for the calendar (``get_calendar_events``), the
phone answers at once, the run resumes and the model answers ``answer to: <text>``. A turn lasts
from the webhook's POST to the answer's arrival at the fake Sendbird.

Scenarios (``--scenario``, default ``all``):

``idle``
    One deferred turn at a time, each 1.2 s after the last (the plan's budget is unused again), with
    the plan's pacing and then with the pacer opened up: medians of ``--idle-turns`` (15) each, and
    the difference (what pacing adds to a turn on an idle server).
``latency``
    ``--conversations`` (50) conversations in flight, each sending its next message once the last
    is answered; the model thinks ``--think-ms`` (1500) ± ``--jitter`` (50 %) per request. After
    ``--warmup`` s, for ``--window`` s: per turn, its latency minus the model's own time for it (the
    two requests' think times, from the fake's log), webhook ack times, turns/s. Conversations go on,
    so requests carry their history: once the server has stopped, bare pydantic-ai's CPU for a turn
    after as many earlier turns as the window's turns had (the median) is measured beside the
    server's (``benchmarks.bare --prior-turns``). Sendbird answers at once unless ``--sendbird-ms``
    gives its API calls the real one's round trip (then the time beyond the model includes the calls
    a turn waits for).
``throughput``
    A zero-latency model, ``worker --processes`` (2), ``--tp-conversations`` (100) in flight:
    turns answered per second in the window, CPU and Redis commands per turn, and bare pydantic-ai's
    CPU at the same history, as in ``latency``.
``throughput-cluster``
    The same on a Redis Cluster (run by ``all`` when ``--redis standalone``; reported, no target).
``cpu``
    The bare cycle (``benchmarks.bare``: agent.run -> DeferredToolRequests -> JSON -> agent.run with
    deferred_tool_results, the project's member agent) in its own process, CPU from
    ``time.process_time()``; then the server: CPU of its processes (``/proc/<pid>/stat`` of the API's
    and the worker's process trees) over ``--cpu-turns`` (300) turns with ``--cpu-in-flight`` (10)
    at a time. Both use a fresh conversation per turn and the same fake model over HTTP. Also the
    median of sequential single turns of both, and Redis commands per turn (with the top commands).
    The bare cycle runs twice: with the model as the server makes it (``resolve_model``, which the
    targets are weighed against) and as pydantic-ai makes it (``--model-as-is``), to show how much of
    the server's gain is its model's.
``round-trips``
    One turn on an idle server under Redis ``MONITOR`` (``benchmarks.round_trips``): its round trips,
    the commands it sent and those its scripts ran, by command.
``memory``
    ``--memory-conversations`` (100) conversations each have ``--memory-prior-turns`` (1) answered
    turns and then one that pauses (the phone never answers). Per paused conversation: ``MEMORY
    USAGE`` of every key with its hash tag ``{c:…}``, less its history key, and the history apart.

It replaces ``benchmarks.webhook_load`` (now ``latency``, ``throughput`` and ``memory``) and
``benchmarks.deferred_turn`` (now ``cpu``, with the model over HTTP in both the server and the bare
cycle instead of an in-process ``FunctionModel``).

Each scenario also counts lost answers (no answer within ``--deadline`` s) and duplicated ones
(a turn answered more than once at the fake Sendbird), after waiting until the server is idle.
Timings are figures to read, never assertions. The whole run takes about 5 minutes on 2 cores.

    .venv/bin/python -m benchmarks.scale                        # every scenario
    .venv/bin/python -m benchmarks.scale --scenario latency     # one (see the list above)
    .venv/bin/python -m benchmarks.scale --redis cluster        # every scenario on a Redis Cluster
    .venv/bin/python -m benchmarks.scale --scenario cpu --json  # and one JSON object at the end
"""

from __future__ import annotations

import argparse
import asyncio
import json
import math
import os
import subprocess
import sys
import tempfile
import time
import traceback
from collections import Counter
from collections.abc import AsyncIterator, Callable, Coroutine
from contextlib import asynccontextmanager
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import uvloop

from truloop_assistant.cli import build_parser
from truloop_assistant.config.sendbird_plans import PLANS

from .harness import (
    DEFAULT_PLAN,
    ROOT,
    FakeModel,
    Load,
    Outcome,
    RedisUnderTest,
    Sendbird,
    Server,
    Turn,
    Unavailable,
    clean_env,
    cluster_server_class,
    errors,
    fake_model,
    footprints,
    load_generator,
    median,
    model_env,
    other_keys,
    percentile,
    redis_under_test,
    served_sendbird,
    server,
    server_env,
    spread,
    tail,
    tree_cpu_s,
)
from .round_trips import count, monitored, signature

THROUGHPUT_TARGETS = {"free-trial": 2.2, "100k": 40.0}
"""Deferred turns per second a plan's budgets allow, less a little: the free trial's 5 POSTs a second
carry 2.5 (a request to the phone and an answer each); the 100K plan's leave the server's own work as
the bound, as before any pacing."""
SCENARIOS = ("idle", "latency", "throughput", "throughput-cluster", "cpu", "memory", "round-trips")
KIB = 1024


@dataclass
class Row:
    figure: str
    measured: str
    target: str = "reported"
    ok: bool | None = None


@dataclass
class Result:
    scenario: str
    redis: str
    rows: list[Row] = field(default_factory=list)
    data: dict[str, Any] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)

    def add(self, figure: str, measured: str, target: str = "reported", ok: bool | None = None) -> None:
        self.rows.append(Row(figure, measured, target, ok))

    def tally(self, outcome: Outcome, busy: list[str], sendbird: Sendbird) -> None:
        """Item 4: nothing lost, nothing doubled (call once the stack has stopped)."""
        if sendbird.abandoned:
            calls = sendbird.requests + len(sendbird.typing)
            self.notes.append(
                f"the server gave up on {sendbird.abandoned} of its {calls} Sendbird calls before "
                "the answer (a typing call times out after 2 s)"
            )
        self.add("lost answers", f"{outcome.lost} of {outcome.turns} turns", "0", outcome.lost == 0)
        self.add("Sendbird calls per turn", calls_per_turn(sendbird, outcome.turns))
        for method, budget in sorted(sendbird.method_limits.items()):
            most = sendbird.max_in_a_second(method)
            self.add(
                f"  most {method} calls Sendbird took in one second",
                str(most),
                f"≤ {budget:g}",
                most <= budget,
            )
        self.add("duplicated answers", str(outcome.duplicated), "0", outcome.duplicated == 0)
        if outcome.extra_requests or outcome.unexpected:
            self.notes.append(
                f"{outcome.extra_requests} device request(s) beyond one per turn, "
                f"{outcome.unexpected} message(s) answering no turn"
            )
        if outcome.problems:
            self.notes.append("lost: " + "; ".join(outcome.problems))
        if busy:
            self.notes.append("still busy at the end: " + "; ".join(busy[:3]))
        self.data["outcome"] = asdict(outcome)


CALL_KINDS = ("send", "update", "typing", "lookup", "creation")
"""The Platform API calls the fake Sendbird counts, by kind (they count against the plan's limits)."""


def calls_per_turn(sendbird: Sendbird, turns: int) -> str:
    """Sendbird's calls per turn, by kind (429s counted too, and how many there were)."""
    per = {kind: sendbird.calls.get(kind, 0) / max(turns, 1) for kind in CALL_KINDS}
    text = ", ".join(f"{kind} {n:.2f}" for kind, n in per.items())
    return f"{sum(per.values()):.2f} ({text}; {len(sendbird.limited)} answered 429)"


def round_s(args: argparse.Namespace, conversations: int) -> float:
    """The time the plan's POST budget takes for one turn of every conversation (two sends each)."""
    return 2 * conversations / PLANS[args.plan]["POST"]


def warmup_s(given: float, args: argparse.Namespace, conversations: int) -> float:
    """At least one and a half rounds (``round_s``): until then the first turns' answers queue behind
    every conversation's first request, and the window would measure that start, not the steady pace."""
    return max(given, 1.5 * round_s(args, conversations))


def window_s(given: float, args: argparse.Namespace, conversations: int) -> float:
    """At least two rounds (``round_s``): where the budget binds, turns end in waves a round apart."""
    return max(given, 2 * round_s(args, conversations))


def ms(seconds: float) -> str:
    return f"{seconds * 1000:.1f} ms"


# -- running the stack


@dataclass
class Stack:
    redis: RedisUnderTest
    model: FakeModel
    server: Server
    load: Load
    logs: Path


@asynccontextmanager
async def stack(
    args: argparse.Namespace,
    redis: RedisUnderTest,
    model: FakeModel,
    logs: Path,
    *,
    processes: int = 1,
    connections: int,
    plan: str | None = "",
) -> AsyncIterator[Stack]:
    """The fake Sendbird, the server's processes (started last, so all they talk to is up), the load;
    ``plan``: the Sendbird plan of both (default: ``--plan``; None: no limits, the pacer opened up)."""
    chosen = args.plan if plan == "" else plan
    async with (
        served_sendbird(args.sendbird_ms / 1000, plan=chosen) as (sendbird, sendbird_url),
        server(
            server_env(redis.url, model.url, sendbird_url, plan=chosen),
            logs,
            processes=processes,
            concurrency=args.concurrency,
        ) as running,
        load_generator(running.url, sendbird, connections=connections, deadline_s=args.deadline) as load,
    ):
        yield Stack(redis, model, running, load, logs)


async def prime(stack: Stack, n: int) -> None:
    """``n`` turns at once, answered: the worker(s) are up and every code path has run once."""
    turns = await asyncio.gather(
        *(stack.load.turn(f"prime-{i}", f"prime-user-{i}", f"prime {i}") for i in range(n))
    )
    if failed := [t for t in turns if t.answered is None]:
        stack.server.check()
        raise RuntimeError(
            f"a first turn failed ({failed[0].problem}); worker log tail:\n{tail(stack.server.worker.log)}"
        )


@dataclass
class Snapshot:
    at: float
    cpu_s: float
    api_cpu_s: float
    redis_cpu_s: float
    commands: int
    commandstats: Counter[str]
    clients: int
    model_cpu_s: float
    loadgen_cpu_s: float


async def snapshot(stack: Stack) -> Snapshot:
    return Snapshot(
        at=time.monotonic(),
        cpu_s=stack.server.cpu_s(),
        api_cpu_s=stack.server.api_cpu_s(),
        redis_cpu_s=await stack.redis.cpu_s(),
        commands=await stack.redis.commands(),
        commandstats=await stack.redis.commandstats(),
        clients=await stack.redis.clients(),
        model_cpu_s=tree_cpu_s([stack.model.process.pid]),
        loadgen_cpu_s=time.process_time(),
    )


def cpu_shares(start: Snapshot, end: Snapshot) -> str:
    """Cores used meanwhile by each party (on a 2-core machine they compete)."""
    seconds = end.at - start.at
    parts = {
        "server": end.cpu_s - start.cpu_s,
        "Redis": end.redis_cpu_s - start.redis_cpu_s,
        "fake model": end.model_cpu_s - start.model_cpu_s,
        "load generator + fake Sendbird": end.loadgen_cpu_s - start.loadgen_cpu_s,
    }
    return "cores used: " + ", ".join(f"{name} {cpu / seconds:.2f}" for name, cpu in parts.items())


@dataclass
class Window:
    start: Snapshot
    end: Snapshot
    turns: list[Turn]
    """Turns sent within the window."""
    completed: int
    """Turns answered within the window."""

    @property
    def seconds(self) -> float:
        return self.end.at - self.start.at

    def per_turn(self, pick: Callable[[Snapshot], float]) -> float:
        return (pick(self.end) - pick(self.start)) / self.completed if self.completed else math.nan


async def closed_loop(stack: Stack, conversations: int, *, warmup: float, window: float, name: str) -> Window:
    """``conversations`` in flight, each sending its next message once the last is answered, until the
    window ends; measured between ``warmup`` and ``warmup + window`` s."""
    start = time.monotonic()
    warm_end, stop_at = start + warmup, start + warmup + window
    snaps: list[Snapshot] = []

    async def watch() -> None:
        for at in (warm_end, stop_at):
            await asyncio.sleep(max(0.0, at - time.monotonic()))
            snaps.append(await snapshot(stack))

    async def conversation(i: int) -> None:
        await spread(1.0)
        k = 0
        while time.monotonic() < stop_at:
            turn = await stack.load.turn(f"{name}-{i}", f"{name}-user-{i}", f"{name} c{i} t{k}")
            k += 1
            if turn.problem:
                return

    await asyncio.gather(watch(), *(conversation(i) for i in range(conversations)))
    first, last = snaps
    turns = [t for t in stack.load.turns if first.at <= t.sent < last.at]
    completed = sum(
        1 for t in stack.load.turns if t.answered is not None and first.at <= t.answered < last.at
    )
    return Window(first, last, turns, completed)


def window_rows(result: Result, window: Window, *, rate_target: float | None) -> None:
    rate = window.completed / window.seconds
    target = f"≥ {rate_target:g}" if rate_target is not None else "reported"
    result.add("turns/s", f"{rate:.1f}", target, None if rate_target is None else rate >= rate_target)
    cpu = window.per_turn(lambda s: s.cpu_s)
    api = window.per_turn(lambda s: s.api_cpu_s)
    result.add("server CPU per turn (API + workers)", f"{ms(cpu)} ({ms(api)} API)")
    result.add("Redis commands per turn", f"{window.per_turn(lambda s: s.commands):.0f}")
    result.data.update(
        turns_per_s=rate,
        window_s=window.seconds,
        completed_in_window=window.completed,
        server_cpu_s_per_turn=cpu,
        api_cpu_s_per_turn=api,
        redis_cpu_s_per_turn=window.per_turn(lambda s: s.redis_cpu_s),
        redis_commands_per_turn=window.per_turn(lambda s: s.commands),
        redis_clients=window.end.clients,
    )


def earlier_turns(turns: list[Turn]) -> int:
    """The median number of earlier turns in its conversation of a measured turn (texts end ``t<k>``)."""
    return round(median([int(t.text.rsplit(" t", 1)[1]) for t in turns]))


async def bare_alike(result: Result, window: Window, model: FakeModel, logs: Path) -> None:
    """Bare pydantic-ai's CPU for a turn with as much history as the window's turns had, beside the
    server's (``benchmarks.bare --prior-turns``, against a zero-latency ``model``)."""
    prior = earlier_turns(window.turns)
    bare = await run_bare(model, 100, logs, prior_turns=prior)
    bare_cpu = bare["cpu_s"] / bare["turns"]
    server = window.per_turn(lambda s: s.cpu_s)
    result.add(f"bare pydantic-ai CPU per turn, {bare['history_messages']} messages of history", ms(bare_cpu))
    result.add("server / bare CPU per turn, the same history", f"{server / bare_cpu:.2f}×")
    result.data.update(bare_prior_turns=prior, bare_cpu_s_per_turn=bare_cpu, ratio=server / bare_cpu)


def top_commands(before: Snapshot, after: Snapshot, turns: int, n: int = 12) -> str:
    delta = after.commandstats - before.commandstats
    return ", ".join(f"{name} {calls / turns:.1f}" for name, calls in delta.most_common(n))


# -- scenarios


async def latency(args: argparse.Namespace, kind: str, logs: Path) -> Result:
    result = Result("latency", kind)
    async with (
        redis_under_test(kind) as redis,
        fake_model(args.think_ms, args.jitter, logs) as model,
        stack(args, redis, model, logs, connections=args.conversations + 10) as s,
    ):
        await prime(s, 2)
        window = await closed_loop(
            s,
            args.conversations,
            warmup=warmup_s(args.warmup, args, args.conversations),
            window=window_s(args.window, args, args.conversations),
            name="latency",
        )
        busy = await redis.idle(15)
        thinks = await model.think_times()
        outcome = s.load.outcome()
    answered = [t for t in window.turns if t.answered is not None and t.rpc_at is not None]
    model_s = [sum(thinks.get(t.text, [])) for t in answered]
    overhead = [t.latency_s - m for t, m in zip(answered, model_s, strict=True)]
    # the same split at the device request: the run that asks the phone, and the resume that answers
    first = [(t.rpc_at or t.sent) - t.sent - thinks.get(t.text, [0.0])[0] for t in answered]
    second = [o - f for o, f in zip(overhead, first, strict=True)]
    acks = [t.ack_s for t in window.turns if not math.isnan(t.ack_s)]
    requests = Counter(len(thinks.get(t.text, [])) for t in answered)
    p50 = median(overhead)
    result.add("turn latency p50", ms(median([t.latency_s for t in answered])))
    result.add("model's own time per turn p50", ms(median(model_s)))
    result.add("turn latency − model time, p50", ms(p50), "≤ 50 ms", p50 <= 0.050)
    result.add("  … p90", ms(percentile(overhead, 0.9)))
    result.add("  … p50 of webhook → device request, beyond the model", ms(median(first)))
    result.add("  … p50 of phone's answer → answer, beyond the model", ms(median(second)))
    ack99 = percentile(acks, 0.99)
    result.add("webhook ack p99", ms(ack99), "≤ 20 ms", ack99 <= 0.020)
    window_rows(result, window, rate_target=None)
    async with fake_model(0, 0, logs) as instant:  # once the server has stopped
        await bare_alike(result, window, instant, logs)
    result.tally(outcome, busy, s.load.sendbird)
    result.notes.append(
        f"{args.conversations} conversations, model {args.think_ms:g} ms ± {args.jitter:.0%}, "
        f"Sendbird API calls {args.sendbird_ms:g} ms, "
        f"worker concurrency {args.concurrency or 'default'}; {len(answered)} turns measured "
        f"over {window.seconds:.0f} s; ack p50 {ms(median(acks))}, max {ms(max(acks, default=math.nan))}"
    )
    result.notes.append(cpu_shares(window.start, window.end))
    if set(requests) != {2}:
        result.notes.append(f"model requests per turn: {dict(requests)} (2 expected)")
    result.data.update(
        turns_measured=len(answered),
        latency_s_p50=median([t.latency_s for t in answered]),
        model_s_p50=median(model_s),
        overhead_s_p50=p50,
        overhead_s_p90=percentile(overhead, 0.9),
        overhead_s_p99=percentile(overhead, 0.99),
        overhead_first_step_s_p50=median(first),
        overhead_second_step_s_p50=median(second),
        ack_s_p50=median(acks),
        ack_s_p99=ack99,
    )
    return result


async def throughput(args: argparse.Namespace, kind: str, logs: Path) -> Result:
    result = Result("throughput" if kind == "standalone" else "throughput-cluster", kind)
    async with (
        redis_under_test(kind) as redis,
        fake_model(0, 0, logs) as model,
        stack(
            args, redis, model, logs, processes=args.processes, connections=args.tp_conversations + 10
        ) as s,
    ):
        await prime(s, 2 * args.processes)
        window = await closed_loop(
            s,
            args.tp_conversations,
            warmup=warmup_s(args.tp_warmup, args, args.tp_conversations),
            window=window_s(args.tp_window, args, args.tp_conversations),
            name="tp",
        )
        busy = await redis.idle(15)
        outcome = s.load.outcome()
    window_rows(
        result, window, rate_target=THROUGHPUT_TARGETS.get(args.plan) if kind == "standalone" else None
    )
    async with fake_model(0, 0, logs) as instant:  # once the server has stopped
        await bare_alike(result, window, instant, logs)
    answered = [t for t in window.turns if t.answered is not None]
    result.add("turn latency p50", ms(median([t.latency_s for t in answered])))
    result.tally(outcome, busy, s.load.sendbird)
    result.notes.append(
        f"zero-latency model, worker --processes {args.processes}, concurrency "
        f"{args.concurrency or 'default'}, {args.tp_conversations} conversations in flight, "
        f"{window.completed} turns in {window.seconds:.0f} s; {os.cpu_count()} cores; "
        f"{window.end.clients} Redis connections at the window's end"
    )
    result.notes.append("commands per turn: " + top_commands(window.start, window.end, window.completed))
    result.notes.append(cpu_shares(window.start, window.end))
    return result


async def idle(args: argparse.Namespace, kind: str, logs: Path) -> Result:
    """One deferred turn at a time on an idle server, each a budget's window after the last: with the
    plan's pacing, and with the pacer opened up (budgets nobody reaches, Sendbird unlimited)."""
    result = Result("idle", kind)
    medians: dict[str, float] = {}
    for name, plan in (("paced", args.plan), ("pacer opened up", None)):
        async with (
            redis_under_test(kind) as redis,
            fake_model(0, 0, logs) as model,
            stack(args, redis, model, logs, connections=10, plan=plan) as s,
        ):
            await prime(s, 1)
            turns = []
            for i in range(args.idle_turns):
                await asyncio.sleep(1.2)  # the budget's window is empty again
                turns.append(await s.load.turn(f"idle-{name}-{i}", f"idle-user-{i}", f"idle {i}"))
            await redis.idle(15)
        latencies = [t.latency_s for t in turns if t.answered is not None]
        medians[name] = median(latencies)
        label = (
            f"plan {args.plan}" + (", the defaults" if args.plan == DEFAULT_PLAN else "") if plan else name
        )
        result.add(f"one deferred turn end to end, median ({label})", ms(medians[name]))
        result.add("  … p90", ms(percentile(latencies, 0.9)))
        result.data[f"{name}_s_p50"] = medians[name]
    more = medians["paced"] - medians["pacer opened up"]
    result.add("paced − opened up, median", ms(more), "≤ 250 ms", more <= 0.25)
    result.notes.append(
        f"{args.idle_turns} turns each way, 1.2 s apart, zero-latency model, Sendbird answering at once"
    )
    return result


async def run_bare(
    model: FakeModel, turns: int, logs: Path, *, prior_turns: int = 0, model_as_is: bool = False
) -> dict[str, Any]:
    """``benchmarks.bare`` in its own process against the same fake model."""
    as_is = ["--model-as-is"] if model_as_is else []
    with open(logs / "bare.log", "ab") as err:  # noqa: ASYNC230 (a log file opened once)
        proc = await asyncio.create_subprocess_exec(
            sys.executable, "-m", "benchmarks.bare", "--turns", str(turns), "--prior-turns", str(prior_turns),
            *as_is,
            env={**clean_env(), **model_env(model.url)}, cwd=ROOT,
            stdout=asyncio.subprocess.PIPE, stderr=err,
        )  # fmt: skip
        out, _ = await proc.communicate()
    if proc.returncode != 0:
        raise RuntimeError(f"benchmarks.bare exited with {proc.returncode}:\n{tail(logs / 'bare.log')}")
    data: dict[str, Any] = json.loads(out.decode().strip().splitlines()[-1])
    return data


async def cpu(args: argparse.Namespace, kind: str, logs: Path) -> Result:
    result = Result("cpu", kind)
    async with redis_under_test(kind) as redis, fake_model(0, 0, logs) as model:
        bare = await run_bare(model, args.cpu_turns, logs)
        as_is = await run_bare(model, args.cpu_turns, logs, model_as_is=True)
        async with stack(args, redis, model, logs, connections=args.cpu_in_flight + 10) as s:
            await prime(s, 3)
            idle_start = await snapshot(s)
            await asyncio.sleep(2)
            idle_end = await snapshot(s)
            sequential = [
                await s.load.turn(f"seq-{i}", f"seq-user-{i}", f"seq {i}") for i in range(args.cpu_seq_turns)
            ]
            limit = asyncio.Semaphore(args.cpu_in_flight)

            async def one(i: int) -> Turn:
                async with limit:
                    return await s.load.turn(f"cpu-{i}", f"cpu-user-{i}", f"cpu {i}")

            before = await snapshot(s)
            loaded = await asyncio.gather(*(one(i) for i in range(args.cpu_turns)))
            await asyncio.sleep(0.5)  # the last steps' ends (typing off, job done) belong to their turns
            after = await snapshot(s)
            busy = await redis.idle(15)
            outcome = s.load.outcome()
    done = sum(1 for t in loaded if t.answered is not None) or 1
    server_cpu = (after.cpu_s - before.cpu_s) / done
    api_cpu = (after.api_cpu_s - before.api_cpu_s) / done
    bare_cpu = bare["cpu_s"] / bare["turns"]
    ratio = server_cpu / bare_cpu
    seq = [t.latency_s for t in sequential if t.answered is not None]
    idle_s = idle_end.at - idle_start.at
    commands = (after.commands - before.commands) / done
    result.add("server CPU per turn (API + worker)", f"{ms(server_cpu)} ({ms(api_cpu)} API)")
    result.add("bare pydantic-ai CPU per turn", ms(bare_cpu))
    result.add("server / bare CPU per turn", f"{ratio:.2f}×", "≤ 1.4×", ratio <= 1.4)
    result.add("sequential turn latency median, server", ms(median(seq)))
    result.add("sequential turn latency median, bare", ms(median(bare["latency_s"])))
    seq_ratio = median(seq) / median(bare["latency_s"])
    result.add("sequential turn, server / bare", f"{seq_ratio:.2f}×", "≤ 2.5×", seq_ratio <= 2.5)
    as_is_cpu = as_is["cpu_s"] / as_is["turns"]
    as_is_seq = median(as_is["latency_s"])
    result.add("bare, the model as pydantic-ai makes it: CPU per turn", ms(as_is_cpu))
    result.add("  server / that bare: CPU per turn", f"{server_cpu / as_is_cpu:.2f}×")
    result.add("  server / that bare: sequential turn", f"{median(seq) / as_is_seq:.2f}×")
    result.add("Redis commands per turn", f"{commands:.0f}", "≤ 80", commands <= 80)
    result.add("Redis CPU per turn", ms((after.redis_cpu_s - before.redis_cpu_s) / done))
    result.tally(outcome, busy, s.load.sendbird)
    result.notes.append(
        f"{done} turns, {args.cpu_in_flight} at a time, a fresh conversation each, in "
        f"{after.at - before.at:.1f} s; bare: {bare['turns']} cycles; idle server: "
        f"{ms((idle_end.cpu_s - idle_start.cpu_s) / idle_s)} CPU and "
        f"{(idle_end.commands - idle_start.commands) / idle_s:.0f} Redis commands per second; "
        f"{after.clients} Redis connections after the load"
    )
    result.notes.append("commands per turn: " + top_commands(before, after, done))
    result.notes.append(cpu_shares(before, after))
    result.data.update(
        server_cpu_s_per_turn=server_cpu,
        api_cpu_s_per_turn=api_cpu,
        bare_cpu_s_per_turn=bare_cpu,
        ratio=ratio,
        sequential_latency_s_median=median(seq),
        sequential_ratio=seq_ratio,
        bare_latency_s_median=median(bare["latency_s"]),
        bare_as_is_cpu_s_per_turn=as_is_cpu,
        bare_as_is_latency_s_median=as_is_seq,
        redis_commands_per_turn=commands,
        commandstats_per_turn={
            k: v / done for k, v in (after.commandstats - before.commandstats).most_common()
        },
        idle_cpu_s_per_s=(idle_end.cpu_s - idle_start.cpu_s) / idle_s,
        idle_commands_per_s=(idle_end.commands - idle_start.commands) / idle_s,
    )
    return result


async def round_trips(args: argparse.Namespace, kind: str, logs: Path) -> Result:
    result = Result("round-trips", kind)
    async with (
        redis_under_test(kind) as redis,
        fake_model(0, 0, logs) as model,
        stack(args, redis, model, logs, connections=5) as s,
    ):
        await prime(s, 2)
        await asyncio.sleep(1.0)
        async with monitored(redis.nodes) as idle:  # what the server does anyway
            await asyncio.sleep(2.0)
        background = {signature(c) for c in idle.commands if c["client_type"] != "lua"}
        async with monitored(redis.nodes) as seen:
            turn = await s.load.turn("rt-1", "rt-user-1", "one turn")
            await asyncio.sleep(1.0)  # the last step's end (typing off, job done) belongs to the turn
        busy = await redis.idle(15)
        outcome = s.load.outcome()
    trips = count(seen.commands, background)
    result.add("Redis round trips for one turn", str(trips.round_trips))
    result.add("commands sent", str(trips.top_level))
    result.add("commands run inside scripts", str(trips.in_scripts))
    result.add("that turn's latency", ms(turn.latency_s) if turn.answered is not None else "not answered")
    result.tally(outcome, busy, s.load.sendbird)
    result.notes.append("by command: " + ", ".join(f"{n} {k}" for k, n in trips.by_command.most_common()))
    result.notes.append(
        "left out as background (seen on the idle server): " + "; ".join(sorted(background)) or "nothing"
    )
    result.data.update(
        round_trips=trips.round_trips,
        commands_sent=trips.top_level,
        commands_in_scripts=trips.in_scripts,
        by_command=dict(trips.by_command),
    )
    return result


async def memory(args: argparse.Namespace, kind: str, logs: Path) -> Result:
    result = Result("memory", kind)
    n = args.memory_conversations
    users = {f"mem-{i}": f"mem-user-{i}" for i in range(n)}
    async with (
        redis_under_test(kind) as redis,
        fake_model(0, 0, logs) as model,
        stack(args, redis, model, logs, connections=args.cpu_in_flight + 10) as s,
    ):
        await prime(s, 2)
        limit = asyncio.Semaphore(args.cpu_in_flight)

        async def conversation(i: int) -> Turn | None:
            async with limit:
                channel, user = f"mem-{i}", users[f"mem-{i}"]
                for k in range(args.memory_prior_turns):
                    if (await s.load.turn(channel, user, f"mem c{i} t{k}")).problem:
                        return None
                return await s.load.turn(channel, user, f"mem c{i} paused", pause=True)

        paused = await asyncio.gather(*(conversation(i) for i in range(n)))
        busy = await redis.idle(15)
        found = await footprints(redis, users)
        others = await other_keys(redis)
        outcome = s.load.outcome()
    held = [found[t.channel] for t in paused if t is not None and t.rpc_at is not None]
    beyond = [f.beyond_history for f in held]
    kinds = sorted({k for f in held for k in f.by_kind})
    by_kind = {k: median([f.by_kind.get(k, 0) for f in held]) for k in kinds}
    p50 = median(beyond)
    result.add("Redis per paused conversation beyond history, median", f"{p50 / KIB:.1f} KiB", "≤ 8 KiB",
               p50 <= 8 * KIB)  # fmt: skip
    result.add("  … max", f"{max(beyond, default=math.nan) / KIB:.1f} KiB")
    result.add("history per conversation, median", f"{median([f.history for f in held]) / KIB:.1f} KiB")
    result.add(
        "untagged keys per conversation, median", f"{median([f.untagged for f in held]) / KIB:.1f} KiB"
    )
    everything = (sum(f.tagged for f in found.values()) + sum(others.values())) / n
    result.add("all keys ÷ conversations (saq jobs, limits … included)", f"{everything / KIB:.1f} KiB")
    result.tally(outcome, busy, s.load.sendbird)
    result.notes.append(
        f"{len(held)} paused conversations, each after {args.memory_prior_turns} answered turn(s); "
        "medians by key kind (history included): "
        + ", ".join(f"{k} {v / KIB:.2f} KiB" for k, v in sorted(by_kind.items(), key=lambda kv: -kv[1]))
    )
    result.notes.append(
        "untagged keys: the call index (ta:call:<id>) and the user's keys (ta:{u:…}); keys without a "
        "conversation's tag, per conversation: "
        + ", ".join(f"{pattern} {size / n / KIB:.2f} KiB" for pattern, size in others.most_common(6))
    )
    result.data.update(
        paused=len(held),
        beyond_history_bytes_median=p50,
        beyond_history_bytes_max=max(beyond, default=math.nan),
        history_bytes_median=median([f.history for f in held]),
        untagged_bytes_median=median([f.untagged for f in held]),
        by_kind_bytes_median=by_kind,
        all_keys_bytes_per_conversation=everything,
        other_keys_bytes=dict(others),
    )
    return result


Scenario = Callable[[argparse.Namespace, str, Path], Coroutine[Any, Any, Result]]
RUNNERS: dict[str, Scenario] = {
    "idle": idle,
    "latency": latency,
    "throughput": throughput,
    "throughput-cluster": throughput,
    "cpu": cpu,
    "memory": memory,
    "round-trips": round_trips,
}


async def run(args: argparse.Namespace) -> list[Result]:
    chosen = list(SCENARIOS) if args.scenario == "all" else [args.scenario]
    if args.scenario == "all" and args.redis == "cluster":
        chosen.remove("throughput-cluster")  # "throughput" runs on the cluster already
    results = []
    for name in chosen:
        kind = "cluster" if name == "throughput-cluster" else args.redis
        logs = Path(tempfile.mkdtemp(prefix=f"truloop-bench-{name}-"))
        print(f"… {name} on {kind} Redis (logs in {logs})", file=sys.stderr, flush=True)
        started, load_before = time.monotonic(), os.getloadavg()[0]
        try:
            if kind == "cluster" and cluster_server_class() is None:
                raise Unavailable("the embedded Redis of this tree has no RedisClusterServer")
            result = await RUNNERS[name](args, kind, logs)
        except Unavailable as exc:
            result = Result(name, kind)
            result.add("skipped", "not available here", "—")
            result.notes.append(f"skipped: {exc}")
        except Exception as exc:
            result = Result(name, kind)
            result.add("FAILED", f"{type(exc).__name__}: {str(exc).splitlines()[0][:120]}", "runs", False)
            result.notes.append(f"logs in {logs}")
            traceback.print_exc()
        result.data["seconds"] = time.monotonic() - started
        result.data["loadavg_1min"] = [load_before, os.getloadavg()[0]]
        result.notes.append(
            f"1-min load average {load_before:.1f} before, {os.getloadavg()[0]:.1f} after "
            f"(other processes on this machine compete for its {os.cpu_count()} cores)"
        )
        for log in ("serve", "worker"):
            if found := errors(logs / f"{log}.log"):
                first = found[0].split(" ", 1)[-1][:160]
                result.notes.append(f"{log} logged {len(found)} ERROR line(s), the first: {first}")
        results.append(result)
    return results


def table(results: list[Result]) -> str:
    header = ("figure", "measured", "target", "ok?")
    lines: list[tuple[str, str, str, str]] = []
    for result in results:
        lines.append(
            (f"[{result.scenario} · {result.redis} Redis · {result.data['seconds']:.0f} s]", "", "", "")
        )
        for row in result.rows:
            ok = "" if row.ok is None else ("yes" if row.ok else "NO")
            lines.append((f"  {row.figure}", row.measured, row.target, ok))
    widths = [max(len(line[i]) for line in [header, *lines]) for i in range(4)]
    out = [" | ".join(h.ljust(w) for h, w in zip(header, widths, strict=True))]
    out.append("-+-".join("-" * w for w in widths))
    out += [" | ".join(c.ljust(w) for c, w in zip(line, widths, strict=True)).rstrip() for line in lines]
    notes = [f"  {r.scenario}: {note}" for r in results for note in r.notes]
    return "\n".join([*out, "", "notes:", *notes] if notes else out)


def revision() -> dict[str, Any]:
    """The commit measured, and whether the work tree differed from it (others may be editing)."""

    def git(*args: str) -> str:
        done = subprocess.run(["git", *args], cwd=ROOT, capture_output=True, text=True, check=False)
        return done.stdout.rstrip()

    changed = [line[3:] for line in git("status", "--porcelain").splitlines() if line.strip()]
    return {
        "commit": git("rev-parse", "--short", "HEAD") or "(not a git work tree)",
        "uncommitted": changed,
        "worker_default_concurrency": build_parser("worker").parse_args(["worker"]).concurrency,
    }


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--scenario", choices=[*SCENARIOS, "all"], default="all")
    p.add_argument("--redis", choices=["standalone", "cluster"], default="standalone")
    p.add_argument("--json", action="store_true", help="also print one JSON object with every figure")
    p.add_argument("--concurrency", type=int, default=None, help="worker --concurrency (default: its own)")
    p.add_argument("--deadline", type=float, default=60.0, help="a turn not answered by then is lost (s)")
    p.add_argument(
        "--plan",
        choices=list(PLANS),
        default=DEFAULT_PLAN,
        help="the Sendbird plan the server paces to and the fake Sendbird holds it to "
        f"(default {DEFAULT_PLAN}: the server's own default, TRULOOP_SENDBIRD_PLAN unset)",
    )
    g = p.add_argument_group("idle")
    g.add_argument("--idle-turns", type=int, default=15, help="turns measured each way, one at a time")
    g = p.add_argument_group("latency")
    g.add_argument("--conversations", type=int, default=50)
    g.add_argument("--think-ms", type=float, default=1500.0, help="the model's mean think time per request")
    g.add_argument("--jitter", type=float, default=0.5, help="think time varies by ± this fraction")
    g.add_argument(
        "--sendbird-ms",
        type=float,
        default=0.0,
        help="each Sendbird API call (send, update, typing) takes this long, as the real one does",
    )
    g.add_argument("--warmup", type=float, default=10.0)
    g.add_argument("--window", type=float, default=30.0)
    g = p.add_argument_group("throughput")
    g.add_argument("--processes", type=int, default=2, help="worker --processes")
    g.add_argument("--tp-conversations", type=int, default=100)
    g.add_argument("--tp-warmup", type=float, default=5.0)
    g.add_argument("--tp-window", type=float, default=20.0)
    g = p.add_argument_group("cpu and memory")
    g.add_argument("--cpu-turns", type=int, default=300, help="turns measured (server and bare each)")
    g.add_argument("--cpu-in-flight", type=int, default=10)
    g.add_argument("--cpu-seq-turns", type=int, default=40, help="sequential single turns for the latency")
    g.add_argument("--memory-conversations", type=int, default=100)
    g.add_argument("--memory-prior-turns", type=int, default=1)
    return p.parse_args(argv)


def main() -> None:
    args = parse_args()
    where = revision()
    with asyncio.Runner(loop_factory=uvloop.new_event_loop) as runner:
        results = runner.run(run(args))
    others = [path for path in where["uncommitted"] if not path.startswith("benchmarks/")]
    dirty = f", with uncommitted changes in {len(others)} file(s) outside benchmarks/" if others else ""
    pacing = "the defaults" if args.plan == DEFAULT_PLAN else f"TRULOOP_SENDBIRD_PLAN={args.plan}"
    print(
        f"truloop-assistant at {where['commit']}{dirty}; {os.cpu_count()} cores; "
        f"worker default --concurrency {where['worker_default_concurrency']}; Sendbird plan {args.plan} "
        f"({pacing}; the fake Sendbird holds the app to its limits)"
    )
    print(table(results))
    if args.json:
        print(json.dumps({**where, "cores": os.cpu_count(), "results": [asdict(r) for r in results]}))


if __name__ == "__main__":
    main()

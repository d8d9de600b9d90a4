"""How fast the processes start: ``serve`` until /healthz answers, ``worker`` until its /readyz does.

Each is started ``--runs`` times (3) as a deployment starts it (``python -m truloop_assistant.cli``,
its whole configuration in the environment, the offline model, a Redis of its own that is already up),
and timed from the process's start to the first 200 from its probe, polled every 10 ms: the wall time,
and the CPU the process used until then (user + system, which other processes on a busy machine
change much less). Each figure is the median. The target for ``serve`` is twice the time Python takes
to import what any such API imports (``fastapi``, ``uvicorn``, ``redis`` and ``httpx``, measured here
the same way, in a fresh process): the API should cost little beyond its libraries. It is met with
the offline model and with a provider's (``TRULOOP_MODEL=openai:gpt-4o-mini`` and a key), whose
client only the worker loads; each ``serve`` figure is printed as a ratio to that import. The worker
imports the agent, the model clients and the tools, which its first turn needs anyway: it is reported
beside the time its own imports take.

With ``--no-bytecode`` every process runs as on a machine where no bytecode was compiled and none may
be written (``PYTHONDONTWRITEBYTECODE``, an empty ``PYTHONPYCACHEPREFIX``): every start compiles its
imports again. ``scripts/bootstrap`` compiles the environment and the checkout, which is what a
start measured without the flag finds.

    .venv/bin/python -m benchmarks.startup
    .venv/bin/python -m benchmarks.startup --no-bytecode --runs 1
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx

from tests.support import API_TOKEN, JWT_SECRET
from truloop_assistant.local.embedded_redis import RedisServer, free_port

from .harness import ROOT, clean_env, tree_cpu_s

BASE_IMPORTS = "import fastapi, uvicorn, redis, httpx"
WORKER_IMPORTS = "import truloop_assistant.commands.worker, truloop_assistant.runtime.queue_worker"
PROVIDER_MODEL = {"TRULOOP_MODEL": "openai:gpt-4o-mini", "OPENAI_API_KEY": "sk-not-asked"}
"""A provider's model string and key: ``serve`` reads the string, only a worker would build the model."""
SERVE_TARGET = 2.0
"""``serve`` starts within this many times the reference import."""
POLL_S = 0.01
DEADLINE_S = 120.0


def env(redis_url: str, *, bytecode: bool, cache_dir: Path) -> dict[str, str]:
    """A deployment's environment: Redis, the Sendbird channel's settings, the offline model."""
    values = {
        **clean_env(),
        "TRULOOP_REDIS_URL": redis_url,
        "TRULOOP_CHANNEL": "sendbird",
        "TRULOOP_SENDBIRD_APP_ID": "bench",
        "TRULOOP_SENDBIRD_API_TOKEN": API_TOKEN,
        "TRULOOP_JWT_SECRET": JWT_SECRET,
        "TRULOOP_LOG_LEVEL": "WARNING",
    }
    if not bytecode:
        values |= {"PYTHONDONTWRITEBYTECODE": "1", "PYTHONPYCACHEPREFIX": str(cache_dir)}
    return values


def _children_cpu_s() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def import_s(code: str, environ: dict[str, str]) -> tuple[float, float]:
    """Wall and CPU seconds of a fresh ``python -c code`` (interpreter start included)."""
    started, cpu = time.perf_counter(), _children_cpu_s()
    subprocess.run([sys.executable, "-c", code], env=environ, check=True, cwd=ROOT)
    return time.perf_counter() - started, _children_cpu_s() - cpu


def time_to_ok(args: list[str], url: str, environ: dict[str, str], logs: Path) -> tuple[float, float]:
    """Wall and CPU seconds from starting ``args`` until ``url`` answers 200; the process is stopped
    after."""
    with open(logs / f"{Path(args[-1]).name}-{time.monotonic_ns()}.log", "wb") as log:
        started = time.perf_counter()
        proc = subprocess.Popen(args, env=environ, cwd=logs, stdout=log, stderr=subprocess.STDOUT)
    try:
        with httpx.Client(timeout=1.0) as http:
            while time.perf_counter() - started < DEADLINE_S:
                if proc.poll() is not None:
                    raise RuntimeError(f"{' '.join(args[2:])} exited with {proc.returncode} (logs in {logs})")
                try:
                    if http.get(url).status_code == 200:
                        return time.perf_counter() - started, tree_cpu_s([proc.pid])
                except httpx.HTTPError:
                    pass
                time.sleep(POLL_S)
        raise RuntimeError(f"{url} did not answer within {DEADLINE_S:g} s (logs in {logs})")
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


@contextmanager
def workspace() -> Iterator[tuple[str, Path]]:
    with RedisServer() as redis, tempfile.TemporaryDirectory(prefix="truloop-bench-startup-") as logs:
        yield redis.url, Path(logs)


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--runs", type=int, default=3)
    p.add_argument("--no-bytecode", action="store_true", help="as if no bytecode had been compiled")
    ns = p.parse_args(argv)
    cli = [sys.executable, "-m", "truloop_assistant.cli"]
    load_before = os.getloadavg()[0]
    figures: dict[str, list[tuple[float, float]]] = {
        "base": [],
        "worker imports": [],
        "serve": [],
        "serve, provider model": [],
        "worker": [],
    }
    with workspace() as (redis_url, logs):
        environ = env(redis_url, bytecode=not ns.no_bytecode, cache_dir=logs / "pycache")
        for _ in range(ns.runs):
            figures["base"].append(import_s(BASE_IMPORTS, environ))
            figures["worker imports"].append(import_s(WORKER_IMPORTS, environ))
            for key, model in (("serve", {}), ("serve, provider model", PROVIDER_MODEL)):
                port = free_port()
                figures[key].append(
                    time_to_ok(
                        [*cli, "serve", "--port", str(port)],
                        f"http://127.0.0.1:{port}/healthz",
                        environ | model,
                        logs,
                    )
                )
            port = free_port()
            figures["worker"].append(
                time_to_ok(
                    [*cli, "worker", "--metrics-port", str(port)],
                    f"http://127.0.0.1:{port}/readyz",
                    environ,
                    logs,
                )
            )
    wall = {k: statistics.median(w for w, _ in v) for k, v in figures.items()}
    cpu = {k: statistics.median(c for _, c in v) for k, v in figures.items()}

    def measured(key: str) -> str:
        return f"{wall[key]:.2f} s ({cpu[key]:.2f} s CPU)"

    def ratio(key: str) -> str:
        return f"{wall[key] / wall['base']:.2f}× ({cpu[key] / cpu['base']:.2f}× CPU)"

    def met(key: str) -> str:
        ok = wall[key] <= SERVE_TARGET * wall["base"] or cpu[key] <= SERVE_TARGET * cpu["base"]
        return "yes" if ok else "NO"

    serve_target = (
        f"≤ {SERVE_TARGET:g}×: {SERVE_TARGET * wall['base']:.2f} s ({SERVE_TARGET * cpu['base']:.2f} s CPU)"
    )
    model = PROVIDER_MODEL["TRULOOP_MODEL"]
    rows = [
        (f"python -c '{BASE_IMPORTS}'", measured("base"), "1×", "reference", ""),
        ("serve (offline model): start to /healthz 200", measured("serve"), ratio("serve"),
         serve_target, met("serve")),
        (f"serve (TRULOOP_MODEL={model}): start to /healthz 200", measured("serve, provider model"),
         ratio("serve, provider model"), serve_target, met("serve, provider model")),
        (f"python -c '{WORKER_IMPORTS}'", measured("worker imports"), "", "reference", ""),
        ("worker: start to /readyz 200", measured("worker"), "", "reported (its imports, then Redis)", ""),
    ]  # fmt: skip
    header = ("figure", "measured", "× reference", "target", "ok?")
    widths = [max(len(r[i]) for r in [header, *rows]) for i in range(len(header))]
    print(f"start-up, median of {ns.runs} run(s), {'no bytecode' if ns.no_bytecode else 'bytecode compiled'}")
    print(" | ".join(h.ljust(w) for h, w in zip(header, widths, strict=True)))
    print("-+-".join("-" * w for w in widths))
    for row in rows:
        print(" | ".join(c.ljust(w) for c, w in zip(row, widths, strict=True)).rstrip())
    print(
        f"notes: 1-min load average {load_before:.1f} before, {os.getloadavg()[0]:.1f} after "
        f"(other processes on this machine compete for its {os.cpu_count()} cores); the target is met "
        "when the wall time or the CPU time is within it"
    )


if __name__ == "__main__":
    main()

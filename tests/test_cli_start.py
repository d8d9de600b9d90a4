"""The commands as an operator starts them: one summary line, Redis awaited with backoff, prompt stops.

Every test runs the real command in a subprocess and waits for the lines it writes.
"""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterable, Iterator
from importlib.metadata import version
from pathlib import Path

import httpx
import jwt
import pytest
import redis
from prometheus_client.metrics_core import Metric
from prometheus_client.mmap_dict import MmapedDict, mmap_key
from prometheus_client.multiprocess import MultiProcessCollector
from prometheus_client.parser import text_string_to_metric_families

from truloop_assistant.cli import COMMANDS, build_parser
from truloop_assistant.config import masked_url
from truloop_assistant.local.embedded_redis import RedisServer, free_port

SECRET = "s" * 32
PASSWORD = "pa55-w0rd"
TIMESTAMP = r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}[+-]\d\d:\d\d"
CONSOLE_SCRIPT = Path(sys.executable).with_name("truloop-assistant")


class Command:
    """A ``truloop-assistant`` subprocess whose output (stdout and stderr) is collected line by line."""

    def __init__(self, *args: str, cwd: Path, **env: str) -> None:
        clean = {k: v for k, v in os.environ.items() if not k.startswith("TRULOOP_")}
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "truloop_assistant.cli", *args],
            env={**clean, **env},
            cwd=cwd,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
        )
        self.lines: list[str] = []
        self._changed = threading.Condition()
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            with self._changed:
                self.lines.append(line.rstrip("\n"))
                self._changed.notify_all()
        with self._changed:
            self._changed.notify_all()

    def wait_for(self, pattern: str, timeout: float = 30) -> str:
        """The first line matching ``pattern`` (a regular expression), once it has been written."""
        regex = re.compile(pattern)
        deadline = time.monotonic() + timeout
        with self._changed:
            while True:
                found = next((line for line in self.lines if regex.search(line)), None)
                if found is not None:
                    return found
                left = deadline - time.monotonic()
                if left <= 0 or (self.proc.poll() is not None and not self._reader.is_alive()):
                    raise AssertionError(f"no line matching {pattern!r}; output:\n" + "\n".join(self.lines))
                self._changed.wait(min(left, 0.5))

    def stop(self, sig: int = signal.SIGTERM, timeout: float = 30) -> tuple[int, float]:
        """Send ``sig``; the exit code and how many seconds the process took to exit."""
        started = time.monotonic()
        self.proc.send_signal(sig)
        code = self.proc.wait(timeout)
        elapsed = time.monotonic() - started
        self._reader.join(5)
        return code, elapsed

    def finish(self, timeout: float = 60) -> int:
        code = self.proc.wait(timeout)
        self._reader.join(5)
        return code

    def kill(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()


@pytest.fixture
def started() -> Iterator[list[Command]]:
    """Commands started by a test; any still running at its end is killed."""
    commands: list[Command] = []
    yield commands
    for command in commands:
        command.kill()


def run(started: list[Command], *args: str, cwd: Path, **env: str) -> Command:
    command = Command(*args, cwd=cwd, **env)
    started.append(command)
    return command


def local_env(redis_url: str) -> dict[str, str]:
    return {"TRULOOP_REDIS_URL": redis_url, "TRULOOP_CHANNEL": "local", "TRULOOP_JWT_SECRET": SECRET}


def serve_env(redis_url: str) -> dict[str, str]:
    """What ``serve`` needs: the Sendbird channel (an application nobody answers for) and a secret."""
    return {
        "TRULOOP_REDIS_URL": redis_url,
        "TRULOOP_CHANNEL": "sendbird",
        "TRULOOP_SENDBIRD_APP_ID": "test-app",
        "TRULOOP_SENDBIRD_API_TOKEN": "token",
        "TRULOOP_SENDBIRD_API_URL": f"http://127.0.0.1:{free_port()}",
        "TRULOOP_JWT_SECRET": SECRET,
    }


def dead_url(password: str = PASSWORD) -> tuple[int, str]:
    port = free_port()
    return port, f"redis://:{password}@127.0.0.1:{port}/0"


def test_version_and_help_answer_without_loading_the_server() -> None:
    proc = subprocess.run([CONSOLE_SCRIPT, "--version"], capture_output=True, text=True, timeout=30)
    assert (proc.returncode, proc.stdout) == (0, f"truloop-assistant {version('truloop-assistant')}\n")

    proc = subprocess.run([CONSOLE_SCRIPT, "--help"], capture_output=True, text=True, timeout=30)
    assert proc.returncode == 0
    for command in ("serve", "worker", "dev", "doctor", "inspect", "sendbird", "users", "kb", "eval"):
        assert re.search(rf"^\s+{command}\s+\S", proc.stdout, re.MULTILINE), proc.stdout

    heavy = [
        "pydantic",
        "pydantic_settings",
        "pydantic_ai",
        "redis",
        "uvicorn",
        "httpx",
        "aiohttp",
        "bm25s",
        "saq",
    ]
    probe = (
        "import sys\nfrom truloop_assistant.cli import main\n"
        "for argv in (['--help'], ['--version']):\n"
        "    try:\n        main(argv)\n    except SystemExit:\n        pass\n"
        f"print([name for name in {heavy!r} if name in sys.modules])"
    )
    proc = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=30)
    assert proc.stdout.splitlines()[-1] == "[]"


def test_help_lines_match_the_commands_own() -> None:
    for name, help_line in COMMANDS.items():
        sub = next(a for a in build_parser(name)._actions if a.dest == "command")
        own = next(choice.help for choice in sub._choices_actions if choice.dest == name)
        assert own == help_line, name


@pytest.mark.parametrize(
    ("url", "shown"),
    [
        ("redis://:secret@cache:6379/0", "redis://:***@cache:6379/0"),
        (
            "rediss://app:p@ss/w@cache:6380/1?ssl_cert_reqs=none",
            "rediss://app:***@cache:6380/1?ssl_cert_reqs=none",
        ),
        ("redis+cluster://:secret@a:7000,b:7001", "redis+cluster://:***@a:7000,b:7001"),
        ("unix://:secret@/run/redis.sock?db=2", "unix://:***@/run/redis.sock?db=2"),
        ("redis://cache/0?db=1&password=secret", "redis://cache/0?db=1&password=***"),
        ("redis://app@cache/0", "redis://app@cache/0"),
    ],
)
def test_passwords_never_show_in_a_redis_url(url: str, shown: str) -> None:
    assert masked_url(url) == shown


def test_worker_waits_for_redis_then_starts_and_stops_cleanly(tmp_path: Path, started: list[Command]) -> None:
    port, url = dead_url()
    (tmp_path / ".env").write_text("TRULOOP_LOG_FORMAT=json\n")
    worker = run(started, "worker", "--concurrency", "3", cwd=tmp_path, **local_env(url))

    summary = json.loads(worker.wait_for(r'"worker: '))
    assert re.fullmatch(TIMESTAMP, summary["ts"]) and summary["level"] == "INFO"
    assert summary["message"] == (
        f"worker: model offline, channel local, Redis redis://:***@127.0.0.1:{port}/0, queue truloop, "
        "concurrency 3"
    )
    waiting = json.loads(worker.wait_for("unreachable"))
    assert waiting["level"] == "WARNING"
    assert f"Redis at redis://:***@127.0.0.1:{port}/0 is unreachable" in waiting["message"]

    with RedisServer(port=port, extra_args=["--requirepass", PASSWORD]):
        worker.wait_for("answers now")
        worker.wait_for("worker started")
        code, _ = worker.stop(signal.SIGTERM)

    assert code == 0
    entries = [json.loads(line) for line in worker.lines]  # every line is a JSON object
    assert [e["level"] for e in entries].count("WARNING") == 1
    assert len(entries) < 12 and not any("Traceback" in e["message"] or "exc" in e for e in entries)
    assert PASSWORD not in "\n".join(worker.lines)


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT], ids=["SIGTERM", "SIGINT"])
def test_worker_without_redis_backs_off_quietly_and_stops_at_once(
    tmp_path: Path, started: list[Command], sig: int
) -> None:
    _, url = dead_url()
    worker = run(started, "worker", cwd=tmp_path, TRULOOP_LOG_LEVEL="DEBUG", **local_env(url))

    worker.wait_for(r"WARNING truloop_assistant\.cli: Redis at .* is unreachable .* trying again in 1 s")
    worker.wait_for(r"DEBUG truloop_assistant\.cli: Redis at .* trying again in 2 s")
    worker.wait_for(r"DEBUG truloop_assistant\.cli: Redis at .* trying again in 4 s")
    code, elapsed = worker.stop(sig)

    assert code == 0 and elapsed < 2, elapsed
    ours = [line for line in worker.lines if "truloop_assistant.cli" in line]
    assert [line.split(" ")[1] for line in ours] == ["INFO", "WARNING", "DEBUG", "DEBUG", "INFO"]
    assert ours[-1].endswith("stopped before the worker started")
    assert not any("Traceback" in line for line in worker.lines)


def test_a_redis_that_refuses_the_password_is_one_error(tmp_path: Path, started: list[Command]) -> None:
    with RedisServer(extra_args=["--requirepass", PASSWORD]) as server:
        url = f"redis://:wrong-{PASSWORD}@127.0.0.1:{server.port}/0"
        worker = run(started, "worker", cwd=tmp_path, **local_env(url))
        assert worker.finish() == 1

    assert len(worker.lines) == 2, worker.lines
    assert re.fullmatch(
        rf"{TIMESTAMP} ERROR truloop_assistant\.cli: Redis at redis://:\*\*\*@127\.0\.0\.1:{server.port}/0: "
        r"Redis refused the credentials: .*; fix TRULOOP_REDIS_URL",
        worker.lines[1],
    )


@pytest.mark.parametrize("command", ["worker", "serve"])
def test_a_url_that_is_not_redis_is_one_line_naming_the_variable(
    tmp_path: Path, started: list[Command], command: str
) -> None:
    proc = run(started, command, cwd=tmp_path, **local_env(f"http://admin:{PASSWORD}@example.com/"))

    assert proc.finish() == 2
    assert proc.lines == [
        "truloop-assistant: invalid settings: TRULOOP_REDIS_URL: 'http://admin:***@example.com/' is not a "
        "Redis URL: use redis://HOST:PORT/DB (rediss:// with TLS, unix:///PATH for a socket, "
        "redis+cluster://HOST:PORT,HOST:PORT or rediss+cluster:// for a Redis Cluster)"
    ]


def test_serve_announces_itself_and_logs_uvicorn_alike(
    tmp_path: Path, started: list[Command], redis_url: str
) -> None:
    port = free_port()
    serve = run(started, "serve", "--port", str(port), cwd=tmp_path, **serve_env(redis_url))

    summary = serve.wait_for("serve: ")
    assert re.fullmatch(
        rf"{TIMESTAMP} INFO truloop_assistant\.cli: serve: model offline, channel sendbird, "
        rf"Redis {re.escape(redis_url)}, queue truloop, listening on http://127\.0\.0\.1:{port} "
        r"\(1 HTTP worker process\)",
        summary,
    )
    warning = serve.wait_for("WARNING")
    assert "TRULOOP_CHANNEL=sendbird with TRULOOP_MODEL=offline" in warning
    started_up = serve.wait_for("startup complete")
    assert re.fullmatch(rf"{TIMESTAMP} INFO uvicorn\.error: Application startup complete\.", started_up)
    assert httpx.get(f"http://127.0.0.1:{port}/readyz", timeout=10).status_code == 200
    assert re.fullmatch(
        rf'{TIMESTAMP} INFO uvicorn\.access: .*"GET /readyz HTTP/1\.1" 200', serve.wait_for("readyz")
    )
    serve.stop(signal.SIGTERM)
    assert not any("Traceback" in line for line in serve.lines)


def test_serve_waits_for_redis_and_stops_on_ctrl_c(tmp_path: Path, started: list[Command]) -> None:
    port, url = dead_url()
    serve = run(started, "serve", "--port", str(free_port()), cwd=tmp_path, **serve_env(url))

    serve.wait_for(
        rf"WARNING truloop_assistant\.cli: Redis at redis://:\*\*\*@127\.0\.0\.1:{port}/0 is unreachable"
    )
    code, elapsed = serve.stop(signal.SIGINT)

    assert code == 0 and elapsed < 2, elapsed
    lines = [
        line for line in serve.lines if "TRULOOP_MODEL=offline" not in line
    ]  # the offline model's warning
    assert len(lines) == 3 and lines[-1].endswith("stopped before Redis answered")


def test_serve_refuses_the_local_channel_and_names_dev(
    tmp_path: Path, started: list[Command], redis_url: str
) -> None:
    port = free_port()
    serve = run(started, "serve", "--port", str(port), cwd=tmp_path, **local_env(redis_url))

    assert serve.finish(timeout=30) == 2
    assert len(serve.lines) == 1 and "TRULOOP_CHANNEL=local" in serve.lines[0], serve.lines
    assert "`truloop-assistant dev`" in serve.lines[0]
    with pytest.raises(httpx.ConnectError):  # nothing listens: no /dev/api/token to ask
        httpx.post(f"http://127.0.0.1:{port}/dev/api/token", json={"user_id": "jeff"}, timeout=2)


def test_serve_with_a_metrics_port_answers_metrics_there_and_not_on_the_api_port(
    tmp_path: Path, started: list[Command], redis_url: str
) -> None:
    port, metrics_port = free_port(), free_port()
    env = {**serve_env(redis_url), "TRULOOP_METRICS_PORT": str(metrics_port)}
    serve = run(started, "serve", "--port", str(port), cwd=tmp_path, **env)
    serve.wait_for(rf"metrics at http://127\.0\.0\.1:{metrics_port}/metrics")
    serve.wait_for("startup complete")
    base, metrics = f"http://127.0.0.1:{port}", f"http://127.0.0.1:{metrics_port}"

    assert httpx.post(f"{base}/api/v1/webhooks/sendbird", content=b"{}", timeout=5).status_code == 401
    scraped = httpx.get(f"{metrics}/metrics", timeout=5)
    assert scraped.status_code == 200
    assert _unsigned_webhooks(text_string_to_metric_families(scraped.text)) == 1
    on_api = httpx.get(f"{base}/metrics", timeout=5)
    assert on_api.status_code == 404 and on_api.json()["error"]["code"] == "not_found"
    elsewhere = httpx.get(f"{metrics}/readyz", timeout=5)
    assert elsewhere.status_code == 404 and elsewhere.json()["error"]["code"] == "not_found"
    serve.stop()
    assert not any("Traceback" in line for line in serve.lines), "\n".join(serve.lines)


def dev_token(port: int) -> str:
    """A device token for jeff, from the dev server's /dev page API."""
    r = httpx.post(f"http://127.0.0.1:{port}/dev/api/token", json={"user_id": "jeff"}, timeout=10)
    assert r.status_code == 200, r.text
    return str(r.json()["token"])


def test_dev_uses_the_redis_and_secret_of_its_environment(tmp_path: Path, started: list[Command]) -> None:
    port = free_port()
    with RedisServer() as server:
        env = {"TRULOOP_REDIS_URL": server.url, "TRULOOP_JWT_SECRET": SECRET}
        dev = run(started, "dev", "--port", str(port), cwd=tmp_path, **env)
        dev.wait_for(r"Uvicorn running on")

        assert httpx.get(f"http://127.0.0.1:{port}/readyz", timeout=10).status_code == 200
        assert redis.Redis.from_url(server.url).dbsize() > 0  # the sample users went there
        assert jwt.decode(dev_token(port), SECRET, algorithms=["HS256"])["sub"] == "jeff"
        dev.stop(signal.SIGINT)

    said = dev.wait_for(r"INFO truloop_assistant\.cli: dev: ")
    assert f"Redis {server.url} from TRULOOP_REDIS_URL in the environment" in said
    assert "device tokens signed with TRULOOP_JWT_SECRET from the environment" in said
    assert not any("embedded Redis" in line for line in dev.lines)
    assert not any("WARNING: dev listens" in line for line in dev.lines)  # loopback only: nothing to warn of


def test_dev_keeps_its_keys_under_a_prefix_of_its_own_and_starts_again_on_a_redis_it_used(
    tmp_path: Path, started: list[Command]
) -> None:
    port = free_port()
    with RedisServer() as server:
        for _ in range(2):  # the second time the database holds dev's keys and mark: it starts there again
            env = {"TRULOOP_REDIS_URL": server.url, "TRULOOP_KEY_PREFIX": "ta"}  # a deployment's prefix
            dev = run(started, "dev", "--port", str(port), cwd=tmp_path, **env)
            dev.wait_for(r"Uvicorn running on")
            assert dev_token(port)
            assert dev.stop(signal.SIGINT)[0] == 0
        names = redis.Redis.from_url(server.url).keys("*")
    assert b"ta-dev:users:profiles" in names and all(name.startswith(b"ta-dev:") for name in names), names


@pytest.mark.parametrize(
    "present",
    [
        "ta:users:profiles",  # a deployment's directory, the default prefix
        "blue:{kb}:documents",  # a deployment of another prefix
        "ta-dev:users:profiles",  # dev's prefix, but dev never marked this database
    ],
)
def test_dev_refuses_a_redis_that_holds_keys_not_its_own_and_writes_nothing_there(
    tmp_path: Path, started: list[Command], present: str
) -> None:
    with RedisServer() as server:
        deployed = redis.Redis.from_url(server.url)
        deployed.hset(present, "ops", json.dumps({"user_id": "ops", "name": "Ops", "role": "admin"}))
        env = {"TRULOOP_REDIS_URL": server.url, "TRULOOP_JWT_SECRET": SECRET}
        dev = run(started, "dev", "--port", str(free_port()), cwd=tmp_path, **env)

        assert dev.finish(timeout=30) == 2
        assert deployed.keys("*") == [present.encode()]  # no sample user, no mark
    [line] = dev.lines  # one line, no traceback
    assert line.startswith(
        f"truloop-assistant: TRULOOP_REDIS_URL={server.url}: dev will not use this Redis: "
    )
    assert "Unset TRULOOP_REDIS_URL and dev starts an embedded Redis" in line
    assert "an empty database" in line


def test_dev_warns_on_stderr_when_it_listens_beyond_loopback(tmp_path: Path) -> None:
    port = free_port()
    env = {k: v for k, v in os.environ.items() if not k.startswith("TRULOOP_")}
    proc = subprocess.Popen(
        [sys.executable, "-m", "truloop_assistant.cli", "dev", "--host", "0.0.0.0", "--port", str(port)],
        env=env, cwd=tmp_path, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        deadline = time.monotonic() + 30
        while proc.poll() is None and time.monotonic() < deadline:
            try:
                if httpx.get(f"http://127.0.0.1:{port}/readyz", timeout=1).status_code == 200:
                    break
            except httpx.HTTPError:
                time.sleep(0.1)
    finally:
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=30)
    assert "truloop-assistant: WARNING: dev listens on 0.0.0.0, not only on this machine's loopback" in err, (
        err
    )
    assert "sample users (one an admin)" in err and "/dev/api/token" in err


def test_dev_leaves_the_redis_and_secret_of_dotenv_alone(tmp_path: Path, started: list[Command]) -> None:
    port = free_port()
    deployed_secret = "d" * 32
    with RedisServer() as deployed:
        (tmp_path / ".env").write_text(
            f"TRULOOP_REDIS_URL={deployed.url}\nTRULOOP_JWT_SECRET={deployed_secret}\n"
        )
        dev = run(started, "dev", "--port", str(port), cwd=tmp_path)
        dev.wait_for(r"Uvicorn running on")

        token = dev_token(port)
        with pytest.raises(jwt.InvalidSignatureError):  # a token of dev's is no good for the deployment
            jwt.decode(token, deployed_secret, algorithms=["HS256"])
        assert redis.Redis.from_url(deployed.url).dbsize() == 0  # no sample users (or anything) there
        dev.stop(signal.SIGINT)

    said = dev.wait_for(r"INFO truloop_assistant\.cli: dev: ")
    assert re.search(r"dev: started an embedded Redis at redis://127\.0\.0\.1:\d+/0; ", said), said
    assert "device tokens signed with a secret made for this run" in said
    assert "TRULOOP_REDIS_URL and TRULOOP_JWT_SECRET of .env not used" in said
    assert deployed.url not in "\n".join(dev.lines)


def test_dev_refuses_an_unreachable_redis_url(tmp_path: Path, started: list[Command]) -> None:
    port, url = dead_url()
    dev = run(started, "dev", "--port", str(free_port()), cwd=tmp_path, TRULOOP_REDIS_URL=url)

    assert dev.finish() == 2
    assert len(dev.lines) == 1
    assert dev.lines[0].startswith(
        f"truloop-assistant: TRULOOP_REDIS_URL=redis://:***@127.0.0.1:{port}/0: no usable Redis there"
    )
    assert "unset TRULOOP_REDIS_URL" in dev.lines[0] and "embedded" in dev.lines[0]


def test_dev_without_a_redis_server_binary_says_how_to_get_one(
    tmp_path: Path, started: list[Command]
) -> None:
    missing = tmp_path / "no-redis-server"
    dev = run(started, "dev", "--port", str(free_port()), cwd=tmp_path, TRULOOP_REDIS_SERVER_BIN=str(missing))

    assert dev.finish() == 2
    assert len(dev.lines) == 1  # one line, no traceback
    assert dev.lines[0].startswith("truloop-assistant: TRULOOP_REDIS_SERVER_BIN=")


def test_worker_processes_each_serve_metrics_and_a_dead_one_is_started_again(
    tmp_path: Path, started: list[Command], redis_url: str
) -> None:
    port = free_port()
    while free_port() == port + 1:  # the second process listens on the next port
        pass
    parent = run(
        started,
        "worker",
        "--processes",
        "2",
        "--metrics-port",
        str(port),
        cwd=tmp_path,
        **local_env(redis_url),
    )
    line = parent.wait_for(r"started 2 worker processes: \[\d+, \d+\]")
    pids = [int(p) for p in re.findall(r"\d+", line.rpartition("[")[2])]

    def scrape(p: int) -> str:
        deadline = time.monotonic() + 30
        while True:
            try:
                return httpx.get(f"http://127.0.0.1:{p}/metrics", timeout=2).text
            except httpx.HTTPError:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.1)

    for p in (port, port + 1):
        assert "truloop_turns_total" in scrape(p) and "truloop_pending_calls" in scrape(p)

    os.kill(pids[0], signal.SIGKILL)  # a crash: the parent starts it again
    parent.wait_for(r"worker process 0 \(pid \d+\) exited with -9; starting it again")
    parent.wait_for(r"worker process 0 started again")
    assert "truloop_turns_total" in scrape(port)

    code, took = parent.stop()
    assert code == 0 and took < 30
    for pid in pids[1:]:  # stopped with it
        with pytest.raises(ProcessLookupError):
            os.kill(pid, 0)


def _unsigned_webhooks(families: Iterable[Metric]) -> float:
    """``truloop_webhooks_total{outcome="bad_signature"}`` of these metric families."""
    return sum(
        s.value
        for family in families
        for s in family.samples
        if s.name == "truloop_webhooks_total" and s.labels == {"outcome": "bad_signature"}
    )


@pytest.mark.parametrize("given", [False, True], ids=["own-directory", "PROMETHEUS_MULTIPROC_DIR"])
def test_serve_with_two_processes_answers_metrics_with_their_sum(
    tmp_path: Path, started: list[Command], redis_url: str, given: bool
) -> None:
    port = free_port()
    env = {**serve_env(redis_url), "TMPDIR": str(tmp_path)}
    if given:
        shared = tmp_path / "metrics"
        shared.mkdir()
        stale = MmapedDict(str(shared / "counter_1.db"))  # an earlier run's figures, not to be counted
        key = mmap_key("truloop_webhooks_total", "truloop_webhooks_total", ["outcome"], ["bad_signature"], "")
        stale.write_value(key, 1000.0, 0.0)
        stale.close()
        env["PROMETHEUS_MULTIPROC_DIR"] = str(shared)
    serve = run(started, "serve", "--port", str(port), "--workers", "2", cwd=tmp_path, **env)
    [shared] = [
        Path(p) for p in re.findall(r"metrics are kept in (\S+)", serve.wait_for("metrics are kept in"))
    ]
    base = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 30
    while True:
        try:
            httpx.get(f"{base}/healthz", timeout=1)
            break
        except httpx.HTTPError:
            assert time.monotonic() < deadline, "\n".join(serve.lines)
            time.sleep(0.1)

    # Unsigned webhooks (401, counted as bad_signature), each on a connection of its own, until both
    # processes have answered some.
    def per_process() -> list[float]:
        return [
            _unsigned_webhooks(MultiProcessCollector.merge([str(p)])) for p in shared.glob("counter_*.db")
        ]

    sent = 0
    while sum(1 for n in per_process() if n) < 2:
        assert sent < 400, per_process()
        for _ in range(10):
            with httpx.Client(base_url=base, timeout=5) as http:
                assert http.post("/api/v1/webhooks/sendbird", content=b"{}").status_code == 401
            sent += 1

    for _ in range(4):  # whichever process answers the scrape, it answers with the sum
        with httpx.Client(base_url=base, timeout=5) as http:
            assert _unsigned_webhooks(text_string_to_metric_families(http.get("/metrics").text)) == sent

    code, _ = serve.stop()
    assert code == 0
    assert shared.exists() == given  # a directory of its own is removed at the end
    assert not any("Traceback" in line for line in serve.lines), "\n".join(serve.lines)

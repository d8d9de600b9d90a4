"""Test setup: a real Redis server (or Redis Cluster), the real app served over HTTP, and a fake Sendbird.

``redis_url`` is the standalone Redis: ``TRULOOP_TEST_REDIS_URL`` (``scripts/test`` starts one), else a
``RedisServer`` started for the session.  A test module runs its tests on a Redis Cluster as well with::

    pytestmark = pytest.mark.parametrize("redis_url", ["standalone", "cluster"], indirect=True)

which gives each test a ``[standalone]`` and a ``[cluster]`` run.  The cluster is
``TRULOOP_TEST_REDIS_CLUSTER_URL`` (``scripts/test`` starts one), else a ``RedisClusterServer`` started
once per session, when a test first asks for it.  A ``redis+cluster://`` ``TRULOOP_TEST_REDIS_URL`` runs
the whole suite on a cluster.  ``redis`` is a client for ``redis_url`` (``redis_client.connect``) on an
empty database: every primary of a cluster is flushed.

Run in parallel (pytest-xdist, ``scripts/test`` picks ``-n``), every worker process starts a Redis and
a Redis Cluster of its own: a test flushes its database, so two workers never share one.  The
``TRULOOP_TEST_REDIS_*`` servers are shared, so they refuse more than one worker.  Tests that share a
module-scoped fixture (a dev server and its browser, a built package) run in one worker, as do the
TypeScript client's tests, which build in the same directory.
"""

from __future__ import annotations

import gc
import os
from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import ExitStack, asynccontextmanager
from pathlib import Path
from typing import Any, cast

import httpx
import pytest
from _pytest.nodeid import coerce_node_id
from pydantic_ai import models
from redis.asyncio import Redis
from redis.asyncio.cluster import RedisCluster

from tests.fakes.mcp_server import CrmServer
from tests.fakes.sendbird import FakeSendbird
from tests.support import Harness, make_settings, serve, served
from truloop_assistant.agent.agents import MemberAgent
from truloop_assistant.local.embedded_redis import RedisClusterServer, RedisServer, free_port
from truloop_assistant.redis_client import connect, is_cluster

models.ALLOW_MODEL_REQUESTS = False

REDIS_KINDS = ("standalone", "cluster")
SHARED_DIRECTORY_GROUPS = {"tests/clients/": "clients-typescript"}
"""Test folders whose tests write to one directory of the checkout: one xdist worker runs them all."""

SETTLE_EVERY = 50
"""Tests between two settlings of this process's garbage collector (see ``pytest_runtest_teardown``)."""
_tests_run = 0


def pytest_runtest_teardown(item: pytest.Item, nextitem: pytest.Item | None) -> None:
    """Every ``SETTLE_EVERY`` tests, between two tests: a full collection, then what is left frozen.

    A session of a thousand tests keeps about a million objects, and Python's full collections walk
    them all: pauses of a second late in the suite, which a test's event loop feels in the middle of
    a burst (60 webhooks at once each gave up on Redis after 1.5 s). Frozen, what earlier tests
    left is never walked again; a collection here costs nothing to a test.
    """
    global _tests_run
    _tests_run += 1
    if _tests_run % SETTLE_EVERY == 0:
        gc.collect()
        gc.freeze()


def pytest_itemcollected(item: pytest.Item) -> None:
    """Under ``--dist loadgroup``: a module's tests in one worker when they share a module-scoped
    fixture (started once, not once per worker), and the folders of ``SHARED_DIRECTORY_GROUPS``.
    Marked as each test is collected: xdist reads the groups into the test ids in its own
    ``pytest_collection_modifyitems``, which runs before a conftest's."""
    path = item.nodeid.split("::", 1)[0]
    group = next((g for prefix, g in SHARED_DIRECTORY_GROUPS.items() if path.startswith(prefix)), None)
    fixtures = getattr(item, "_fixtureinfo", None)
    if group is None and fixtures is not None:
        scopes = {d.scope for defs in fixtures.name2fixturedefs.values() for d in defs}
        if "module" in scopes or "class" in scopes:
            group = path
    if group is not None:
        item.add_marker(pytest.mark.xdist_group(group))
        if getattr(item.config.option, "loadgroup", False) and "@" not in item.nodeid:
            # What xdist's own hook means to do: its group in the test's id, which its scheduler reads.
            # It sets ``_nodeid``, which pytest 9 no longer reads (the id is ``_id``).
            item._id = coerce_node_id(f"{item.nodeid}@{group}")  # type: ignore[attr-defined]


def pytest_configure(config: pytest.Config) -> None:
    """Refuse to share a ``TRULOOP_TEST_REDIS_*`` server between xdist workers: each test flushes the
    database, so workers sharing one would wipe each other's state."""
    config.addinivalue_line("markers", "xdist_group(name): run in the xdist worker that runs its group")
    workers = getattr(config.option, "numprocesses", None)
    shared = [v for v in ("TRULOOP_TEST_REDIS_URL", "TRULOOP_TEST_REDIS_CLUSTER_URL") if os.environ.get(v)]
    if shared and workers not in (None, 0, 1) and "PYTEST_XDIST_WORKER" not in os.environ:
        raise pytest.UsageError(
            f"{' and '.join(shared)}: one server for every xdist worker; run with -n 0, "
            "or unset it (each worker then starts a Redis and a Redis Cluster of its own)"
        )


class RedisServers:
    """The session's Redis of each kind: from the environment, else started on first use."""

    def __init__(self, stack: ExitStack) -> None:
        self._stack = stack
        self._urls: dict[str, str] = {}

    def url(self, kind: str) -> str:
        if kind not in REDIS_KINDS:
            raise ValueError(f"redis_url is one of {REDIS_KINDS}, not {kind!r}")
        if kind not in self._urls:
            self._urls[kind] = self._from_env(kind) or self._start(kind)
        return self._urls[kind]

    @staticmethod
    def _from_env(kind: str) -> str | None:
        url = os.environ.get("TRULOOP_TEST_REDIS_URL") or None
        if kind == "standalone":
            found = url
        else:
            # A whole suite run on a cluster (a cluster TRULOOP_TEST_REDIS_URL) uses it for both kinds.
            found = os.environ.get("TRULOOP_TEST_REDIS_CLUSTER_URL") or (
                url if url and is_cluster(url) else None
            )
        return found

    def _start(self, kind: str) -> str:
        # Started in the main thread, which outlives the session: the servers die with it (PDEATHSIG).
        server = RedisClusterServer() if kind == "cluster" else RedisServer()
        return self._stack.enter_context(server).url


@pytest.fixture(scope="session")
def redis_servers() -> Iterator[RedisServers]:
    with ExitStack() as stack:
        yield RedisServers(stack)


@pytest.fixture(scope="session")
def redis_url(request: pytest.FixtureRequest, redis_servers: RedisServers) -> str:
    """The URL of the Redis for the test: ``standalone`` unless parametrized (see the module docstring)."""
    return redis_servers.url(getattr(request, "param", "standalone"))


@pytest.fixture
async def redis(redis_url: str) -> AsyncIterator[Redis]:
    client = connect(redis_url)
    if is_cluster(redis_url):
        # FLUSHDB on a cluster client goes to every primary (redis-py's default for it, made explicit).
        await cast(RedisCluster, client).flushdb(target_nodes=RedisCluster.PRIMARIES)
    else:
        await client.flushdb()
    yield client
    await client.aclose()


@pytest.fixture
async def sendbird() -> AsyncIterator[FakeSendbird]:
    async with served(FakeSendbird()) as fake:
        yield fake


StartServer = Callable[..., Any]


@pytest.fixture
async def directory(redis: Redis) -> Any:
    """The bundled sample user directory (jeff, mina, ...) loaded into the test Redis."""
    from truloop_assistant.backends.users import SAMPLE_USERS_FILE, RedisUserDirectory, load_users_file

    users = RedisUserDirectory(redis)
    await users.import_users(load_users_file(SAMPLE_USERS_FILE))
    return users


@pytest.fixture
async def start_server(redis: Redis, redis_url: str, sendbird: FakeSendbird) -> AsyncIterator[StartServer]:
    """``async with start_server(model=..., agent=..., **settings) as h:`` runs API + worker over HTTP."""
    from truloop_assistant.app import create_app

    @asynccontextmanager
    async def start(
        *, model: Any = None, agent: MemberAgent | None = None, **overrides: Any
    ) -> AsyncIterator[Harness]:
        settings = make_settings(redis_url, sendbird.url, **overrides)  # type: ignore[attr-defined]
        # The local channel's /dev routes, as `truloop-assistant dev` mounts them.
        dev_routes = settings.channel == "local"
        app = create_app(settings, embedded_worker=True, model=model, agent=agent, dev_routes=dev_routes)
        port = free_port()
        async with (
            serve(app, port),
            httpx.AsyncClient(base_url=f"http://127.0.0.1:{port}", timeout=30) as http,
        ):
            yield Harness(
                http=http,
                sendbird=sendbird,
                settings=settings,
                redis=redis,
                _message_ids=iter(range(1000, 10**9)),
            )

    yield start


@pytest.fixture
def crm(tmp_path: Path) -> Iterator[CrmServer]:
    """A real MCP server (a small CRM), not started yet: ``crm.start()``."""
    server = CrmServer(tmp_path)
    try:
        yield server
    finally:
        server.kill()

"""One way to open Redis from a ``TRULOOP_REDIS_URL``: a standalone server or a Redis Cluster.

``redis://`` / ``rediss://`` / ``unix://`` open redis-py's client; ``redis+cluster://host:port[,host:port…]``
(``rediss+cluster://`` with TLS) opens its cluster client with the listed nodes as seeds. The cluster
client speaks the same commands, so the server is typed against :class:`redis.asyncio.Redis` and uses
only what works on both: every multi-key script and transaction stays in one hash slot (see
:mod:`truloop_assistant.store.keys`), and the test suite runs the end-to-end paths on a real cluster.

Every command Redis answers tells :func:`~truloop_assistant.redis_outage.redis_answered`, so the
logs say when Redis is back after an outage.

Written against redis-py 8.1.x, which pyproject pins: :class:`_PromptWrites` and :class:`_Transaction`
use its internals (each names what it relies on); re-read them before a bump.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any, TypeVar, cast
from urllib.parse import parse_qs, unquote

from redis.asyncio import Redis
from redis.asyncio.cluster import (
    AbstractStrategy,
    ClusterNode,
    ClusterPipeline,
    RedisCluster,
    TransactionStrategy,
)
from redis.asyncio.connection import AbstractConnection
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import RedisClusterException
from redis.exceptions import TimeoutError as RedisTimeoutError

from .redis_outage import redis_answered

CLUSTER_SCHEMES = ("redis+cluster", "rediss+cluster")
MAX_CONNECTIONS = 1000
"""Connections one client may open (per node of a cluster). redis-py's default, 100, is what a worker
already holds in blocking queue reads at its default concurrency; beyond the cap a command fails
at once instead of waiting. Connections are opened only as needed."""


@dataclass(frozen=True)
class ClusterURL:
    """The parts of a ``redis+cluster://`` URL."""

    nodes: list[tuple[str, int]]
    username: str | None
    password: str | None
    tls: bool


def is_cluster(url: str) -> bool:
    return url.partition("://")[0] in CLUSTER_SCHEMES


def parse_cluster_url(url: str) -> ClusterURL:
    """Seeds, credentials and TLS of ``redis+cluster://[user:password@]host:port[,host:port…][/0]``."""
    scheme, _, rest = url.partition("://")
    if scheme not in CLUSTER_SCHEMES:
        raise ValueError(f"not a cluster URL (use {' or '.join(s + '://' for s in CLUSTER_SCHEMES)})")
    rest, _, query = rest.partition("?")
    userinfo, _, location = rest.rpartition("@")
    hosts, _, db = location.partition("/")
    if db not in ("", "0"):
        raise ValueError(f"a Redis Cluster has only database 0, not {db!r}")
    nodes: list[tuple[str, int]] = []
    for host in (h.strip() for h in hosts.split(",")):
        if not host:
            continue
        name, _, port = host.rpartition(":")
        if not name or not port.isdigit():
            raise ValueError(f"{host!r} is not HOST:PORT")
        nodes.append((name.strip("[]"), int(port)))
    if not nodes:
        raise ValueError("no HOST:PORT given")
    username, _, password = userinfo.partition(":") if userinfo else ("", "", "")
    params = parse_qs(query)
    password = unquote(password) or (params.get("password") or [""])[0]
    return ClusterURL(
        nodes=nodes,
        username=unquote(username) or None,
        password=password or None,
        tls=scheme == "rediss+cluster",
    )


class _PromptWrites(AbstractConnection):
    """A connection that hands a command to the socket at once, and waits (within ``socket_timeout``)
    only when the socket could not take it all.

    redis-py runs every send under ``asyncio.wait_for`` when a ``socket_timeout`` is set: a task of
    its own and one more turn of the event loop per round trip (12–24 % of the client's CPU for a
    command alone, ``benchmarks.redis_client``), for a write that almost always goes out in full
    without waiting. A write that does wait, a connection not yet open, or a health check due takes
    redis-py's own way, timeout and all.

    redis-py 8.1's internals (pinned; re-read before a bump): the connection's ``_writer`` (an
    ``asyncio.StreamWriter``), ``next_health_check``, ``disconnect(nowait=True)``, and the errors its
    own ``send_packed_command`` raises; the client's ``connection_kwargs["connection_class"]`` and each
    node's ``connection_class`` (see :func:`connect`).
    """

    async def send_packed_command(
        self, command: bytes | str | Iterable[bytes], check_health: bool = True
    ) -> None:
        writer = self._writer
        if (
            writer is None
            or not self.is_connected
            or writer.transport.get_write_buffer_size()
            or (
                check_health
                and self.health_check_interval
                and asyncio.get_running_loop().time() > self.next_health_check
            )
        ):
            await super().send_packed_command(command, check_health)
            return
        if isinstance(command, str):
            command = command.encode()
        if isinstance(command, bytes):
            command = [command]
        try:
            writer.writelines(command)
            if writer.transport.get_write_buffer_size():  # the socket took part of it: wait for the rest
                await asyncio.wait_for(writer.drain(), self.socket_timeout)
        except TimeoutError:  # asyncio's is the builtin one since Python 3.11
            await self.disconnect(nowait=True)
            raise RedisTimeoutError("Timeout writing to socket") from None
        except OSError as exc:  # the errors redis-py's own send raises
            await self.disconnect(nowait=True)
            raise RedisConnectionError(f"Error {exc.errno} while writing to socket. {exc.strerror}.") from exc
        except BaseException:  # as redis-py's: a command half sent leaves the connection unusable
            await self.disconnect(nowait=True)
            raise


_C = TypeVar("_C", bound=AbstractConnection)
_PROMPT_CLASSES: dict[type[AbstractConnection], type[AbstractConnection]] = {}


def _prompt(cls: type[_C]) -> type[_C]:
    """``cls`` (TCP, TLS or a Unix socket) with :class:`_PromptWrites`' sends."""
    if issubclass(cls, _PromptWrites):
        return cls
    if cls not in _PROMPT_CLASSES:
        _PROMPT_CLASSES[cls] = type(cls.__name__, (_PromptWrites, cls), {"__module__": __name__})
    return cast(type[_C], _PROMPT_CLASSES[cls])


class _Redis(Redis):
    """redis-py's client, noting each answer (the end of an outage).

    The first answer after a lost connection also closes the pool's idle connections: they were
    opened before the outage and a restarted Redis has closed them, so each would fail its next
    command (the client does not retry a command, which could run it twice). Connections in use
    are left alone.
    """

    _lost = False

    async def execute_command(self, *args: Any, **options: Any) -> Any:
        try:
            result = await super().execute_command(*args, **options)
        except (RedisConnectionError, RedisTimeoutError):
            self._lost = True
            raise
        if self._lost:
            self._lost = False
            await self.connection_pool.disconnect(inuse_connections=False)
        redis_answered()
        return result


class _RedisCluster(RedisCluster):
    """redis-py's cluster client, noting each answer (the end of an outage), warmed up by one command
    before it is shared, with transactions that queue their commands without a thread each (see
    :class:`_Transaction`).

    A cold client that many callers use at once (a burst of webhooks on a fresh process) had
    connections closed under them while they opened: redis-py 8 failed some of those first commands
    with ``AttributeError: 'NoneType' object has no attribute 'writelines'`` (10 of 3,000 in 50 bursts
    of 60 on a 3-primary cluster). The first use now connects alone, with a PING to every primary.
    """

    _warm = False
    _warming: asyncio.Lock | None = None

    async def warm_up(self) -> None:
        if self._warm:
            return
        if self._warming is None:
            self._warming = asyncio.Lock()
        async with self._warming:
            if not self._warm:
                await super().execute_command("PING", target_nodes=RedisCluster.PRIMARIES)
                self._warm = True

    async def execute_command(self, *args: Any, **kwargs: Any) -> Any:
        await self.warm_up()
        result = await super().execute_command(*args, **kwargs)
        redis_answered()
        return result

    def pipeline(self, transaction: Any | None = None, shard_hint: Any | None = None) -> ClusterPipeline:
        if shard_hint:
            raise RedisClusterException("shard_hint is deprecated in cluster mode")  # as redis-py's
        pipe = _Pipeline(self, transaction)  # type: ignore[abstract]  # as redis-py's: concrete at run time
        if transaction:
            pipe._execution_strategy = _Transaction(pipe)
        return pipe


class _Pipeline(ClusterPipeline):
    """redis-py's cluster pipeline, on a client warmed up first (see :class:`_RedisCluster`)."""

    async def execute(self, raise_on_error: bool = True, allow_redirections: bool = True) -> list[Any]:
        await cast(_RedisCluster, self.cluster_client).warm_up()
        return await super().execute(raise_on_error, allow_redirections)


_ONE_KEY = frozenset(
    {
        "GET", "SET", "SETEX", "EXPIRE", "PEXPIRE", "INCR", "INCRBY",
        "HGET", "HGETALL", "HSET", "HDEL", "HINCRBY",
        "LINDEX", "LPOP", "LPUSH", "RPUSH", "LTRIM", "LREM",
        "SADD", "SREM", "ZADD", "ZREM", "ZREMRANGEBYSCORE", "ZREMRANGEBYRANK",
    }
)  # fmt: skip
"""Commands whose one key is their first argument."""


class _Transaction(TransactionStrategy):
    """redis-py's transaction on a Redis Cluster, queueing a command without a thread of its own.

    redis-py 8 finds the slot of each command queued in a cluster transaction in a new thread that
    runs a new event loop (queueing is synchronous, its slot lookup is not): a step's transaction
    of 15 commands started 15 threads. The slot of a command whose keys are plain (``_ONE_KEY``,
    ``DEL``'s, a script's declared keys) is found here; any other command, a client not yet
    connected, or a WATCH takes redis-py's way.

    redis-py 8.1's internals (pinned; re-read before a bump): a transaction pipeline runs its
    ``_execution_strategy``; the strategy's ``_pipe``, ``_watching`` and ``_pipeline_slots`` (the
    slots its commands touch, one allowed); the client's ``_initialize`` (not yet connected); and
    ``AbstractStrategy.execute_command`` queueing a command without a slot lookup.
    """

    def execute_command(self, *args: Any, **kwargs: Any) -> Any:
        client = self._pipe.cluster_client
        slot = None if client._initialize or self._watching else _plain_slot(client, args)
        if slot is None:
            return super().execute_command(*args, **kwargs)
        self._pipeline_slots.add(slot)
        return AbstractStrategy.execute_command(self, *args, **kwargs)


def _plain_slot(client: RedisCluster, args: tuple[Any, ...]) -> int | None:
    """The one slot of a command's keys, when they are where ``_Transaction`` looks; else None."""
    name = str(args[0]).upper()
    if name in ("EVAL", "EVALSHA") and len(args) > 2:
        keys = args[3 : 3 + int(args[2])]
    elif name in ("DEL", "UNLINK"):
        keys = args[1:]
    elif name in _ONE_KEY:
        keys = args[1:2]
    else:
        return None
    slots = {client.keyslot(key) for key in keys}
    return slots.pop() if len(slots) == 1 else None


def connect(url: str, **options: Any) -> Redis:
    """An asyncio client for ``url``; ``options`` are redis-py's connection options (timeouts…)."""
    options.setdefault("max_connections", MAX_CONNECTIONS)
    if not is_cluster(url):
        client = _Redis.from_url(url, **options)
        pool = client.connection_pool  # the URL chose TCP, TLS or a Unix socket; nothing is open yet
        pool.connection_class = _prompt(pool.connection_class)
        return cast(Redis, client)
    parts = parse_cluster_url(url)
    options.pop("health_check_interval", None)  # per-node connections check themselves
    cluster = _RedisCluster(
        startup_nodes=[ClusterNode(host, port) for host, port in parts.nodes],
        username=parts.username,
        password=parts.password,
        ssl=parts.tls,
        **options,
    )
    # Every node's connections, those of the seeds and those of the nodes found later, write at once.
    kwargs = cluster.connection_kwargs
    kwargs["connection_class"] = _prompt(kwargs["connection_class"])
    for node in cluster.startup_nodes:
        node.connection_class = _prompt(node.connection_class)
    # Typed as the standalone client: the server keeps to commands both clients have (see above).
    return cast(Redis, cluster)

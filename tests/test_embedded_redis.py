import asyncio
import os
import selectors
import signal
import socket
import subprocess
import sys
from pathlib import Path
from typing import cast

import pytest
import redis
from redis.asyncio.cluster import RedisCluster
from redis.exceptions import RedisClusterException

from truloop_assistant.local.embedded_redis import ENV_BIN, RedisClusterServer, RedisServer, find_redis_server
from truloop_assistant.local.redis_launch import redis_version
from truloop_assistant.redis_client import connect


def test_find_redis_server_returns_executable() -> None:
    assert find_redis_server()


def test_set_get_restart_and_stop() -> None:
    with RedisServer(appendonly=True) as server:
        assert server.url == f"redis://127.0.0.1:{server.port}/0"
        client = redis.Redis.from_url(server.url)
        client.set("greeting", "hello")
        assert client.get("greeting") == b"hello"
        client.close()

        port = server.port
        server.restart()
        assert server.port == port
        client = redis.Redis.from_url(server.url)
        assert client.get("greeting") == b"hello"
        client.close()

        data_dir = server.data_dir
        server.stop()
        server.stop()  # idempotent
        assert not server.running
        assert data_dir is not None
        assert not os.path.exists(data_dir)
        with pytest.raises(redis.exceptions.ConnectionError):
            redis.Redis.from_url(server.url, socket_connect_timeout=1).ping()


def test_kill_then_restart_keeps_appendonly_data() -> None:
    with RedisServer(appendonly=True, extra_args=["--appendfsync", "always"]) as server:
        client = redis.Redis.from_url(server.url)
        client.set("k", "v")
        client.close()
        server.kill()
        assert not server.running
        server.restart()
        client = redis.Redis.from_url(server.url)
        assert client.get("k") == b"v"
        client.close()


def test_without_appendonly_data_is_lost_on_restart() -> None:
    with RedisServer() as server:
        client = redis.Redis.from_url(server.url)
        client.set("k", "v")
        client.close()
        server.restart()
        client = redis.Redis.from_url(server.url)
        assert client.get("k") is None
        client.close()


@pytest.mark.parametrize("use_redis_cli", [False, True], ids=["direct", "redis-cli"])
async def test_cluster_spreads_keys_over_three_primaries(use_redis_cli: bool) -> None:
    with RedisClusterServer(use_redis_cli=use_redis_cli) as cluster:
        ports, data_dir = cluster.ports, cluster.data_dir
        assert cluster.url == "redis+cluster://" + ",".join(f"127.0.0.1:{p}" for p in ports)
        assert len(set(ports)) == 3

        # Every node sees the same three primaries, each serving one contiguous third of the slots.
        for port in ports:
            node = redis.Redis(port=port)
            slots = node.execute_command("CLUSTER SLOTS")  # [[first, last, primary, *replicas], ...]
            node.close()
            assert sorted((first, last) for first, last, *_ in slots) == [
                (0, 5460),
                (5461, 10922),
                (10923, 16383),
            ]
            assert sorted(primary[1] for _, _, primary, *_ in slots) == sorted(ports)
            assert all(replicas == [] for _, _, _, *replicas in slots)

        client = cast(RedisCluster, connect(cluster.url))
        try:
            await client.initialize()
            assert sorted(node.port for node in client.get_primaries()) == sorted(ports)

            def owner(key: str) -> int:
                node = client.get_node_from_key(key)
                assert node is not None
                return int(node.port)

            # One key per primary: each is written through the cluster client and lives on its own node.
            keys = {owner(key): key for key in (f"key-{i}" for i in range(100))}
            assert sorted(keys) == sorted(ports)
            for port, key in keys.items():
                assert await client.set(key, f"on {port}")
            for port, key in keys.items():
                assert await client.get(key) == f"on {port}".encode()
                for other in ports:
                    node = redis.Redis(port=other)
                    if other == port:
                        assert node.get(key) == f"on {port}".encode()
                    else:  # another node does not have it, and says who does
                        with pytest.raises(redis.exceptions.MovedError, match=f" 127.0.0.1:{port}$"):
                            node.get(key)
                    node.close()

            # Keys in different slots can't go in one command; the cluster itself refuses them too.
            first, second = keys[ports[0]], keys[ports[1]]
            with pytest.raises(RedisClusterException, match="same key slot"):
                await client.mget(first, second)
            node = redis.Redis(port=ports[0])
            with pytest.raises(redis.exceptions.ClusterCrossSlotError, match="same slot"):
                node.execute_command("MSET", first, "x", second, "y")
            node.close()

            # With a shared hash tag they share a slot: multi-key commands, scripts and transactions work.
            assert await client.mset({"{conv:1}:a": "1", "{conv:1}:b": "2"})
            assert await client.mget("{conv:1}:a", "{conv:1}:b") == [b"1", b"2"]
            script = "return redis.call('incr', KEYS[1]) + redis.call('incr', KEYS[2])"
            assert await client.eval(script, 2, "{conv:1}:a", "{conv:1}:b") == 5
            async with client.pipeline(transaction=True) as tx:
                tx.incr("{conv:1}:a")
                tx.incr("{conv:1}:b")
                assert await tx.execute() == [3, 4]

            # FLUSHDB from the cluster client empties every primary.
            assert await client.dbsize(target_nodes=RedisCluster.PRIMARIES) == 5
            await client.flushdb(target_nodes=RedisCluster.PRIMARIES)
            assert await client.dbsize(target_nodes=RedisCluster.PRIMARIES) == 0
        finally:
            await client.aclose()

    # Stopped: nothing answers any more, and its files are gone.
    assert not cluster.running
    assert data_dir is not None and not await asyncio.to_thread(os.path.exists, data_dir)
    assert not any(listening(port) for port in ports)


def listening(port: int) -> bool:
    """Whether anything accepts connections on 127.0.0.1:``port``.

    (Not with ``redis.Redis(port=...).ping()``: redis-py 8 retries a refused connection for seconds.)
    """
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=1):
            return True
    except OSError:
        return False


def first_line(proc: subprocess.Popen[bytes], timeout: float) -> str:
    """The first line ``proc`` prints on stdout, waiting at most ``timeout`` seconds for it."""
    assert proc.stdout is not None
    with selectors.DefaultSelector() as selector:
        selector.register(proc.stdout, selectors.EVENT_READ)
        if not selector.select(timeout):
            raise AssertionError(f"nothing printed within {timeout}s")
    return proc.stdout.readline().decode().strip()


@pytest.mark.parametrize("args", [[], ["--cluster"]], ids=["standalone", "cluster"])
def test_cli_prints_the_url_first_and_stops_on_sigterm(args: list[str]) -> None:
    proc = subprocess.Popen(
        [sys.executable, "-m", "truloop_assistant.local.embedded_redis", *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    try:
        url = first_line(proc, timeout=20)
        if args:
            assert url.startswith("redis+cluster://127.0.0.1:")
            ports = [int(node.rpartition(":")[2]) for node in url.removeprefix("redis+cluster://").split(",")]
            assert len(ports) == 3
            for port in ports:  # every node is up and the cluster is ready
                node = redis.Redis(port=port, decode_responses=True)
                assert node.execute_command("CLUSTER INFO")["cluster_state"] == "ok"
                node.close()
        else:
            assert url.startswith("redis://127.0.0.1:")
            node = redis.Redis.from_url(url)
            assert node.ping()
            ports = [node.connection_pool.connection_kwargs["port"]]
            node.close()

        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=10) == 0
        assert proc.stderr is not None
        assert proc.stderr.read() == b""
        assert not any(listening(port) for port in ports)  # nothing outlives it
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


def fake_redis_server(directory: Path, version: str) -> Path:
    """A ``redis-server`` in ``directory`` that only reports ``version``, as the real one does."""
    directory.mkdir(parents=True, exist_ok=True)
    binary = directory / "redis-server"
    binary.write_text(
        f"#!/bin/sh\necho 'Redis server v={version} sha=00000000:0 malloc=libc bits=64 build=0'\n"
    )
    binary.chmod(0o755)
    return binary


def test_the_newest_redis_server_is_chosen_over_an_older_one_earlier_on_path(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv(ENV_BIN, raising=False)
    old = fake_redis_server(tmp_path / "venv-bin", "6.2.14")  # the bundled Redis copied into a venv
    new = fake_redis_server(tmp_path / "usr-bin", "7.4.2")
    monkeypatch.setenv("PATH", os.pathsep.join([str(old.parent), str(new.parent)]))
    assert find_redis_server() == str(new)

    # An older one on PATH does not win over the bundled 6.2.14 either.
    older = fake_redis_server(tmp_path / "old-bin", "5.0.7")
    monkeypatch.setenv("PATH", str(older.parent))
    chosen = find_redis_server()
    assert chosen != str(older) and redis_version(chosen) == (6, 2, 14)


def listening_addresses(port: int) -> set[str]:
    """The local addresses of the TCP sockets listening on ``port`` (IPv4 and IPv6), from /proc."""
    found = set()
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        with open(table) as f:
            for line in f.readlines()[1:]:
                local, state = line.split()[1], line.split()[3]
                address, _, hex_port = local.partition(":")
                if state == "0A" and int(hex_port, 16) == port:  # 0A: LISTEN
                    if len(address) == 8:
                        found.add(socket.inet_ntop(socket.AF_INET, bytes.fromhex(address)[::-1]))
                    else:
                        words = [bytes.fromhex(address[i : i + 8])[::-1] for i in range(0, 32, 8)]
                        found.add(socket.inet_ntop(socket.AF_INET6, b"".join(words)))
    return found


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc/net")
def test_the_embedded_server_listens_on_loopback_only_in_protected_mode() -> None:
    with RedisServer() as server:
        assert listening_addresses(server.port) == {"127.0.0.1"}
        client = redis.Redis.from_url(server.url)
        assert client.config_get("protected-mode") == {"protected-mode": "yes"}
        assert client.config_get("bind")["bind"].split() == ["127.0.0.1"]
        client.close()

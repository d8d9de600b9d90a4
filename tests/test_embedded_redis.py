import os

import pytest
import redis

from truloop_assistant.embedded_redis import RedisServer, find_redis_server


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

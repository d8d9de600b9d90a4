"""Does Redis answer at the URL: PING and its version (also used by ``dev`` before it starts one)."""

from __future__ import annotations

from typing import Any

from ...errors import ServiceError
from .outcome import Check

REDIS_TIMEOUT_S = 3.0


class RedisProblem(ServiceError):
    """Redis answered, but not as it should (refused the password, is not Redis, bad URL)."""


class RedisUnreachable(RedisProblem):
    """Nothing answered at the URL (refused, timed out, unknown host, still loading): worth retrying."""


def ping_redis(url: str, *, timeout_s: float = REDIS_TIMEOUT_S) -> str:
    """PING Redis at ``url`` (for a cluster URL, its seeds until one answers); its version.

    Raises :class:`RedisUnreachable` when nothing answers, :class:`RedisProblem` for other failures.
    """
    from redis import exceptions

    last: Exception | None = None
    for client in _clients(url, timeout_s):
        try:
            with client:
                client.ping()
                try:
                    return str(client.info("server").get("redis_version", "unknown version"))
                except exceptions.ResponseError:  # INFO may be forbidden to this user; PING was enough
                    return "unknown version"
        except exceptions.AuthenticationError as exc:
            raise RedisProblem(f"Redis refused the credentials: {exc}") from None
        except (exceptions.ConnectionError, exceptions.TimeoutError, OSError) as exc:
            last = exc
        except exceptions.ResponseError as exc:
            raise RedisProblem(f"Redis refused the connection: {exc}") from None
        except exceptions.RedisError as exc:
            raise RedisProblem(f"what answered is not Redis: {exc}") from None
    raise RedisUnreachable(str(last) if last else "no host in the URL")


def _clients(url: str, timeout_s: float) -> list[Any]:
    """One client per host: the URL's, or each seed of a ``redis+cluster://`` / ``rediss+cluster://`` URL."""
    from redis import Redis
    from redis.backoff import NoBackoff
    from redis.retry import Retry

    options: dict[str, Any] = {
        "socket_connect_timeout": timeout_s,
        "socket_timeout": timeout_s,
        "retry": Retry(NoBackoff(), 0),  # the caller decides when to try again
    }
    from ...redis_client import is_cluster, parse_cluster_url

    try:
        if not is_cluster(url):
            return [Redis.from_url(url, **options)]
        seeds = parse_cluster_url(url)
    except ValueError as exc:
        raise RedisProblem(f"the URL cannot be used: {exc}") from None
    return [
        Redis(
            host=host, port=port, username=seeds.username, password=seeds.password, ssl=seeds.tls, **options
        )
        for host, port in seeds.nodes
    ]


def check_redis(url: str) -> Check:
    """PING and the server's version."""
    from ...config import masked_url

    where = masked_url(url)
    try:
        version = ping_redis(url)
    except RedisUnreachable as exc:
        return Check("redis", "FAIL", f"cannot reach {where} ({exc}): start Redis or fix TRULOOP_REDIS_URL")
    except RedisProblem as exc:
        return Check("redis", "FAIL", f"{where}: {exc}; fix TRULOOP_REDIS_URL")
    return Check("redis", "ok", f"{where} answers (Redis {version})")

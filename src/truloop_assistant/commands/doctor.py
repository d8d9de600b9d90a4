"""``truloop-assistant doctor``: check the settings, Redis, the model's key and the Sendbird token.

One line per check, ``ok``, ``FAIL`` or ``skip``, saying what to fix; exit 1 when a check fails. The
embedding model is asked when ``TRULOOP_EMBEDDING_MODEL`` is set, the Notion token is checked when one
is set, and each MCP server of ``TRULOOP_MCP_SERVERS``.
Light to import: the command line lists it without loading the libraries the checks use.
"""

from __future__ import annotations

import argparse
from collections.abc import Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal
from urllib.parse import quote

from ..errors import ServiceError

if TYPE_CHECKING:
    from ..config import McpServer, SendbirdSettings, Settings

REDIS_TIMEOUT_S = 3.0
SENDBIRD_TIMEOUT_S = 5.0
_USER_NOT_FOUND = 400201
_INVALID_TOKEN_CODES = {400401, 400402}


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
    from ..redis_client import is_cluster, parse_cluster_url

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


@dataclass(frozen=True)
class Check:
    """The outcome of one check, as printed."""

    name: str
    status: Literal["ok", "FAIL", "skip"]
    detail: str

    def render(self) -> str:
        return f"{self.status:<4}  {self.name}: {self.detail}"


def add_parser(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add ``doctor``."""
    subparsers.add_parser(
        "doctor",
        help="check the settings, Redis, the model's key and the Sendbird token, and say what to fix",
        description="Check the settings, Redis, the model's key and the Sendbird token; exit 1 if any fails.",
    )


def run(args: argparse.Namespace) -> int:
    """Print one line per check; 0 when none failed, else 1."""
    failed = False
    for check in checks():
        print(check.render(), flush=True)
        failed = failed or check.status == "FAIL"
    return 1 if failed else 0


def checks() -> Iterator[Check]:
    """The checks in order; each is made even when the settings are invalid, from the values given."""
    from ..config import ConfigError, Settings, given_settings, load_settings, masked_url

    settings: Settings | None = None
    try:
        settings = load_settings()
    except ConfigError as exc:
        yield Check("settings", "FAIL", "; ".join(line.strip() for line in str(exc).splitlines()))
    given: dict[str, Any] = {} if settings else given_settings()

    def value(name: str) -> Any:
        if settings is not None:
            return getattr(settings, name)
        return given.get(name) or Settings.model_fields[name].get_default(call_default_factory=True)

    redis_url = str(value("redis_url"))
    model = str(value("model"))
    channel = str(value("channel"))
    fallbacks = value("fallback_models")
    if isinstance(fallbacks, str):
        fallbacks = [name.strip() for name in fallbacks.split(",") if name.strip()]
    if settings is not None:
        yield Check("settings", "ok", f"channel {channel}, model {model}, Redis {masked_url(redis_url)}")
    yield check_redis(redis_url)
    yield check_models(model, list(fallbacks))
    if embedding_model := value("embedding_model"):
        yield check_embedding(str(embedding_model))
    yield check_notion(value("notion_token"), str(value("notion_api_url")))
    if channel != "sendbird":
        yield Check("sendbird", "skip", f"TRULOOP_CHANNEL={channel}: Sendbird is not used")
    else:
        yield check_sendbird(settings)
    for server in settings.mcp_servers if settings is not None else []:
        yield check_mcp(server)


MCP_TIMEOUT_S = 5.0


def check_mcp(server: McpServer) -> Check:
    """The MCP server answers and lists its tools (as the worker will see them, with the prefix)."""
    import asyncio

    from pydantic_ai.mcp import MCPToolset

    async def tools() -> list[str]:
        toolset: MCPToolset[None] = MCPToolset(str(server.url), headers=dict(server.headers) or None)
        async with asyncio.timeout(MCP_TIMEOUT_S):
            return [tool.name for tool in await toolset.list_tools()]

    name = f"mcp {server.prefix}"
    try:
        names = asyncio.run(tools())
    except Exception as exc:
        reason = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        return Check(
            name,
            "FAIL",
            f"cannot list the tools of {server.url} ({reason[:200]}): start it or fix TRULOOP_MCP_SERVERS; "
            "until then the assistant works without its tools",
        )
    listed = ", ".join(f"{server.prefix}_{n}" for n in names) or "none"
    return Check(name, "ok", f"{server.url} answers with {len(names)} tools: {listed}")


def check_redis(url: str) -> Check:
    """PING and the server's version."""
    from ..config import masked_url

    where = masked_url(url)
    try:
        version = ping_redis(url)
    except RedisUnreachable as exc:
        return Check("redis", "FAIL", f"cannot reach {where} ({exc}): start Redis or fix TRULOOP_REDIS_URL")
    except RedisProblem as exc:
        return Check("redis", "FAIL", f"{where}: {exc}; fix TRULOOP_REDIS_URL")
    return Check("redis", "ok", f"{where} answers (Redis {version})")


def check_models(model: str, fallbacks: list[str]) -> Check:
    """Every model string can be built: known provider, its package installed, its key set."""
    from ..config import VALID_MODELS, model_problem

    named = [("TRULOOP_MODEL", model), *(("TRULOOP_FALLBACK_MODELS", name) for name in fallbacks)]
    found = [(variable, name, problem) for variable, name in named if (problem := model_problem(name))]
    if found:
        detail = "; ".join(f"{variable}={name!r}: {problem}" for variable, name, problem in found)
        if any("prefix" in problem or "provider '" in problem for _, _, problem in found):
            detail += f" ({VALID_MODELS})"
        return Check("model", "FAIL", detail)
    if model == "offline":
        detail = "offline (the built-in rule-based model: no key needed)"
    else:
        detail = f"{model} (provider package and key found; no request sent)"
    if fallbacks:
        detail += f", then {', '.join(fallbacks)}"
    return Check("model", "ok", detail)


EMBEDDING_TIMEOUT_S = 10.0


def check_embedding(model: str) -> Check:
    """With ``TRULOOP_EMBEDDING_MODEL`` set: does the model embed a question (one small request)?"""
    import asyncio

    from ..backends.knowledge.embedding import EmbeddingError, PassageEmbedder

    async def dimensions() -> int:
        async with asyncio.timeout(EMBEDDING_TIMEOUT_S):
            return int((await PassageEmbedder(model).query("Where do visitors park?")).shape[0])

    try:
        found = asyncio.run(dimensions())
    except (EmbeddingError, TimeoutError) as exc:
        reason = str(exc).removeprefix(f"{model}: ") or f"no answer within {EMBEDDING_TIMEOUT_S:g} s"
        return Check(
            "embedding",
            "FAIL",
            f"{model} does not answer ({reason}): fix TRULOOP_EMBEDDING_MODEL or the provider's key "
            "(e.g. OPENAI_API_KEY, OPENAI_BASE_URL); until then knowledge search goes by words only",
        )
    return Check(
        "embedding", "ok", f"{model} answers ({found} dimensions): knowledge search by words and meaning"
    )


NOTION_TIMEOUT_S = 5.0


def check_notion(token: str | None, api_url: str) -> Check:
    """With a token set: does Notion accept it (``GET /v1/users/me``)? Without one: Notion is optional."""
    if not token:
        return Check(
            "notion", "skip", "TRULOOP_NOTION_TOKEN is not set: optional, only kb sync-notion uses it"
        )
    import httpx

    from ..backends.knowledge.notion import INTEGRATIONS_URL, NOTION_VERSION

    base = api_url.rstrip("/")
    try:
        response = httpx.get(
            f"{base}/v1/users/me",
            headers={"Authorization": f"Bearer {token}", "Notion-Version": NOTION_VERSION},
            timeout=NOTION_TIMEOUT_S,
        )
    except httpx.HTTPError as exc:
        return Check(
            "notion",
            "FAIL",
            f"cannot reach Notion at {base} ({exc or type(exc).__name__}): "
            "check TRULOOP_NOTION_API_URL and the network",
        )
    body = _json(response)
    if response.status_code == 200:
        name = body.get("name") or "the integration"
        workspace = (body.get("bot") or {}).get("workspace_name")
        where = f" in workspace {workspace!r}" if workspace else ""
        return Check("notion", "ok", f"the token is accepted: {name!r}{where} (kb sync-notion can run)")
    if response.status_code == 401:
        return Check(
            "notion",
            "FAIL",
            "the token is refused (401): set TRULOOP_NOTION_TOKEN to the integration's Internal Integration "
            f"Secret ({INTEGRATIONS_URL})",
        )
    detail = body.get("message") or response.reason_phrase or "no details"
    return Check("notion", "FAIL", f"Notion at {base} answered {response.status_code}: {detail}")


def _json(response: Any) -> dict[str, Any]:
    try:
        body = response.json()
    except ValueError:
        return {}
    return body if isinstance(body, dict) else {}


def check_sendbird(settings: SendbirdSettings | None) -> Check:
    """GET the bot user with the API token: is the token accepted, does the bot exist?"""
    import httpx
    from pydantic import ValidationError

    from ..config import SendbirdSettings
    from ..errors import validation_problems

    if settings is None:
        try:
            settings = SendbirdSettings()
        except ValidationError as exc:
            lines = validation_problems(exc.errors(), where=lambda loc: f"TRULOOP_{loc.upper()}")
            return Check("sendbird", "FAIL", "; ".join(lines))
    if missing := settings.missing_sendbird():
        return Check("sendbird", "FAIL", f"{' and '.join(missing)} must be set when TRULOOP_CHANNEL=sendbird")
    base = settings.sendbird_base_url
    bot = settings.sendbird_bot_user_id
    try:
        response = httpx.get(
            f"{base}/v3/users/{quote(bot, safe='')}",
            headers={"Api-Token": settings.sendbird_api_token or ""},
            timeout=SENDBIRD_TIMEOUT_S,
        )
    except httpx.HTTPError as exc:
        override = " and TRULOOP_SENDBIRD_API_URL" if settings.sendbird_api_url else ""
        return Check(
            "sendbird",
            "FAIL",
            f"cannot reach Sendbird at {base} ({exc or type(exc).__name__}): "
            f"check TRULOOP_SENDBIRD_APP_ID{override} and the network",
        )
    status, code, message = response.status_code, *_error(response)
    if status == 200:
        return Check("sendbird", "ok", f"the token is accepted and bot user {bot!r} exists at {base}")
    if status in (401, 403) or code in _INVALID_TOKEN_CODES:
        return Check(
            "sendbird",
            "FAIL",
            f"the token is refused ({status}): set TRULOOP_SENDBIRD_API_TOKEN to the master API token "
            f"of application {settings.sendbird_app_id} (dashboard: Settings > Application > General)",
        )
    if status == 404 or code == _USER_NOT_FOUND:
        return Check("sendbird", "FAIL", f"bot user {bot!r} missing: run truloop-assistant sendbird setup")
    return Check("sendbird", "FAIL", f"Sendbird at {base} answered {status}: {message}")


def _error(response: Any) -> tuple[int | None, str]:
    """The Sendbird error code and message of a response (``None`` and the reason when it has none)."""
    try:
        body = response.json()
    except ValueError:
        body = None
    if not isinstance(body, dict):
        return None, response.reason_phrase or "no details"
    code = body.get("code")
    return (code if isinstance(code, int) else None), str(body.get("message") or "no details")

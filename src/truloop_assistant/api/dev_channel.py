"""The local channel of the dev server: a web chat at ``/dev`` and the JSON API behind it."""

from __future__ import annotations

import asyncio
import json
from importlib import resources
from typing import Annotated, Any

from fastapi import APIRouter, Path, Query, Request
from fastapi.responses import HTMLResponse, Response
from pydantic import BaseModel, Field, ValidationError

from ..auth import issue_token
from ..backends.users import RedisUserDirectory, UserProfile
from ..channels.base import AGENT_RPC, AGENT_RPC_SETTLED, InboundMessage
from ..channels.local import LocalChannel
from ..channels.members import LocalMembers
from ..channels.relay import local_direct_channel_url
from ..errors import BadRequest, NotFound
from ..logs import log_context
from ..protocol.files import MAX_FILES_PER_MESSAGE
from ..store import keys
from .budget import redis_budget
from .deps import ServicesDep
from .dev_files import UPLOAD_ID, PostedFile, attachments, keep, served

router = APIRouter(prefix="/dev", tags=["dev"])

MAX_POSTED_CHARS = 100_000
"""What the channel stores at most; a message over ``TRULOOP_MAX_MESSAGE_CHARS`` is shown and explained."""
DEV_TOKEN_TTL_S = 24 * 3600
"""How long the dev page's device tokens are valid (less when ``TRULOOP_JWT_MAX_TTL_S`` is less)."""


class PostMessage(BaseModel):
    user_id: str = Field(min_length=1, max_length=128, examples=["jeff"])
    message: str = Field(
        default="",
        max_length=MAX_POSTED_CHARS,
        examples=["이번 주 일정 알려줘"],
        description="The text; with files, their caption (empty for none). Text, files, or both.",
    )
    files: list[PostedFile] = Field(
        default_factory=list,
        max_length=MAX_FILES_PER_MESSAGE,
        description="Pictures, PDFs and voice notes kept for the channel (POST …/uploads), in order",
    )
    mentioned_user_ids: list[Annotated[str, Field(max_length=128)]] = Field(
        default_factory=list,
        max_length=50,
        description="Who the message mentions, as in Sendbird (@<bot user id> in the text mentions it too)",
    )
    dedup_id: str | None = Field(
        default=None,
        min_length=1,
        max_length=128,
        description="Post again with the same dedup_id (a retry) and the message is shown and run once",
    )


class TokenRequest(BaseModel):
    user_id: str = Field(min_length=1, max_length=128)


def _local(services: ServicesDep) -> LocalChannel:
    if not isinstance(services.channel.chat, LocalChannel):
        raise BadRequest("the dev API needs TRULOOP_CHANNEL=local", code="not_local_channel")
    return services.channel.chat


def _static(name: str) -> str:
    return resources.files(__package__).joinpath("static", name).read_text(encoding="utf-8")


NO_CACHE = {"Cache-Control": "no-cache"}


@router.get("", response_class=HTMLResponse, include_in_schema=False)
async def page() -> HTMLResponse:
    return HTMLResponse(_static("dev.html"), headers=NO_CACHE)


@router.get("/dev.js", include_in_schema=False)
async def script() -> Response:
    return Response(_static("dev.js"), media_type="text/javascript; charset=utf-8", headers=NO_CACHE)


@router.get("/dev.css", include_in_schema=False)
async def stylesheet() -> Response:
    return Response(_static("dev.css"), media_type="text/css; charset=utf-8", headers=NO_CACHE)


@router.post("/api/channels/{channel_url}/messages", status_code=202)
async def post_message(channel_url: str, body: PostMessage, services: ServicesDep) -> dict[str, Any]:
    """Write in the channel as a user; the message is taken as a Sendbird webhook's would be.

    Everyone who wrote in a channel is a member of it, with the assistant. With one person every
    message is a turn; with more, only messages that mention the assistant. A message may carry
    ``files`` (each kept first with ``POST …/uploads``): its text is then their caption, or empty;
    with neither text nor files it is 400 ``empty_message``.

    ``status``: ``queued``; ``duplicate``; ``not_addressed`` (a group message without a mention:
    kept as context, not answered); ``too_long`` or ``rate_limited`` (the user is told why in the
    channel); or ``dropped`` (the conversation has too many waiting messages).
    """
    channel = _local(services)
    if not body.message and not body.files:
        raise BadRequest("a message has text, files, or both", code="empty_message")
    bot = services.settings.sendbird_bot_user_id
    dedup_id = None if body.dedup_id is None else f"in:{body.user_id}:{body.dedup_id}"
    with log_context(channel=channel_url):
        files = await attachments(services, channel_url, body.files)
        async with redis_budget():
            item = await channel.append(
                channel_url, user_id=body.user_id, message=body.message, dedup_id=dedup_id, files=list(files)
            )
            if not item:
                return {"status": "duplicate", "message_id": None}
            if isinstance(services.members.chat, LocalMembers):
                await services.members.chat.joined(channel_url, body.user_id)
            message = InboundMessage(
                message_id=str(item["message_id"]),
                channel_url=channel_url,
                user_id=body.user_id,
                text=body.message,
                files=files,
            )
            mentioned = bot in body.mentioned_user_ids or f"@{bot}" in body.message
            if not await services.admission.addressed(message, listed=None, mentioned=mentioned):
                return {"status": "not_addressed", "message_id": message.message_id}
            status = await services.admission.queue(message)
        return {"status": status, "message_id": message.message_id}


@router.post("/api/channels/{channel_url}/uploads", status_code=201)
async def upload(
    channel_url: str,
    request: Request,
    services: ServicesDep,
    name: str = Query(
        default="", max_length=255, description="The file's name, as the person's device gave it"
    ),
) -> dict[str, Any]:
    """Keep a file for a message of the channel: the body is its bytes, ``Content-Type`` its stated type.

    At most ``TRULOOP_MAX_FILE_BYTES`` (``GET /dev/api/info`` says how many): a bigger one is 413
    ``file_too_large`` and nothing is kept. Answers ``file``, to post in the message's ``files``
    (with the text as its caption, or none), and ``media_type``: the type its bytes show, or null for
    one the assistant does not read (kept all the same, as a chat service keeps any file).
    """
    _local(services)
    return await keep(request, channel_url, name, services)


@router.get("/api/channels/{channel_url}/uploads/{upload_id}")
async def uploaded(
    channel_url: str, services: ServicesDep, upload_id: str = Path(pattern=f"^{UPLOAD_ID}$")
) -> Response:
    """A file kept for the channel (``upload:<upload_id>``), typed by its bytes, to show in the chat."""
    _local(services)
    return await served(services, channel_url, upload_id)


WAIT_STEP_S = 0.1


@router.get("/api/channels/{channel_url}/messages")
async def list_messages(
    channel_url: str,
    services: ServicesDep,
    after: int = Query(default=0, ge=0),
    wait: float = Query(default=0, ge=0, le=30),
    custom_type: str | None = Query(
        default=None, max_length=128, description="only messages of this custom_type (empty: plain text)"
    ),
) -> dict[str, Any]:
    """The channel's messages (user, assistant, agent-rpc) after a message id, and whether it is typing.

    With ``wait`` (seconds, at most 30) it answers as soon as there is a message after ``after``, or
    when the time is up (then with none): a script can wait for the assistant instead of guessing.
    With ``custom_type`` only such messages are listed (and waited for): ``agent-rpc`` for requests
    to the phone, empty for plain text.
    An agent-rpc message also has ``call``: its request's state now (see ``GET /dev/api/calls``), so
    a page shows what can still be answered. A message changed since ``after`` is listed again (ids
    and changes share one sequence): a request's message becomes ``agent-rpc-settled`` (with
    ``updated_seq`` and ``updated_at``) once its call leaves pending, as Sendbird's update does;
    an answer that streams is listed again at each update of its text, its ``data``
    ``{"streaming":true}`` until the last one (``{"streaming":false}``).
    """
    channel = _local(services)
    deadline = asyncio.get_running_loop().time() + wait
    while not (messages := await channel.messages(channel_url, after=after, custom_type=custom_type)):
        if asyncio.get_running_loop().time() >= deadline:
            break
        await asyncio.sleep(WAIT_STEP_S)
    rpc_ids = {m["message_id"]: call_id for m in messages if (call_id := _rpc_id(m)) is not None}
    states = await _call_states(services, list(rpc_ids.values()))
    for m in messages:
        if m["message_id"] in rpc_ids:
            m["call"] = states[rpc_ids[m["message_id"]]]
    return {"messages": messages, "typing": await channel.is_typing(channel_url)}


def _rpc_id(message: dict[str, Any]) -> str | None:
    """The JSON-RPC id of a request's message (open or settled), or None for any other message."""
    if message.get("custom_type") not in (AGENT_RPC, AGENT_RPC_SETTLED):
        return None
    try:
        call_id = json.loads(message.get("data") or "{}").get("id")
    except (ValueError, AttributeError):
        return None
    return call_id if isinstance(call_id, str) and call_id else None


async def _call_states(services: ServicesDep, call_ids: list[str]) -> dict[str, dict[str, str] | None]:
    """What the server knows of each call: its state and whose it is (None once it is forgotten)."""
    async with redis_budget():
        views = await asyncio.gather(*(services.store.get_call(call_id) for call_id in call_ids))
    return {
        call_id: None if view is None else {"state": view.state, "user_id": view.user_id}
        for call_id, view in zip(call_ids, views, strict=True)
    }


MAX_CALL_IDS = 100


@router.get("/api/calls")
async def calls(
    services: ServicesDep,
    call_id: Annotated[list[str], Query(alias="id", max_length=MAX_CALL_IDS)],
) -> dict[str, Any]:
    """The state of device requests by JSON-RPC id (``?id=call_…&id=call_…``): which the phone may answer.

    Each is ``{"state": "pending"|"answered"|"expired"|"superseded", "user_id": <whose call>}``, or
    null for an id the server does not know (never issued, or settled more than 24 h ago).
    """
    _local(services)
    return {"calls": await _call_states(services, list(dict.fromkeys(call_id)))}


@router.get("/api/info")
async def info(services: ServicesDep) -> dict[str, Any]:
    """What the page needs to know: the assistant's user id, how a person's direct channel is named,
    the time zone of people without one in the directory (``TRULOOP_TIMEZONE``), and the largest
    file a message may carry (``TRULOOP_MAX_FILE_BYTES``)."""
    _local(services)
    bot = services.settings.sendbird_bot_user_id
    return {
        "bot_user_id": bot,
        "direct_channel_url": local_direct_channel_url(bot, "{user_id}"),
        "timezone": services.settings.timezone,
        "max_file_bytes": services.settings.max_file_bytes,
    }


MAX_LISTED_USERS = 200


def _person(profile: UserProfile) -> dict[str, Any]:
    return {
        "user_id": profile.user_id,
        "name": profile.name,
        "title": profile.title,
        "timezone": profile.timezone,
    }


@router.get("/api/users")
async def users(services: ServicesDep) -> dict[str, Any]:
    """Members of the user directory to chat as (at most 200, by user id), with their time zones.

    The assistant speaks in a member's own time zone, so the page builds its sample calendar there.
    A directory behind ``TRULOOP_USERS_API_URL`` is not listed (look people up one by one instead).
    """
    _local(services)
    directory = services.backends.users
    if not isinstance(directory, RedisUserDirectory):
        return {"users": []}
    profiles: list[UserProfile] = []
    async with redis_budget():
        async for _, raw in services.redis.hscan_iter(keys.user_profiles(), count=MAX_LISTED_USERS):
            try:
                profiles.append(UserProfile.model_validate_json(raw))
            except ValidationError:
                continue
            if len(profiles) >= MAX_LISTED_USERS:
                break
    return {"users": [_person(p) for p in sorted(profiles, key=lambda p: p.user_id)]}


@router.get("/api/users/{user_id}")
async def user(user_id: str, services: ServicesDep) -> dict[str, Any]:
    """One member of the directory; 404 for anyone else (a guest: the server's time zone applies)."""
    _local(services)
    async with redis_budget():
        profile = await services.backends.users.get_profile(user_id)
    if profile is None:
        raise NotFound(f"{user_id} is not in the user directory", code="unknown_user")
    return _person(profile)


@router.post("/api/token")
async def token(body: TokenRequest, services: ServicesDep) -> dict[str, str]:
    """A device token for a user, signed with the dev server's secret."""
    _local(services)
    settings = services.settings
    assert settings.jwt_secret is not None
    return {
        "token": issue_token(
            settings.jwt_secret,
            body.user_id,
            ttl_s=min(DEV_TOKEN_TTL_S, settings.jwt_max_ttl_s),
            audience=settings.jwt_audience,
            issuer=settings.jwt_issuer,
        )
    }

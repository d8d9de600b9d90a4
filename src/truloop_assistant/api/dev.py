"""The local channel of the dev server: a web chat at ``/dev`` and the JSON API behind it."""

from __future__ import annotations

import asyncio
from importlib import resources
from typing import Annotated, Any

from fastapi import APIRouter, Query
from fastapi.responses import HTMLResponse
from pydantic import BaseModel, Field

from ..auth import issue_token
from ..channels.base import InboundMessage
from ..channels.local import LocalChannel
from ..channels.members import LocalMembers
from ..channels.relay import local_direct_channel_url
from ..errors import BadRequest
from .admission import addressed, queue
from .budget import redis_budget
from .deps import ServicesDep

router = APIRouter(prefix="/dev", tags=["dev"])

MAX_POSTED_CHARS = 100_000
"""What the channel stores at most; a message over ``TRULOOP_MAX_MESSAGE_CHARS`` is shown and explained."""


class PostMessage(BaseModel):
    user_id: str = Field(min_length=1, max_length=128, examples=["jeff"])
    message: str = Field(min_length=1, max_length=MAX_POSTED_CHARS, examples=["이번 주 일정 알려줘"])
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
    if not isinstance(services.channel, LocalChannel):
        raise BadRequest("the dev API needs TRULOOP_CHANNEL=local", code="not_local_channel")
    return services.channel


@router.get("", response_class=HTMLResponse, include_in_schema=False)
async def page() -> str:
    return resources.files(__package__).joinpath("static/dev.html").read_text(encoding="utf-8")


@router.post("/api/channels/{channel_url}/messages", status_code=202)
async def post_message(channel_url: str, body: PostMessage, services: ServicesDep) -> dict[str, Any]:
    """Write in the channel as a user; the message is taken as a Sendbird webhook's would be.

    Everyone who wrote in a channel is a member of it, with the assistant. With one person every
    message is a turn; with more, only messages that mention the assistant (DESIGN §4).

    ``status``: ``queued``; ``duplicate``; ``not_addressed`` (a group message without a mention:
    kept as context, not answered); ``too_long`` or ``rate_limited`` (the user is told why in the
    channel); or ``dropped`` (the conversation has too many waiting messages).
    """
    channel = _local(services)
    bot = services.settings.sendbird_bot_user_id
    dedup_id = None if body.dedup_id is None else f"in:{body.user_id}:{body.dedup_id}"
    async with redis_budget():
        item = await channel.append(
            channel_url, user_id=body.user_id, message=body.message, dedup_id=dedup_id
        )
        if not item:
            return {"status": "duplicate", "message_id": None}
        if isinstance(services.members, LocalMembers):
            await services.members.joined(channel_url, body.user_id)
        message = InboundMessage(
            message_id=str(item["message_id"]),
            channel_url=channel_url,
            user_id=body.user_id,
            text=body.message,
        )
        mentioned = bot in body.mentioned_user_ids or f"@{bot}" in body.message
        if not await addressed(services, message, listed=None, mentioned=mentioned):
            return {"status": "not_addressed", "message_id": message.message_id}
        status = await queue(services, message)
    return {"status": status, "message_id": message.message_id}


WAIT_STEP_S = 0.1


@router.get("/api/channels/{channel_url}/messages")
async def list_messages(
    channel_url: str,
    services: ServicesDep,
    after: int = Query(default=0, ge=0),
    wait: float = Query(default=0, ge=0, le=30),
) -> dict[str, Any]:
    """The channel's messages (user, assistant, agent-rpc) after a message id, and whether it is typing.

    With ``wait`` (seconds, at most 30) it answers as soon as there is a message after ``after``, or
    when the time is up (then with none): a script can wait for the assistant instead of guessing.
    """
    channel = _local(services)
    deadline = asyncio.get_running_loop().time() + wait
    while not (messages := await channel.messages(channel_url, after=after)):
        if asyncio.get_running_loop().time() >= deadline:
            break
        await asyncio.sleep(WAIT_STEP_S)
    return {"messages": messages, "typing": await channel.is_typing(channel_url)}


@router.get("/api/info")
async def info(services: ServicesDep) -> dict[str, str]:
    """What the page needs to know: the assistant's user id, and how a person's direct channel is named."""
    _local(services)
    bot = services.settings.sendbird_bot_user_id
    return {"bot_user_id": bot, "direct_channel_url": local_direct_channel_url(bot, "{user_id}")}


@router.post("/api/token")
async def token(body: TokenRequest, services: ServicesDep) -> dict[str, str]:
    """A device token for a user, signed with the dev server's secret."""
    _local(services)
    assert services.settings.jwt_secret is not None
    return {"token": issue_token(services.settings.jwt_secret, body.user_id)}

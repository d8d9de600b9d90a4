"""The local channel of the dev server: a web chat at ``/dev`` and the JSON API behind it."""

from __future__ import annotations

from importlib import resources
from typing import Any

from fastapi import APIRouter, Query
from fastapi.responses import HTMLResponse
from pydantic import BaseModel, Field

from ..auth import issue_token
from ..channels.base import InboundMessage
from ..channels.local import LocalChannel
from ..errors import BadRequest
from .admission import refuse
from .budget import redis_budget
from .deps import ServicesDep

router = APIRouter(prefix="/dev", tags=["dev"])

MAX_POSTED_CHARS = 100_000
"""What the channel stores at most; a message over ``TRULOOP_MAX_MESSAGE_CHARS`` is shown and explained."""


class PostMessage(BaseModel):
    user_id: str = Field(min_length=1, max_length=128, examples=["jeff"])
    message: str = Field(min_length=1, max_length=MAX_POSTED_CHARS, examples=["이번 주 일정 알려줘"])
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
    """Write in the channel as a user; the message is refused or queued as a Sendbird webhook's would be.

    ``status``: ``queued``, ``duplicate``, ``too_long`` or ``rate_limited`` (the user is told why in
    the channel), or ``dropped`` (the conversation has too many waiting messages).
    """
    channel = _local(services)
    dedup_id = None if body.dedup_id is None else f"in:{body.user_id}:{body.dedup_id}"
    async with redis_budget():
        item = await channel.append(
            channel_url, user_id=body.user_id, message=body.message, dedup_id=dedup_id
        )
        if not item:
            return {"status": "duplicate", "message_id": None}
        message = InboundMessage(
            message_id=str(item["message_id"]),
            channel_url=channel_url,
            user_id=body.user_id,
            text=body.message,
        )
        status = await refuse(services, message) or await services.intake.message(message)
    return {"status": status, "message_id": message.message_id}


@router.get("/api/channels/{channel_url}/messages")
async def list_messages(
    channel_url: str, services: ServicesDep, after: int = Query(default=0, ge=0)
) -> dict[str, Any]:
    """The channel's messages (user, assistant, agent-rpc) after a message id, and whether it is typing."""
    channel = _local(services)
    return {
        "messages": await channel.messages(channel_url, after=after),
        "typing": await channel.is_typing(channel_url),
    }


@router.post("/api/token")
async def token(body: TokenRequest, services: ServicesDep) -> dict[str, str]:
    """A device token for a user, signed with the dev server's secret."""
    _local(services)
    assert services.settings.jwt_secret is not None
    return {"token": issue_token(services.settings.jwt_secret, body.user_id)}

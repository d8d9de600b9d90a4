"""The local channel of the dev server: a web chat at ``/dev`` and the JSON API behind it."""

from __future__ import annotations

import itertools
import time
from importlib import resources
from typing import Any

from fastapi import APIRouter, Query
from fastapi.responses import HTMLResponse
from pydantic import BaseModel, Field

from ..auth import issue_token
from ..channels.base import InboundMessage
from ..channels.local import LocalChannel
from ..errors import BadRequest
from .deps import ServicesDep

router = APIRouter(prefix="/dev", tags=["dev"])

_ids = itertools.count(int(time.time() * 1000))


class PostMessage(BaseModel):
    user_id: str = Field(min_length=1, max_length=128, examples=["jeff"])
    message: str = Field(min_length=1, max_length=4000, examples=["이번 주 일정 알려줘"])


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
    """Write in the channel as a user; the turn is queued exactly as a Sendbird webhook's would be."""
    channel = _local(services)
    item = await channel.append(channel_url, user_id=body.user_id, message=body.message)
    message = InboundMessage(
        message_id=str(item.get("message_id") or next(_ids)),
        channel_url=channel_url,
        user_id=body.user_id,
        text=body.message,
    )
    status = await services.intake.message(message)
    return {"status": status, "message_id": message.message_id}


@router.get("/api/channels/{channel_url}/messages")
async def list_messages(
    channel_url: str, services: ServicesDep, after: int = Query(default=0, ge=0)
) -> dict[str, Any]:
    """The channel's messages (user, assistant and agent-rpc), oldest first, after a message id."""
    return {"messages": await _local(services).messages(channel_url, after=after)}


@router.post("/api/token")
async def token(body: TokenRequest, services: ServicesDep) -> dict[str, str]:
    """A device token for a user, signed with the dev server's secret."""
    _local(services)
    assert services.settings.jwt_secret is not None
    return {"token": issue_token(services.settings.jwt_secret, body.user_id)}

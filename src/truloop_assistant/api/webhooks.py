"""``POST /api/v1/webhooks/sendbird``: verify, filter, de-duplicate, queue — and answer at once."""

from __future__ import annotations

import hashlib
import hmac
import json

from fastapi import APIRouter, Request
from pydantic import ValidationError

from ..agent.runner import InboundMessage
from ..channels.base import AGENT_RPC
from ..errors import BadRequest, Unauthorized
from ..metrics import WEBHOOKS
from ..protocol.sendbird import WebhookEvent
from .body import read_body
from .deps import ServicesDep

router = APIRouter()

MAX_WEBHOOK_BYTES = 1024 * 1024
MESSAGE_SEND = "group_channel:message_send"


def signature_ok(body: bytes, signature: str | None, token: str) -> bool:
    """Hex HMAC-SHA256 of the exact bytes received, keyed with the master API token."""
    if not signature:
        return False
    expected = hmac.new(token.encode(), body, hashlib.sha256).hexdigest()
    return hmac.compare_digest(expected, signature.strip().lower())


@router.post("/api/v1/webhooks/sendbird", tags=["sendbird"])
async def sendbird_webhook(request: Request, services: ServicesDep) -> dict[str, str]:
    """Receive a Sendbird webhook delivery."""
    body = await read_body(request, MAX_WEBHOOK_BYTES)
    token = services.settings.sendbird_api_token
    signature = request.headers.get("x-sendbird-signature") or request.headers.get("x-signature")
    if not token or not signature_ok(body, signature, token):
        WEBHOOKS.labels("bad_signature").inc()
        raise Unauthorized("the x-sendbird-signature header does not match the body", code="bad_signature")
    try:
        event = WebhookEvent.model_validate(json.loads(body))
    except (ValueError, UnicodeDecodeError, ValidationError):
        WEBHOOKS.labels("bad_request").inc()
        raise BadRequest("the body is not a Sendbird webhook event", code="invalid_webhook") from None

    message = to_message(event, bot_user_id=services.settings.sendbird_bot_user_id)
    if message is None:
        WEBHOOKS.labels("ignored").inc()
        return {"status": "ignored"}
    status = await services.intake.message(message)
    WEBHOOKS.labels(status).inc()
    # Never an error to Sendbird for a message we will not run: it would only re-send it.
    return {"status": "ignored" if status == "dropped" else status}


def to_message(event: WebhookEvent, *, bot_user_id: str) -> InboundMessage | None:
    """The user message this event carries, or None when it is not one the assistant answers."""
    if event.category != MESSAGE_SEND or event.type != "MESG":
        return None
    if event.sender is None or event.payload is None or event.channel is None:
        return None
    if event.sender.user_id == bot_user_id or AGENT_RPC in (event.custom_type, event.payload.custom_type):
        return None
    text = event.payload.message.strip()
    if not text:
        return None
    return InboundMessage(
        message_id=str(event.payload.message_id),
        channel_url=event.channel.channel_url,
        user_id=event.sender.user_id,
        text=text,
    )

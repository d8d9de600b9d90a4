"""``POST /api/v1/webhooks/sendbird``: verify, filter, de-duplicate, queue — and answer at once."""

from __future__ import annotations

import hashlib
import hmac

from fastapi import APIRouter, Request
from pydantic import ValidationError

from ..channels.base import AGENT_RPC, InboundMessage
from ..errors import BadRequest, Unauthorized, first_problem
from ..metrics import WEBHOOKS
from ..protocol.jsonrpc import load_json
from ..protocol.sendbird import UserMessageEvent, WebhookEvent, parse_webhook
from .body import read_body
from .budget import redis_budget
from .deps import ServicesDep

router = APIRouter()

MAX_WEBHOOK_BYTES = 1024 * 1024


def signature_ok(body: bytes, signature: str | None, token: str) -> bool:
    """Hex HMAC-SHA256 of the exact bytes received, keyed with the master API token."""
    if not signature:
        return False
    expected = hmac.new(token.encode(), body, hashlib.sha256).hexdigest()
    candidate = signature.strip().lower()
    # compare_digest raises TypeError on non-ASCII str; such a header can never be a hex digest.
    return candidate.isascii() and hmac.compare_digest(expected, candidate)


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
        event = parse_webhook(load_json(body))
    except BadRequest:
        WEBHOOKS.labels("bad_request").inc()
        raise BadRequest("the body is not a Sendbird webhook event", code="invalid_webhook") from None
    except ValidationError as exc:
        WEBHOOKS.labels("bad_request").inc()
        problem = first_problem(exc.errors())
        raise BadRequest(
            f"the body is not a Sendbird webhook event: {problem}", code="invalid_webhook"
        ) from None

    message = to_message(event, bot_user_id=services.settings.sendbird_bot_user_id)
    if message is None:
        WEBHOOKS.labels("ignored").inc()
        return {"status": "ignored"}
    async with redis_budget():
        # Sendbird must never see an error for a message we choose not to run (it would re-send it):
        # the user is told in the channel instead.
        if refusal := await refuse(services, message):
            WEBHOOKS.labels(refusal).inc()
            return {"status": "duplicate" if refusal == "duplicate" else "ignored"}
        status = await services.intake.message(message)
    WEBHOOKS.labels(status).inc()
    # Never an error to Sendbird for a message we will not run: it would only re-send it.
    return {"status": "ignored" if status == "dropped" else status}


async def refuse(services: ServicesDep, message: InboundMessage) -> str | None:
    """Why this message will not be run (a re-delivery, too long, over the rate limit), or None."""
    if await services.inbox.seen(message.channel_url, message.message_id):
        return "duplicate"  # a re-delivery must not count against the user's rate
    settings = services.settings
    if len(message.text) > settings.max_message_chars:
        await services.notices.send(
            message, "too_long", limit=settings.max_message_chars, length=len(message.text)
        )
        return "too_long"
    rate = await services.limiter.hit(message.user_id, scope="turns")
    if not rate.allowed:
        await services.notices.send(message, "rate_limited", window_s=services.limiter.window_s(), once=True)
        return "rate_limited"
    return None


def to_message(event: WebhookEvent, *, bot_user_id: str) -> InboundMessage | None:
    """The user message this event carries, or None when it is not one the assistant answers."""
    if not isinstance(event, UserMessageEvent):
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

"""``POST /api/v1/webhooks/sendbird``: verify, filter, de-duplicate, queue — and answer at once.

A person's edit or deletion of a message goes to :mod:`~..pipeline.revisions`; the assistant's own
(its requests are updated as their calls settle) are ignored without a word to Redis.
"""

from __future__ import annotations

import hashlib
import hmac
import logging
import time

from fastapi import APIRouter, Request
from pydantic import ValidationError

from ..channels.base import AGENT_RPC, AGENT_RPC_SETTLED, InboundMessage
from ..config import reveal
from ..errors import BadRequest, Unauthorized, first_problem
from ..logs import log_context
from ..metrics import WEBHOOK_ACK_SECONDS, WEBHOOKS
from ..pipeline.admission import outlived_its_mark
from ..pipeline.audience import from_delivery
from ..pipeline.revisions import Revisions
from ..protocol.jsonrpc import load_json
from ..protocol.webhook_payload import (
    FileMessageEvent,
    MessageDeleteEvent,
    MessageUpdateEvent,
    UserMessageEvent,
    WebhookEvent,
    event_errors,
    parse_webhook,
)
from ..services import Services
from ..store.admissions import Decision
from ..store.reads import run_writes
from . import openapi
from .body import read_body
from .budget import redis_budget
from .deps import services_of

log = logging.getLogger(__name__)

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


@router.post(
    "/api/v1/webhooks/sendbird",
    tags=["sendbird"],
    responses=openapi.WEBHOOK["responses"],
    openapi_extra=openapi.WEBHOOK["openapi_extra"],
)
async def sendbird_webhook(request: Request) -> dict[str, str]:
    """Receive a Sendbird webhook delivery."""
    started = time.perf_counter()
    try:
        return await _receive(request, services_of(request))
    finally:
        WEBHOOK_ACK_SECONDS.observe(time.perf_counter() - started)


async def _receive(request: Request, services: Services) -> dict[str, str]:
    body = await read_body(request, MAX_WEBHOOK_BYTES)
    token = reveal(services.settings.sendbird_api_token)
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
        problem = first_problem(event_errors(exc))
        raise BadRequest(
            f"the body is not a Sendbird webhook event: {problem}", code="invalid_webhook"
        ) from None
    with log_context(channel=_channel_of(event)):
        return await _dispatch(services, event)


def _channel_of(event: WebhookEvent) -> str | None:
    """The channel a message was sent in (what its log lines carry)."""
    if isinstance(event, (UserMessageEvent, FileMessageEvent)) and event.channel is not None:
        return event.channel.channel_url
    if isinstance(event, (MessageUpdateEvent, MessageDeleteEvent)):
        return event.channel.channel_url
    return None


async def _dispatch(services: Services, event: WebhookEvent) -> dict[str, str]:
    """Hand a message to admission, or note why it is not one (a verified, parsed delivery)."""
    bot = services.settings.sendbird_bot_user_id
    if isinstance(event, (MessageUpdateEvent, MessageDeleteEvent)):
        return await _revise(services, event, bot_user_id=bot)
    if isinstance(event, (UserMessageEvent, FileMessageEvent)) and _too_old(event):
        WEBHOOKS.labels("too_old").inc()
        if isinstance(event, UserMessageEvent):
            await _note(services, event, "too_old")
        return {"status": "ignored"}
    if isinstance(event, UserMessageEvent):
        message = to_message(event, bot_user_id=bot)
        if message is not None:
            return await _take(services, event, message, bot_user_id=bot)
        if event.sender.user_id == bot:
            await _note(services, event, "from_bot")
    elif isinstance(event, FileMessageEvent) and (message := file_message(event, bot_user_id=bot)):
        return await _take(services, event, message, bot_user_id=bot)
    WEBHOOKS.labels("ignored").inc()
    return {"status": "ignored"}


async def _take(
    services: Services,
    event: UserMessageEvent | FileMessageEvent,
    message: InboundMessage,
    *,
    bot_user_id: str,
) -> dict[str, str]:
    """Queue a user message when it is addressed to the assistant, or when only a look-up of its
    channel can say (the worker looks, without holding up Sendbird's delivery)."""
    listed, supergroup = event.member_ids(), event.channel is not None and event.channel.is_super
    heard = from_delivery(
        listed=listed, mentioned=event.mentions(bot_user_id), supergroup=supergroup, bot_user_id=bot_user_id
    )
    async with redis_budget():
        if heard is None:  # only a look-up can say: the worker does it, Sendbird gets its answer now
            status = await services.admission.queue(message, undecided=True)
        elif not await services.admission.keep(message, heard, listed=listed, supergroup=supergroup):
            WEBHOOKS.labels("not_addressed").inc()
            return {"status": "ignored"}
        else:
            status = await services.admission.queue(message, group=supergroup or len(listed or ()) > 2)
    WEBHOOKS.labels(status).inc()
    # Never an error to Sendbird for a message we will not run (too long, over the rate limit, too
    # many waiting): it would only re-send it. The user is told in the channel instead.
    return {"status": status if status in ("queued", "duplicate") else "ignored"}


async def _revise(
    services: Services, event: MessageUpdateEvent | MessageDeleteEvent, *, bot_user_id: str
) -> dict[str, str]:
    """Apply a person's edit or deletion of their message. Sendbird may send it again: both are the
    same change made twice (nothing is queued), so a re-send changes nothing more."""
    message = revised_message(event, bot_user_id=bot_user_id)
    if message is None:
        WEBHOOKS.labels("ignored").inc()
        return {"status": "ignored"}
    revisions = Revisions(
        services.redis,
        services.history,
        services.notices,
        max_message_chars=services.settings.max_message_chars,
    )
    async with redis_budget():
        if isinstance(event, MessageDeleteEvent):
            where = await revisions.delete(message)
        else:
            where = await revisions.edit(message)
    WEBHOOKS.labels("deleted" if isinstance(event, MessageDeleteEvent) else "edited").inc()
    log.info("message %s in %s %s (%s)", message.message_id, message.channel_url, _done(event), where)
    return {"status": "revised"}


def _done(event: MessageUpdateEvent | MessageDeleteEvent) -> str:
    return "deleted" if isinstance(event, MessageDeleteEvent) else "edited"


def revised_message(
    event: MessageUpdateEvent | MessageDeleteEvent, *, bot_user_id: str
) -> InboundMessage | None:
    """The person's message an edit or deletion is of (an edit's with its new text, a deletion's with
    none); None for the assistant's own messages and requests, and for an edit that leaves no text (a
    file's, another type's)."""
    own = {AGENT_RPC, AGENT_RPC_SETTLED} & {event.custom_type, event.payload.custom_type}
    if event.sender.user_id == bot_user_id or own:
        return None
    text = ""
    if isinstance(event, MessageUpdateEvent):
        text = event.payload.message.strip()
        if event.type not in (None, "MESG") or not text:
            return None
    return InboundMessage(
        message_id=str(event.payload.message_id),
        channel_url=event.channel.channel_url,
        user_id=event.sender.user_id,
        text=text,
    )


async def _note(services: Services, event: UserMessageEvent, decision: Decision) -> None:
    """Note what was decided of a message the webhook does not hand to admission (for ``inspect``)."""
    message = InboundMessage(
        message_id=str(event.payload.message_id),
        channel_url=event.channel.channel_url,
        user_id=event.sender.user_id,
        text="",
    )
    async with redis_budget():
        await run_writes(services.redis, services.admission.decided(message, decision))


def _too_old(event: UserMessageEvent | FileMessageEvent) -> bool:
    """Whether the message was sent so long ago that its re-delivery mark may be gone (a replay)."""
    payload = event.payload
    if payload is None or (age := outlived_its_mark(payload.created_at)) is None:
        return False
    log.warning(
        "ignored message %s in %s: sent %.1f h ago, older than a re-delivery is remembered "
        "(a delivery replayed?)",
        payload.message_id,
        event.channel.channel_url if event.channel is not None else "(no channel)",
        age / 3600,
    )
    return True


def to_message(event: UserMessageEvent, *, bot_user_id: str) -> InboundMessage | None:
    """The turn this user message is, or None when it is not one the assistant answers."""
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
        sender_name=event.sender.shown_name,
    )


def file_message(event: FileMessageEvent, *, bot_user_id: str) -> InboundMessage | None:
    """The turn a file message is (its files, with its text as their caption), or None: not one the
    assistant answers (its own, a request's, one that names no file it can fetch)."""
    sender, channel, payload = event.sender, event.channel, event.payload
    if sender is None or channel is None or payload is None or not payload.files:
        return None
    if sender.user_id == bot_user_id or AGENT_RPC == payload.custom_type:
        return None
    return InboundMessage(
        message_id=str(payload.message_id),
        channel_url=channel.channel_url,
        user_id=sender.user_id,
        text=payload.message.strip(),
        files=tuple(payload.files),
        sender_name=sender.shown_name,
    )

"""``POST /api/v1/webhooks/twilio``: a guest's text message (and ``…/status``: how a text fared).

Each request is checked as Twilio signs it (``X-Twilio-Signature``: the HMAC-SHA1 of the URL Twilio
called and the sorted form parameters, keyed with the auth token, as the official ``twilio``
package's ``RequestValidator`` computes it), over ``TRULOOP_PUBLIC_URL`` and the path: a missing or
wrong signature, or another account's message, is 403 and nothing runs. A text is answered at once
with TwiML: empty, or one line of the server's own (help; no invitation for this number). STOP and
its kin opt the number out, START opts it back in; any other text from an invited guest is admitted
as a message of their SMS conversation, and the guest agent's answer goes out by SMS.
"""

from __future__ import annotations

import logging
import re
from urllib.parse import parse_qsl
from xml.sax.saxutils import escape

from fastapi import APIRouter, Request, Response
from starlette.datastructures import ImmutableMultiDict
from twilio.request_validator import RequestValidator

from ..channels.base import InboundMessage
from ..channels.sms_keywords import keyword_of
from ..config import reveal
from ..errors import BadRequest, Forbidden, NotFound
from ..i18n.sms_texts import SMS_HELP, SMS_NOT_INVITED, sms_language
from ..i18n.texts import TEXT_ONLY
from ..logs import log_context
from ..protocol.addresses import phone_of, phone_person, sms_channel
from ..services import Services
from ..store.sms_numbers import SmsNumbers
from .body import read_body
from .budget import redis_budget
from .deps import services_of

log = logging.getLogger(__name__)

router = APIRouter()

INBOUND_PATH = "/api/v1/webhooks/twilio"
STATUS_PATH = "/api/v1/webhooks/twilio/status"
MAX_BYTES = 64 * 1024
"""Far over any Twilio webhook (a text's body is at most 1,600 characters)."""
E164 = re.compile(r"^\+[1-9][0-9]{6,14}$")
FAILED = frozenset({"failed", "undelivered"})
"""The ``MessageStatus`` values of a text that did not reach the phone (Twilio's Message resource)."""
XML_HEAD = '<?xml version="1.0" encoding="UTF-8"?>'

Form = ImmutableMultiDict[str, str]


def twiml(message: str | None = None) -> Response:
    """Twilio's answer: an empty ``<Response/>``, or one ``<Message>`` texted back to the sender."""
    inner = "<Response/>" if message is None else f"<Response><Message>{escape(message)}</Message></Response>"
    return Response(XML_HEAD + inner, media_type="text/xml")


def sms_numbers(request: Request) -> SmsNumbers:
    """The app's :class:`SmsNumbers`, made once on first use from the app's Redis."""
    state = request.app.state
    numbers: SmsNumbers | None = getattr(state, "sms_numbers", None)
    if numbers is None:
        numbers = state.sms_numbers = SmsNumbers(services_of(request).redis)
    return numbers


@router.post(INBOUND_PATH, tags=["twilio"], response_class=Response)
async def twilio_inbound(request: Request) -> Response:
    """Receive a text a guest sent to the assistant's number (Twilio's incoming-message webhook)."""
    services = services_of(request)
    form = await verified_form(request, services)
    sid, number = _required(form, "MessageSid"), _number(form, "From")
    message = InboundMessage(
        message_id=sid,
        channel_url=sms_channel(number),
        user_id=phone_person(number),
        text=form.get("Body", "").strip(),
    )
    with log_context(channel=message.channel_url):
        async with redis_budget():
            reply = await answer(services, sms_numbers(request), message)
    return twiml(reply)


async def answer(services: Services, numbers: SmsNumbers, message: InboundMessage) -> str | None:
    """What to text back at once (None: nothing), once the message is handled."""
    number = phone_of(message.user_id) or ""
    keyword = keyword_of(message.text)
    if keyword == "opt_out":
        await numbers.opt_out(number)
        log.info("%s opted out of text messages", message.user_id)
        return None  # Twilio confirms a STOP itself
    if keyword == "help":
        return SMS_HELP(sms_language(message.text, number, keyword=True))
    if await numbers.opted_out(number):
        if keyword == "opt_in":
            await numbers.opt_in(number)
            log.info("%s opted in to text messages again", message.user_id)
        else:  # no answer could reach them: nothing runs until they text START
            log.info("message %s from %s, who opted out, is not run", message.message_id, message.user_id)
        return None
    if not await services.backends.events.list_invited(message.user_id):
        log.info("message %s from %s: no invitation for the number", message.message_id, message.user_id)
        return SMS_NOT_INVITED(sms_language(message.text, number))
    if not message.text:  # a picture alone
        return TEXT_ONLY(sms_language(message.text, number))
    status = await services.admission.direct(message)
    log.info("message %s from %s: %s", message.message_id, message.user_id, status)
    return None


@router.post(STATUS_PATH, tags=["twilio"], response_class=Response)
async def twilio_status(request: Request) -> Response:
    """Receive Twilio's report of how a text fared (its ``StatusCallback``): a failure is kept (the
    organizer's view of the event says so) until a later text is delivered."""
    services = services_of(request)
    form = await verified_form(request, services)
    sid, status = _required(form, "MessageSid"), _required(form, "MessageStatus")
    if status in FAILED:
        number = _number(form, "To")
        raw_code = form.get("ErrorCode", "")
        code = int(raw_code) if raw_code.isdigit() else None
        log.warning("text %s to %s was %s (Twilio error %s)", sid, phone_person(number), status, code)
        async with redis_budget():
            await sms_numbers(request).note_failure(number, status=status, error_code=code, message_sid=sid)
            # The conversation's last failure too: ``inspect`` and the admin API show it.
            error = f"text {sid} was {status}" + (f" (Twilio error {code})" if code else "")
            await services.ledger.note_failure(sms_channel(number), f"sms:{sid}", error)
    elif status == "delivered":  # texts reach the number again: an earlier failure no longer says so
        async with redis_budget():
            await sms_numbers(request).delivered(_number(form, "To"))
    return Response(status_code=200)


async def verified_form(request: Request, services: Services) -> Form:
    """The form Twilio posted, once its signature and account are checked (404 while SMS is off)."""
    settings = services.settings
    if settings.sms != "twilio":
        raise NotFound("text messages are off (TRULOOP_SMS=off)", code="sms_off")
    body = await read_body(request, MAX_BYTES)
    form: Form = ImmutableMultiDict(parse_qsl(body.decode("utf-8", "replace"), keep_blank_values=True))
    url = settings.public_base + request.url.path + (f"?{request.url.query}" if request.url.query else "")
    signature = request.headers.get("x-twilio-signature", "")
    token = reveal(settings.twilio_auth_token)
    if not signature or not token or not RequestValidator(token).validate(url, form, signature):
        raise Forbidden(
            f"the X-Twilio-Signature header does not match the request to {url}", code="bad_signature"
        )
    if form.get("AccountSid") != settings.twilio_account_sid:
        raise Forbidden("the request is for another Twilio account", code="wrong_account")
    return form


def _required(form: Form, name: str) -> str:
    value = form.get(name, "").strip()
    if not value:
        raise BadRequest(f"the form has no {name}: not a Twilio webhook", code="invalid_webhook")
    return value


def _number(form: Form, name: str) -> str:
    value = _required(form, name)
    if not E164.match(value):
        raise BadRequest(
            f"{name} is not a phone number in E.164 (+ and digits): {value!r}", code="invalid_webhook"
        )
    return value

"""A local stand-in for Twilio's Messages API, and for the webhooks Twilio sends: signed as Twilio signs.

What each behaviour is based on:

- ``POST /2010-04-01/Accounts/{AccountSid}/Messages.json``, form-encoded, HTTP basic auth with the
  Account SID and auth token (twilio.com/docs/messaging/api/message-resource, "Create a Message
  resource"; twilio.com/docs/usage/requests-to-twilio). A wrong or missing credential is 401 with code
  20003 "Authenticate" (twilio.com/docs/errors/20003).
- An error answer is JSON ``{"code", "message", "more_info", "status"}``
  (twilio.com/docs/usage/troubleshooting/debugging-your-application, "Debugging calls to the REST
  API"): no ``To`` is 400 with 21604, no ``Body`` (and no media) 400 with 21602, neither ``From`` nor
  ``MessagingServiceSid`` 400 with 21603, a ``To`` that is no phone number 400 with 21211
  (twilio.com/docs/errors/21211), and a number that texted STOP 400 with 21610 "Attempt to send to
  unsubscribed recipient" (help.twilio.com, "Twilio support for opt-out keywords (SMS STOP
  filtering)": Twilio blocks the number when it receives STOP and refuses later sends with 21610;
  START, YES and UNSTOP lift the block).
- A created message is 201 with the Message resource's JSON: ``sid`` ("SM" and 32 hex digits),
  ``status`` ``queued`` (``accepted`` and ``from`` null through a Messaging Service), ``num_segments``
  as a string (``"0"`` through a Messaging Service, which assigns the sender later), ``direction``
  ``outbound-api``, RFC 2822 dates, ``uri`` (the Message resource's property table).
- 429 carries code 20429 and ``Retry-After`` (twilio.com/docs/errors/20429: "never processed and
  always safe to retry"); 500 and 503 carry 20500 and 20503 (the error dictionary).
- Webhooks (an incoming text, a status callback) are form posts signed with ``X-Twilio-Signature``:
  base64 of the HMAC-SHA1, keyed with the auth token, of the URL Twilio calls followed by every POST
  parameter's name and value, sorted by name (twilio.com/docs/usage/webhooks/webhooks-security). It is
  computed here from that description, not with the ``twilio`` package the server checks it with.
- An incoming text's parameters: MessageSid, SmsSid, SmsMessageSid, AccountSid, MessagingServiceSid,
  From, To, Body, NumMedia, NumSegments, SmsStatus ``received``, ApiVersion and the From/To geography
  (twilio.com/docs/messaging/guides/webhook-request). A status callback's: MessageSid, SmsSid,
  MessageStatus, SmsStatus, AccountSid, From, To, ApiVersion, and ErrorCode for ``failed`` and
  ``undelivered`` (twilio.com/docs/messaging/guides/outbound-message-status-in-status-callbacks).

Segments are counted here on their own (GSM-7: 160, else 153 a part; UCS-2: 70, else 67, in UTF-16
units), not with the server's ``sms_segments``: a mistake there must show, not be repeated.
"""

from __future__ import annotations

import asyncio
import base64
import hashlib
import hmac
import re
import secrets
import time
from dataclasses import dataclass, field
from email.utils import formatdate
from typing import Any
from urllib.parse import parse_qsl, urlsplit

import httpx
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

ACCOUNT_SID = "AC" + "0123456789abcdef" * 2
AUTH_TOKEN = "twilio-test-auth-token-0123456789"
FROM_NUMBER = "+15005550006"
E164 = re.compile(r"^\+[1-9][0-9]{6,14}$")
OPT_OUT_WORDS = {"STOP", "STOPALL", "UNSUBSCRIBE", "CANCEL", "END", "QUIT", "REVOKE", "OPTOUT"}
OPT_IN_WORDS = {"START", "YES", "UNSTOP"}
_GSM = set(
    "@£$¥èéùìòÇ\nØø\rÅåΔ_ΦΓΛΩΠΨΣΘΞÆæßÉ !\"#¤%&'()*+,-./0123456789:;<=>?"
    "¡ABCDEFGHIJKLMNOPQRSTUVWXYZÄÖÑÜ§¿abcdefghijklmnopqrstuvwxyzäöñüà"
)
_GSM_EXT = set("\f^{}\\[~]|€")


def count_segments(body: str) -> int:
    """Segments as carriers (and Twilio's ``num_segments``) count them; pairs are never split."""
    gsm = all(c in _GSM or c in _GSM_EXT for c in body)
    costs = [2 if c in _GSM_EXT else 1 for c in body] if gsm else [2 if ord(c) > 0xFFFF else 1 for c in body]
    single, part = (160, 153) if gsm else (70, 67)
    if sum(costs) <= single:
        return 1
    count, used = 1, 0
    for cost in costs:
        if used + cost > part:
            count, used = count + 1, 0
        used += cost
    return count


def twilio_signature(token: str, url: str, params: dict[str, str]) -> str:
    """``X-Twilio-Signature`` of a form post to ``url`` (see the module docstring)."""
    signed = url + "".join(name + params[name] for name in sorted(params))
    return base64.b64encode(hmac.new(token.encode(), signed.encode(), hashlib.sha1).digest()).decode()


def _sid(prefix: str) -> str:
    return prefix + secrets.token_hex(16)


def _error(status: int, code: int, message: str, headers: dict[str, str] | None = None) -> JSONResponse:
    body = {"code": code, "message": message, "more_info": f"https://www.twilio.com/docs/errors/{code}"}
    return JSONResponse(body | {"status": status}, status_code=status, headers=headers)


@dataclass
class Arrival:
    """A Messages API request as it arrived (refused ones too), with what it was answered."""

    form: dict[str, str]
    status: int
    at: float = field(default_factory=time.monotonic)


@dataclass
class Signed:
    """A webhook as Twilio would post it: where, its form, and its headers (the signature among them)."""

    url: str
    form: dict[str, str]
    headers: dict[str, str]

    @property
    def path(self) -> str:
        parts = urlsplit(self.url)
        return parts.path + (f"?{parts.query}" if parts.query else "")


@dataclass
class FakeTwilio:
    account_sid: str = ACCOUNT_SID
    auth_token: str = AUTH_TOKEN
    url: str = ""
    messages: list[dict[str, Any]] = field(default_factory=list)
    """Every message created (the Message resource as answered, ``status_callback`` beside it)."""
    arrivals: list[Arrival] = field(default_factory=list)
    """Every request to the Messages API, in arrival order."""
    failures: list[tuple[int, float]] = field(default_factory=list)
    """(status, Retry-After seconds) to answer the next creations with: 429, 500 or 503."""
    account_status: str = "active"
    """The account's ``status``: ``active``, or ``suspended`` / ``closed`` (it sends nothing then)."""
    opted_out: set[str] = field(default_factory=set)
    """Numbers that texted STOP (see :meth:`inbound`): a send to them is refused with 21610."""
    _changed: asyncio.Condition | None = None

    def app(self) -> Starlette:
        path = "/2010-04-01/Accounts/{account}/Messages.json"
        return Starlette(
            routes=[
                Route(path, self._create, methods=["POST"]),
                Route("/2010-04-01/Accounts/{account}.json", self._account, methods=["GET"]),
            ]
        )

    async def _account(self, request: Request) -> JSONResponse:
        """The Account resource (https://www.twilio.com/docs/iam/api/account: ``sid``, ``friendly_name``,
        ``status`` one of active, suspended, closed); 401 (20003) for credentials Twilio refuses, 404
        (20404) for an account the credentials do not own."""
        if request.path_params["account"] != self.account_sid:
            return _error(404, 20404, "The requested resource was not found")
        if not self._authorized(request):
            return _error(401, 20003, "Authenticate")
        return JSONResponse(
            {
                "sid": self.account_sid,
                "friendly_name": "Truloop guests",
                "status": self.account_status,
                "type": "Full",
                "owner_account_sid": self.account_sid,
            }
        )

    async def _create(self, request: Request) -> JSONResponse:
        form = dict(parse_qsl((await request.body()).decode(), keep_blank_values=True))
        response = self._answer(request, form)
        self.arrivals.append(Arrival(form, response.status_code))
        cond = self._condition()
        async with cond:
            cond.notify_all()
        return response

    def _answer(self, request: Request, form: dict[str, str]) -> JSONResponse:
        if not self._authorized(request):
            return _error(401, 20003, "Authenticate")
        if self.failures:
            status, retry_after = self.failures.pop(0)
            if status == 429:
                message = "Too many requests. Please retry according to the Retry-After response header."
                return _error(429, 20429, message, {"Retry-After": f"{retry_after:g}"})
            return _error(
                status, 20000 + status, "Service Unavailable" if status == 503 else "Internal Error"
            )
        to, body = form.get("To", ""), form.get("Body", "")
        service = form.get("MessagingServiceSid")
        if not to:
            return _error(400, 21604, "A 'To' phone number is required.")
        if not body:
            return _error(400, 21602, "Message body is required.")
        if not form.get("From") and not service:
            return _error(400, 21603, "A 'From' phone number is required.")
        if not E164.match(to):
            return _error(400, 21211, f"The 'To' number {to} is not a valid phone number.")
        if to in self.opted_out:
            return _error(400, 21610, "Attempt to send to unsubscribed recipient")
        return JSONResponse(self._created(form), status_code=201)

    def _authorized(self, request: Request) -> bool:
        scheme, _, encoded = request.headers.get("authorization", "").partition(" ")
        try:
            user, _, password = base64.b64decode(encoded).decode().partition(":")
        except ValueError:
            return False
        return (
            scheme.lower() == "basic"
            and hmac.compare_digest(user, self.account_sid)
            and hmac.compare_digest(password, self.auth_token)
            and request.path_params["account"] == self.account_sid
        )

    def _created(self, form: dict[str, str]) -> dict[str, Any]:
        sid, now = _sid("SM"), formatdate(usegmt=True)
        service = form.get("MessagingServiceSid")
        message = {
            "account_sid": self.account_sid,
            "api_version": "2010-04-01",
            "body": form["Body"],
            "date_created": now,
            "date_sent": None,
            "date_updated": now,
            "direction": "outbound-api",
            "error_code": None,
            "error_message": None,
            "from": None if service else form["From"],
            "messaging_service_sid": service,
            "num_media": "0",
            "num_segments": "0" if service else str(count_segments(form["Body"])),
            "price": None,
            "price_unit": "USD",
            "sid": sid,
            "status": "accepted" if service else "queued",
            "subresource_uris": {
                "media": f"/2010-04-01/Accounts/{self.account_sid}/Messages/{sid}/Media.json"
            },
            "to": form["To"],
            "uri": f"/2010-04-01/Accounts/{self.account_sid}/Messages/{sid}.json",
        }
        self.messages.append(message | {"status_callback": form.get("StatusCallback")})
        return message

    # -- what a test waits for

    def _condition(self) -> asyncio.Condition:
        if self._changed is None:
            self._changed = asyncio.Condition()
        return self._changed

    async def wait_for_messages(
        self, n: int, *, to: str | None = None, timeout: float = 10.0
    ) -> list[dict[str, Any]]:
        """Wait until ``n`` messages were created (to ``to``, when given); fail with what was seen."""

        def sent() -> list[dict[str, Any]]:
            return [m for m in self.messages if to is None or m["to"] == to]

        cond = self._condition()
        try:
            async with asyncio.timeout(timeout):
                async with cond:
                    await cond.wait_for(lambda: len(sent()) >= n)
        except TimeoutError:
            seen = [(m["to"], m["body"]) for m in self.messages]
            raise AssertionError(f"timed out waiting for {n} message(s); got {seen}") from None
        return sent()

    # -- webhooks, as Twilio posts them

    def sign(self, url: str, form: dict[str, str]) -> Signed:
        headers = {
            "content-type": "application/x-www-form-urlencoded",
            "x-twilio-signature": twilio_signature(self.auth_token, url, form),
            "i-twilio-idempotency-token": secrets.token_hex(16),
        }
        return Signed(url, form, headers)

    def inbound(
        self, url: str, *, sender: str, body: str, to: str = FROM_NUMBER, sid: str | None = None
    ) -> Signed:
        """The incoming-message webhook Twilio posts to ``url`` when ``sender`` texts ``body`` to ``to``.
        A STOP (or START) changes Twilio's own block of ``sender`` first, as Twilio does."""
        word = "".join(body.split()).upper()
        if word in OPT_OUT_WORDS:
            self.opted_out.add(sender)
        elif word in OPT_IN_WORDS:
            self.opted_out.discard(sender)
        message_sid = sid or _sid("SM")
        form = {
            "ToCountry": "US",
            "ToState": "CA",
            "SmsMessageSid": message_sid,
            "NumMedia": "0",
            "ToCity": "",
            "FromZip": "",
            "SmsSid": message_sid,
            "FromState": "",
            "SmsStatus": "received",
            "FromCity": "",
            "Body": body,
            "FromCountry": "KR" if sender.startswith("+82") else "US",
            "To": to,
            "ToZip": "",
            "NumSegments": str(count_segments(body)),
            "MessageSid": message_sid,
            "AccountSid": self.account_sid,
            "From": sender,
            "ApiVersion": "2010-04-01",
        }
        return self.sign(url, form)

    def status(self, message: dict[str, Any], status: str, *, error_code: int | None = None) -> Signed:
        """The status callback Twilio posts to the message's ``StatusCallback`` as its status changes."""
        url = message["status_callback"]
        assert url, "the message was sent without a StatusCallback"
        form = {
            "SmsSid": message["sid"],
            "SmsStatus": status,
            "MessageStatus": status,
            "To": message["to"],
            "MessageSid": message["sid"],
            "AccountSid": self.account_sid,
            "From": message["from"] or FROM_NUMBER,
            "ApiVersion": "2010-04-01",
        }
        if error_code is not None:
            form["ErrorCode"] = str(error_code)
        return self.sign(url, form)


async def post_signed(http: httpx.AsyncClient, signed: Signed, **overrides: Any) -> httpx.Response:
    """Post a signed webhook to the server ``http`` reaches (its path; the URL it was signed over may be
    the public one, in front of the server)."""
    headers = {**signed.headers, **overrides.pop("headers", {})}
    form = {**signed.form, **overrides.pop("form", {})}
    return await http.post(signed.path, data=form, headers=headers)

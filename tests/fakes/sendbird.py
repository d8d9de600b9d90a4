"""A local stand-in for the Sendbird Platform API: records sent messages, fails on request.

It also keeps users and group channels in memory (``GET/POST /v3/users``, ``PUT /v3/users/{id}``,
``POST /v3/group_channels`` with distinct channels; a user's channels listed and counted in
``sendbird_user_channels``) and records typing indicators (``POST/DELETE
/v3/group_channels/{url}/typing``); those endpoints check the ``Api-Token`` header.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import math
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import unquote

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from tests.fakes.sendbird_application import FakeApplication
from tests.fakes.sendbird_user_channels import UserChannels
from tests.support import API_TOKEN


@dataclass
class SentMessage:
    channel_url: str
    body: dict[str, Any]
    headers: dict[str, str]
    at: float = field(default_factory=time.monotonic)
    """When the message was shown (``time.monotonic()``), to order it against typing calls."""
    shown: dict[str, Any] = field(default_factory=dict)
    """What the channel shows now: ``body`` (as sent), with the fields of later updates."""
    raw_path: str = ""
    """The request's path as it arrived, escapes and all."""
    deleted: bool = False
    """Deleted since (``DELETE .../messages/{message_id}``): the channel no longer shows it."""

    def __post_init__(self) -> None:
        self.shown = self.shown or dict(self.body)

    @property
    def is_rpc(self) -> bool:
        return self.body.get("custom_type") == "agent-rpc"

    @property
    def rpc(self) -> dict[str, Any]:
        """The JSON-RPC request carried in ``data`` (a JSON string, as Sendbird stores it)."""
        assert isinstance(self.body["data"], str)
        return json.loads(self.body["data"])

    @property
    def text(self) -> str:
        return self.body["message"]


@dataclass
class MessageUpdate:
    """An update of a sent message (``PUT .../messages/{message_id}``), as it arrived."""

    channel_url: str
    message_id: int
    body: dict[str, Any]
    at: float = field(default_factory=time.monotonic)

    @property
    def settled(self) -> dict[str, Any]:
        """The ``data`` of an ``agent-rpc-settled`` update: the call's id and state."""
        assert self.body.get("custom_type") == "agent-rpc-settled", self.body
        return json.loads(self.body["data"])


@dataclass
class ApiCall:
    """A Platform API call as it arrived (429s too): its kind and when."""

    kind: str
    method: str = ""
    at: float = field(default_factory=time.monotonic)
    limited: bool = False
    """Answered 429."""


@dataclass
class TypingCall:
    """A typing indicator call as it arrived: ``started`` for POST, else DELETE."""

    channel_url: str
    started: bool
    user_ids: list[str]
    raw_path: str
    status: int
    at: float = field(default_factory=time.monotonic)


@dataclass
class FakeSendbird:
    messages: list[SentMessage] = field(default_factory=list)
    requests: int = 0
    failures: list[tuple[int, dict[str, str]]] = field(default_factory=list)
    """Statuses (and headers) to answer the next sends with, before succeeding."""
    refused_channels: dict[str, int] = field(default_factory=dict)
    """Channels whose every send is answered with this status (a 5xx or a 429), until removed."""
    down_until: float = 0.0
    """An outage: every send is answered 503 until this ``time.monotonic()``."""
    refuse_repeats: bool = False
    """Answer a send with a ``dedup_id`` seen before with 400, as Sendbird may, instead of 200."""
    _seen_dedup: set[str] = field(default_factory=set)
    _changed: asyncio.Condition | None = None
    api_token: str = API_TOKEN
    """The token the user and group-channel endpoints accept (401 otherwise)."""
    users: dict[str, dict[str, Any]] = field(default_factory=dict)
    users_created: int = 0
    channels: dict[str, dict[str, Any]] = field(default_factory=dict)
    channels_created: int = 0
    channel_failures: list[tuple[int, dict[str, Any]]] = field(default_factory=list)
    """Statuses (and error bodies) to answer the next group-channel creations with."""
    _distinct: dict[frozenset[str], str] = field(default_factory=dict)
    channel_views: int = 0
    """How many times a channel (with its members) was looked up."""
    updates: list[MessageUpdate] = field(default_factory=list)
    """Every accepted message update, in arrival order (the message itself changes too)."""
    update_failures: list[int] = field(default_factory=list)
    """Statuses to answer the next updates with, before succeeding."""
    typing: list[TypingCall] = field(default_factory=list)
    """Every typing call that arrived with the right token, in arrival order (failed ones too)."""
    typing_status: int = 200
    """What typing calls are answered with (a 5xx makes them fail)."""
    typing_hang_s: float = 0.0
    """How long each typing call is held before it is answered (a hang); see :meth:`release_typing`."""
    _release: asyncio.Event | None = None
    update_hang_s: float = 0.0
    """How long each message update is held before it is applied (a slow channel); see
    :meth:`release_updates`."""
    _release_updates: asyncio.Event | None = None
    application: FakeApplication = field(default_factory=lambda: FakeApplication())
    """Tokens, application settings, webhook settings, known users and the channel-join limit."""
    user_channels: UserChannels = field(default_factory=UserChannels)
    """A user's group channels listed (``my_group_channels``) and counted (``group_channel_count``)."""
    # -- channel look-ups as Sendbird answers them (see "Channel look-ups" below)
    lookup_delay_s: float = 0.0
    """How long each channel look-up (``GET /v3/group_channels/{url}``) takes before it is answered."""
    lookup_failures: list[tuple[int, dict[str, str]]] = field(default_factory=list)
    """Statuses (and headers) to answer the next channel look-ups with, before answering them."""
    # --- Outages that start part-way through a long answer ---
    _outage_after: tuple[int, float] | None = None

    # --- Message length ---
    @property
    def max_message_length(self) -> int:
        """The application's ``max_message_length`` (Sendbird's default, 5,000 characters), as its
        global settings hold it: a longer ``message`` is refused with a 400 and never shown (see
        :meth:`_refuse_too_long`)."""
        return int(self.application.settings["max_message_length"])

    @max_message_length.setter
    def max_message_length(self, value: int) -> None:
        self.application.settings["max_message_length"] = value

    # --- Rate limits, as the Platform API's "Rate limits" page states them ---
    # docs.sendbird.com/docs/chat/platform-api/v3/application/understanding-rate-limits/rate-limits,
    # "Plan-based rate limits": the limits apply per HTTP method and per application (see PLAN_LIMITS);
    # Sendbird's community answer (community.sendbird.com, thread 4621): every call of a method that is
    # not in the "Rate-limited APIs" table counts against that method's plan budget, app-wide. "N per
    # second" lets N calls go within one second; this fake counts in a sliding second, the stricter
    # reading (a client within it is within a fixed-second count too). Message sends are also limited
    # per sender and channel: "a user can send up to five messages per second to a group channel" (the
    # Chat SDKs' "Rate limits" pages), checked first. A throttled call gets 429 with code 500910 and
    # X-RateLimit-Limit ("5;w=1"), -Remaining, -Reset and -RetryAfter; the page names -RetryAfter
    # without its unit, and Sendbird's error text gives seconds with a fraction ("retry_after: 0.0697s",
    # community.sendbird.com/t/8285), so this fake answers seconds. A throttled call counts for no limit.
    method_limits: dict[str, float] = field(default_factory=dict)
    """Calls per second per HTTP method, app-wide (one not listed: no limit); see :meth:`enforce_plan`."""
    channel_send_limit: float = 0.0
    """Message sends per second by one sender to one channel (0: no limit)."""
    limited: list[str] = field(default_factory=list)
    """The kind of every call answered 429 (by the limits or :meth:`throttle`), in arrival order."""
    calls: dict[str, int] = field(default_factory=dict)
    """Every call that arrived, by kind: send, update, deletion, typing, lookup, creation (429s too)."""
    call_log: list[ApiCall] = field(default_factory=list)
    """Every call that arrived (429s too), in order, with its method and when it arrived."""
    throttled: dict[str, int] = field(default_factory=dict)
    """Kind -> how many of its next calls are answered 429 whatever the limits (see :meth:`throttle`)."""
    throttle_retry_s: float = 0.05
    """The wait a :meth:`throttle` 429 asks for."""
    _recent: dict[str, deque[float]] = field(default_factory=dict)

    def enforce_plan(self, plan: str) -> None:
        """Answer 429 beyond the plan's limits, per method and per channel's sends, as Sendbird does."""
        self.method_limits = dict(PLAN_LIMITS[plan])
        self.channel_send_limit = 5

    def throttle(self, kind: str, n: int, *, retry_s: float | None = None) -> None:
        """Answer the next ``n`` calls of ``kind`` with 429 (asking for a wait of ``retry_s``, or 0.05 s)."""
        self.throttled[kind] = n
        if retry_s is not None:
            self.throttle_retry_s = retry_s

    def max_in_a_second(self, method: str, *, accepted: bool = True) -> int:
        """The most calls of ``method`` that arrived within any one second (those answered 429 left out)."""
        times = [c.at for c in self.call_log if c.method == method and not (accepted and c.limited)]
        most, first = 0, 0
        for last, at in enumerate(times):
            while at - times[first] >= 1.0:
                first += 1
            most = max(most, last - first + 1)
        return most

    def _rate_limited(
        self, kind: str, request: Request | None = None, *, channel: str = ""
    ) -> JSONResponse | None:
        """Count the call; a 429 when it is over a limit (see above) or :meth:`throttle` asks for one."""
        method = request.method if request is not None else _METHOD_OF[kind]
        self.calls[kind] = self.calls.get(kind, 0) + 1
        call = ApiCall(kind, method=method)
        self.call_log.append(call)
        now = call.at
        refusal: JSONResponse | None = None
        if self.throttled.get(kind):
            self.throttled[kind] -= 1
            refusal = _too_many(self.method_limits.get(method) or 5, self.throttle_retry_s)
        limits = [(f"channel:{channel}", self.channel_send_limit)] if channel else []
        limits.append((method, self.method_limits.get(method, 0.0)))
        for name, limit in limits:
            if refusal is not None or limit <= 0:
                continue
            recent = self._recent.setdefault(name, deque())
            while recent and recent[0] <= now - 1.0:
                recent.popleft()
            if len(recent) >= limit:
                refusal = _too_many(limit, max(0.001, recent[0] + 1.0 - now))
        if refusal is not None:
            call.limited = True
            self.limited.append(kind)
            return refusal
        for name, limit in limits:
            if limit > 0:
                self._recent[name].append(now)
        return None

    # --- end of the rate limits ---

    def app(self) -> Starlette:
        return Starlette(
            routes=[
                Route("/v3/group_channels/{channel_url:path}/messages", self._send, methods=["POST"]),
                Route(
                    "/v3/group_channels/{channel_url:path}/messages/{message_id:int}",
                    self._update,
                    methods=["PUT"],
                ),
                Route(
                    "/v3/group_channels/{channel_url:path}/messages/{message_id:int}",
                    self._delete,
                    methods=["DELETE"],
                ),
                Route(
                    "/v3/group_channels/{channel_url:path}/typing", self._typing, methods=["POST", "DELETE"]
                ),
                Route("/v3/group_channels", self._create_group_channel, methods=["POST"]),
                Route("/v3/group_channels/{channel_url:path}", self._view_group_channel, methods=["GET"]),
                *self.user_channels.routes(self),
                Route("/v3/users", self._create_user, methods=["POST"]),
                Route("/v3/users/{user_id}", self._view_user, methods=["GET"]),
                Route("/v3/users/{user_id}", self._update_user, methods=["PUT"]),
                *self.application.routes(self._unauthorized, master=lambda: self.api_token),
            ]
        )

    def outage(self, seconds: float) -> None:
        """Answer every send with 503 for the next ``seconds``."""
        self.down_until = time.monotonic() + seconds

    async def _send(self, request: Request) -> JSONResponse:
        self.requests += 1
        self._start_outage_when_due()
        channel = unquote(request.path_params["channel_url"])
        if (limited := self._rate_limited("send", request, channel=channel)) is not None:
            return limited
        if time.monotonic() < self.down_until:
            return JSONResponse({"error": True, "code": 500901, "message": "outage"}, status_code=503)
        if (refused := self.refused_channels.get(unquote(request.path_params["channel_url"]))) is not None:
            return _error(refused, 500910, "refused for this channel")
        if self.failures:
            status, headers = self.failures.pop(0)
            return JSONResponse(
                {"error": True, "code": 500910, "message": "fail"}, status_code=status, headers=headers
            )
        body = await request.json()
        if request.headers.get("api-token") is None:
            return JSONResponse({"error": True, "code": 400401, "message": "no token"}, status_code=401)
        if (too_long := self._refuse_too_long(body)) is not None:
            return too_long
        dedup = body.get("dedup_id")
        if dedup is not None and dedup in self._seen_dedup and self.refuse_repeats:
            return _error(400, 400111, f"The dedup_id {dedup!r} has already been used.")
        if dedup is None or dedup not in self._seen_dedup:
            if dedup is not None:
                self._seen_dedup.add(dedup)
            channel_url = unquote(request.path_params["channel_url"])
            raw_path = request.scope.get("raw_path", b"").decode()
            self.messages.append(SentMessage(channel_url, body, dict(request.headers), raw_path=raw_path))
            await self._notify()
        return JSONResponse({"message_id": len(self.messages), **body})

    # --- Message length, and outages that start part-way through a long answer ---
    # A `message` longer than the app's `max_message_length` is refused with HTTP 400. The code is
    # not stated on the Platform API's error page; Sendbird's Chat SDK for .NET (SbErrorCode) names
    # 400700 "the message is longer than the maximum message length" (among other refusals of a
    # send), and 400110 ParameterValueLengthExceeded for a parameter that is too long in general:
    # this fake answers 400700. The text is ours (the real one is not documented).
    #
    # A repeated `dedup_id`: the docs say only that "the server performs a duplicate check" (Chat
    # SDK `dedupId`, "used to prevent the same message data from getting inserted"); what a repeat
    # gets back is not documented. By default this fake answers it 200 and shows nothing new; with
    # `refuse_repeats` it answers a 400 whose text names the dedup_id. The server takes both as
    # "already sent".

    def _refuse_too_long(self, body: dict[str, Any]) -> JSONResponse | None:
        message = body.get("message")
        if isinstance(message, str) and len(message) > self.max_message_length:
            return _error(
                400,
                400700,
                f"The message is longer than the maximum message length ({self.max_message_length}).",
            )
        return None

    def outage_after(self, shown: int, seconds: float) -> None:
        """Start an outage of ``seconds`` at the first send after ``shown`` messages were shown."""
        self._outage_after = (shown, seconds)

    def _start_outage_when_due(self) -> None:
        if self._outage_after is not None and len(self.messages) >= self._outage_after[0]:
            self.outage(self._outage_after[1])
            self._outage_after = None

    async def _update(self, request: Request) -> JSONResponse:
        """``PUT .../messages/{message_id}``: change a message the channel shows (400201 if there is none).

        As Sendbird's "Update a message" (Platform API v3 docs): the body names ``message_type`` and the
        fields to change (``message``, ``custom_type``, ``data``); success returns the updated message."""
        if (limited := self._rate_limited("update", request)) is not None:
            return limited
        if time.monotonic() < self.down_until:
            return _error(503, 500901, "outage")
        if self.update_failures:
            return _error(self.update_failures.pop(0), 500910, "fail")
        if (denied := self._unauthorized(request)) is not None:
            return denied
        body = await self._json_object(request)
        if body is None or body.get("message_type") != "MESG":
            return _error(400, 400111, '"message_type" must be "MESG".')
        channel_url = unquote(request.path_params["channel_url"])
        message_id = request.path_params["message_id"]
        if (
            not 1 <= message_id <= len(self.messages)
            or self.messages[message_id - 1].channel_url != channel_url
            or self.messages[message_id - 1].deleted
        ):
            return _error(400, 400201, '"Message" not found.')
        if self.update_hang_s:
            if self._release_updates is None:
                self._release_updates = asyncio.Event()
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._release_updates.wait(), timeout=self.update_hang_s)
        message = self.messages[message_id - 1]
        message.shown = {**message.shown, **body}
        self.updates.append(MessageUpdate(channel_url, message_id, body))
        await self._notify()
        return JSONResponse({"message_id": message_id, **message.shown})

    async def _delete(self, request: Request) -> Response:
        """``DELETE .../messages/{message_id}``: the channel no longer shows the message (400201 if none).

        As Sendbird's "Delete a message" (Platform API v3 docs): success is an empty response body."""
        if (limited := self._rate_limited("deletion", request)) is not None:
            return limited
        if time.monotonic() < self.down_until:
            return _error(503, 500901, "outage")
        if (denied := self._unauthorized(request)) is not None:
            return denied
        channel_url = unquote(request.path_params["channel_url"])
        message_id = request.path_params["message_id"]
        if (
            not 1 <= message_id <= len(self.messages)
            or self.messages[message_id - 1].channel_url != channel_url
        ):
            return _error(400, 400201, '"Message" not found.')
        self.messages[message_id - 1].deleted = True
        await self._notify()
        return Response(status_code=200)

    def shown_in(self, channel_url: str | None) -> list[dict[str, Any]]:
        """What the channel shows now, oldest first: each message not deleted, with its updates."""
        return [m.shown for m in self.in_channel(channel_url) if not m.deleted]

    def release_updates(self) -> None:
        """End the hang: held updates are applied now, later ones at once."""
        self.update_hang_s = 0.0
        if self._release_updates is not None:
            self._release_updates.set()

    def updates_in(self, channel_url: str | None) -> list[MessageUpdate]:
        return [u for u in self.updates if channel_url is None or u.channel_url == channel_url]

    async def wait_updates(
        self, n: int, channel_url: str | None = None, *, timeout: float = 10.0
    ) -> list[MessageUpdate]:
        """Wait until ``n`` updates of the channel's messages arrived; fail with what was seen."""
        cond = self._condition()
        try:
            async with asyncio.timeout(timeout):
                async with cond:
                    await cond.wait_for(lambda: len(self.updates_in(channel_url)) >= n)
        except TimeoutError:
            seen = [(u.message_id, u.body.get("data")) for u in self.updates_in(channel_url)]
            raise AssertionError(f"timed out waiting for {n} message updates; got {seen}") from None
        return self.updates_in(channel_url)

    async def _typing(self, request: Request) -> JSONResponse:
        if (limited := self._rate_limited("typing", request)) is not None:
            return limited
        if (denied := self._unauthorized(request)) is not None:
            return denied
        body = await self._json_object(request)
        user_ids = body.get("user_ids") if body is not None else None
        if not isinstance(user_ids, list) or not user_ids or not all(isinstance(u, str) for u in user_ids):
            return _error(400, 400111, '"user_ids" must be a non-empty list of user ids.')
        self.typing.append(
            TypingCall(
                channel_url=unquote(request.path_params["channel_url"]),
                started=request.method == "POST",
                user_ids=user_ids,
                raw_path=request.scope.get("raw_path", b"").decode(),
                status=self.typing_status,
            )
        )
        await self._notify()
        if self.typing_hang_s:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._typing_released().wait(), timeout=self.typing_hang_s)
        if self.typing_status >= 300:
            return _error(self.typing_status, 500910, "typing failed")
        return JSONResponse({})

    def release_typing(self) -> None:
        """End the hang: held typing calls are answered now, later ones at once."""
        self.typing_hang_s = 0.0
        self._typing_released().set()

    def _typing_released(self) -> asyncio.Event:
        if self._release is None:
            self._release = asyncio.Event()
        return self._release

    def typing_in(self, channel_url: str) -> list[TypingCall]:
        return [t for t in self.typing if t.channel_url == channel_url]

    def is_typing(self, channel_url: str) -> bool:
        """Whether the last typing call that arrived for the channel was a start."""
        calls = self.typing_in(channel_url)
        return bool(calls) and calls[-1].started

    async def wait_typing(
        self,
        predicate: Callable[[list[TypingCall]], bool],
        channel_url: str = "ch-1",
        *,
        timeout: float = 10.0,
    ) -> list[TypingCall]:
        """Wait until the channel's typing calls satisfy ``predicate``; fail with what was seen."""
        cond = self._condition()
        try:
            async with asyncio.timeout(timeout):
                async with cond:
                    await cond.wait_for(lambda: predicate(self.typing_in(channel_url)))
        except TimeoutError:
            seen = [("start" if t.started else "stop", t.status) for t in self.typing_in(channel_url)]
            raise AssertionError(f"timed out waiting for typing calls; got {seen}") from None
        return self.typing_in(channel_url)

    def _unauthorized(self, request: Request) -> JSONResponse | None:
        token = request.headers.get("api-token")
        if token is None or token not in {self.api_token, *self.application.secondary_tokens}:
            return _error(401, 400401, 'Invalid value: "Api-Token".')
        return None

    async def _json_object(self, request: Request) -> dict[str, Any] | None:
        try:
            body = await request.json()
        except ValueError:
            return None
        return body if isinstance(body, dict) else None

    async def _view_user(self, request: Request) -> JSONResponse:
        """``GET /v3/users/{user_id}`` ("View a user"): the user; one Sendbird does not know is 400 with
        400201 (the Platform API's error codes: every error is a 400- or 500-series response, code
        400201 "resource not found"). Who exists is the application's (``FakeApplication.exists``),
        as for a ``strict`` channel creation."""
        if (denied := self._unauthorized(request)) is not None:
            return denied
        if (limited := self._rate_limited("user", request)) is not None:
            return limited
        user_id = request.path_params["user_id"]
        user = self.users.get(user_id)
        if user is None and self.application.exists(user_id, self.users):
            user = {"user_id": user_id, "nickname": "", "profile_url": "", "is_active": True, "metadata": {}}
        if user is None:
            return _error(400, 400201, '"User" not found.')
        return JSONResponse(user)

    async def _create_user(self, request: Request) -> JSONResponse:
        if (denied := self._unauthorized(request)) is not None:
            return denied
        body = await self._json_object(request)
        if body is None:
            return _error(400, 400403, "Invalid JSON request body.")
        for name in ("user_id", "nickname", "profile_url"):
            if not isinstance(body.get(name), str):
                return _error(400, 400105, f'"{name}" is required.')
        if body["user_id"] in self.users:
            return _error(400, 400202, f'"{body["user_id"]}" violates a unique constraint.')
        user = {
            "user_id": body["user_id"],
            "nickname": body["nickname"],
            "profile_url": body["profile_url"],
            "access_token": "",
            "is_online": False,
            "is_active": True,
            "created_at": 1540798555,
            "last_seen_at": 0,
            "has_ever_logged_in": False,
            "discovery_keys": [],
            "preferred_languages": [],
            "metadata": body.get("metadata") or {},
            # Sendbird answers some fields with null; clients must cope (the SDK's type check does not).
            "locale": None,
        }
        self.users[user["user_id"]] = user
        self.users_created += 1
        return JSONResponse(user)

    async def _update_user(self, request: Request) -> JSONResponse:
        if (denied := self._unauthorized(request)) is not None:
            return denied
        user = self.users.get(request.path_params["user_id"])
        if user is None:
            return _error(404, 400201, '"User" not found.')
        body = await self._json_object(request)
        if body is None:
            return _error(400, 400403, "Invalid JSON request body.")
        for name in ("nickname", "profile_url"):
            if name in body:
                user[name] = body[name]
        return JSONResponse(user)

    async def _view_group_channel(self, request: Request) -> JSONResponse:
        """``GET /v3/group_channels/{url}?show_member=true``: members only when asked for."""
        if (limited := self._rate_limited("lookup", request)) is not None:
            return limited
        if (denied := self._unauthorized(request)) is not None:
            return denied
        self.channel_views += 1
        if (held := await self._lookup_held()) is not None:
            return held
        channel = self.channels.get(unquote(request.path_params["channel_url"]))
        if channel is None:
            return _error(400, 400201, '"Channel" not found.')
        if request.query_params.get("show_member") != "true":
            return JSONResponse({k: v for k, v in channel.items() if k != "members"})
        return JSONResponse(_as_viewed(channel))

    def add_channel(self, channel_url: str, members: list[str]) -> None:
        """A group channel with these members, as if created in the app."""
        self.channels[channel_url] = {
            "channel_url": channel_url,
            "member_count": len(members),
            "members": [{"user_id": u} for u in members],
        }

    def add_app_direct_channel(
        self, channel_url: str, user_id: str, *, custom_type: str = "app-chat", bot: str = "truloop-assistant"
    ) -> None:
        """A distinct 1:1 channel of ``bot`` and ``user_id`` as the app (not the server) made it, with a
        ``custom_type`` of its own and no message yet. Sendbird's distinct match takes ``custom_type``
        into account (docs, "Create a group channel": ``is_distinct``), so a creation with another
        type makes a new channel beside it: it is not among the channels this fake's creation reuses."""
        self.channels[channel_url] = {
            "channel_url": channel_url,
            "name": "Assistant",
            "custom_type": custom_type,
            "is_distinct": True,
            "is_super": False,
            "is_public": False,
            "freeze": False,
            "member_count": 2,
            "joined_member_count": 2,
            "members": [{"user_id": u, "state": "joined"} for u in sorted({bot, user_id})],
            "data": "",
            "cover_url": "",
            "created_at": 1540798000,
        }

    async def _create_group_channel(self, request: Request) -> JSONResponse:
        if (limited := self._rate_limited("creation", request)) is not None:
            return limited
        if (denied := self._unauthorized(request)) is not None:
            return denied
        if self.channel_failures:
            status, error = self.channel_failures.pop(0)
            return JSONResponse(error, status_code=status)
        body = await self._json_object(request)
        if body is None:
            return _error(400, 400403, "Invalid JSON request body.")
        user_ids = body.get("user_ids")
        if (
            not isinstance(user_ids, list)
            or not user_ids
            or not all(isinstance(u, str) and u for u in user_ids)
        ):
            return _error(400, 400111, '"user_ids" must be a non-empty list of user ids.')
        members = frozenset(user_ids)
        if (refused := self.application.unknown_users(body, members, known=self.users)) is not None:
            return refused
        members = self.application.existing(members, known=self.users)
        if body.get("is_distinct") and members in self._distinct:
            return JSONResponse(self.channels[self._distinct[members]])
        if (refused := self.application.join_limit(members, self._joined)) is not None:
            return refused
        self.channels_created += 1
        channel = {
            "channel_url": f"sendbird_group_channel_{self.channels_created}",
            "name": body.get("name") or "Group Channel",
            "custom_type": body.get("custom_type") or "",
            "is_distinct": bool(body.get("is_distinct")),
            "member_count": len(members),
            "members": [{"user_id": u} for u in sorted(members)],
            "data": "",
            "cover_url": "",
            "created_at": 1540798555,
        }
        self.channels[channel["channel_url"]] = channel
        if channel["is_distinct"]:
            self._distinct[members] = channel["channel_url"]
        return JSONResponse(channel)

    def _joined(self, user_id: str) -> int:
        """How many group channels ``user_id`` is a member of."""
        return sum(
            any(m.get("user_id") == user_id for m in channel.get("members", []))
            for channel in self.channels.values()
        )

    async def _notify(self) -> None:
        cond = self._condition()
        async with cond:
            cond.notify_all()

    def _condition(self) -> asyncio.Condition:
        if self._changed is None:
            self._changed = asyncio.Condition()
        return self._changed

    async def wait_for(
        self, predicate: Callable[[list[SentMessage]], bool], *, timeout: float = 10.0
    ) -> list[SentMessage]:
        """Wait until the recorded messages satisfy ``predicate``; fail with what was seen."""
        cond = self._condition()
        try:
            async with asyncio.timeout(timeout):
                async with cond:
                    await cond.wait_for(lambda: predicate(self.messages))
        except TimeoutError:
            seen = [(m.channel_url, m.body.get("custom_type"), m.text) for m in self.messages]
            raise AssertionError(f"timed out waiting for messages; got {seen}") from None
        return self.messages

    async def wait_count(
        self, n: int, channel_url: str | None = None, *, timeout: float = 10.0
    ) -> list[SentMessage]:
        def enough(msgs: list[SentMessage]) -> bool:
            return len(self.in_channel(channel_url)) >= n

        await self.wait_for(enough, timeout=timeout)
        return self.in_channel(channel_url)

    def in_channel(self, channel_url: str | None) -> list[SentMessage]:
        return [m for m in self.messages if channel_url is None or m.channel_url == channel_url]

    # -- Channel look-ups as Sendbird answers them. Based on Sendbird's docs (Platform API "View a
    # group channel", "Rate limits": a 429 carries code 500910 and ``X-RateLimit-RetryAfter``) and the
    # SDK's models (sendbird-platform-sdk-csharp docs/SendbirdGroupChannelDetail.md: ``is_super``,
    # ``member_count``, ``joined_member_count``, ``members``; docs/SendbirdMember.md: ``state``).
    async def _lookup_held(self) -> JSONResponse | None:
        """A slow or rate-limited look-up: wait ``lookup_delay_s``, then answer the next failure, if any."""
        if self.lookup_delay_s:
            await asyncio.sleep(self.lookup_delay_s)
        if self.lookup_failures:
            status, headers = self.lookup_failures.pop(0)
            code, text = (500910, "Too many requests.") if status == 429 else (500901, "Internal error.")
            return JSONResponse(
                {"error": True, "code": code, "message": text}, status_code=status, headers=headers
            )
        return None

    def add_supergroup(self, channel_url: str, members: list[str], *, invited: tuple[str, ...] = ()) -> None:
        """A Supergroup with these members (``invited`` ones not joined yet). Its look-up lists only
        the first ``SUPERGROUP_PREVIEW`` members, as Sendbird's does."""
        self.channels[channel_url] = {
            "channel_url": channel_url,
            "name": "Supergroup",
            "is_super": True,
            "is_distinct": False,
            "member_count": len(members),
            "joined_member_count": len([m for m in members if m not in invited]),
            "members": [
                {"user_id": u, "nickname": u, "state": "invited" if u in invited else "joined"}
                for u in members
            ],
        }


SUPERGROUP_PREVIEW = 10
"""Members a Supergroup's look-up lists (Sendbird docs, "View a group channel": a Supergroup's
``members`` is a preview of at most 10; the real size is in ``member_count``)."""


def _as_viewed(channel: dict[str, Any]) -> dict[str, Any]:
    """A channel as its look-up shows it: a Supergroup's members cut to the preview."""
    if not channel.get("is_super"):
        return channel
    return {**channel, "members": channel["members"][:SUPERGROUP_PREVIEW]}


def without_members(payload: dict[str, Any], *, is_super: bool = False) -> dict[str, Any]:
    """A webhook as Sendbird sends it when "include members" is off (always for a Supergroup): no
    ``members`` key at all (Sendbird docs, "Webhooks": members are listed only when enabled)."""
    delivery = {k: v for k, v in payload.items() if k != "members"}
    delivery["channel"] = {**payload["channel"], "is_super": is_super}
    return delivery


PLAN_LIMITS: dict[str, dict[str, float]] = {
    "free-trial": {"GET": 10, "POST": 5, "PUT": 5, "DELETE": 5},
    "5k": {"GET": 60, "POST": 10, "PUT": 10, "DELETE": 10},
    "10k": {"GET": 100, "POST": 20, "PUT": 20, "DELETE": 20},
    "25k": {"GET": 200, "POST": 40, "PUT": 40, "DELETE": 40},
    "50k": {"GET": 400, "POST": 100, "PUT": 100, "DELETE": 100},
    "100k": {"GET": 600, "POST": 200, "PUT": 200, "DELETE": 200},
}
"""The "Plan-based rate limits" table of the Platform API's "Rate limits" page, by MAU: calls per second.
Copied from that page, not imported from the server's ``config.sendbird_plans``: a mistake there must
show as the fake refusing calls, not be repeated here."""
_METHOD_OF = {"send": "POST", "creation": "POST", "update": "PUT", "deletion": "DELETE", "lookup": "GET"}


def _too_many(limit: float, retry_after: float) -> JSONResponse:
    """Sendbird's 429 (rate limits block above): code 500910 and its X-RateLimit headers."""
    headers = {
        "X-RateLimit-Limit": f"{limit:g};w=1",
        "X-RateLimit-Remaining": "0",
        "X-RateLimit-Reset": str(math.ceil(time.time() + retry_after)),
        "X-RateLimit-RetryAfter": f"{retry_after:.3f}",
    }
    body = {"error": True, "code": 500910, "message": "Too many requests (scope: app)."}
    return JSONResponse(body, status_code=429, headers=headers)


def _error(status: int, code: int, message: str) -> JSONResponse:
    return JSONResponse({"error": True, "code": code, "message": message}, status_code=status)

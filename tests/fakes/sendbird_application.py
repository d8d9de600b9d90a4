"""The fake Sendbird's application-wide side: API tokens, settings, webhook settings, who exists.

What each behaviour is based on (Sendbird's Platform API docs and SDKs, as read for this fake):

- ``GET /v3/applications/api_tokens`` lists the secondary API tokens and needs the **master** token
  ("you need the master API token to list, generate, or revoke tokens": docs, Managing API tokens >
  Generate a secondary API token; the path from sendbird-platform-sdk-python docs/ApplicationApi.md,
  ``list_secondary_api_tokens``). What a secondary token gets back is not documented; this fake
  answers 400 with 400108 (UnauthorizedRequest, "The request is not authorized and cannot access the
  requested resource", docs: Error codes). The server treats any refusal there as "not the master".
- ``GET /v3/applications/settings_global`` carries ``max_message_length`` (docs: Setting up an
  application > Update global application settings: 50 ... 20,000, default 5,000).
- ``PUT/GET /v3/applications/settings/webhook`` with ``enabled``, ``url``, ``include_members``,
  ``enabled_events`` (sendbird-platform-sdk-python docs/ChooseWhichEventsToSubscribeToData.md; the
  answer wraps them in ``{"webhook": {...}}``).
- ``POST /v3/group_channels`` with ``"strict": true`` and a user id Sendbird does not know: 400 with
  400201 ("User" not found), no channel; without ``strict`` the unknown ids are left out and the
  channel is made anyway (docs: Create a group channel, ``strict``).
- A user joins at most 2,000 group channels by default; past it the creation fails with the message
  ``Maximum "channel join" count reached.`` (docs: Create a group channel). Its error code is not in
  the docs or SDKs read; this fake uses 400111 (InvalidValue) and the server goes by the message.
"""

from __future__ import annotations

from collections.abc import Callable, Collection
from dataclasses import dataclass, field
from typing import Any

from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

USER_NOT_FOUND = 400201
UNAUTHORIZED_REQUEST = 400108
JOIN_LIMIT_CODE = 400111
JOIN_LIMIT_MESSAGE = 'Maximum "channel join" count reached.'

Unauthorized = Callable[[Request], JSONResponse | None]


@dataclass
class FakeApplication:
    secondary_tokens: set[str] = field(default_factory=set)
    """Secondary API tokens: accepted like the master token, except to manage tokens."""
    settings: dict[str, Any] = field(default_factory=lambda: {"max_message_length": 5000})
    """The global application settings, as ``GET /v3/applications/settings_global`` answers them."""
    webhook: dict[str, Any] = field(
        default_factory=lambda: {"enabled": False, "url": "", "include_members": False, "enabled_events": []}
    )
    """The webhook settings, as the last ``PUT /v3/applications/settings/webhook`` left them."""
    webhook_puts: list[dict[str, Any]] = field(default_factory=list)
    """Every accepted webhook-settings body, in arrival order."""
    known_users: set[str] | None = None
    """``None``: every user id exists; else only these (and the users created through the API)."""
    channel_join_limit: int | None = None
    """Group channels one user may be a member of (Sendbird's default is 2,000); ``None``: no limit."""

    def routes(self, unauthorized: Unauthorized, master: Callable[[], str]) -> list[Route]:
        """The endpoints, checking tokens as the rest of the fake does; ``master()`` is the master token."""
        self._unauthorized, self._master = unauthorized, master
        return [
            Route("/v3/applications/api_tokens", self._api_tokens, methods=["GET"]),
            Route("/v3/applications/settings_global", self._settings, methods=["GET"]),
            Route("/v3/applications/settings/webhook", self._webhook, methods=["GET", "PUT"]),
        ]

    async def _api_tokens(self, request: Request) -> JSONResponse:
        if (denied := self._unauthorized(request)) is not None:
            return denied
        if request.headers.get("api-token") != self._master():
            return _error(400, UNAUTHORIZED_REQUEST, "The request is not authorized.")
        tokens = [{"token": t, "created_at": 1596607063} for t in sorted(self.secondary_tokens)]
        return JSONResponse({"api_tokens": tokens})

    async def _settings(self, request: Request) -> JSONResponse:
        if (denied := self._unauthorized(request)) is not None:
            return denied
        return JSONResponse(self.settings)

    async def _webhook(self, request: Request) -> JSONResponse:
        if (denied := self._unauthorized(request)) is not None:
            return denied
        if request.method == "PUT":
            try:
                body = await request.json()
            except ValueError:
                body = None
            if not isinstance(body, dict):
                return _error(400, 400403, "Invalid JSON request body.")
            events = body.get("enabled_events", self.webhook["enabled_events"])
            if not isinstance(events, list) or not all(isinstance(e, str) for e in events):
                return _error(400, 400102, '"enabled_events" must be a list of strings.')
            for name in ("enabled", "include_members"):
                if name in body and not isinstance(body[name], bool):
                    return _error(400, 400104, f'"{name}" must be a boolean.')
            self.webhook_puts.append(body)
            self.webhook = {**self.webhook, **{k: body[k] for k in self.webhook if k in body}}
        return JSONResponse({"webhook": {**self.webhook, "all_webhook_categories": ["*"]}})

    def exists(self, user_id: str, known: Collection[str]) -> bool:
        return self.known_users is None or user_id in self.known_users or user_id in known

    def unknown_users(
        self, body: dict[str, Any], members: frozenset[str], *, known: Collection[str]
    ) -> JSONResponse | None:
        """With ``strict``, a member Sendbird does not know refuses the whole creation."""
        if body.get("strict") is True and any(not self.exists(u, known) for u in members):
            return _error(400, USER_NOT_FOUND, '"User" not found.')
        return None

    def existing(self, members: frozenset[str], *, known: Collection[str]) -> frozenset[str]:
        """Without ``strict``, unknown ids are left out (the channel may hold only the creator)."""
        return frozenset(u for u in members if self.exists(u, known))

    def join_limit(self, members: frozenset[str], joined: Callable[[str], int]) -> JSONResponse | None:
        """A new channel a member could not join any more."""
        limit = self.channel_join_limit
        if limit is not None and any(joined(u) >= limit for u in members):
            return _error(400, JOIN_LIMIT_CODE, JOIN_LIMIT_MESSAGE)
        return None


def _error(status: int, code: int, message: str) -> JSONResponse:
    return JSONResponse({"error": True, "code": code, "message": message}, status_code=status)

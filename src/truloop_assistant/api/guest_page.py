"""The guest page: ``/g/{token}``, one invited person's page for one event, without app or login.

The token is the only credential (``protocol.guest_links``): a malformed, tampered, unknown or lapsed
one, or one whose person is no longer invited, is the same 404 everywhere, so a guess learns
nothing. The page (``static/guest.*``) reads ``GET /g/{token}/api``, saves the days the guest ticks
with ``PUT /g/{token}/api/availability``, and chats with the assistant through
``/g/{token}/api/messages`` (the conversation ``page:<person>``, ``channels.page``). Its answers
never tell the URL on (``Referrer-Policy: no-referrer``), run no inline script (CSP), and ask not to
be indexed; the JSON routes are rate-limited per token.
"""

from __future__ import annotations

import asyncio
import hashlib
import html
import uuid
from dataclasses import dataclass
from datetime import UTC, date, datetime
from importlib import resources
from typing import TYPE_CHECKING, Annotated, Any, TypeVar

from fastapi import APIRouter, Depends, Query, Request
from fastapi.responses import HTMLResponse, JSONResponse, Response
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from ..channels.base import InboundMessage
from ..channels.page import PageChannel
from ..errors import AppError, NotFound, TooManyRequests, Unprocessable, first_problem
from ..protocol.addresses import page_channel
from ..protocol.guest_links import link_lapses
from ..ratelimit import RateLimiter
from ..services import Services
from ..store.guest_links import GuestLink, GuestLinks
from .body import read_body
from .budget import redis_budget
from .deps import ServicesDep
from .guest_days import MAX_PICK_DAYS, day_zone, deadline_passed, organizer_zone, page_view, pickable

if TYPE_CHECKING:
    # The event store is the tools' backend: loaded with ``services.backends`` at a page's first
    # request, never at the API's start (it serves chat messages without it).
    from ..backends.events import Event

router = APIRouter(prefix="/g", tags=["guest page"], include_in_schema=False)

HEADERS = {
    "Referrer-Policy": "no-referrer",
    "Content-Security-Policy": (
        "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self' data:; "
        "base-uri 'none'; form-action 'none'; frame-ancestors 'none'"
    ),
    "X-Robots-Tag": "noindex, nofollow",
    "X-Content-Type-Options": "nosniff",
    "Cache-Control": "no-store",
}
"""On every answer under ``/g``: the token is in the URL, so it is never passed on nor kept."""
PAGE_RATE = "60/minute"
"""Requests to a page's JSON routes per token: a page polls its chat and saves now and then."""
MAX_BODY_BYTES = 16 * 1024
MAX_TEXT_CHARS = 4000
"""The longest chat message the page takes (the assistant's own length check answers past its limit)."""
WAIT_MAX_S = 20.0
WAIT_STEP_S = 0.25
M = TypeVar("M", bound=BaseModel)
GONE = "this link does not work: it may have expired or been mistyped"


@dataclass(frozen=True)
class GuestPages:
    """What the routes use: the links, the chats, the per-token rate limit."""

    links: GuestLinks
    chats: PageChannel
    limiter: RateLimiter


def guest_pages(request: Request, services: Services) -> GuestPages:
    """The process's :class:`GuestPages`, made on first use from its Redis."""
    found: GuestPages | None = getattr(request.app.state, "guest_pages", None)
    if found is None:
        # Its own limit, not the chat's (TRULOOP_RATE_LIMIT_USER): a page's polls are not turns.
        limits = services.settings.model_copy(
            update={"rate_limit_user": PAGE_RATE, "rate_limit_admin": PAGE_RATE}
        )
        found = GuestPages(
            GuestLinks(services.redis), PageChannel(services.redis), RateLimiter(limits, services.redis)
        )
        request.app.state.guest_pages = found
    return found


def _gone() -> NotFound:
    return NotFound(GONE, code="not_found", headers=dict(HEADERS))


@dataclass(frozen=True)
class Guest:
    """A valid token's invitation: the person and the event as it is now."""

    token: str
    person: str
    event: Event
    pages: GuestPages


async def _invitation(services: Services, pages: GuestPages, token: str) -> tuple[GuestLink, Event]:
    async with redis_budget():
        link = await pages.links.read(token)
        event = None if link is None else await services.backends.events.get(link.event_id)
    if link is None or event is None or not event.is_invited(link.person):
        raise _gone()
    lapses = link_lapses(event.end_time, event.availability_deadline)
    if lapses <= datetime.now(UTC):
        raise _gone()
    if int(lapses.timestamp()) > int(link.lapses.timestamp()):  # the event moved later: so does its link
        async with redis_budget():
            await pages.links.keep_until(token, link, lapses)
    return link, event


async def guest(token: str, request: Request, services: ServicesDep) -> Guest:
    """The invitation of the token in the path, counted in its rate limit (404 for a bad token)."""
    pages = guest_pages(request, services)
    link, event = await _invitation(services, pages, token)
    async with redis_budget():
        digest = hashlib.sha256(token.encode()).hexdigest()[:24]
        rate = await pages.limiter.hit(digest, scope="guest-page")
    if not rate.allowed:
        raise TooManyRequests(
            f"too many requests from this page; try again in {rate.retry_after} s",
            headers={**HEADERS, **rate.headers()},
        )
    return Guest(token=token, person=link.person, event=event, pages=pages)


GuestDep = Annotated[Guest, Depends(guest)]


def _static(name: str) -> str:
    return resources.files(__package__).joinpath("static", name).read_text(encoding="utf-8")


@router.get("/assets/guest.js")
async def script() -> Response:
    return Response(_static("guest.js"), media_type="text/javascript; charset=utf-8", headers=HEADERS)


@router.get("/assets/guest.css")
async def stylesheet() -> Response:
    return Response(_static("guest.css"), media_type="text/css; charset=utf-8", headers=HEADERS)


@router.get("/{token}", response_class=HTMLResponse)
async def page(token: str, request: Request, services: ServicesDep) -> HTMLResponse:
    """The page itself, titled with the event; the rest it reads from its JSON."""
    try:
        _, event = await _invitation(services, guest_pages(request, services), token)
    except NotFound:
        return HTMLResponse(_static("guest-gone.html"), status_code=404, headers=HEADERS)
    body = _static("guest.html").replace("{{title}}", html.escape(event.title))
    return HTMLResponse(body, headers=HEADERS)


def _json(body: dict[str, Any], status: int = 200) -> JSONResponse:
    return JSONResponse(body, status_code=status, headers=HEADERS)


@router.get("/{token}/api")
async def details(invited: GuestDep, services: ServicesDep) -> JSONResponse:
    """The event, the days one may pick and the person's own (see ``guest_days.page_view``)."""
    zone = await organizer_zone(services, invited.event)
    return _json(page_view(invited.event, invited.person, zone=zone, now=datetime.now(UTC)))


class Availability(BaseModel):
    model_config = ConfigDict(extra="forbid")
    dates: list[Annotated[str, Field(pattern=r"^\d{4}-\d{2}-\d{2}$")]] = Field(max_length=MAX_PICK_DAYS)


class ChatMessage(BaseModel):
    model_config = ConfigDict(extra="forbid")
    text: str = Field(min_length=1, max_length=MAX_TEXT_CHARS)
    id: str | None = Field(default=None, min_length=1, max_length=64, pattern=r"^[A-Za-z0-9_-]+$")


def _unprocessable(message: str, code: str) -> Unprocessable:
    return Unprocessable(message, code=code, headers=dict(HEADERS))


async def _parsed(request: Request, model: type[M]) -> M:
    raw = await read_body(request, MAX_BODY_BYTES)
    try:
        return model.model_validate_json(raw)
    except ValidationError as exc:
        raise _unprocessable(first_problem(exc.errors()), "invalid_request") from None


@router.put("/{token}/api/availability")
async def save(invited: GuestDep, request: Request, services: ServicesDep) -> JSONResponse:
    """Replace the person's dates with those given: each one of the days the page offers."""
    body = await _parsed(request, Availability)
    event, now = invited.event, datetime.now(UTC)
    if event.cancelled_at is not None:
        raise _unprocessable(f"{event.title!r} was cancelled; it no longer takes answers", "cancelled")
    if deadline_passed(event, now):
        raise _unprocessable("the deadline for giving your days has passed", "deadline_passed")
    try:
        days = sorted({date.fromisoformat(d) for d in body.dates})
    except ValueError:
        raise _unprocessable("dates: each must be a real day, YYYY-MM-DD", "invalid_request") from None
    offered = set(pickable(event, day_zone(event, await organizer_zone(services, event)), now))
    if outside := [d.isoformat() for d in days if d not in offered]:
        raise _unprocessable(
            f"dates: {', '.join(outside)} cannot be picked; pick from the days offered", "date_not_offered"
        )
    from ..backends.events import EventNotFoundError

    try:
        async with redis_budget():
            saved = await services.backends.events.set_availability(
                event.event_id, invited.person, [d.isoformat() for d in days]
            )
    except EventNotFoundError:
        raise _gone() from None
    return _json({"dates": saved.guest_availability.get(invited.person, [])})


@router.post("/{token}/api/messages")
async def post_message(invited: GuestDep, request: Request, services: ServicesDep) -> JSONResponse:
    """Write to the assistant: the message shows in the chat and its turn is queued (``status``)."""
    body = await _parsed(request, ChatMessage)
    if not body.text.strip():
        raise _unprocessable("text: write something", "invalid_request")
    channel_url = page_channel(invited.person)
    dedup_id = None if body.id is None else "in:" + body.id
    async with redis_budget():
        item = await invited.pages.chats.append(channel_url, "guest", body.text, dedup_id=dedup_id)
    if item is None:
        return _json({"status": "duplicate"})
    message = InboundMessage(
        message_id=f"page-{body.id or uuid.uuid4().hex}",
        channel_url=channel_url,
        user_id=invited.person,
        text=body.text,
    )
    try:
        status = await services.admission.direct(message)
    except AppError as exc:
        exc.headers.update(HEADERS)
        raise
    return _json({"status": status, "id": item["id"]}, status=202)


@router.get("/{token}/api/messages")
async def messages(
    invited: GuestDep,
    after: Annotated[int, Query(ge=0)] = 0,
    wait: Annotated[float, Query(ge=0, le=WAIT_MAX_S)] = 0,
) -> JSONResponse:
    """The chat's messages after id ``after``; with ``wait`` (seconds) answers once there is one."""
    chats, channel_url = invited.pages.chats, page_channel(invited.person)
    deadline = asyncio.get_running_loop().time() + wait
    while True:
        async with redis_budget():
            found = await chats.messages(channel_url, after=after)
        if found or asyncio.get_running_loop().time() >= deadline:
            return _json({"messages": found})
        await asyncio.sleep(WAIT_STEP_S)

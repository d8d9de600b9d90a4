"""Operators' endpoints: ``GET /api/v1/admin/conversations/{channel_url}`` (a conversation's tool-call
ledger), ``POST /api/v1/admin/users/{user_id}/revoke-tokens`` (refuse a person's device tokens
issued until now) and ``DELETE /api/v1/admin/guests/{number}`` (erase a guest reached by phone)."""

from __future__ import annotations

import time
from datetime import UTC, datetime
from typing import Any

from fastapi import APIRouter, Depends
from pydantic import BaseModel, Field

from ..errors import NotFound, Unprocessable
from ..operations.guest_erasure import NotAPhoneNumber, erase_guest, person_of_number
from ..operations.inspection import as_json, conversation_report
from .budget import redis_budget
from .deps import LedgerDep, RateLimit, RedisDep, ServicesDep, SettingsDep, admin_principal

router = APIRouter(
    prefix="/api/v1/admin",
    tags=["admin"],
    dependencies=[Depends(admin_principal), Depends(RateLimit("admin"))],  # 403 before it counts
)


@router.get("/conversations/{channel_url}")
async def conversation(
    channel_url: str, redis: RedisDep, ledger: LedgerDep, settings: SettingsDep
) -> dict[str, Any]:
    """The conversation's recent turns, newest first, each with its tool calls and results (admin JWT only).

    Also the calls still waiting for the phone (with the seconds left), the events waiting to run and
    the drain that owns them, the messages waiting to be delivered (with the failures in a row, the
    last error and the next try), what admission decided of recent messages, the last step that
    failed and the events given up after their retries. Times are ISO 8601 (UTC).
    """
    async with redis_budget():
        report = await conversation_report(
            redis, ledger, channel_url, max_message_chars=settings.sendbird_max_message_chars
        )
    if not report.known:
        raise NotFound(f"no conversation {channel_url!r} is known here", code="unknown_conversation")
    return as_json(report)


class Revoked(BaseModel):
    """The person's device tokens issued before ``not_before`` are refused (401 ``token_revoked``)."""

    user_id: str
    not_before: str = Field(
        description="ISO 8601 UTC; tokens whose iat is earlier, or without iat, are refused"
    )


@router.post("/users/{user_id}/revoke-tokens")
async def revoke_tokens(user_id: str, services: ServicesDep) -> Revoked:
    """Revoke a person's device tokens issued until now, on every device (admin JWT only): each gets
    401 ``token_revoked`` from its next request; tokens minted afterwards work."""
    async with redis_budget():
        not_before = await services.revocations.revoke(user_id, at=time.time())
    return Revoked(user_id=user_id, not_before=datetime.fromtimestamp(not_before, UTC).isoformat())


class GuestErasedOut(BaseModel):
    guest: str = Field(description="The guest, as the server names them: tel: and the number in E.164")
    events: int = Field(description="Events they were taken off (their number, dates and language)")
    channels: int = Field(description="Conversations (SMS, their guest page) their part was erased from")


@router.delete("/guests/{number}")
async def erase_guest_by_number(number: str, services: ServicesDep) -> GuestErasedOut:
    """Erase a guest reached by phone (admin JWT only): their conversations by SMS and on their guest
    page, and their place on every event (their number, dates and invitation language). ``number`` in
    E.164 (``+821055501234``) or as written in ``TRULOOP_DEFAULT_REGION``; 422 when it is not a number.
    Their opt-out (STOP) stays."""
    try:
        person = person_of_number(number, region=services.settings.default_region)
    except NotAPhoneNumber as exc:
        raise Unprocessable(str(exc)) from None
    async with redis_budget(10.0):
        erased = await erase_guest(services, person)
    return GuestErasedOut(guest=erased.person, events=erased.events, channels=erased.channels)

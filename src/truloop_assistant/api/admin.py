"""``GET /api/v1/admin/conversations/{channel_url}``: a conversation's tool-call ledger, for operators."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Depends

from ..errors import NotFound
from ..operations.inspection import as_json, conversation_report
from .budget import redis_budget
from .deps import LedgerDep, RateLimit, RedisDep, SettingsDep, admin_principal

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

"""``truloop-assistant inspect CHANNEL_URL``: what happened in a conversation, from Redis."""

from __future__ import annotations

import argparse
import asyncio
import sys
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ..config import Settings


def add_parser(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    inspect = subparsers.add_parser(
        "inspect",
        help="why a conversation got no answer: its drain, inbox and undelivered messages, recent "
        "admission decisions, turns, tool calls and failures",
    )
    inspect.add_argument("channel_url", metavar="CHANNEL_URL")
    inspect.add_argument("--json", action="store_true", help="print what the admin endpoint answers")


def run(args: argparse.Namespace, settings: Settings) -> int:
    """Print the conversation's report; 1 when nothing is known of it."""
    from ..store import keys

    keys.use_prefix(settings.key_prefix)
    return asyncio.run(
        _run(
            args.channel_url,
            settings.redis_url,
            as_json=args.json,
            max_chars=settings.sendbird_max_message_chars,
        )
    )


async def _run(channel_url: str, redis_url: str, *, as_json: bool, max_chars: int) -> int:
    from ..operations import inspection
    from ..operations.terminal import json_text
    from ..redis_client import connect
    from ..store.ledger import Ledger

    redis = connect(redis_url, socket_connect_timeout=5, socket_timeout=10)
    try:
        report = await inspection.conversation_report(
            redis, Ledger(redis), channel_url, max_message_chars=max_chars
        )
    finally:
        await redis.aclose()
    if not report.known:
        print(f"truloop-assistant inspect: nothing is known of {channel_url!r}", file=sys.stderr)
        return 1
    print(json_text(inspection.as_json(report)) if as_json else inspection.as_text(report))
    return 0

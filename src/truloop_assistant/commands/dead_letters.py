"""``truloop-assistant dead-letters``: list, replay or purge the events conversations gave up.

An event that failed every attempt (``MAX_EVENT_ATTEMPTS``) is kept as a dead letter (the last 20 per
conversation, for 7 days). ``list`` shows them, every conversation's or one's; once the cause is
fixed, ``replay`` puts them back in their conversation's inbox, after what waits there; ``purge``
drops them. Exit 0 when everything asked for was done, 1 with what to do otherwise, 2 for bad usage.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
from typing import TYPE_CHECKING, Any

from ..operations.terminal import json_text, printable

if TYPE_CHECKING:
    from redis.asyncio import Redis

    from ..config import Settings
    from ..operations.replay import Replay
    from ..store.ledger import DeadLetter, Ledger

PROG = "truloop-assistant dead-letters"
ERROR_SHOWN = 300
"""The text output shows an error up to this many characters (``--json`` shows all that is kept)."""


def add_parser(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add ``dead-letters list|replay|purge``."""
    command = subparsers.add_parser(
        "dead-letters",
        help="list, replay or purge the events conversations gave up after their retries",
        description="Events a conversation gave up after its retries (dead letters): list them, put "
        "them back in their conversation's inbox once the cause is fixed, or drop them.",
    )
    sub = command.add_subparsers(dest="dead_command", required=True, metavar="SUBCOMMAND")
    listing = sub.add_parser("list", help="every conversation's dead letters, or one's, newest first")
    listing.add_argument("channel_url", metavar="CHANNEL_URL", nargs="?", help="only this conversation's")
    listing.add_argument("--json", action="store_true", help="print JSON (for scripts)")
    for name, does in (
        ("replay", "push them into the conversation's inbox again, to run after what waits there"),
        ("purge", "drop them without running them"),
    ):
        action = sub.add_parser(name, help=does)
        action.add_argument("channel_url", metavar="CHANNEL_URL")
        which = action.add_mutually_exclusive_group(required=True)
        which.add_argument("--all", action="store_true", help="all of the conversation's dead letters")
        which.add_argument(
            "--id",
            dest="ids",
            action="append",
            metavar="ID",
            help="this one (its id from list, or the start of it); repeat for several",
        )
        action.add_argument("--json", action="store_true", help="print JSON (for scripts)")


def run(args: argparse.Namespace, settings: Settings) -> int:
    """Run a ``dead-letters`` subcommand; 0 when done, 1 with what to do on stderr otherwise."""
    from redis.exceptions import RedisError

    from ..config import masked_url
    from ..operations.replay import DeadLetterError
    from ..store import keys

    keys.use_prefix(settings.key_prefix)
    try:
        return asyncio.run(_run(args, settings))
    except DeadLetterError as exc:
        print(f"{PROG} {args.dead_command}: {exc}", file=sys.stderr)
        return 1
    except (RedisError, OSError) as exc:
        print(
            f"{PROG} {args.dead_command}: Redis at {masked_url(settings.redis_url)}: {exc}; "
            "check TRULOOP_REDIS_URL and that Redis is up",
            file=sys.stderr,
        )
        return 1


async def _run(args: argparse.Namespace, settings: Settings) -> int:
    from ..redis_client import connect
    from ..store.ledger import Ledger

    redis = connect(settings.redis_url, socket_connect_timeout=5, socket_timeout=10)
    try:
        ledger = Ledger(redis)
        if args.dead_command == "list":
            return await _list(redis, ledger, args.channel_url, as_json=args.json)
        letters = await _letters_of(redis, ledger, args.channel_url, None if args.all else args.ids)
        if args.dead_command == "purge":
            return await _purge(ledger, args.channel_url, letters, as_json=args.json)
        return await _replay(redis, ledger, settings, args.channel_url, letters, as_json=args.json)
    finally:
        await redis.aclose()


async def _letters_of(
    redis: Redis, ledger: Ledger, channel_url: str, ids: list[str] | None
) -> list[DeadLetter]:
    """The dead letters asked for; :class:`DeadLetterError` when there are none, or an id is unknown."""
    from ..operations.replay import DeadLetterError, choose

    letters = await ledger.dead_letters(channel_url)
    if not letters:
        known = await _known(redis, ledger, channel_url)
        raise DeadLetterError(f"{channel_url!r} has no dead letters" if known else _unknown(channel_url))
    return choose(letters, ids, channel_url)


async def _known(redis: Redis, ledger: Ledger, channel_url: str) -> bool:
    """Whether Redis holds anything of the conversation (a mistyped channel URL holds nothing)."""
    from ..operations.inspection import conversation_report

    return (await conversation_report(redis, ledger, channel_url)).known


def _unknown(channel_url: str) -> str:
    return (
        f"nothing is known of {channel_url!r}: check the channel URL (and TRULOOP_KEY_PREFIX); "
        "truloop-assistant dead-letters list shows every conversation that has dead letters"
    )


async def _list(redis: Redis, ledger: Ledger, channel_url: str | None, *, as_json: bool) -> int:
    found: dict[str, list[DeadLetter]]
    if channel_url is None:
        found = await ledger.all_dead_letters()
    else:
        letters = await ledger.dead_letters(channel_url)
        if not letters and not await _known(redis, ledger, channel_url):
            print(f"{PROG} list: {_unknown(channel_url)}", file=sys.stderr)
            return 1
        found = {channel_url: letters} if letters else {}
    count = sum(len(letters) for letters in found.values())
    if as_json:
        body = {
            "count": count,
            "dead_letters": [_as_json(url, d) for url, letters in found.items() for d in letters],
        }
        print(json_text(body))
        return 0
    if not count:
        print("no dead letters" + (f" in {channel_url!r}" if channel_url else " in any conversation"))
        return 0
    conversations = f" in {len(found)} conversations" if len(found) > 1 else ""
    print(f"{count} dead letter{'s' if count > 1 else ''}{conversations}, newest first")
    for url, letters in found.items():
        print(printable(url))
        for dead in letters:
            print(printable(f"  {dead.id}  {_iso(dead.at)}  {_event_line(dead)}"))
            print(printable(f"      {_short(dead.error)}"))
    print(
        "once the cause is fixed: truloop-assistant dead-letters replay CHANNEL_URL --id ID (or --all)\n"
        "to drop them:            truloop-assistant dead-letters purge CHANNEL_URL --id ID (or --all)"
    )
    return 0


async def _purge(ledger: Ledger, channel_url: str, letters: list[DeadLetter], *, as_json: bool) -> int:
    purged = await ledger.drop_dead_letters(channel_url, letters)
    if as_json:
        body = {"channel_url": channel_url, "purged": purged, "ids": [d.id for d in letters]}
        print(json_text(body))
        return 0
    gone = len(letters) - purged
    already = f" ({gone} had gone meanwhile)" if gone else ""
    print(printable(f"purged {purged} dead letter{'s' if purged != 1 else ''} of {channel_url}{already}"))
    return 0


async def _replay(
    redis: Redis,
    ledger: Ledger,
    settings: Settings,
    channel_url: str,
    letters: list[DeadLetter],
    *,
    as_json: bool,
) -> int:
    from ..operations.replay import DeadLetters
    from ..pipeline.intake import Intake
    from ..pipeline.queue import TurnQueue, make_queue
    from ..store.drains import Drains
    from ..store.history import History
    from ..store.inbox import Inbox
    from ..store.turns import TurnStore

    heartbeat = settings.worker_heartbeat_s
    queue = TurnQueue(make_queue(settings.redis_url, settings.queue_name), heartbeat_s=heartbeat)
    try:
        intake = Intake(Inbox(redis, owner_ttl_s=heartbeat), Drains(redis, owner_ttl_s=heartbeat), queue)
        history = History(redis, max_messages=settings.history_max_messages)
        store = TurnStore(redis, pending_ttl_s=settings.pending_call_ttl_s, history=history)
        replays = await DeadLetters(redis, ledger, intake, store).replay(channel_url, letters)
    finally:
        await queue.queue.disconnect()
    kept = [r for r in replays if not r.dropped]
    replayed = sum(1 for r in replays if r.outcome == "replayed")
    if as_json:
        body = {
            "channel_url": channel_url,
            "replayed": replayed,
            "kept": len(kept),
            "replays": [_replay_json(r) for r in replays],
        }
        print(json_text(body))
    else:
        for r in replays:
            print(printable(f"{r.letter.id}  {_event_line(r.letter)}: {_said(r)}"))
        others = len(replays) - replayed - len(kept)
        print(
            f"replayed {replayed} of {len(replays)} dead letter{'s' if len(replays) != 1 else ''} of "
            f"{printable(channel_url)}"
            + (f"; {others} dropped without running" if others else "")
            + (f"; {len(kept)} kept (see above)" if kept else "")
        )
        if replayed:
            print(printable(f"follow it with: truloop-assistant inspect {channel_url}"))
    for r in kept:
        print(printable(f"{PROG} replay: {r.letter.id} not replayed: {r.detail}"), file=sys.stderr)
    return 1 if kept else 0


def _said(replay: Replay) -> str:
    if replay.outcome == "replayed":
        return f"replayed: {replay.detail}"
    return f"{replay.detail}" + ("; dropped" if replay.dropped else "")


def _replay_json(replay: Replay) -> dict[str, Any]:
    from ..operations.inspection import dead_letter_summary

    return {
        **_timed(dead_letter_summary(replay.letter)),
        "outcome": replay.outcome,
        "dropped": replay.dropped,
        "detail": replay.detail,
    }


def _as_json(channel_url: str, dead: DeadLetter) -> dict[str, Any]:
    from ..operations.inspection import dead_letter_summary

    return {"channel_url": channel_url, **_timed(dead_letter_summary(dead))}


def _timed(summary: dict[str, Any]) -> dict[str, Any]:
    return {**summary, "at": _iso(summary["at"])}


def _iso(at: float) -> str:
    from ..operations.inspection import iso

    return iso(at) or ""


def _event_line(dead: DeadLetter) -> str:
    """The event in a few words, without what the person wrote."""
    from ..operations.inspection import dead_letter_summary

    event = dead_letter_summary(dead)["event"]
    match event.get("kind"):
        case "message":
            return (
                f"message {event.get('message_id')} (turn m{event.get('message_id')}) from "
                f"{event.get('user_id')}, {event.get('chars', '?')} characters"
            )
        case "resume":
            return f"resume of turn {event.get('turn_id')}"
        case "text" | "rpc" | "settle":
            chars = f", {event['chars']} characters" if "chars" in event else ""
            return f"{event['kind']} message {event.get('dedup_id')} to the channel, refused{chars}"
    return "an event that cannot be read" + (" (cut: it was too long)" if dead.cut else "")


def _short(error: str) -> str:
    text = " ".join(error.split())
    return text if len(text) <= ERROR_SHOWN else text[:ERROR_SHOWN] + "…"

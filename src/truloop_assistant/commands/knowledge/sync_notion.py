"""``truloop-assistant kb sync-notion [--root PAGE_ID]``: copy Notion pages into the knowledge base.

Reads with ``TRULOOP_NOTION_TOKEN`` (an internal integration's secret) and writes to the knowledge
base in Redis, where the server and the workers find the pages within a second. Prints a line every
10 pages read and a summary; exit 0, or 1 with one line saying why. A refused token or an unknown
root stops it before anything is written.
"""

from __future__ import annotations

import argparse
import asyncio
import sys

from pydantic import SecretStr
from redis.exceptions import RedisError

from ...backends.knowledge import KnowledgeBaseError
from ...backends.knowledge.notion import INTEGRATIONS_URL, NotionClient, NotionError
from ...backends.knowledge.notion_pages import page_id
from ...backends.knowledge.notion_sync import NotionSync, SyncReport
from ...backends.knowledge.store import KnowledgeStore
from ...config import Settings, masked_url
from ...redis_client import connect

COMMAND = "truloop-assistant kb sync-notion"
NO_TOKEN = (
    f"TRULOOP_NOTION_TOKEN is not set: create an internal integration at {INTEGRATIONS_URL} "
    "(capability 'Read content'), share the pages with it (a page's ••• menu > Connections) "
    "and set TRULOOP_NOTION_TOKEN to its Internal Integration Secret"
)


class _Stopped(Exception):
    """The sync failed after writing some pages: how many, to say so."""

    def __init__(self, reason: str, written: int) -> None:
        super().__init__(reason)
        self.written = written


def run(args: argparse.Namespace, settings: Settings) -> int:
    """Sync; 0 with a summary on stdout, 1 with the reason on stderr."""
    if not settings.notion_token:
        return _fail(NO_TOKEN)
    try:
        root = page_id(args.root) if args.root else None
    except ValueError as exc:
        return _fail(f"--root: {exc}")
    try:
        report = asyncio.run(_sync(settings, settings.notion_token, root))
    except _Stopped as exc:
        written = f" ({exc.written} pages were written before it stopped: run it again to go on)"
        return _fail(f"{exc}{written if exc.written else ''}")
    except (RedisError, OSError) as exc:
        return _fail(
            f"Redis at {masked_url(settings.redis_url)}: {exc}; start Redis or fix TRULOOP_REDIS_URL"
        )
    for line in summary(report):
        print(line)
    return 0


async def _sync(settings: Settings, token: SecretStr, root: str | None) -> SyncReport:
    redis = connect(settings.redis_url)
    try:
        async with NotionClient(token, settings.notion_api_url) as client:
            sync = NotionSync(
                client, KnowledgeStore(redis), root=root, progress=lambda line: print(line, flush=True)
            )
            try:
                return await sync.run()
            except (NotionError, KnowledgeBaseError) as exc:
                raise _Stopped(str(exc), sync.report.written.documents) from None
    finally:
        await redis.aclose()


def summary(report: SyncReport) -> list[str]:
    """What the sync did, as printed at its end."""
    lines = [
        f"synced Notion into the knowledge base: {report.read} pages read, {report.unchanged} unchanged "
        f"(not read), {report.removed} removed; {report.written.passages} passages written in "
        f"{report.seconds:.1f} s ({report.requests} request{'' if report.requests == 1 else 's'} to Notion)"
    ]
    if report.written.embedding_cost:
        written = report.written
        lines.append(f"embeddings: {written.embedded} passages embedded, costing {written.embedding_cost}")
    return lines


def _fail(reason: str) -> int:
    print(f"{COMMAND}: {reason}", file=sys.stderr)
    return 1

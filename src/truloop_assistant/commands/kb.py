"""``truloop-assistant kb``: what the knowledge base holds, and how well it finds things.

``kb index DIR`` puts a folder's Markdown documents into the knowledge base in Redis (replacing
what an earlier ``kb index`` put there), or into an index file with ``--output``; ``kb
sync-notion`` copies Notion pages into it; ``kb eval`` measures how well it finds the right
document. The server and the workers search the new documents within a second, without a restart.
"""

from __future__ import annotations

import argparse
import asyncio
import importlib
import sys
from pathlib import Path

from redis.exceptions import RedisError

from ..backends.knowledge import Bm25KnowledgeBase, KnowledgeBaseError
from ..backends.knowledge.store import KnowledgeStore, StoredDocument, WriteReport, embedding_with, folder_id
from ..config import Settings
from ..redis_client import connect
from ..store import keys

SUBCOMMANDS = {
    "sync-notion": "sync_notion",
    "eval": "retrieval",
}
"""Subcommands defined in ``commands/knowledge/<module>.py`` (imported only when they run)."""


def add_parser(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add ``kb index``, ``kb sync-notion`` and ``kb eval`` to the command's subparsers."""
    kb = subparsers.add_parser("kb", help="knowledge base administration")
    kb_sub = kb.add_subparsers(dest="kb_command", required=True)
    index = kb_sub.add_parser(
        "index",
        help="put a folder's .md files (e.g. a Notion export) into the knowledge base the server searches",
    )
    index.add_argument("dir", metavar="DIR", help="folder of Markdown documents, searched recursively")
    index.add_argument(
        "--output",
        metavar="PATH",
        default=None,
        help="write an index file there instead (for TRULOOP_KB_DIR without Redis documents)",
    )
    notion = kb_sub.add_parser(
        "sync-notion",
        help="copy the Notion pages the integration can read (TRULOOP_NOTION_TOKEN) into the knowledge base",
    )
    notion.add_argument(
        "--root", metavar="PAGE_ID", default=None, help="only this page and the pages under it"
    )
    evaluation = kb_sub.add_parser(
        "eval", help="measure how well the knowledge base finds the right document (recall@3, MRR)"
    )
    evaluation.add_argument(
        "--cases", metavar="PATH", default=None, help="questions and the documents that answer them"
    )
    evaluation.add_argument("--json", metavar="PATH", default=None, help="also write the results as JSON")


def run(args: argparse.Namespace, settings: Settings) -> int:
    """Run a ``kb`` subcommand; 0 on success, 1 with a one-line reason on stderr otherwise."""
    keys.use_prefix(settings.key_prefix)
    with embedding_with(settings.embedding_model):  # kb index and kb sync-notion embed what they write
        if args.kb_command == "index":
            return _index(Path(args.dir), Path(args.output) if args.output else None, settings)
        module = importlib.import_module(f".knowledge.{SUBCOMMANDS[args.kb_command]}", __package__)
        return int(module.run(args, settings))


def _index(folder: Path, output: Path | None, settings: Settings) -> int:
    try:
        kb = Bm25KnowledgeBase.build(folder)
    except KnowledgeBaseError as exc:
        print(f"truloop-assistant kb index: {exc}", file=sys.stderr)
        return 1
    if kb.document_count == 0:
        print(f"truloop-assistant kb index: no .md files with text in {str(folder)!r}", file=sys.stderr)
        return 1
    if output is not None:
        try:
            kb.save(output)
        except OSError as exc:
            print(
                f"truloop-assistant kb index: cannot write {str(output)!r}: {exc.strerror or exc}",
                file=sys.stderr,
            )
            return 1
        print(f"indexed {kb.document_count} documents ({kb.passage_count} passages) into {output}")
        return 0
    try:
        written, removed = asyncio.run(_into_redis(settings.redis_url, kb))
    except (RedisError, OSError) as exc:
        print(f"truloop-assistant kb index: Redis at {settings.redis_url}: {exc}", file=sys.stderr)
        return 1
    except KnowledgeBaseError as exc:
        print(f"truloop-assistant kb index: {exc}", file=sys.stderr)
        return 1
    print(
        f"indexed {kb.document_count} documents ({kb.passage_count} passages) into the knowledge base"
        + (f"; removed {removed} no longer in the folder" if removed else "")
    )
    if written.embedding_cost:
        print(f"embeddings: {written.embedded} passages embedded, costing {written.embedding_cost}")
    return 0


async def _into_redis(redis_url: str, kb: Bm25KnowledgeBase) -> tuple[WriteReport, int]:
    """The folder's documents replace the earlier folder's; Notion pages stay as they are."""
    redis = connect(redis_url)
    try:
        documents = [StoredDocument.of(d, doc_id=folder_id(d.path), source="folder") for d in kb.documents]
        return await KnowledgeStore(redis).replace("folder", documents)
    finally:
        await redis.aclose()

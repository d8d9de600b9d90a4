"""``truloop-assistant kb``: build the knowledge base index of a folder of Markdown documents."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from ..backends.knowledge import INDEX_FILE_NAME, Bm25KnowledgeBase, KnowledgeBaseError


def add_parser(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add ``kb index DIR [--output PATH]`` to the command's subparsers."""
    kb = subparsers.add_parser("kb", help="knowledge base administration")
    kb_sub = kb.add_subparsers(dest="kb_command", required=True)
    index = kb_sub.add_parser(
        "index", help="index the .md files of a folder (e.g. a Notion export) for the server to load"
    )
    index.add_argument("dir", metavar="DIR", help="folder of Markdown documents, searched recursively")
    index.add_argument(
        "--output",
        metavar="PATH",
        default=None,
        help=f"where to write the index (default: DIR/{INDEX_FILE_NAME})",
    )


def run(args: argparse.Namespace) -> int:
    """Run a ``kb`` subcommand; 0 on success, 1 with a one-line reason on stderr otherwise."""
    if args.kb_command != "index":  # pragma: no cover - argparse only offers "index"
        print(f"truloop-assistant kb: unknown command {args.kb_command!r}", file=sys.stderr)
        return 1
    return _index(Path(args.dir), Path(args.output) if args.output else None)


def _index(folder: Path, output: Path | None) -> int:
    output = output or folder / INDEX_FILE_NAME
    try:
        kb = Bm25KnowledgeBase.build(folder)
    except KnowledgeBaseError as exc:
        print(f"truloop-assistant kb index: {exc}", file=sys.stderr)
        return 1
    if kb.document_count == 0:
        print(f"truloop-assistant kb index: no .md files with text in {str(folder)!r}", file=sys.stderr)
        return 1
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

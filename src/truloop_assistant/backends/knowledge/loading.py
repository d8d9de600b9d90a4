"""The server's knowledge base at start-up: a folder's fresh saved index, or a build of its documents."""

from __future__ import annotations

import logging
import time
from pathlib import Path

from .documents import markdown_files
from .index_file import INDEX_FILE_NAME
from .port import KnowledgeBaseError
from .search import Bm25KnowledgeBase

logger = logging.getLogger(__name__)

SAMPLE_DIR = Path(__file__).resolve().parents[2] / "data" / "knowledge"
"""The bundled sample documents the dev server searches when no folder is configured."""


def load_knowledge_base(kb_dir: str | None) -> Bm25KnowledgeBase:
    """The server's knowledge base: the bundled samples, a folder's fresh saved index, or a fresh build."""
    started = time.perf_counter()
    folder = Path(kb_dir).expanduser() if kb_dir is not None else SAMPLE_DIR
    kb = _fresh_index(folder) if kb_dir is not None and folder.is_dir() else None
    source = "index" if kb is not None else "documents"
    if kb is None:
        kb = Bm25KnowledgeBase.build(folder)
    if kb.document_count == 0:
        logger.warning(
            "knowledge base folder %s has no Markdown documents; searches will find nothing", folder
        )
    logger.info(
        "knowledge base: %d documents (%d passages) from %s (%s) in %.0f ms",
        kb.document_count,
        kb.passage_count,
        folder,
        source,
        (time.perf_counter() - started) * 1000,
    )
    return kb


def _fresh_index(folder: Path) -> Bm25KnowledgeBase | None:
    """The saved index of a folder if it is newer than every document and covers the same files.

    An index of another format version (e.g. written before a parser change) is ignored, so the
    folder is indexed again in memory until ``kb index`` is re-run.
    """
    index_path = folder / INDEX_FILE_NAME
    if not index_path.is_file():
        return None
    files = markdown_files(folder)
    index_mtime = index_path.stat().st_mtime_ns
    if any(f.stat().st_mtime_ns >= index_mtime for f in files):
        logger.info("knowledge base index %s is older than its documents; rebuilding in memory", index_path)
        return None
    try:
        kb = Bm25KnowledgeBase.load(index_path)
    except KnowledgeBaseError as exc:
        logger.warning("ignoring knowledge base index: %s", exc)
        return None
    if kb.sources != {f.relative_to(folder).as_posix() for f in files}:
        logger.info("knowledge base index %s lists other files than the folder has; rebuilding", index_path)
        return None
    return kb

"""Documents cut into passages of a few hundred characters, each under its heading, ready to index."""

from __future__ import annotations

import logging
import os
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from ..search import tokenize
from .markdown import Block, parse_markdown

if TYPE_CHECKING:
    import numpy as np

log = logging.getLogger(__name__)

_CHUNK_TARGET_CHARS = 360
_NOTION_ID = re.compile(r"[\s_-]+[0-9a-f]{32}$", re.IGNORECASE)
_SENTENCE_END = re.compile(r"(?<=[.!?。])\s+")


@dataclass
class Passage:
    """A searchable piece of a document, and its tokens (which include the document's title)."""

    text: str
    tokens: list[str]
    vector: np.ndarray | None = None
    """Its meaning as a unit vector, when an embedding model is configured and has embedded it."""


@dataclass
class Document:
    """One document (a Markdown file, a Notion page): its title, where it lives, its passages."""

    title: str
    path: str
    passages: list[Passage]
    url: str | None = None
    """A link to it, when it has one (a Notion page)."""


def indexed_text(title: str, text: str) -> str:
    """What a passage is indexed and embedded as: with its title, which makes every passage findable by it."""
    return f"{title}\n{text}"


def passage_tokens(title: str, text: str) -> list[str]:
    """The tokens a passage is indexed under."""
    return tokenize(indexed_text(title, text))


def title_from_file_name(name: str) -> str:
    """A title from a file name: no extension, no trailing 32-hex Notion id."""
    stem = name[:-3] if name.lower().endswith(".md") else name
    return _NOTION_ID.sub("", stem).strip() or stem


def markdown_files(folder: Path) -> list[Path]:
    """The ``.md`` files under a folder, recursively, skipping hidden files and folders, sorted.

    Only what really is in the folder: a link to a file outside it is skipped (one log line each, so
    a link to e.g. ``/proc/self/environ`` is never served to chat users), and linked folders are not
    walked into (their files, when inside, are found where they really are).
    """
    root = folder.resolve()
    found = []
    for top, dirs, files in os.walk(folder):  # does not follow linked folders
        here = Path(top)
        for name in dirs:
            if (here / name).is_symlink() and not name.startswith(".") and not _inside(here / name, root):
                log.warning("knowledge base: skipping %s: it links outside %s", here / name, root)
        dirs[:] = [d for d in dirs if not d.startswith(".")]
        for name in files:
            path = here / name
            if name.startswith(".") or not name.lower().endswith(".md"):
                continue
            if not _inside(path, root):
                log.warning("knowledge base: skipping %s: it links outside %s", path, root)
            elif path.is_file():
                found.append(path)
    return sorted(found)


def _inside(path: Path, root: Path) -> bool:
    """Whether ``path``, its links followed, is ``root`` or under it (``root`` already resolved)."""
    try:
        return path.resolve().is_relative_to(root)
    except (OSError, RuntimeError):  # a loop of links
        return False


def document(path: str, text: str) -> Document:
    """A Markdown file's passages; the title is its first level-1 heading or else its file name."""
    found_title, sections = parse_markdown(text)
    title = found_title or title_from_file_name(Path(path).name)
    passages = []
    for section in sections:
        for chunk in _chunks(section.blocks):
            # Code starts on its own line so that its first line keeps its indentation.
            separator = "\n" if chunk.code else " "
            passage_text = f"{section.heading}:{separator}{chunk.text}" if section.heading else chunk.text
            tokens = passage_tokens(title, passage_text)
            if tokens:
                passages.append(Passage(text=passage_text, tokens=tokens))
    return Document(title=title, path=path, passages=passages)


def _chunks(blocks: Iterable[Block]) -> Iterator[Block]:
    """Prose packed into chunks near the target size; each code block's lines in chunks of their own."""
    current = ""
    for block in blocks:
        if block.code:
            if current:
                yield Block(current)
                current = ""
            yield from (Block(piece, code=True) for piece in _code_pieces(block.text))
            continue
        for piece in _prose_pieces(block.text):
            if current and len(current) + 1 + len(piece) > _CHUNK_TARGET_CHARS:
                yield Block(current)
                current = piece
            else:
                current = f"{current} {piece}" if current else piece
    if current:
        yield Block(current)


def _prose_pieces(text: str) -> Iterator[str]:
    """Prose cut at sentence ends (and, failing that, at spaces) into pieces that fit a chunk."""
    if len(text) <= _CHUNK_TARGET_CHARS:
        yield text
        return
    for sentence in _SENTENCE_END.split(text):
        while len(sentence) > _CHUNK_TARGET_CHARS:
            cut = sentence.rfind(" ", 0, _CHUNK_TARGET_CHARS)
            cut = cut if cut > _CHUNK_TARGET_CHARS // 2 else _CHUNK_TARGET_CHARS
            yield sentence[:cut].strip()
            sentence = sentence[cut:].strip()
        if sentence:
            yield sentence


def _code_pieces(code: str) -> Iterator[str]:
    """Code cut between lines (never inside one) into pieces near the chunk size, each verbatim."""
    lines: list[str] = []
    size = 0
    for line in code.split("\n"):
        if lines and size + len(line) > _CHUNK_TARGET_CHARS:
            if "".join(lines).strip():
                yield "\n".join(lines).strip("\n")
            lines, size = [], 0
        lines.append(line)
        size += len(line) + 1
    if "".join(lines).strip():
        yield "\n".join(lines).strip("\n")

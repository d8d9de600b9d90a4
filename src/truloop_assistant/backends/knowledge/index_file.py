"""The index file ``kb index`` writes: documents, passages and their tokens as validated JSON."""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path

from pydantic import BaseModel, ValidationError

from ..search import TOKENIZER_VERSION
from .documents import Document, Passage, passage_tokens
from .port import KnowledgeBaseError

INDEX_FILE_NAME = ".truloop-index.json"
"""Where ``kb index`` writes the index inside a folder, and where the server looks for it."""

INDEX_FORMAT = "truloop-knowledge-index"
INDEX_VERSION = 2
"""Bumped whenever documents are cut into passages differently: an older index must be rebuilt.

Version 2 parses Markdown with markdown-it (code blocks verbatim and apart, headings only outside code).
"""


class _PassageRecord(BaseModel):
    text: str
    tokens: list[str]


class _DocumentRecord(BaseModel):
    title: str
    path: str
    passages: list[_PassageRecord]


class _IndexFile(BaseModel):
    format: str
    version: int
    tokenizer: int
    sources: list[str]
    documents: list[_DocumentRecord]


def write_index(path: str | os.PathLike[str], documents: Iterable[Document], sources: Iterable[str]) -> None:
    """Write the documents and the list of source files as JSON, atomically."""
    record = _IndexFile(
        format=INDEX_FORMAT,
        version=INDEX_VERSION,
        tokenizer=TOKENIZER_VERSION,
        sources=sorted(sources),
        documents=[
            _DocumentRecord(
                title=d.title,
                path=d.path,
                passages=[_PassageRecord(text=p.text, tokens=p.tokens) for p in d.passages],
            )
            for d in documents
        ],
    )
    target = Path(path)
    tmp = target.with_name(f"{target.name}.{os.getpid()}.tmp")
    try:
        tmp.write_text(record.model_dump_json(), encoding="utf-8")
        tmp.replace(target)
    finally:
        tmp.unlink(missing_ok=True)


def read_index(path: str | os.PathLike[str]) -> tuple[list[Document], list[str]]:
    """The documents and source files of an index file (plain JSON, validated; nothing in it is executed).

    Tokens saved by another tokenizer version are recomputed from the passages' text.
    """
    try:
        raw = Path(path).read_bytes()
    except OSError as exc:
        raise KnowledgeBaseError(f"cannot read index {str(path)!r}: {exc.strerror or exc}") from None
    try:
        record = _IndexFile.model_validate_json(raw)
    except ValidationError:
        raise KnowledgeBaseError(f"{str(path)!r} is not a knowledge base index") from None
    if record.format != INDEX_FORMAT or record.version != INDEX_VERSION:
        raise KnowledgeBaseError(
            f"{str(path)!r} is a {record.format} v{record.version} file, not a "
            f"{INDEX_FORMAT} v{INDEX_VERSION} index; rebuild it with `truloop-assistant kb index`"
        )
    retokenize = record.tokenizer != TOKENIZER_VERSION
    documents = [
        Document(
            title=d.title,
            path=d.path,
            passages=[
                Passage(text=p.text, tokens=passage_tokens(d.title, p.text) if retokenize else p.tokens)
                for p in d.passages
            ],
        )
        for d in record.documents
    ]
    return documents, record.sources

"""The knowledge base: BM25 search over a folder of Markdown documents (e.g. a Notion export).

Documents are split into passages of a few hundred characters under their headings; passages are
ranked with ``bm25s`` and collapsed to one hit per document. The tokenizer needs no morphological
analyzer: Hangul runs become character bigrams (after a light particle strip), other scripts become
lowercase words (after light English suffix stripping). Queries use the same tokenizer.
"""

from __future__ import annotations

import logging
import os
import re
import time
import unicodedata
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from pydantic import BaseModel, Field, ValidationError

if TYPE_CHECKING:
    import bm25s

logger = logging.getLogger(__name__)

INDEX_FILE_NAME = ".truloop-index.json"
"""Where ``kb index`` writes the index inside a folder, and where the server looks for it."""

SAMPLE_DIR = Path(__file__).resolve().parent.parent / "data" / "knowledge"
"""The bundled sample documents the dev server searches when no folder is configured."""

SNIPPET_MAX_CHARS = 400
_CHUNK_TARGET_CHARS = 360
_INDEX_FORMAT = "truloop-knowledge-index"
_INDEX_VERSION = 1
TOKENIZER_VERSION = 1
"""Bumped whenever tokenization changes; an index saved with another version is re-tokenized on load."""


class KnowledgeBaseError(Exception):
    """A folder or index file cannot be used; the message says which and why."""


class KnowledgeHit(BaseModel):
    """One matching document and its best passage."""

    title: str = Field(description="the document's title")
    path: str = Field(description="the document's path inside the knowledge base folder")
    snippet: str = Field(description="the best-matching passage of the document")
    score: float = Field(description="BM25 relevance; higher is better, only comparable within one search")


class KnowledgeBase(Protocol):
    """Searches the organisation's internal documents."""

    async def search(self, query: str, *, limit: int = 5) -> list[KnowledgeHit]:
        """The best-matching documents for a query, best first, at most ``limit``."""
        ...


# --- tokenization -------------------------------------------------------------------------------

_HANGUL = "\uac00-\ud7a3"
_TOKEN_RUN = re.compile(rf"[{_HANGUL}]+|[^\W_{_HANGUL}]+(?:-[^\W_{_HANGUL}]+)*")

_EN_STOPWORDS = frozenset(
    """a about after all also am an and any are as at be been before being but by can could did do
    does doing for from get gets got had has have having he her here hers him his how i if in into is
    it its just let me might more most must my no nor not of off on once only or other our ours out
    over own please same she should so some such than that the their them then there these they this
    those through to too under until up very was we were what when where which while who whom why will
    with would you your yours""".split()
)
_KO_STOPWORDS = frozenset(
    """어떻게 어떤 어떻 무엇 뭐 뭐야 뭔가 뭔가요 뭐예요 알려 알려줘
    알려주세요 알려주 궁금 궁금해 궁금합니다 있나 있어 있어요 있나요 없어
    해줘 해주세요 그리고 그런데 하지만 또는 제가 저는 나는 내가 우리 혹시
    언제 어디 누구 이거 그거 저거 이건 그건 정말 그냥 지금 해 뭐해
    어떡해 하나 되나 돼 할까 하지 좀""".split()
)
_KO_SUFFIXES = tuple(
    sorted(
        """은 는 이 가 을 를 에 의 도 만 로 와 과 랑 나 야 요 께 에서
        에게 으로 까지 부터 처럼 보다 이랑 하고 이나 이야 이고 이며 라고
        예요 이에요 에서는 으로는 에는 에도 에서도 으로도 까지는 부터는 이라도
        에게는 만큼 마다 하다 하기 하는 하면 하려면 하려고 하나요 하세요 해요
        해야 해서 했어요 했어 합니다 합니까 할 한 해 해줘 해주세요 되나요
        돼요 되면 되는 됩니다 인가요 입니다 이다 인데""".split(),
        key=len,
        reverse=True,
    )
)


def _strip_particle(word: str) -> str:
    """Remove one trailing Korean particle or verb ending, keeping at least two syllables."""
    for suffix in _KO_SUFFIXES:
        if word.endswith(suffix) and len(word) - len(suffix) >= 2:
            return word[: -len(suffix)]
    return word


def _hangul_tokens(run: str) -> list[str]:
    if run in _KO_STOPWORDS:
        return []
    stem = _strip_particle(run)
    if stem in _KO_STOPWORDS:
        return []
    if len(stem) == 1:
        return [stem]
    tokens = [stem[i : i + 2] for i in range(len(stem) - 1)]
    if 3 <= len(stem) <= 5:
        tokens.append(stem)
    return tokens


def _stem_english(word: str) -> str:
    """A deliberately light stemmer: plurals and a few common suffixes."""
    if len(word) <= 3 or not word.isascii() or not word.isalpha():
        return word
    if word.endswith("ies") and len(word) > 4:
        word = word[:-3] + "y"
    elif word.endswith("sses"):
        word = word[:-2]
    elif word.endswith("s") and not word.endswith(("ss", "us")):
        word = word[:-1]
    for suffix in ("ment", "ing", "ed"):
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            word = word[: -len(suffix)]
            break
    if word.endswith("e") and len(word) > 3:
        word = word[:-1]
    return word


def _word_tokens(run: str) -> list[str]:
    parts = run.split("-")
    words = [run.replace("-", "")] if len(parts) > 1 else []
    words.extend(parts)
    tokens = []
    for word in words:
        if word in _EN_STOPWORDS or (len(word) == 1 and not word.isdigit()):
            continue
        tokens.append(_stem_english(word))
    return tokens


def tokenize(text: str) -> list[str]:
    """Tokens for indexing and querying: Hangul character bigrams and lowercase words."""
    normalized = unicodedata.normalize("NFKC", text).lower()
    tokens: list[str] = []
    for match in _TOKEN_RUN.finditer(normalized):
        run = match.group()
        tokens.extend(_hangul_tokens(run) if "\uac00" <= run[0] <= "\ud7a3" else _word_tokens(run))
    return tokens


# --- Markdown -> passages -----------------------------------------------------------------------

_NOTION_ID = re.compile(r"[\s_-]+[0-9a-f]{32}$", re.IGNORECASE)
_HEADING = re.compile(r"^(#{1,6})\s+(.*?)\s*#*\s*$")
_IMAGE = re.compile(r"!\[([^\]]*)\]\([^)]*\)")
_LINK = re.compile(r"\[([^\]]+)\]\([^)]*\)")
_HTML_TAG = re.compile(r"</?[a-zA-Z][^>]*>")
_EMPHASIS = re.compile(r"(\*\*|__|~~|`)")
_TABLE_RULE = re.compile(r"^\s*\|?\s*:?-{3,}:?\s*(\|\s*:?-{3,}:?\s*)*\|?\s*$")
_SENTENCE_END = re.compile(r"(?<=[.!?。])\s+")


def title_from_file_name(name: str) -> str:
    """A title from a file name: no extension, no trailing 32-hex Notion id."""
    stem = name[:-3] if name.lower().endswith(".md") else name
    return _NOTION_ID.sub("", stem).strip() or stem


def _clean_inline(text: str) -> str:
    text = _IMAGE.sub(r"\1", text)
    text = _LINK.sub(r"\1", text)
    text = _HTML_TAG.sub(" ", text)
    text = _EMPHASIS.sub("", text)
    return " ".join(text.split())


def _without_front_matter(lines: list[str]) -> list[str]:
    if lines and lines[0].strip() == "---":
        for i in range(1, len(lines)):
            if lines[i].strip() == "---":
                return lines[i + 1 :]
    return lines


def _sections(text: str) -> tuple[str | None, list[tuple[str, list[str]]]]:
    """The first ``# `` heading, and (heading, blocks) sections; blocks are paragraphs or lists."""
    title: str | None = None
    sections: list[tuple[str, list[str]]] = [("", [])]
    block: list[str] = []

    def flush() -> None:
        if block:
            cleaned = _clean_inline(" ".join(block))
            if cleaned:
                sections[-1][1].append(cleaned)
            block.clear()

    for line in _without_front_matter(text.splitlines()):
        stripped = line.strip()
        heading = _HEADING.match(stripped)
        if heading:
            flush()
            heading_text = _clean_inline(heading.group(2))
            if heading.group(1) == "#" and title is None:
                title = heading_text
                sections.append(("", []))
            else:
                sections.append((heading_text, []))
        elif not stripped or stripped.startswith("```") or _TABLE_RULE.match(stripped):
            flush()
        else:
            block.append(stripped)
    flush()
    return title, [(heading, blocks) for heading, blocks in sections if blocks]


def _pieces(block: str) -> Iterator[str]:
    """A block cut at sentence ends (and, failing that, at spaces) into pieces that fit a chunk."""
    if len(block) <= _CHUNK_TARGET_CHARS:
        yield block
        return
    for sentence in _SENTENCE_END.split(block):
        while len(sentence) > _CHUNK_TARGET_CHARS:
            cut = sentence.rfind(" ", 0, _CHUNK_TARGET_CHARS)
            cut = cut if cut > _CHUNK_TARGET_CHARS // 2 else _CHUNK_TARGET_CHARS
            yield sentence[:cut].strip()
            sentence = sentence[cut:].strip()
        if sentence:
            yield sentence


def _chunks(blocks: Iterable[str]) -> Iterator[str]:
    current = ""
    for block in blocks:
        for piece in _pieces(block):
            if current and len(current) + 1 + len(piece) > _CHUNK_TARGET_CHARS:
                yield current
                current = piece
            else:
                current = f"{current} {piece}" if current else piece
    if current:
        yield current


def _snippet(text: str) -> str:
    if len(text) <= SNIPPET_MAX_CHARS:
        return text
    cut = text.rfind(" ", 0, SNIPPET_MAX_CHARS - 1)
    cut = cut if cut > SNIPPET_MAX_CHARS // 2 else SNIPPET_MAX_CHARS - 1
    return text[:cut].rstrip() + "…"


@dataclass
class _Passage:
    text: str
    tokens: list[str]


@dataclass
class _Document:
    title: str
    path: str
    passages: list[_Passage]


def _document(path: str, text: str) -> _Document:
    found_title, sections = _sections(text)
    title = found_title or title_from_file_name(Path(path).name)
    passages = []
    for heading, blocks in sections:
        for chunk in _chunks(blocks):
            passage_text = f"{heading}: {chunk}" if heading else chunk
            tokens = tokenize(f"{title}\n{passage_text}")
            if tokens:
                passages.append(_Passage(text=passage_text, tokens=tokens))
    return _Document(title=title, path=path, passages=passages)


def markdown_files(folder: Path) -> list[Path]:
    """The ``.md`` files under a folder, recursively, skipping hidden files and folders, sorted."""
    return sorted(
        p
        for p in folder.rglob("*")
        if p.suffix.lower() == ".md"
        and p.is_file()
        and not any(part.startswith(".") for part in p.relative_to(folder).parts)
    )


# --- the index file -----------------------------------------------------------------------------


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


# --- the backend --------------------------------------------------------------------------------


class Bm25KnowledgeBase:
    """BM25 search over Markdown documents; the index is built once, searching is CPU work in memory."""

    def __init__(self, documents: list[_Document], sources: Iterable[str] | None = None) -> None:
        self.sources = frozenset(sources if sources is not None else (d.path for d in documents))
        """The relative paths of every file the index was built from, searchable or not."""
        self._documents = [d for d in documents if d.passages]
        self._passage_doc: list[int] = []
        self._passages: list[_Passage] = []
        for doc_index, doc in enumerate(self._documents):
            for passage in doc.passages:
                self._passage_doc.append(doc_index)
                self._passages.append(passage)
        self._retriever = self._index([p.tokens for p in self._passages]) if self._passages else None

    @staticmethod
    def _index(corpus: list[list[str]]) -> bm25s.BM25:
        import bm25s

        retriever = bm25s.BM25()
        retriever.index(corpus, show_progress=False)
        return retriever

    @classmethod
    def build(cls, folder: str | os.PathLike[str]) -> Bm25KnowledgeBase:
        """Read every ``.md`` file under ``folder`` and index it; raises if the folder does not exist."""
        root = Path(folder)
        if not root.exists():
            raise KnowledgeBaseError(f"folder {str(root)!r} does not exist")
        if not root.is_dir():
            raise KnowledgeBaseError(f"{str(root)!r} is not a folder")
        documents = []
        for file in markdown_files(root):
            try:
                text = file.read_text(encoding="utf-8-sig", errors="replace")
            except OSError as exc:
                raise KnowledgeBaseError(f"cannot read {str(file)!r}: {exc.strerror or exc}") from None
            documents.append(_document(file.relative_to(root).as_posix(), text))
        return cls(documents, sources=[d.path for d in documents])

    @property
    def document_count(self) -> int:
        """How many documents have at least one searchable passage."""
        return len(self._documents)

    @property
    def passage_count(self) -> int:
        """How many passages are indexed."""
        return len(self._passages)

    def search_sync(self, query: str, *, limit: int = 5) -> list[KnowledgeHit]:
        """The best passage of each matching document, best first; documents scoring zero are left out."""
        if self._retriever is None or limit < 1:
            return []
        vocab: dict[Any, int] = self._retriever.vocab_dict
        ids = [vocab[t] for t in tokenize(query) if t in vocab]
        if not ids:
            return []
        import numpy as np

        scores = self._retriever.get_scores_from_ids(ids)
        matching = np.flatnonzero(scores > 0)
        order = matching[np.argsort(-scores[matching], kind="stable")]
        hits: list[KnowledgeHit] = []
        seen: set[int] = set()
        for passage_index in order.tolist():
            doc_index = self._passage_doc[passage_index]
            if doc_index in seen:
                continue
            seen.add(doc_index)
            doc = self._documents[doc_index]
            hits.append(
                KnowledgeHit(
                    title=doc.title,
                    path=doc.path,
                    snippet=_snippet(self._passages[passage_index].text),
                    score=round(float(scores[passage_index]), 4),
                )
            )
            if len(hits) == limit:
                break
        return hits

    async def search(self, query: str, *, limit: int = 5) -> list[KnowledgeHit]:
        """See :meth:`search_sync`; runs inline (well under a millisecond for a handbook-sized folder)."""
        return self.search_sync(query, limit=limit)

    def save(self, path: str | os.PathLike[str]) -> None:
        """Write the index as JSON (documents, passages and their tokens), atomically."""
        record = _IndexFile(
            format=_INDEX_FORMAT,
            version=_INDEX_VERSION,
            tokenizer=TOKENIZER_VERSION,
            sources=sorted(self.sources),
            documents=[
                _DocumentRecord(
                    title=d.title,
                    path=d.path,
                    passages=[_PassageRecord(text=p.text, tokens=p.tokens) for p in d.passages],
                )
                for d in self._documents
            ],
        )
        target = Path(path)
        tmp = target.with_name(f"{target.name}.{os.getpid()}.tmp")
        try:
            tmp.write_text(record.model_dump_json(), encoding="utf-8")
            tmp.replace(target)
        finally:
            tmp.unlink(missing_ok=True)

    @classmethod
    def load(cls, path: str | os.PathLike[str]) -> Bm25KnowledgeBase:
        """Read an index written by :meth:`save` (plain JSON, validated; nothing in it is executed)."""
        try:
            raw = Path(path).read_bytes()
        except OSError as exc:
            raise KnowledgeBaseError(f"cannot read index {str(path)!r}: {exc.strerror or exc}") from None
        try:
            record = _IndexFile.model_validate_json(raw)
        except ValidationError:
            raise KnowledgeBaseError(f"{str(path)!r} is not a knowledge base index") from None
        if record.format != _INDEX_FORMAT or record.version != _INDEX_VERSION:
            raise KnowledgeBaseError(
                f"{str(path)!r} is a {record.format} v{record.version} file, not a "
                f"{_INDEX_FORMAT} v{_INDEX_VERSION} index; rebuild it with `truloop-assistant kb index`"
            )
        retokenize = record.tokenizer != TOKENIZER_VERSION
        return cls(
            [
                _Document(
                    title=d.title,
                    path=d.path,
                    passages=[
                        _Passage(
                            text=p.text, tokens=tokenize(f"{d.title}\n{p.text}") if retokenize else p.tokens
                        )
                        for p in d.passages
                    ],
                )
                for d in record.documents
            ],
            sources=record.sources,
        )


def _fresh_index(folder: Path) -> Bm25KnowledgeBase | None:
    """The saved index of a folder if it is newer than every document and covers the same files."""
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

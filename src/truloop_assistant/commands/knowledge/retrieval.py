"""``truloop-assistant kb eval``: how well the knowledge base finds the document that answers a question.

It searches what the server would search (the documents in Redis, else ``TRULOOP_KB_DIR`` or the
bundled handbook) with the questions of a cases file: by words, and, when an embedding model is
configured (``TRULOOP_EMBEDDING_MODEL``), by words and meaning fused as the server does. For each it
prints recall@3 and MRR overall and for Korean and English questions, each beside its target, and
the questions that missed.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import logging
import os
import re
import sys
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator
from redis.exceptions import RedisError

from ...backends.knowledge import SAMPLE_DIR, KnowledgeBaseError, KnowledgeHit, load_knowledge_base
from ...backends.knowledge.embedding import EmbeddingError
from ...backends.knowledge.live import LiveKnowledgeBase
from ...backends.knowledge.store import KnowledgeStore
from ...config import Settings, masked_url
from ...errors import OperatorError
from ...i18n import HANGUL
from ...redis_client import connect

DEFAULT_CASES = Path(__file__).resolve().parents[2] / "data" / "retrieval_cases.yaml"
"""The bundled retrieval set: questions about the bundled handbook."""

TOP = 3
"""recall@3: an answering document among the first three hits (what the tool returns by default)."""
DEPTH = 10
"""MRR counts an answering document down to this rank (MRR@10)."""
LANGUAGES = {"ko": "Korean", "en": "English"}
_HANGUL = re.compile(f"[{HANGUL}]")
COMMAND = "truloop-assistant kb eval"


class Target(BaseModel):
    """What one way of searching should reach; a figure below its target is marked ``<``."""

    model_config = ConfigDict(extra="forbid", populate_by_name=True)

    recall: float = Field(default=0.9, ge=0, le=1, alias="recall@3")
    mrr: float = Field(default=0.75, ge=0, le=1)


class Targets(BaseModel):
    model_config = ConfigDict(extra="forbid")

    words: Target = Field(default_factory=Target)
    meaning: Target = Field(default_factory=lambda: Target(recall=0.95, mrr=0.85))
    """Words and meaning fused (with an embedding model)."""


class Case(BaseModel):
    """A question and the documents (paths or titles) that answer it."""

    model_config = ConfigDict(extra="forbid")

    question: str = Field(min_length=1)
    answers: list[str] = Field(min_length=1)

    @field_validator("question")
    @classmethod
    def _stripped(cls, value: str) -> str:
        if not value.strip():
            raise ValueError("a question needs text")
        return value.strip()

    @property
    def language(self) -> str:
        """``ko`` when the question has Hangul in it, else ``en``."""
        return "ko" if _HANGUL.search(self.question) else "en"


class CasesFile(BaseModel):
    model_config = ConfigDict(extra="forbid")

    targets: Targets = Field(default_factory=Targets)
    cases: list[Case] = Field(min_length=1)


class RetrievalCasesError(OperatorError, ValueError):
    """The cases file is missing or invalid; the message names the file and the entry."""


def load_cases(path: Path) -> CasesFile:
    try:
        raw = yaml.safe_load(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise RetrievalCasesError(f"{path}: no such file") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise RetrievalCasesError(f"{path}: cannot read it ({exc})") from None
    except yaml.YAMLError as exc:
        raise RetrievalCasesError(f"{path}: not valid YAML ({exc})") from None
    try:
        return CasesFile.model_validate(raw)
    except ValidationError as exc:
        error = exc.errors()[0]
        where = ".".join(str(part) for part in error["loc"]) or "the file"
        raise RetrievalCasesError(f"{path}: {where}: {error['msg']}") from None


@dataclass(frozen=True)
class Answer:
    """Where a search put a question's first answering document (None: not among the first ten)."""

    case: Case
    rank: int | None
    found: list[str]
    """The paths of the hits, best first."""

    @property
    def reciprocal_rank(self) -> float:
        return 1 / self.rank if self.rank else 0.0


@dataclass(frozen=True)
class Figures:
    """recall@3 and MRR over some questions."""

    questions: int
    recall: float
    mrr: float

    @classmethod
    def of(cls, answers: list[Answer]) -> Figures:
        count = len(answers)
        if not count:
            return cls(0, 0.0, 0.0)
        recall = sum(1 for a in answers if a.rank is not None and a.rank <= TOP) / count
        return cls(count, recall, sum(a.reciprocal_rank for a in answers) / count)


def answer(case: Case, hits: list[KnowledgeHit]) -> Answer:
    rank = next(
        (i for i, hit in enumerate(hits, 1) if hit.path in case.answers or hit.title in case.answers), None
    )
    return Answer(case, rank, [hit.path for hit in hits])


Search = Callable[[str], Awaitable[list[KnowledgeHit]]]


@dataclass(frozen=True)
class Run:
    """One way of searching, measured on every question."""

    name: str
    target: Target
    answers: list[Answer]

    def figures(self) -> dict[str, Figures]:
        """Overall (``all``), then per language."""
        by_language = {
            language: Figures.of([a for a in self.answers if a.case.language == language])
            for language in LANGUAGES
        }
        return {"all": Figures.of(self.answers), **by_language}


async def measure(name: str, target: Target, cases: list[Case], search: Search) -> Run:
    return Run(name, target, [answer(case, await search(case.question)) for case in cases])


def render(run: Run) -> list[str]:
    """The misses, then the figures beside their targets."""
    lines = [run.name]
    for a in run.answers:
        if a.rank is None or a.rank > TOP:
            where = f"rank {a.rank}" if a.rank else f"not in the first {DEPTH}"
            got = ", ".join(a.found[:TOP]) or "nothing"
            lines.append(
                f"  miss  [{a.case.language}] {a.case.question}  ({', '.join(a.case.answers)}: {where}; "
                f"first: {got})"
            )
    labels = {"all": "all", **LANGUAGES}
    rows = [(f"{labels[key]} ({f.questions})", f) for key, f in run.figures().items()]
    width = max(len(label) for label, _ in rows)
    lines.append(f"  {'':<{width}}  {f'recall@{TOP}':<14}  MRR")
    for label, f in rows:
        lines.append(
            f"  {label:<{width}}  {_against(f.recall, run.target.recall)}  {_against(f.mrr, run.target.mrr)}"
        )
    return lines


def _against(value: float, target: float) -> str:
    """``0.873 < 0.90``: the figure, and whether it reaches its target."""
    return f"{value:.3f} {'≥' if value >= target else '<'} {target:.2f}"


def results_json(path: Path, source: str, runs: list[Run]) -> dict[str, Any]:
    return {
        "cases_file": str(path),
        "knowledge_base": source,
        "runs": [
            {
                "name": run.name,
                "targets": {f"recall@{TOP}": run.target.recall, "mrr": run.target.mrr},
                "figures": {
                    key: {
                        "questions": f.questions,
                        f"recall@{TOP}": round(f.recall, 4),
                        "mrr": round(f.mrr, 4),
                    }
                    for key, f in run.figures().items()
                },
                "questions": [
                    {
                        "question": a.case.question,
                        "language": a.case.language,
                        "answers": a.case.answers,
                        "rank": a.rank,
                        "found": a.found,
                    }
                    for a in run.answers
                ],
            }
            for run in runs
        ],
    }


def run(args: argparse.Namespace, settings: Settings) -> int:
    """Measure and print: 0 when it ran, 2 for a bad cases file or ``--json`` path, 1 if a search failed."""
    if "TRULOOP_LOG_LEVEL" not in os.environ:  # the report, not the index's log lines
        for handler in logging.getLogger().handlers:
            handler.setLevel(logging.WARNING)
    path = Path(args.cases) if args.cases else DEFAULT_CASES
    json_path = Path(args.json) if args.json else None
    if json_path is not None and (json_path.is_dir() or not json_path.parent.is_dir()):
        print(f"{COMMAND}: --json {json_path}: not a file in an existing folder", file=sys.stderr)
        return 2
    try:
        cases = load_cases(path)
    except RetrievalCasesError as exc:
        print(f"{COMMAND}: {exc}", file=sys.stderr)
        return 2
    try:
        source, runs = asyncio.run(_measure_all(cases, settings))
    except (EmbeddingError, KnowledgeBaseError) as exc:
        print(f"{COMMAND}: {exc}", file=sys.stderr)
        return 1
    counts = ", ".join(
        f"{sum(c.language == key for c in cases.cases)} {name}" for key, name in LANGUAGES.items()
    )
    print(f"{len(cases.cases)} questions ({counts}) from {path}")
    print(f"searching {source}")
    for measured in runs:
        print()
        print("\n".join(render(measured)))
    if json_path is not None:
        try:
            text = json.dumps(results_json(path, source, runs), ensure_ascii=False, indent=2)
            json_path.write_text(text + "\n", encoding="utf-8")
        except OSError as exc:
            print(f"{COMMAND}: --json {json_path}: {exc.strerror or exc}", file=sys.stderr)
            return 2
    return 0


async def _measure_all(cases: CasesFile, settings: Settings) -> tuple[str, list[Run]]:
    """What was searched, and a run by words (and one by words and meaning with an embedding model)."""
    redis = connect(settings.redis_url)
    try:
        store = KnowledgeStore(redis)  # with the command's embedding model, if any
        live = LiveKnowledgeBase(store, fallback=partial(load_knowledge_base, settings.kb_dir))
        index = await live.current()
        if live.from_redis:
            source = f"the knowledge base in Redis at {masked_url(settings.redis_url)}"
        else:
            source = f"the folder {settings.kb_dir or SAMPLE_DIR}"
        source += f": {index.document_count} documents ({index.passage_count} passages)"

        async def words(question: str) -> list[KnowledgeHit]:
            return index.search_sync(question, limit=DEPTH)

        runs = [await measure("words", cases.targets.words, cases.cases, words)]
        embedder = store.embedder
        if embedder is None:
            return source, runs
        if not index.has_vectors:
            raise EmbeddingError(
                f"no passage has a vector of {embedder.model_name} (see the warnings above): run kb index "
                "or kb sync-notion with TRULOOP_EMBEDDING_MODEL set"
            )

        async def fused(question: str) -> list[KnowledgeHit]:
            return index.search_sync(question, limit=DEPTH, query_vector=await embedder.query(question))

        name = f"words + meaning ({embedder.model_name})"
        runs.append(await measure(name, cases.targets.meaning, cases.cases, fused))
        return source, runs
    except RedisError as exc:
        raise KnowledgeBaseError(f"Redis at {masked_url(settings.redis_url)}: {exc}") from None
    finally:
        await redis.aclose()

"""``kb eval``: recall@3 and MRR of the knowledge base the server searches, by words and by meaning.

The embedding model is the local fake (``tests/fakes/embeddings.py``), asked as ``openai:`` is, through
``OPENAI_BASE_URL``.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import re
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from pydantic_ai import models
from redis.asyncio import Redis

from tests.fakes.embeddings import FakeEmbeddings
from tests.support import served
from truloop_assistant.backends.knowledge import SAMPLE_DIR
from truloop_assistant.commands import kb as kb_command
from truloop_assistant.commands.knowledge.retrieval import DEFAULT_CASES, load_cases
from truloop_assistant.config import Settings, load_settings

MODEL = "openai:text-embedding-3-small"
FIGURE = re.compile(
    r"^  (all|Korean|English) \((\d+)\)\s+(\d\.\d{3}) ([≥<]) (\d\.\d\d)  (\d\.\d{3}) ([≥<]) (\d\.\d\d)$"
)


@pytest.fixture
async def fake(monkeypatch: pytest.MonkeyPatch) -> AsyncIterator[FakeEmbeddings]:
    monkeypatch.setattr(models, "ALLOW_MODEL_REQUESTS", True)  # to the local fake only
    async with served(FakeEmbeddings()) as fake:
        for name, value in fake.env().items():
            monkeypatch.setenv(name, value)
        yield fake


def settings_for(redis_url: str, **overrides: str) -> Settings:
    return load_settings(redis_url=redis_url, channel="local", jwt_secret="x" * 32, **overrides)


def kb_args(*argv: str) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="truloop-assistant")
    kb_command.add_parser(parser.add_subparsers(dest="command", required=True))
    return parser.parse_args(["kb", *argv])


async def kb(settings: Settings, *argv: str) -> int:
    """``kb`` runs its own event loop, as the command line does: in a thread, so the fake keeps answering."""
    return await asyncio.to_thread(kb_command.run, kb_args(*argv), settings)


def sections(out: str) -> dict[str, list[str]]:
    """The output's runs: name -> its lines."""
    found: dict[str, list[str]] = {}
    for block in out.split("\n\n")[1:]:
        name, *lines = block.strip("\n").split("\n")
        found[name] = lines
    return found


def figures(lines: list[str]) -> dict[str, tuple[float, float]]:
    rows = [m.groups() for line in lines if (m := FIGURE.match(line))]
    for _, _, recall, mark, target, mrr, mark_mrr, target_mrr in rows:  # the marks say the truth
        assert (mark == "≥") == (float(recall) >= float(target))
        assert (mark_mrr == "≥") == (float(mrr) >= float(target_mrr))
    return {name: (float(recall), float(mrr)) for name, _, recall, _, _, mrr, _, _ in rows}


async def test_kb_eval_measures_the_bundled_handbook_by_words(
    redis: Redis, redis_url: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    cases = load_cases(DEFAULT_CASES).cases
    assert len(cases) >= 40
    korean = sum(c.language == "ko" for c in cases)
    assert abs(korean - (len(cases) - korean)) <= len(cases) // 5  # about half and half

    assert await kb(settings_for(redis_url), "eval", "--json", str(tmp_path / "eval.json")) == 0
    out = capsys.readouterr().out
    assert out.startswith(f"{len(cases)} questions ({korean} Korean, {len(cases) - korean} English) from ")
    assert f"searching the folder {SAMPLE_DIR}: 15 documents (" in out
    runs = sections(out)
    assert list(runs) == ["words"]
    found = figures(runs["words"])
    assert list(found) == ["all", "Korean", "English"]
    assert found["all"][0] >= 0.8 and found["all"][1] >= 0.7
    misses = [line for line in runs["words"] if line.startswith("  miss  ")]
    assert round((1 - len(misses) / len(cases)), 3) == found["all"][0]

    written = json.loads((tmp_path / "eval.json").read_text(encoding="utf-8"))
    [words] = written["runs"]
    assert words["name"] == "words"
    assert words["targets"] == {"recall@3": 0.9, "mrr": 0.75}
    assert round(words["figures"]["all"]["recall@3"], 3) == found["all"][0]
    assert words["figures"]["ko"]["questions"] == korean
    assert len(words["questions"]) == len(cases)
    assert {q["language"] for q in words["questions"]} == {"ko", "en"}


async def test_kb_eval_measures_words_and_meaning_with_an_embedding_model(
    redis: Redis, redis_url: str, tmp_path: Path, capsys: pytest.CaptureFixture[str], fake: FakeEmbeddings
) -> None:
    settings = settings_for(redis_url, embedding_model=MODEL)
    assert await kb(settings, "eval", "--json", str(tmp_path / "eval.json")) == 0
    runs = sections(capsys.readouterr().out)
    assert list(runs) == ["words", f"words + meaning ({MODEL})"]
    words, fused = figures(runs["words"]), figures(runs[f"words + meaning ({MODEL})"])
    assert fused["all"] >= words["all"]  # the fake bridges some paraphrases that words miss
    cases = len(load_cases(DEFAULT_CASES).cases)
    passages = len(fake.embedded) - cases
    assert passages > 50  # the handbook's passages, then each question

    # Again: the handbook's vectors are cached in Redis, only the questions are embedded.
    assert await kb(settings, "eval") == 0
    assert len(fake.embedded) == passages + 2 * cases
    written = json.loads((tmp_path / "eval.json").read_text(encoding="utf-8"))
    assert [run["name"] for run in written["runs"]] == ["words", f"words + meaning ({MODEL})"]
    assert written["runs"][1]["targets"] == {"recall@3": 0.95, "mrr": 0.85}


async def test_kb_eval_searches_the_documents_in_redis(
    redis: Redis, redis_url: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "deploy.md").write_text("# Deploy guide\n\nTag a release to deploy to production.\n", "utf-8")
    (docs / "oncall.md").write_text("# 온콜\n\n장애가 나면 온콜 담당자에게 전화하세요.\n", "utf-8")
    cases = tmp_path / "cases.yaml"
    cases.write_text(
        "targets:\n  words: {recall@3: 1, mrr: 1}\ncases:\n"
        "  - {question: 'how do we ship to production?', answers: [deploy.md]}\n"
        "  - {question: '장애 나면 누구한테 전화해요?', answers: [온콜]}\n"
        "  - {question: 'where is the coffee?', answers: [deploy.md]}\n",
        "utf-8",
    )
    settings = settings_for(redis_url)
    assert await kb(settings, "index", str(docs)) == 0
    capsys.readouterr()
    assert await kb(settings, "eval", "--cases", str(cases)) == 0
    out = capsys.readouterr().out
    assert "searching the knowledge base in Redis at redis://" in out and ": 2 documents (2 passages)" in out
    runs = sections(out)
    assert [line for line in runs["words"] if line.startswith("  miss")] == [
        "  miss  [en] where is the coffee?  (deploy.md: not in the first 10; first: nothing)"
    ]
    assert figures(runs["words"]) == {"all": (0.667, 0.667), "Korean": (1.0, 1.0), "English": (0.5, 0.5)}


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (None, "no such file"),
        ("cases: [", "not valid YAML"),
        ("cases: []", "cases: List should have at least 1 item"),
        ("cases:\n  - {question: hi}\n", "cases.0.answers: Field required"),
        (
            "targets: {words: {recall@3: 2}}\ncases:\n  - {question: hi, answers: [a.md]}\n",
            "less than or equal",
        ),
    ],
)
async def test_kb_eval_rejects_a_bad_cases_file(
    redis_url: str, tmp_path: Path, capsys: pytest.CaptureFixture[str], content: str | None, message: str
) -> None:
    path = tmp_path / "cases.yaml"
    if content is not None:
        path.write_text(content, encoding="utf-8")
    assert await kb(settings_for(redis_url), "eval", "--cases", str(path)) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err.startswith(f"truloop-assistant kb eval: {path}: ")
    assert message in captured.err


async def test_kb_eval_rejects_a_json_path_it_cannot_write(
    redis_url: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert await kb(settings_for(redis_url), "eval", "--json", str(tmp_path / "missing" / "x.json")) == 2
    assert "not a file in an existing folder" in capsys.readouterr().err

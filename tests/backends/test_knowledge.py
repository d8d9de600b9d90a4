"""The BM25 knowledge base over Markdown folders, its index file and the ``kb index`` command."""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import subprocess
import sys
import time
import zlib
from pathlib import Path

import pytest
from redis.asyncio import Redis

from truloop_assistant.backends.knowledge import (
    INDEX_FILE_NAME,
    SAMPLE_DIR,
    Bm25KnowledgeBase,
    KnowledgeBaseError,
    load_knowledge_base,
    title_from_file_name,
)
from truloop_assistant.backends.knowledge.live import LiveKnowledgeBase
from truloop_assistant.backends.knowledge.store import KnowledgeStore, StoredDocument
from truloop_assistant.backends.search import TOKENIZER_VERSION, tokenize
from truloop_assistant.commands import kb as kb_command
from truloop_assistant.config import Settings, load_settings
from truloop_assistant.store import keys


@pytest.fixture(scope="module")
def samples() -> Bm25KnowledgeBase:
    return load_knowledge_base(None)


def _write(folder: Path, name: str, text: str) -> Path:
    path = folder / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def _age(path: Path, seconds: float) -> None:
    """Move a file's modification time into the past."""
    stamp = time.time() - seconds
    os.utime(path, (stamp, stamp))


def _age_documents(folder: Path, seconds: float) -> None:
    for md in folder.rglob("*.md"):
        _age(md, seconds)


@pytest.fixture
def notion_export(tmp_path: Path) -> Path:
    folder = tmp_path / "export"
    _write(
        folder,
        "Vacation policy 1a2b3c4d5e6f7a8b9c0d1e2f3a4b5c6d.md",
        "Employees get 15 days of paid vacation.\n\nRequest vacation in the HR system.\n",
    )
    _write(
        folder,
        "Engineering 0123456789abcdef0123456789abcdef/Deploy guide fedcba9876543210fedcba9876543210.md",
        "# How we deploy\n\n## Staging\n\nMerge to main; the pipeline deploys to staging.\n\n"
        "## Production\n\nTag a release; an approver promotes it to production.\n",
    )
    _write(folder, "Empty page aaaabbbbccccddddeeeeffff0000111122.md", "")
    return folder


def test_samples_are_bundled(samples: Bm25KnowledgeBase) -> None:
    assert SAMPLE_DIR.is_dir()
    assert 12 <= samples.document_count <= 16
    assert samples.passage_count > samples.document_count


@pytest.mark.parametrize(
    ("query", "path", "title"),
    [
        ("연차는 며칠이야?", "vacation-policy.md", "휴가 정책 (Vacation policy)"),
        ("반차 쓰려면 어떻게 해?", "vacation-policy.md", "휴가 정책 (Vacation policy)"),
        ("how many days of PTO do I get", "vacation-policy.md", "휴가 정책 (Vacation policy)"),
        ("야근 택시비 정산", "expense-reimbursement.md", "Expense reimbursement (경비 정산)"),
        ("회의실 예약 방법", "meeting-rooms.md", "회의실 예약 안내 (Meeting rooms)"),
        ("how do I book a meeting room", "meeting-rooms.md", "회의실 예약 안내 (Meeting rooms)"),
        ("게스트 와이파이 비밀번호", "it-help-wifi.md", "IT help: Wi-Fi, VPN and laptops (IT 지원)"),
        ("wifi password for guests", "it-help-wifi.md", "IT help: Wi-Fi, VPN and laptops (IT 지원)"),
        ("방문객 주차권은 어디서 받아요?", "parking.md", "주차 안내 (Parking)"),
        ("출입증을 잃어버렸어요", "visitors-and-access.md", "Visitors and office access (방문객과 출입)"),
        ("how much is the per diem abroad", "business-travel.md", "Business travel (출장)"),
        ("육아휴직 신청", "parental-leave.md", "Parental leave (출산휴가와 육아휴직)"),
    ],
)
async def test_queries_find_the_right_document(
    samples: Bm25KnowledgeBase, query: str, path: str, title: str
) -> None:
    hits = await samples.search(query)
    assert hits, query
    assert (hits[0].path, hits[0].title) == (path, title)
    assert 0 < len(hits[0].snippet) <= 401
    assert hits[0].score > 0


@pytest.mark.parametrize(
    ("query", "path", "neighbour"),
    [
        # a business trip's taxis are claimed as expenses too: both pages say how
        ("how do I get reimbursed for a taxi", "expense-reimbursement.md", "business-travel.md"),
        # remote work speaks of coming to the office (출근) in the first weeks
        ("첫 출근날 뭐 해야 돼?", "onboarding.md", "remote-work.md"),
    ],
)
async def test_queries_near_another_subject_find_the_right_document_among_the_first(
    samples: Bm25KnowledgeBase, query: str, path: str, neighbour: str
) -> None:
    """Among the three hits the tool returns, next to the page on the neighbouring subject."""
    paths = [hit.path for hit in await samples.search(query, limit=3)]
    assert path in paths
    assert neighbour in paths


async def test_snippet_is_the_best_passage(samples: Bm25KnowledgeBase) -> None:
    [hit] = await samples.search("반차 반반차", limit=1)
    assert hit.snippet.startswith("반차와 반반차:")
    [hit] = await samples.search("sick leave doctor's note", limit=1)
    assert "doctor's note" in hit.snippet


async def test_one_hit_per_document_best_first(samples: Bm25KnowledgeBase) -> None:
    hits = await samples.search("Flex 신청 승인", limit=10)
    assert len(hits) == len({h.path for h in hits}) > 1
    assert [h.score for h in hits] == sorted((h.score for h in hits), reverse=True)
    assert len(await samples.search("Flex 신청 승인", limit=2)) == 2


@pytest.mark.parametrize(
    "query",
    [
        "what's the weather in Busan tomorrow?",
        "고양이 사료 어디서 사?",
        "quantum chromodynamics",
        "",
        "?!",
        "the",
    ],
)
async def test_unrelated_queries_find_nothing(samples: Bm25KnowledgeBase, query: str) -> None:
    assert await samples.search(query) == []


def test_tokenizer() -> None:
    assert tokenize("연차는 며칠이야?") == ["연차", "며칠"]
    # a compound the analyzer keeps whole is also found by its first word ("주차" finds "주차장")
    assert tokenize("회의실을") == ["회의실", "회의"]
    assert tokenize("Reimbursed taxis, Wi-Fi!") == ["reimburs", "taxi", "wifi", "wi", "fi"]
    assert tokenize("reimbursement") == tokenize("reimburse") == ["reimburs"]
    # chat tone ("ㅠㅠ") stuck to a word hides neither the word nor its particle
    assert tokenize("며칠이야ㅠㅠ") == ["며칠"]
    # verb stems as their dictionary form; nouns written together also as the whole word
    assert tokenize("휴가를 받았어요") == ["휴가", "받다"]
    assert tokenize("육아휴직은") == ["육아", "휴직", "육아휴직"]
    assert tokenize("Flex에서 2주 전에") == ["flex", "2", "주", "전"]


@pytest.mark.parametrize(
    "forms",
    [
        ("연차는", "연차를", "연차가", "연차도", "연차예요", "연차인데"),
        ("주차권은", "주차권을", "주차권이요", "주차권으로"),
        ("받아요", "받았는데", "받으려면", "받았습니다"),
        ("잃어버렸어요", "잃어버렸는데", "잃어버리면"),
        ("promotion", "promotions", "promoted", "promoting"),
        ("policy", "policies"),
        ("booking", "books", "booked"),
    ],
)
def test_particles_endings_and_inflections_do_not_change_tokens(forms: tuple[str, ...]) -> None:
    first, *others = forms
    assert tokenize(first)
    for form in others:
        assert tokenize(form) == tokenize(first), form


async def test_particles_and_endings_do_not_decide_matches(samples: Bm25KnowledgeBase) -> None:
    """With character bigrams "방문객 주차권은" and "방문객 주차권을" ranked differently; not any more."""
    asked = [
        "방문객 주차권은 어디서 받아요?",
        "방문객 주차권을 어디서 받나요",
        "방문객이 주차권 받으려면 어디로 가요?",
    ]
    found = [[(h.path, h.score) for h in await samples.search(query)] for query in asked]
    assert found[0] == found[1] == found[2]
    assert found[0][0][0] == "parking.md"


def test_the_analyzer_loads_on_the_first_korean_text_not_at_import() -> None:
    """It takes a second and some 300 MB: a server that never searches Korean never loads it."""
    script = (
        "import sys\n"
        "from truloop_assistant.app import create_app\n"
        "from truloop_assistant.backends.search import tokenize\n"
        "from truloop_assistant.backends.search.tokenize import analyzer_loaded\n"
        "assert tokenize('parking pass') == ['park', 'pass']\n"
        "assert not analyzer_loaded() and 'kiwipiepy' not in sys.modules\n"
        "assert tokenize('주차권은') == ['주차', '주차권']\n"
        "assert analyzer_loaded()\n"
    )
    subprocess.run([sys.executable, "-c", script], check=True, timeout=60)


@pytest.mark.parametrize(
    ("name", "title"),
    [
        ("Vacation policy 1a2b3c4d5e6f7a8b9c0d1e2f3a4b5c6d.md", "Vacation policy"),
        ("휴가 정책 1A2B3C4D5E6F7A8B9C0D1E2F3A4B5C6D.md", "휴가 정책"),
        ("Plain name.md", "Plain name"),
        ("Version 2.md", "Version 2"),
    ],
)
def test_title_from_file_name(name: str, title: str) -> None:
    assert title_from_file_name(name) == title


async def test_notion_export_titles_and_paths(notion_export: Path) -> None:
    kb = Bm25KnowledgeBase.build(notion_export)
    assert (kb.document_count, kb.passage_count) == (2, 3)
    [hit] = await kb.search("how many vacation days", limit=5)
    assert hit.title == "Vacation policy"
    assert hit.path == "Vacation policy 1a2b3c4d5e6f7a8b9c0d1e2f3a4b5c6d.md"
    [hit] = await kb.search("deploy to production", limit=5)
    assert hit.title == "How we deploy"
    assert hit.path == (
        "Engineering 0123456789abcdef0123456789abcdef/Deploy guide fedcba9876543210fedcba9876543210.md"
    )
    assert hit.snippet == "Production: Tag a release; an approver promotes it to production."


async def test_markdown_is_cleaned_and_long_sections_split(tmp_path: Path) -> None:
    sentence = "The quarterly offsite happens in Jeju and everyone is invited to join. "
    _write(
        tmp_path,
        "offsite.md",
        "---\ntags: [events]\n---\n# Offsite\n\n<aside>Read [the agenda](agenda.md) **first**.</aside>\n\n"
        f"## Details\n\n{sentence * 20}\n\n| a | b |\n|---|---|\n| x | y |\n\n```\ncode\n```\n",
    )
    kb = Bm25KnowledgeBase.build(tmp_path)
    assert kb.passage_count > 3
    [hit] = await kb.search("agenda", limit=1)
    assert hit.snippet == "Read the agenda first."
    [hit] = await kb.search("jeju offsite", limit=1)
    assert hit.title == "Offsite"
    assert hit.snippet.startswith("Details: The quarterly offsite")
    assert len(hit.snippet) <= 400


def _passages(kb: Bm25KnowledgeBase, tmp_path: Path) -> list[str]:
    """The text of every indexed passage, read back from the saved index."""
    kb.save(tmp_path / "passages.json")
    data = json.loads((tmp_path / "passages.json").read_text(encoding="utf-8"))
    return [p["text"] for d in data["documents"] for p in d["passages"]]


SETUP_GUIDE = """# Developer setup

## Install

Install the CLI first.

```bash
# install the client
pip install "truloop-client==2.*"
truloop login --sso   # opens a **browser**
```

Then sign in with your **company** account.

    $ truloop whoami --verbose
    jeff@truloop.example
"""


async def test_code_blocks_are_kept_verbatim_and_apart(tmp_path: Path) -> None:
    _write(tmp_path / "docs", "setup.md", SETUP_GUIDE)
    kb = Bm25KnowledgeBase.build(tmp_path / "docs")
    passages = _passages(kb, tmp_path)
    assert passages == [
        "Install: Install the CLI first.",
        'Install:\n# install the client\npip install "truloop-client==2.*"\n'
        "truloop login --sso   # opens a **browser**",
        "Install: Then sign in with your company account.",
        "Install:\n$ truloop whoami --verbose\njeff@truloop.example",
    ]
    # a comment line in a code fence is code, not a heading that would start a section
    assert not any(p.startswith(("install the client", "# install the client")) for p in passages)

    [hit] = await kb.search("truloop login sso", limit=1)
    assert hit.snippet == passages[1]
    [hit] = await kb.search("whoami", limit=1)
    assert hit.snippet == passages[3]


async def test_long_code_blocks_are_cut_between_lines(tmp_path: Path) -> None:
    lines = [f"export SETTING_{i:02d}=value-{i:02d}  # keep" for i in range(40)]
    _write(tmp_path / "docs", "env.md", "# Environment\n\n```sh\n" + "\n".join(lines) + "\n```\n")
    passages = _passages(Bm25KnowledgeBase.build(tmp_path / "docs"), tmp_path)
    assert len(passages) > 1
    assert "\n".join(passages).split("\n") == lines
    assert all(len(p) <= 400 for p in passages)


async def test_markdown_structure_comes_from_the_syntax(tmp_path: Path) -> None:
    _write(
        tmp_path / "docs",
        "parking.md",
        "Parking\n=======\n\nSee the [map](map.png) ![garage B2](b2.png).\n\n"
        "<!-- draft: not for staff -->\n\n"
        "Visitors\n--------\n\n- Ask *reception*\n- Get a ticket\n\n***\n\n"
        "| floor | spaces |\n|:-----|-------:|\n| B2 | 40 |\n\n> Note: no bikes\n",
    )
    kb = Bm25KnowledgeBase.build(tmp_path / "docs")
    assert _passages(kb, tmp_path) == [
        "See the map garage B2.",
        "Visitors: - Ask reception - Get a ticket | floor | spaces | | B2 | 40 | > Note: no bikes",
    ]
    [hit] = await kb.search("parking visitors", limit=1)
    assert hit.title == "Parking"
    assert await kb.search("draft") == []


async def test_save_and_load_round_trip(notion_export: Path, tmp_path: Path) -> None:
    built = Bm25KnowledgeBase.build(notion_export)
    index = tmp_path / "index.json"
    built.save(index)
    data = json.loads(index.read_text(encoding="utf-8"))
    assert data["format"] == "truloop-knowledge-index"
    loaded = Bm25KnowledgeBase.load(index)
    assert (loaded.document_count, loaded.passage_count) == (built.document_count, built.passage_count)
    for query in ("vacation days", "deploy staging", "production release", "nothing like this"):
        assert await loaded.search(query) == await built.search(query)


async def test_samples_round_trip(samples: Bm25KnowledgeBase, tmp_path: Path) -> None:
    samples.save(tmp_path / "index.json")
    loaded = Bm25KnowledgeBase.load(tmp_path / "index.json")
    for query in ("연차는 며칠이야?", "회의실 예약 방법", "taxi reimbursement", "와이파이"):
        assert await loaded.search(query) == await samples.search(query)


async def test_load_retokenizes_an_index_from_another_tokenizer(notion_export: Path, tmp_path: Path) -> None:
    built = Bm25KnowledgeBase.build(notion_export)
    built.save(tmp_path / "index.json")
    data = json.loads((tmp_path / "index.json").read_text(encoding="utf-8"))
    data["tokenizer"] = 0
    for doc in data["documents"]:
        for passage in doc["passages"]:
            passage["tokens"] = ["stale"]
    (tmp_path / "index.json").write_text(json.dumps(data), encoding="utf-8")
    loaded = Bm25KnowledgeBase.load(tmp_path / "index.json")
    assert await loaded.search("deploy staging") == await built.search("deploy staging")


@pytest.mark.parametrize(
    "content", ["not json", '{"format": "something else"}', '{"__class__": "os.system"}', "[1, 2]"]
)
def test_load_rejects_other_files(tmp_path: Path, content: str) -> None:
    (tmp_path / "index.json").write_text(content, encoding="utf-8")
    with pytest.raises(KnowledgeBaseError, match="is not a knowledge base index"):
        Bm25KnowledgeBase.load(tmp_path / "index.json")


def test_load_rejects_another_format_version(notion_export: Path, tmp_path: Path) -> None:
    Bm25KnowledgeBase.build(notion_export).save(tmp_path / "index.json")
    data = json.loads((tmp_path / "index.json").read_text(encoding="utf-8"))
    data["version"] = 99
    (tmp_path / "index.json").write_text(json.dumps(data), encoding="utf-8")
    with pytest.raises(KnowledgeBaseError, match="rebuild it"):
        Bm25KnowledgeBase.load(tmp_path / "index.json")


def test_build_rejects_a_missing_folder(tmp_path: Path) -> None:
    with pytest.raises(KnowledgeBaseError, match="does not exist"):
        Bm25KnowledgeBase.build(tmp_path / "nope")
    with pytest.raises(KnowledgeBaseError, match="does not exist"):
        load_knowledge_base(str(tmp_path / "nope"))


async def test_hidden_files_and_other_extensions_are_skipped(tmp_path: Path) -> None:
    _write(tmp_path, "visible.md", "# Visible\n\nparking garage rules\n")
    _write(tmp_path, ".trash/old.md", "# Old\n\nparking garage rules\n")
    _write(tmp_path, "notes.txt", "parking garage rules\n")
    kb = Bm25KnowledgeBase.build(tmp_path)
    assert [h.path for h in await kb.search("parking")] == ["visible.md"]


def _folder_with_links_out(tmp_path: Path) -> Path:
    """A knowledge folder with one real document, and links to a file and a folder outside it."""
    outside = tmp_path / "outside"
    _write(outside, "environ.md", "TRULOOP_JWT_SECRET=hunter2-parking\n")
    _write(outside, "private/notes.md", "# Private\n\nhunter2 parking garage\n")
    folder = tmp_path / "kb"
    _write(folder, "garage.md", "# Garage\n\nparking garage rules\n")
    _write(folder, "team/lunch.md", "# Lunch\n\nthe cafeteria menu\n")
    (folder / "environ.md").symlink_to(outside / "environ.md")
    (folder / "linked").symlink_to(outside / "private", target_is_directory=True)
    (folder / "team/up.md").symlink_to("../../outside/environ.md")
    (folder / "alias.md").symlink_to(folder / "team/lunch.md")  # a link that stays inside is read
    return folder


async def test_links_out_of_the_folder_are_not_read(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    folder = _folder_with_links_out(tmp_path)
    caplog.set_level("WARNING")
    kb = load_knowledge_base(str(folder))
    assert sorted(d.path for d in kb.documents) == ["alias.md", "garage.md", "team/lunch.md"]
    assert await kb.search("hunter2") == []
    assert [h.path for h in await kb.search("parking")] == ["garage.md"]
    skipped = [r.getMessage() for r in caplog.records if "outside" in r.getMessage()]
    assert len(skipped) == 3 and any("team/up.md" in line for line in skipped), skipped


async def test_kb_index_does_not_read_links_out_of_the_folder(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], settings: Settings, redis: Redis
) -> None:
    folder = _folder_with_links_out(tmp_path)
    assert await kb_command_run(_kb_args("index", str(folder)), settings) == 0
    assert capsys.readouterr().out.startswith("indexed 3 documents")
    live = LiveKnowledgeBase(
        KnowledgeStore(redis), fallback=lambda: load_knowledge_base(None), check_every_s=0
    )
    assert await live.search("hunter2") == []
    assert [h.path for h in await live.search("parking")] == ["garage.md"]
    stored = json.dumps([d.model_dump() for d in await KnowledgeStore(redis).documents()])
    assert "hunter2" not in stored


async def test_empty_knowledge_base_finds_nothing(tmp_path: Path) -> None:
    kb = load_knowledge_base(str(tmp_path))
    assert kb.document_count == 0
    assert await kb.search("anything") == []


async def test_load_uses_a_fresh_index(notion_export: Path) -> None:
    _age_documents(notion_export, 60)
    Bm25KnowledgeBase.build(notion_export).save(notion_export / INDEX_FILE_NAME)
    # an index that differs from the documents shows which one was loaded
    (notion_export / "Vacation policy 1a2b3c4d5e6f7a8b9c0d1e2f3a4b5c6d.md").write_text(
        "changed", encoding="utf-8"
    )
    _age(notion_export / "Vacation policy 1a2b3c4d5e6f7a8b9c0d1e2f3a4b5c6d.md", 60)
    kb = load_knowledge_base(str(notion_export))
    assert [h.title for h in await kb.search("paid")] == ["Vacation policy"]


async def test_load_rebuilds_a_stale_index(notion_export: Path) -> None:
    Bm25KnowledgeBase.build(notion_export).save(notion_export / INDEX_FILE_NAME)
    _age(notion_export / INDEX_FILE_NAME, 60)
    _write(
        notion_export, "Parking 99999999999999999999999999999999.md", "# Parking\n\nThe garage is on B2.\n"
    )
    kb = load_knowledge_base(str(notion_export))
    assert [h.title for h in await kb.search("where is the garage")] == ["Parking"]


async def test_load_rebuilds_when_a_file_was_added_with_an_old_time(notion_export: Path) -> None:
    """Unzipping an export keeps old modification times: the file list is compared too."""
    Bm25KnowledgeBase.build(notion_export).save(notion_export / INDEX_FILE_NAME)
    new = _write(notion_export, "Parking.md", "# Parking\n\nThe garage is on B2.\n")
    _age(new, 3600)
    kb = load_knowledge_base(str(notion_export))
    assert [h.title for h in await kb.search("garage")] == ["Parking"]


async def test_load_rebuilds_an_index_from_the_previous_parser(tmp_path: Path) -> None:
    """An index written before code blocks were kept apart (format v1) is not trusted."""
    folder = tmp_path / "docs"
    _write(folder, "setup.md", SETUP_GUIDE)
    _age_documents(folder, 60)
    Bm25KnowledgeBase.build(folder).save(folder / INDEX_FILE_NAME)
    data = json.loads((folder / INDEX_FILE_NAME).read_text(encoding="utf-8"))
    assert data["version"] == 2
    data["version"] = 1
    for doc in data["documents"]:
        doc["passages"] = [{"text": "install the client: pip install", "tokens": ["stale"]}]
    (folder / INDEX_FILE_NAME).write_text(json.dumps(data), encoding="utf-8")

    kb = load_knowledge_base(str(folder))
    [hit] = await kb.search("whoami", limit=1)
    assert hit.snippet == "Install:\n$ truloop whoami --verbose\njeff@truloop.example"


async def test_load_ignores_a_corrupt_index(notion_export: Path) -> None:
    (notion_export / INDEX_FILE_NAME).write_text("{broken", encoding="utf-8")
    kb = load_knowledge_base(str(notion_export))
    assert [h.title for h in await kb.search("deploy")] == ["How we deploy"]


def _kb_args(*argv: str) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="truloop-assistant")
    kb_command.add_parser(parser.add_subparsers(dest="command", required=True))
    return parser.parse_args(["kb", *argv])


@pytest.fixture
def settings(redis_url: str) -> Settings:
    return load_settings(redis_url=redis_url, channel="local", jwt_secret="x" * 32)


async def test_kb_index_command_puts_the_folder_into_the_live_knowledge_base(
    notion_export: Path, capsys: pytest.CaptureFixture[str], settings: Settings, redis: Redis
) -> None:
    live = LiveKnowledgeBase(
        KnowledgeStore(redis), fallback=lambda: load_knowledge_base(None), check_every_s=0
    )
    assert [h.title for h in await live.search("staging")] == []  # the bundled samples until then
    assert await kb_command_run(_kb_args("index", str(notion_export)), settings) == 0
    assert capsys.readouterr().out == "indexed 2 documents (3 passages) into the knowledge base\n"
    assert not (notion_export / INDEX_FILE_NAME).exists()
    assert [h.title for h in await live.search("staging")] == ["How we deploy"]  # no restart

    # Indexing the folder again replaces what it put there: a deleted file's document goes.
    (notion_export / "Vacation policy 1a2b3c4d5e6f7a8b9c0d1e2f3a4b5c6d.md").unlink()
    assert await kb_command_run(_kb_args("index", str(notion_export)), settings) == 0
    assert "removed 1 no longer in the folder" in capsys.readouterr().out
    assert await live.search("vacation") == []


async def test_stored_tokens_of_another_tokenizer_are_recomputed(redis: Redis) -> None:
    """Documents a sync wrote before the tokenizer changed are searched by the new tokens, and the next
    write stores the new tokens (so the processes stop recomputing them at every rebuild)."""
    text = "방문객 주차권은 1층 안내데스크에서 받아요."
    stale = StoredDocument(
        doc_id="folder:parking.md",
        source="folder",
        title="주차",
        path="parking.md",
        texts=[text],
        tokens=[["방문", "문객", "방문객", "주차", "차권", "주차권"]],  # bigrams, as version 2 made them
        tokenizer=2,
    )
    store = KnowledgeStore(redis)
    await store.put([stale.model_copy(update={"doc_id": "folder:old.md"})])
    # as the previous release left it in Redis: compressed JSON, with its tokens
    await redis.hset(keys.kb_documents(), stale.doc_id, zlib.compress(stale.model_dump_json().encode()))
    live = LiveKnowledgeBase(store, fallback=lambda: load_knowledge_base(None), check_every_s=0)
    [hit, _] = await live.search("방문객 주차권을 받으려면", limit=3)
    assert hit.path == "parking.md"
    document = next(d for d in (await live.current()).documents if d.path == "parking.md")
    assert document.passages[0].tokens == tokenize(f"주차\n{text}")
    assert "차권" not in document.passages[0].tokens

    await store.put([StoredDocument.of(document, doc_id="folder:other.md", source="folder")])
    written = {d.doc_id: d for d in await store.documents()}
    assert written["folder:parking.md"].tokenizer == TOKENIZER_VERSION
    assert written["folder:parking.md"].tokens == [tokenize(f"주차\n{text}")]
    assert written["folder:old.md"].tokenizer == TOKENIZER_VERSION  # retokenized when it was put


async def kb_command_run(args: argparse.Namespace, settings: Settings) -> int:
    """``kb`` runs its own event loop (as the command line does): in a thread here."""
    return await asyncio.to_thread(kb_command.run, args, settings)


def test_kb_index_command_with_output(
    notion_export: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], settings: Settings
) -> None:
    output = tmp_path / "out" / "kb.json"
    output.parent.mkdir()
    assert kb_command.run(_kb_args("index", str(notion_export), "--output", str(output)), settings) == 0
    assert capsys.readouterr().out == f"indexed 2 documents (3 passages) into {output}\n"
    assert Bm25KnowledgeBase.load(output).document_count == 2
    assert not (notion_export / INDEX_FILE_NAME).exists()


def test_kb_index_samples(tmp_path: Path, capsys: pytest.CaptureFixture[str], settings: Settings) -> None:
    args = _kb_args("index", str(SAMPLE_DIR), "--output", str(tmp_path / "i.json"))
    assert kb_command.run(args, settings) == 0
    assert capsys.readouterr().out.startswith("indexed 15 documents (")


@pytest.mark.parametrize(
    ("setup", "message"),
    [
        (lambda root: root / "missing", "does not exist"),
        (lambda root: _write(root, "file.md", "text"), "is not a folder"),
        (lambda root: root, "no .md files with text in"),
    ],
)
def test_kb_index_errors(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], setup, message: str, settings: Settings
) -> None:
    _write(tmp_path, "notes.txt", "not markdown")
    target = setup(tmp_path)
    assert kb_command.run(_kb_args("index", str(target)), settings) == 1
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err.startswith("truloop-assistant kb index: ")
    assert message in captured.err
    assert not (tmp_path / INDEX_FILE_NAME).exists()


def test_kb_index_unwritable_output(
    notion_export: Path, capsys: pytest.CaptureFixture[str], settings: Settings
) -> None:
    output = notion_export / "no-such-folder" / "index.json"
    assert kb_command.run(_kb_args("index", str(notion_export), "--output", str(output)), settings) == 1
    assert "cannot write" in capsys.readouterr().err


def test_kb_requires_a_subcommand() -> None:
    with pytest.raises(SystemExit):
        _kb_args()

"""``kb sync-notion`` against a local fake of the Notion API: what it copies, skips, replaces and removes."""

from __future__ import annotations

import argparse
import asyncio
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass
from datetime import UTC, datetime

import pytest
from redis.asyncio import Redis

from tests.fakes.notion import (
    NOTION_TOKEN,
    FakeNotion,
    bullet,
    callout,
    code,
    columns,
    divider,
    heading,
    image,
    numbered,
    paragraph,
    quote,
    table,
    todo,
    toggle,
)
from tests.support import served
from truloop_assistant.backends.knowledge import load_knowledge_base, notion_sync
from truloop_assistant.backends.knowledge import notion as notion_api
from truloop_assistant.backends.knowledge.live import LiveKnowledgeBase
from truloop_assistant.backends.knowledge.notion import NotionClient, NotionError, RateLimiter
from truloop_assistant.backends.knowledge.notion_pages import page_id
from truloop_assistant.backends.knowledge.notion_sync import NotionSync, SyncReport
from truloop_assistant.backends.knowledge.store import KnowledgeStore, StoredDocument, WriteReport
from truloop_assistant.commands import kb as kb_command
from truloop_assistant.commands.knowledge import sync_notion as notion_command
from truloop_assistant.config import Settings, load_settings
from truloop_assistant.store import keys


@pytest.fixture
async def notion() -> AsyncIterator[FakeNotion]:
    async with served(FakeNotion()) as fake:
        yield fake


@dataclass
class Workspace:
    """The fake's pages, by what a test calls them."""

    engineering: str
    deploy: str
    oncall: str
    runbook: str
    handbook: str
    vacation: str
    lunch: str


DEPLOY_GUIDE = [
    heading(1, "Before you deploy"),
    paragraph("Check the dashboard first."),
    bullet("Staging is green", bullet("every check passes"), code("make smoke")),
    numbered("Tag the release"),
    numbered("Promote it to production"),
    todo("Announce it in #deploys", checked=True),
    todo("Update the changelog"),
    toggle("Rollback", paragraph("Run the rollback job within ten minutes.")),
    quote("Never deploy on Fridays.", paragraph("Not even small fixes.")),
    callout("Ask the platform team when unsure."),
    code("make deploy ENV=prod\n  --wait\nmake verify", language="shell"),
    table(["service", "owner", "pager"], ["api", "platform", "yes"], ["web", "frontend", "no"]),
    divider(),
    image(),
    heading(2, "After"),
    columns([paragraph("Watch the error rate for an hour.")], [paragraph("Close the release ticket.")]),
]
DEPLOY_PASSAGES = [
    "Before you deploy: Check the dashboard first. - Staging is green - every check passes",
    "Before you deploy:\nmake smoke",
    "Before you deploy: 1. Tag the release 2. Promote it to production - [x] Announce it in #deploys "
    "- [ ] Update the changelog Rollback Run the rollback job within ten minutes. > Never deploy on Fridays. "
    "Not even small fixes. > 💡 Ask the platform team when unsure.",
    "Before you deploy:\nmake deploy ENV=prod\n  --wait\nmake verify",
    "Before you deploy: | service | owner | pager | | api | platform | yes | | web | frontend | no |",
    "After: Watch the error rate for an hour. Close the release ticket.",
]


def workspace(notion: FakeNotion) -> Workspace:
    """Engineering (a deploy guide, an on-call rota inside a toggle, a runbooks database) and a handbook."""
    rotas = toggle("Rotas")
    engineering = notion.add_page(
        "Engineering", paragraph("The platform team owns deploys and the on-call rota."), rotas
    )
    deploy = notion.add_page("Deploy guide", *DEPLOY_GUIDE, parent=engineering)
    oncall = notion.add_page(
        "On-call rota",
        paragraph("Mina is on call this week; Jeff the next."),
        parent=engineering,
        inside=rotas["id"],
    )
    runbooks = notion.add_database("Runbooks", parent=engineering)
    runbook = notion.add_page("Restart the queue", code("systemctl restart saq-worker"), database=runbooks)
    handbook = notion.add_page(
        "Handbook", *(paragraph(f"Handbook chapter {n}: read it in your first week.") for n in range(1, 9))
    )
    vacation = notion.add_page(
        "Vacation policy", paragraph("Everyone gets 15 days of paid vacation a year."), parent=handbook
    )
    lunch = notion.add_page("Lunch menu", paragraph("Bibimbap on Mondays, kimchi stew on Fridays."))
    return Workspace(engineering, deploy, oncall, runbook, handbook, vacation, lunch)


async def sync(notion: FakeNotion, redis: Redis, root: str | None = None) -> SyncReport:
    """One sync, without waiting for Notion's rate (the limiter has tests of its own)."""
    limiter = RateLimiter(rate=1000, burst=1000)
    async with NotionClient(NOTION_TOKEN, notion.url, limiter=limiter, backoff_s=0.01) as client:
        return await NotionSync(client, KnowledgeStore(redis), root=root).run()


async def documents(redis: Redis) -> dict[str, StoredDocument]:
    """The Notion documents in the knowledge base, by title."""
    return {d.title: d for d in (await KnowledgeStore(redis).edited("notion")).values()}


def live(redis: Redis) -> LiveKnowledgeBase:
    return LiveKnowledgeBase(
        KnowledgeStore(redis), fallback=lambda: load_knowledge_base(None), check_every_s=0
    )


async def test_a_sync_copies_every_page_into_the_knowledge_base(notion: FakeNotion, redis: Redis) -> None:
    pages = workspace(notion)
    notion.fail_next(429, retry_after="1")
    started = time.monotonic()

    report = await sync(notion, redis)

    assert time.monotonic() - started >= 1  # Retry-After was honoured
    assert (report.read, report.unchanged, report.removed) == (7, 0, 0)
    assert notion.count(r"POST /v1/search") == 1 + 4  # the 429, then 7 pages, 2 at a time
    docs = await documents(redis)
    assert {title: d.path for title, d in docs.items()} == {
        "Engineering": "Engineering",
        "Deploy guide": "Engineering / Deploy guide",
        "On-call rota": "Engineering / On-call rota",
        "Restart the queue": "Engineering / Runbooks / Restart the queue",
        "Handbook": "Handbook",
        "Vacation policy": "Handbook / Vacation policy",
        "Lunch menu": "Lunch menu",
    }
    deploy = docs["Deploy guide"]
    assert deploy.texts == DEPLOY_PASSAGES
    assert (deploy.doc_id, deploy.url, deploy.root) == (
        f"notion:{pages.deploy}",
        f"https://www.notion.so/Deploy-guide-{pages.deploy.replace('-', '')}",
        None,
    )
    assert deploy.edited == notion.pages[pages.deploy].edited.strftime("%Y-%m-%dT%H:%M:00.000Z")
    assert report.written.passages == sum(len(d.texts) for d in docs.values())
    assert (
        len(docs["Handbook"].texts) == 2
    )  # eight paragraphs over three pages of blocks, cut in two passages

    [hit] = await live(redis).search("rollback job", limit=1)
    assert (hit.title, hit.path, hit.url) == ("Deploy guide", "Engineering / Deploy guide", deploy.url)
    assert "Run the rollback job within ten minutes." in hit.snippet
    [hit] = await live(redis).search("who is on call this week", limit=1)
    assert hit.title == "On-call rota"


async def test_a_second_sync_reads_no_unchanged_page(notion: FakeNotion, redis: Redis) -> None:
    workspace(notion)
    await sync(notion, redis)
    version = await KnowledgeStore(redis).version()
    notion.requests.clear()

    report = await sync(notion, redis)

    assert (report.read, report.unchanged, report.removed, report.written.documents) == (0, 7, 0, 0)
    assert notion.block_reads() == {}
    # the listing (4 pages of search results) and, for paths, the toggle and the database holding a page
    assert sorted(f"{m} {p.split('/')[2]}" for m, p in notion.requests) == [
        "GET blocks",
        "GET databases",
        *["POST search"] * 4,
    ]
    assert report.requests == 6
    assert await KnowledgeStore(redis).version() == version  # nothing written: no process rebuilds


async def test_an_edited_page_replaces_its_old_passages(notion: FakeNotion, redis: Redis) -> None:
    pages = workspace(notion)
    await sync(notion, redis)
    kb = live(redis)
    assert "Deploy guide" in [h.title for h in await kb.search("never on Fridays")]
    notion.edit(
        pages.deploy, heading(1, "Release train"), paragraph("Deploys now leave with the Tuesday train.")
    )
    notion.requests.clear()

    report = await sync(notion, redis)

    assert (report.read, report.unchanged) == (1, 6)
    assert set(notion.block_reads()) == {pages.deploy}
    assert (await documents(redis))["Deploy guide"].texts == [
        "Release train: Deploys now leave with the Tuesday train."
    ]
    assert "Deploy guide" not in [h.title for h in await kb.search("never on Fridays")]
    [hit] = await kb.search("tuesday train", limit=1)
    assert (hit.title, hit.path) == ("Deploy guide", "Engineering / Deploy guide")


async def test_deleted_and_archived_pages_are_removed(notion: FakeNotion, redis: Redis) -> None:
    pages = workspace(notion)
    await sync(notion, redis)
    notion.delete(pages.lunch)
    notion.archive(pages.vacation)

    report = await sync(notion, redis)

    assert (report.read, report.removed) == (0, 2)
    assert "Lunch menu" not in await documents(redis)
    assert "Vacation policy" not in await documents(redis)
    assert await live(redis).search("bibimbap") == []
    assert await live(redis).search("paid vacation days") == []


async def test_a_renamed_parent_moves_its_pages_paths_without_reading_them(
    notion: FakeNotion, redis: Redis
) -> None:
    pages = workspace(notion)
    await sync(notion, redis)
    notion.rename(pages.engineering, "Platform")
    notion.requests.clear()

    report = await sync(notion, redis)

    assert report.read == 1
    assert set(notion.block_reads()) == {pages.engineering}
    paths = {title: d.path for title, d in (await documents(redis)).items()}
    assert paths["Deploy guide"] == "Platform / Deploy guide"
    assert paths["Restart the queue"] == "Platform / Runbooks / Restart the queue"


async def test_a_child_page_the_search_does_not_list_yet_is_found_under_its_parent(
    notion: FakeNotion, redis: Redis
) -> None:
    pages = workspace(notion)
    await sync(notion, redis)
    new = notion.add_page(
        "Incident review",
        paragraph("Write the review within two days."),
        parent=pages.engineering,
        indexed=False,
    )

    report = await sync(notion, redis)

    assert report.read == 2  # Engineering (it gained a child page) and the new page
    assert (await documents(redis))["Incident review"].path == "Engineering / Incident review"
    assert (await documents(redis))["Incident review"].doc_id == f"notion:{new}"
    report = await sync(notion, redis)
    assert (report.read, report.removed) == (0, 0)  # still there although the search does not list it


async def test_root_syncs_only_its_tree(notion: FakeNotion, redis: Redis) -> None:
    pages = workspace(notion)
    notion.requests.clear()

    report = await sync(notion, redis, root=pages.engineering.replace("-", ""))

    docs = await documents(redis)
    assert set(docs) == {"Engineering", "Deploy guide", "On-call rota", "Restart the queue"}
    assert {d.root for d in docs.values()} == {pages.engineering}
    assert report.read == 4
    assert set(notion.block_reads()) == {pages.engineering, pages.deploy, pages.oncall, pages.runbook}

    await sync(notion, redis)  # everything, then the root's tree alone again
    notion.delete(pages.lunch)  # outside the tree: not the root's to remove
    notion.delete(pages.deploy)
    report = await sync(notion, redis, root=pages.engineering)
    assert report.removed == 1
    docs = await documents(redis)
    assert "Deploy guide" not in docs
    assert {"Lunch menu", "Handbook", "Vacation policy"} <= set(docs)
    assert docs["Engineering"].root == pages.engineering  # synced without the root first, now under it


async def test_a_recently_edited_page_is_read_again_next_time(notion: FakeNotion, redis: Redis) -> None:
    """Notion keeps edit times to the minute: an edit later in the same minute must not be missed."""
    pages = workspace(notion)
    notion.edit(pages.lunch, paragraph("Bibimbap on Mondays."), at=datetime.now(UTC))
    await sync(notion, redis)
    assert (await documents(redis))["Lunch menu"].edited == ""
    notion.requests.clear()

    report = await sync(notion, redis)

    assert report.read == 1
    assert set(notion.block_reads()) == {pages.lunch}


async def test_server_errors_and_timeouts_are_tried_again(notion: FakeNotion, redis: Redis) -> None:
    workspace(notion)
    notion.fail_next(502, times=2)
    report = await sync(notion, redis)
    assert report.read == 7

    notion.fail_next(503, times=4)  # the first try and three more
    with pytest.raises(NotionError, match=r"503 service_unavailable.*run the sync again later"):
        await sync(notion, redis)


async def test_a_huge_retry_after_is_waited_for_a_bounded_time(
    notion: FakeNotion, redis: Redis, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(notion_api, "RETRY_AFTER_MAX_S", 0.2)  # 60 s in use
    monkeypatch.setattr(notion_api, "RATE_LIMITED_TOTAL_S", 1.0)  # 10 minutes in use
    workspace(notion)
    notion.fail_next(429, times=2, retry_after="1000000000")  # about 32 years
    started = time.monotonic()
    async with asyncio.timeout(10):
        report = await sync(notion, redis)
    assert report.read == 7
    assert 0.4 <= time.monotonic() - started < 5  # each wait was cut to 0.2 s, and waited

    # More waits in all than the sync allows: it stops and says so, without waiting them out.
    notion.fail_next(429, times=8, retry_after="1000000000")
    started = time.monotonic()
    with pytest.raises(NotionError, match=r"held .* back for more than 1 s .* run the sync again later"):
        async with asyncio.timeout(10):
            await sync(notion, redis)
    assert time.monotonic() - started < 2


async def test_a_page_deleted_while_the_sync_runs_is_skipped(notion: FakeNotion, redis: Redis) -> None:
    pages = workspace(notion)
    await sync(notion, redis)
    notion.edit(pages.lunch, paragraph("Bibimbap on Tuesdays."))
    notion.pages[pages.lunch].vanishing = True  # listed, then 404 when its blocks are read

    report = await sync(notion, redis)

    assert (report.read, report.removed) == (0, 1)
    assert "Lunch menu" not in await documents(redis)


def _args(*argv: str) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="truloop-assistant")
    kb_command.add_parser(parser.add_subparsers(dest="command", required=True))
    return parser.parse_args(["kb", "sync-notion", *argv])


@pytest.fixture
def fast(monkeypatch: pytest.MonkeyPatch) -> None:
    """The command without waiting for Notion's rate of three requests a second."""
    monkeypatch.setattr(notion_api, "REQUESTS_PER_S", 1000.0)
    monkeypatch.setattr(notion_api, "BURST", 1000)


def _settings(redis_url: str, notion: FakeNotion, token: str | None = NOTION_TOKEN) -> Settings:
    return load_settings(
        redis_url=redis_url,
        channel="local",
        jwt_secret="x" * 32,
        notion_token=token,
        notion_api_url=notion.url,
    )


async def run_command(settings: Settings, *argv: str) -> int:
    """The command runs its own event loop (as on the command line): in a thread, beside the fake's."""
    return await asyncio.to_thread(kb_command.run, _args(*argv), settings)


async def test_the_command_prints_progress_and_a_summary(
    notion: FakeNotion, redis: Redis, redis_url: str, fast: None, capsys: pytest.CaptureFixture[str]
) -> None:
    workspace(notion)
    for n in range(5):
        notion.add_page(f"Team page {n}", paragraph(f"Team {n} meets on Thursdays."))

    assert await run_command(_settings(redis_url, notion)) == 0

    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == "listed 12 pages: 12 new or edited, 0 unchanged"
    assert lines[1].startswith("read 10 of 12 pages (")
    assert lines[2].startswith(
        "synced Notion into the knowledge base: 12 pages read, 0 unchanged (not read), 0 removed; "
        f"{sum(len(d.texts) for d in (await documents(redis)).values())} passages written in "
    )
    assert lines[2].endswith(f" s ({len(notion.requests)} requests to Notion)")
    assert len(lines) == 3

    assert await run_command(_settings(redis_url, notion)) == 0
    again = capsys.readouterr().out.splitlines()
    assert again[0] == "listed 12 pages: 0 new or edited, 12 unchanged"
    assert again[1].startswith(
        "synced Notion into the knowledge base: 0 pages read, 12 unchanged (not read), "
    )


def test_the_summary_shows_what_embedding_cost() -> None:
    report = SyncReport(read=3, unchanged=1, removed=0, requests=9, seconds=1.25)
    report.written.add(WriteReport(documents=3, passages=20, embedded=12, embedding_cost="$0.0004"))
    assert notion_command.summary(report) == [
        "synced Notion into the knowledge base: 3 pages read, 1 unchanged (not read), 0 removed; "
        "20 passages written in 1.2 s (9 requests to Notion)",
        "embeddings: 12 passages embedded, costing $0.0004",
    ]


@pytest.mark.parametrize(
    ("token", "root", "message"),
    [
        (
            "secret_wrong",
            None,
            "Notion refused the token (401 unauthorized: API token is invalid.); set TRULOOP_NOTION_TOKEN to "
            "the integration's secret (https://www.notion.so/my-integrations > the integration > Internal "
            "Integration Secret)",
        ),
        (
            NOTION_TOKEN,
            "https://www.notion.so/acme/Gone-0123456789abcdef0123456789abcdef",
            "no page 01234567-89ab-cdef-0123-456789abcdef for this integration (404): check --root "
            "(the 32 hex digits at the end of the page's URL) and share the page with the integration "
            "(its ••• menu > Connections)",
        ),
        (
            NOTION_TOKEN,
            "engineering",
            "--root: 'engineering' is not a Notion page id: use the 32 hex digits at the end of the "
            "page's URL (or the whole URL)",
        ),
        (
            None,
            None,
            "TRULOOP_NOTION_TOKEN is not set: create an internal integration at "
            "https://www.notion.so/my-integrations (capability 'Read content'), share the pages with it (a "
            "page's ••• menu > Connections) and set TRULOOP_NOTION_TOKEN to its Internal Integration Secret",
        ),
    ],
)
async def test_errors_say_what_to_fix_and_change_nothing(
    notion: FakeNotion,
    redis: Redis,
    redis_url: str,
    fast: None,
    capsys: pytest.CaptureFixture[str],
    token: str | None,
    root: str | None,
    message: str,
) -> None:
    pages = workspace(notion)
    await sync(notion, redis)
    before = (await KnowledgeStore(redis).version(), await documents(redis))
    notion.edit(pages.deploy, paragraph("Deploys are frozen this week."))
    notion.delete(pages.lunch)

    code = await run_command(_settings(redis_url, notion, token), *(["--root", root] if root else []))

    captured = capsys.readouterr()
    assert (code, captured.out) == (1, "")
    assert captured.err == f"truloop-assistant kb sync-notion: {message}\n"
    assert (await KnowledgeStore(redis).version(), await documents(redis)) == before


async def test_a_sync_over_the_knowledge_bases_bound_stops_with_what_it_wrote(
    notion: FakeNotion,
    redis: Redis,
    redis_url: str,
    fast: None,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    workspace(notion)
    monkeypatch.setattr(keys, "KB_PASSAGES_MAX", 8)  # the first two pages have 7 passages, the next two 2
    monkeypatch.setattr(notion_sync, "WRITE_EVERY", 2)

    assert await run_command(_settings(redis_url, notion)) == 1

    err = capsys.readouterr().err
    assert err.startswith("truloop-assistant kb sync-notion: the knowledge base would hold ")
    assert "over its limit of 8; index fewer documents (or sync under one --root page)" in err
    written = len(await documents(redis))
    assert err.endswith(f" ({written} pages were written before it stopped: run it again to go on)\n")
    assert 0 < written < 7


async def test_the_rate_limiter_keeps_to_its_rate_after_a_burst() -> None:
    limiter = RateLimiter(rate=20, burst=2)
    started = time.monotonic()
    for _ in range(6):
        await limiter.wait()
    assert 0.2 <= time.monotonic() - started < 0.5  # two at once, then one every 50 ms

    limiter.hold(0.3)  # a 429's Retry-After holds every request, then one goes at once
    started = time.monotonic()
    await limiter.wait()
    assert 0.3 <= time.monotonic() - started < 0.45


@pytest.mark.parametrize(
    "given",
    [
        "0123456789abcdef0123456789ABCDEF",
        "01234567-89ab-cdef-0123-456789abcdef",
        "https://www.notion.so/acme/Deploy-guide-0123456789abcdef0123456789abcdef",
        "https://www.notion.so/Deploy-guide-0123456789abcdef0123456789abcdef?pvs=4",
    ],
)
def test_root_page_ids_are_read_from_ids_and_urls(given: str) -> None:
    assert page_id(given) == "01234567-89ab-cdef-0123-456789abcdef"

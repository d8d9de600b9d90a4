"""Notion pages copied into the knowledge base, incrementally: only new and edited pages are read.

A sync lists the pages (``POST /v1/search``; with a root, those whose parents lead up to it), compares
each one's ``last_edited_time`` with the document the knowledge base holds (``notion:<page id>``),
reads the blocks of new and edited pages only and writes them a batch at a time (so a sync that stops
half-way keeps what it read, and the next one goes on from there). Child pages met in what it reads
join the sync even before Notion's search has indexed them. Once every page is read, the documents of
pages that are gone, archived or no longer shared are removed: with a root, only those synced under
that root.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any, TypeVar

from .documents import document
from .notion import NotionClient, NotionError
from .notion_blocks import CONTAINERS, page_markdown
from .notion_pages import NotionPage, PageTree, page_id
from .store import KnowledgeStore, StoredDocument, WriteReport

SETTLE_S = 120
"""Notion rounds ``last_edited_time`` down to the minute, so an edit made in the same minute as a read
would look unchanged: a page edited this recently is read again by the next sync."""
READ_AT_ONCE = 3
"""Pages read concurrently: enough to keep to Notion's rate when each answer takes a while."""
WRITE_EVERY = 50
"""Pages read between two writes (each write moves the version: every process rebuilds its index)."""
PROGRESS_EVERY = 10

T = TypeVar("T")
R = TypeVar("R")


@dataclass
class SyncReport:
    """What a sync did."""

    listed: int = 0
    """Pages found (those under the root, with one), not archived."""
    read: int = 0
    unchanged: int = 0
    removed: int = 0
    written: WriteReport = field(default_factory=WriteReport)
    requests: int = 0
    seconds: float = 0.0


def doc_id(notion_page_id: str) -> str:
    return f"notion:{notion_page_id}"


class NotionSync:
    """One sync of the pages an integration can read (or those under ``root``) into the store."""

    def __init__(
        self,
        client: NotionClient,
        store: KnowledgeStore,
        *,
        root: str | None = None,
        progress: Callable[[str], None] = lambda line: None,
        progress_every: int = PROGRESS_EVERY,
        now: Callable[[], datetime] = lambda: datetime.now(UTC),
    ) -> None:
        self.client = client
        self.store = store
        self.root = page_id(root) if root else None
        self.report = SyncReport()
        self._progress = progress
        self._progress_every = progress_every
        self._now = now
        self._tree = PageTree(client, {})
        self._live: dict[str, NotionPage] = {}
        self._stored: dict[str, StoredDocument] = {}
        self._unchanged: list[NotionPage] = []
        self._to_read = 0
        self._started = time.perf_counter()
        self._settled_before = self._now()

    async def run(self) -> SyncReport:
        """List, read what changed, write it, remove what is gone; raises :class:`NotionError`."""
        self._started = time.perf_counter()
        self._settled_before = self._now() - timedelta(seconds=SETTLE_S)
        self._stored = await self.store.edited("notion")
        pages = await self._list()
        self._tree = PageTree(self.client, pages)
        listed = [p for p in pages.values() if not p.archived]
        if self.root is not None:
            listed = [p for p in listed if p.id == self.root or self.root in await self._tree.ancestors(p)]
        to_read = self._compare(listed)
        self._progress(
            f"listed {len(listed)} pages: {len(to_read)} new or edited, {len(self._unchanged)} unchanged"
        )
        while to_read:
            found = await self._read(to_read)
            to_read = self._compare(await self._found(found))
        self.report.written.add(await self.store.put(await self._refreshed()))
        gone = [
            key
            for key, stored in self._stored.items()
            if (self.root is None or stored.root == self.root)
            and key.removeprefix("notion:") not in self._live
        ]
        self.report.removed = await self.store.remove(gone)
        self.report.listed = len(self._live)
        self.report.unchanged = len(self._unchanged)
        self.report.requests = self.client.requests
        self.report.seconds = time.perf_counter() - self._started
        return self.report

    async def _list(self) -> dict[str, NotionPage]:
        """Every page the search lists, and the root page as it is now."""
        root: NotionPage | None = None
        if self.root is not None:
            try:
                root = NotionPage.of(await self.client.page(self.root))
            except NotionError as exc:
                if exc.status != 404:
                    raise
                raise NotionError(
                    f"no page {self.root} for this integration (404): check --root (the 32 hex digits at "
                    "the end of the page's URL) and share the page with the integration (its ••• menu > "
                    "Connections)",
                    status=404,
                    code=exc.code,
                ) from None
        pages = {page.id: page async for page in _pages(self.client)}
        if root is not None:
            pages[root.id] = root
        return pages

    def _compare(self, pages: Iterable[NotionPage]) -> list[NotionPage]:
        """The pages to read (new, edited, or edited too recently to trust); the others are unchanged."""
        to_read = []
        for page in pages:
            self._live[page.id] = page
            stored = self._stored.get(doc_id(page.id))
            if stored is None or not stored.edited or stored.edited != page.edited:
                to_read.append(page)
            else:
                self._unchanged.append(page)
        self._to_read += len(to_read)
        return to_read

    async def _read(self, pages: list[NotionPage]) -> list[str]:
        """Read and write the pages, a batch at a time; the ids of the child pages met in them."""
        found: list[str] = []
        for start in range(0, len(pages), WRITE_EVERY):
            results = await _bounded(pages[start : start + WRITE_EVERY], self._page, READ_AT_ONCE)
            documents = [stored for stored, _ in results if stored is not None]
            self.report.written.add(await self.store.put(documents))
            found += [child for _, children in results for child in children]
        return found

    async def _page(self, page: NotionPage) -> tuple[StoredDocument | None, list[str]]:
        """One page as a document (None when it went away since it was listed), and its child pages."""
        try:
            blocks, children = await self._blocks(page.id)
        except NotionError as exc:
            if exc.status != 404:
                raise
            del self._live[page.id]
            return None, []
        parsed = document(await self._tree.path(page), page_markdown(page.title, blocks))
        parsed.url = page.url
        edited = page.edited if _edited_before(page.edited, self._settled_before) else ""
        self.report.read += 1
        if self.report.read % self._progress_every == 0:
            self._progress(
                f"read {self.report.read} of {self._to_read} pages "
                f"({time.perf_counter() - self._started:.1f} s, {self.client.requests} requests)"
            )
        stored = StoredDocument.of(
            parsed, doc_id=doc_id(page.id), source="notion", edited=edited, root=self.root
        )
        return stored, children

    async def _blocks(self, block_id: str) -> tuple[list[dict[str, Any]], list[str]]:
        """The blocks of a page or block with what they hold, and the child pages among them."""
        blocks = await self.client.children(block_id)
        child_pages: list[str] = []
        for block in blocks:
            if block.get("type") == "child_page":
                child_pages.append(page_id(str(block.get("id"))))
            elif block.get("has_children") and block.get("type") in CONTAINERS:
                block["children"], more = await self._blocks(str(block.get("id")))
                child_pages += more
        return blocks, child_pages

    async def _found(self, child_ids: list[str]) -> list[NotionPage]:
        """Child pages not listed yet (the search indexes new pages with a delay)."""
        new: list[NotionPage] = []
        for child in dict.fromkeys(child_ids):
            if child in self._live:
                continue
            page = self._tree.pages.get(child)
            if page is None:
                try:
                    page = NotionPage.of(await self.client.page(child))
                except NotionError as exc:
                    if exc.status != 404:
                        raise
                    continue
                self._tree.pages[page.id] = page
            if not page.archived:
                new.append(page)
        return new

    async def _refreshed(self) -> list[StoredDocument]:
        """Unchanged pages whose path (a parent renamed or moved), URL or root changed: no read needed."""
        refreshed = []
        for page in self._unchanged:
            stored = self._stored[doc_id(page.id)]
            root = stored.root
            if self.root is not None and root != self.root and (root is None or root not in self._live):
                root = self.root  # synced before without this root, or under a root no longer above it
            update = {"path": await self._tree.path(page), "url": page.url, "root": root}
            if any(getattr(stored, name) != value for name, value in update.items()):
                refreshed.append(stored.model_copy(update=update))
        return refreshed


async def _pages(client: NotionClient) -> AsyncIterator[NotionPage]:
    async for obj in client.search_pages():
        yield NotionPage.of(obj)


def _edited_before(edited: str, moment: datetime) -> bool:
    """Whether Notion's edit time is before ``moment`` (an unreadable time counts as long ago)."""
    try:
        at = datetime.fromisoformat(edited)
    except ValueError:
        return True
    return (at if at.tzinfo else at.replace(tzinfo=UTC)) < moment


async def _bounded(items: list[T], run: Callable[[T], Awaitable[R]], limit: int) -> list[R]:
    """``run`` over the items, ``limit`` at a time, results in order; the first failure is raised."""
    gate = asyncio.Semaphore(limit)

    async def one(item: T) -> R:
        async with gate:
            return await run(item)

    try:
        async with asyncio.TaskGroup() as group:
            tasks = [group.create_task(one(item)) for item in items]
    except BaseExceptionGroup as failed:
        raise failed.exceptions[0] from None
    return [task.result() for task in tasks]

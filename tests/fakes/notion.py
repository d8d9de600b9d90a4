"""A local stand-in for the Notion API (version 2022-06-28): what ``kb sync-notion`` and doctor read.

Pages, databases and blocks live in memory, linked as Notion links them: a page under another page
is a ``child_page`` block of it (inside a toggle or a column when put there), a database row is a
page whose parent is the database. ``POST /v1/search`` and block children answer in small pages so
that pagination is exercised. Every request must carry ``Authorization: Bearer <token>`` (401) and
``Notion-Version`` (400). Editing, archiving or deleting a page moves its ``last_edited_time`` on
by a minute (and its parent's, when a child page comes or goes, as Notion does). ``fail_next``
answers the next requests with a 429 (and ``Retry-After``) or a 5xx. ``requests`` records every
request, ``block_reads()`` which pages' blocks were read.
"""

from __future__ import annotations

import re
import uuid
from collections import Counter
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

NOTION_TOKEN = "secret_test-notion-integration"
NOTION_VERSION = "2022-06-28"
BASE_TIME = datetime(2024, 5, 1, 9, 0, tzinfo=UTC)
"""When the fake's workspace was first edited: long enough ago for every edit to count as settled."""

Block = dict[str, Any]


def rich(text: str) -> list[dict[str, Any]]:
    """A rich text array as Notion sends it (split in two runs, as bold or a link would split it)."""
    cut = len(text) // 2
    return [_run(part) for part in (text[:cut], text[cut:]) if part]


def _run(text: str) -> dict[str, Any]:
    return {
        "type": "text",
        "text": {"content": text, "link": None},
        "annotations": {"bold": False, "italic": False, "code": False, "color": "default"},
        "plain_text": text,
        "href": None,
    }


def _block(kind: str, data: dict[str, Any], children: tuple[Block, ...] = ()) -> Block:
    return {"type": kind, kind: data, "children": list(children)}


def paragraph(text: str, *children: Block) -> Block:
    return _block("paragraph", {"rich_text": rich(text), "color": "default"}, children)


def heading(level: int, text: str, *children: Block) -> Block:
    toggle = bool(children)
    return _block(f"heading_{level}", {"rich_text": rich(text), "is_toggleable": toggle}, children)


def bullet(text: str, *children: Block) -> Block:
    return _block("bulleted_list_item", {"rich_text": rich(text)}, children)


def numbered(text: str, *children: Block) -> Block:
    return _block("numbered_list_item", {"rich_text": rich(text)}, children)


def todo(text: str, checked: bool = False) -> Block:
    return _block("to_do", {"rich_text": rich(text), "checked": checked})


def toggle(text: str, *children: Block) -> Block:
    return _block("toggle", {"rich_text": rich(text)}, children)


def quote(text: str, *children: Block) -> Block:
    return _block("quote", {"rich_text": rich(text)}, children)


def callout(text: str, emoji: str = "💡") -> Block:
    return _block("callout", {"rich_text": rich(text), "icon": {"type": "emoji", "emoji": emoji}})


def code(text: str, language: str = "python") -> Block:
    return _block("code", {"rich_text": rich(text), "language": language, "caption": []})


def table(*rows: list[str], header: bool = True) -> Block:
    cells = [_block("table_row", {"cells": [rich(cell) for cell in row]}) for row in rows]
    width = max(len(row) for row in rows)
    return _block(
        "table", {"table_width": width, "has_column_header": header, "has_row_header": False}, tuple(cells)
    )


def divider() -> Block:
    return _block("divider", {})


def image(url: str = "https://example.com/diagram.png") -> Block:
    return _block(
        "image", {"type": "external", "external": {"url": url}, "caption": rich("a diagram caption")}
    )


def columns(*column_blocks: list[Block]) -> Block:
    return _block("column_list", {}, tuple(_block("column", {}, tuple(blocks)) for blocks in column_blocks))


@dataclass
class FakePage:
    id: str
    title: str
    parent: dict[str, Any]
    blocks: list[Block]
    edited: datetime
    archived: bool = False
    shared: bool = True
    indexed: bool = True
    """Whether the search lists it yet (Notion indexes new pages for search with a delay)."""
    in_database: bool = False
    vanishing: bool = False
    """Listed by the search, but gone (404) when asked for: deleted while a sync runs."""

    @property
    def url(self) -> str:
        slug = re.sub(r"[^A-Za-z0-9]+", "-", self.title).strip("-")
        return f"https://www.notion.so/{slug}-{self.id.replace('-', '')}"


def _error(status: int, code: str, message: str, headers: dict[str, str] | None = None) -> JSONResponse:
    body = {"object": "error", "status": status, "code": code, "message": message}
    return JSONResponse(body, status_code=status, headers=headers)


def _stamp(moment: datetime) -> str:
    return moment.strftime("%Y-%m-%dT%H:%M:00.000Z")  # Notion keeps whole minutes


def _normal(notion_id: str) -> str:
    hex_id = notion_id.replace("-", "").lower()
    if not re.fullmatch(r"[0-9a-f]{32}", hex_id):
        return notion_id
    return str(uuid.UUID(hex_id))


@dataclass
class FakeNotion:
    """The fake service; serve ``app()`` (e.g. with ``tests.support.served``) and point the sync at it."""

    token: str = NOTION_TOKEN
    search_page_size: int = 2
    block_page_size: int = 3
    pages: dict[str, FakePage] = field(default_factory=dict)
    databases: dict[str, dict[str, Any]] = field(default_factory=dict)
    blocks: dict[str, Block] = field(default_factory=dict)
    """Every block by id, with ``children`` and the page it belongs to (``_page``)."""
    requests: list[tuple[str, str]] = field(default_factory=list)
    """(method, path) of every request, answered or not."""
    failures: list[tuple[int, str | None]] = field(default_factory=list)
    """(status, Retry-After) for the next authorized requests."""
    clock: datetime = BASE_TIME
    url: str = ""

    def app(self) -> Starlette:
        return Starlette(
            routes=[
                Route("/v1/search", self._search, methods=["POST"]),
                Route("/v1/pages/{id}", self._page, methods=["GET"]),
                Route("/v1/blocks/{id}/children", self._children, methods=["GET"]),
                Route("/v1/blocks/{id}", self._block, methods=["GET"]),
                Route("/v1/databases/{id}", self._database, methods=["GET"]),
                Route("/v1/users/me", self._me, methods=["GET"]),
            ]
        )

    # The workspace, as a test shapes it.

    def add_page(
        self,
        title: str,
        *blocks: Block,
        parent: str | None = None,
        inside: str | None = None,
        database: str | None = None,
        shared: bool = True,
        indexed: bool = True,
    ) -> str:
        """A page at the top, under ``parent`` (in block ``inside`` of it), or a row of ``database``."""
        page_id = str(uuid.uuid4())
        if database is not None:
            where = {"type": "database_id", "database_id": database}
        elif inside is not None:
            where = {"type": "block_id", "block_id": inside}
        elif parent is not None:
            where = {"type": "page_id", "page_id": parent}
        else:
            where = {"type": "workspace", "workspace": True}
        page = FakePage(
            page_id, title, where, [], self._tick(), shared=shared, in_database=database is not None
        )
        self.pages[page_id] = page
        self._attach(page_id, list(blocks))
        if database is None and (inside or parent):
            holder = inside or parent
            assert holder is not None
            link = {"id": page_id, "type": "child_page", "child_page": {"title": title}, "children": []}
            self._insert(holder, link)
        return page_id

    def add_database(self, title: str, parent: str) -> str:
        database_id = str(uuid.uuid4())
        self.databases[database_id] = {
            "object": "database",
            "id": database_id,
            "title": rich(title),
            "parent": {"type": "page_id", "page_id": parent},
            "url": f"https://www.notion.so/{database_id.replace('-', '')}",
        }
        self._insert(
            parent, {"id": database_id, "type": "child_database", "child_database": {"title": title}}
        )
        return database_id

    def edit(self, page_id: str, *blocks: Block, at: datetime | None = None) -> None:
        """New content for the page (its child pages stay); its edit time moves on (or is ``at``)."""
        page = self.pages[page_id]
        links = [b for b in page.blocks if b["type"] in ("child_page", "child_database")]
        page.blocks = []
        self._attach(page_id, list(blocks))
        page.blocks += links
        page.edited = at or self._tick()

    def rename(self, page_id: str, title: str) -> None:
        self.pages[page_id].title = title
        self.pages[page_id].edited = self._tick()

    def archive(self, page_id: str) -> None:
        """In the trash: still answered, with ``archived: true``."""
        self.pages[page_id].archived = True
        self.pages[page_id].edited = self._tick()

    def delete(self, page_id: str) -> None:
        """Gone for good: 404, not listed, and no longer a child page of its parent."""
        self.pages.pop(page_id)
        self._detach(page_id)

    def fail_next(self, status: int, times: int = 1, *, retry_after: str | None = None) -> None:
        self.failures += [(status, retry_after)] * times

    def block_reads(self) -> Counter[str]:
        """How many block-children requests went to each page's blocks (nested ones included)."""
        reads: Counter[str] = Counter()
        for method, path in self.requests:
            if method == "GET" and (found := re.fullmatch(r"/v1/blocks/([^/]+)/children", path)):
                block_id = _normal(found.group(1))
                owner = block_id if block_id in self.pages else self.blocks.get(block_id, {}).get("_page")
                reads[owner or block_id] += 1
        return reads

    def count(self, pattern: str) -> int:
        """Requests whose ``METHOD path`` matches the regular expression."""
        return sum(1 for method, path in self.requests if re.fullmatch(pattern, f"{method} {path}"))

    def _tick(self) -> datetime:
        self.clock += timedelta(minutes=1)
        return self.clock

    def _attach(self, page_id: str, blocks: list[Block], holder: Block | None = None) -> None:
        for block in blocks:
            block.setdefault("id", str(uuid.uuid4()))
            block["_page"] = page_id
            block["_parent"] = holder["id"] if holder else page_id
            self.blocks[block["id"]] = block
            self._attach(page_id, block.get("children") or [], block)
        if holder is None:
            self.pages[page_id].blocks += blocks

    def _insert(self, holder: str, block: Block) -> None:
        """Put a link block in a page or a block, as the last thing in it; that page was edited."""
        page_id = holder if holder in self.pages else self.blocks[holder]["_page"]
        block.update({"_page": page_id, "_parent": holder})
        self.blocks[block["id"]] = block
        (self.pages[holder].blocks if holder in self.pages else self.blocks[holder]["children"]).append(block)
        self.pages[page_id].edited = self._tick()

    def _detach(self, page_id: str) -> None:
        link = self.blocks.pop(page_id, None)
        if link is None:
            return
        holder = link["_parent"]
        inside = self.pages[holder].blocks if holder in self.pages else self.blocks[holder]["children"]
        inside.remove(link)
        if link["_page"] in self.pages:
            self.pages[link["_page"]].edited = self._tick()

    # The API.

    async def _check(self, request: Request) -> Response | None:
        self.requests.append((request.method, request.url.path))
        if request.headers.get("authorization") != f"Bearer {self.token}":
            return _error(401, "unauthorized", "API token is invalid.")
        if request.headers.get("notion-version") != NOTION_VERSION:
            return _error(400, "missing_version", "Notion-Version header failed validation.")
        if self.failures:
            status, retry_after = self.failures.pop(0)
            if status == 429:
                headers = {"Retry-After": retry_after} if retry_after is not None else None
                return _error(429, "rate_limited", "You have been rate limited.", headers)
            return _error(status, "service_unavailable", "Notion is unavailable, please try again later.")
        return None

    def _visible(self, page_id: str) -> FakePage | None:
        page = self.pages.get(_normal(page_id))
        return page if page is not None and page.shared and not page.vanishing else None

    def _page_object(self, page: FakePage) -> dict[str, Any]:
        title_property = "Name" if page.in_database else "title"
        return {
            "object": "page",
            "id": page.id,
            "created_time": _stamp(BASE_TIME),
            "last_edited_time": _stamp(page.edited),
            "archived": page.archived,
            "in_trash": page.archived,
            "parent": page.parent,
            "properties": {title_property: {"id": "title", "type": "title", "title": rich(page.title)}},
            "url": page.url,
            "public_url": None,
        }

    def _block_object(self, block: Block) -> dict[str, Any]:
        holder = block["_parent"]
        parent = (
            {"type": "page_id", "page_id": holder}
            if holder in self.pages
            else {"type": "block_id", "block_id": holder}
        )
        kind = block["type"]
        has_children = (
            bool(self.pages[block["id"]].blocks) if kind == "child_page" else bool(block.get("children"))
        )
        return {
            "object": "block",
            "id": block["id"],
            "parent": parent,
            "created_time": _stamp(BASE_TIME),
            "last_edited_time": _stamp(self.pages[block["_page"]].edited),
            "has_children": has_children,
            "archived": False,
            "type": kind,
            kind: block[kind],
        }

    def _listing(self, items: list[dict[str, Any]], start: str | None, size: int) -> Response:
        try:
            offset = int(start or 0)
        except ValueError:
            return _error(400, "validation_error", "start_cursor should be a valid cursor.")
        page = items[offset : offset + size]
        more = offset + size < len(items)
        return JSONResponse(
            {
                "object": "list",
                "results": page,
                "next_cursor": str(offset + size) if more else None,
                "has_more": more,
            }
        )

    async def _search(self, request: Request) -> Response:
        if (refused := await self._check(request)) is not None:
            return refused
        body = await request.json()
        if body.get("filter") != {"property": "object", "value": "page"}:
            return _error(400, "validation_error", "this fake only searches pages")
        size = min(int(body.get("page_size") or 100), self.search_page_size)
        pages = [self._page_object(p) for p in self.pages.values() if p.shared and p.indexed]
        return self._listing(pages, body.get("start_cursor"), size)

    async def _page(self, request: Request) -> Response:
        if (refused := await self._check(request)) is not None:
            return refused
        page = self._visible(request.path_params["id"])
        if page is None:
            return _error(
                404,
                "object_not_found",
                f"Could not find page with ID: {request.path_params['id']}. "
                "Make sure the relevant pages and databases are shared with your integration.",
            )
        return JSONResponse(self._page_object(page))

    async def _children(self, request: Request) -> Response:
        if (refused := await self._check(request)) is not None:
            return refused
        holder = _normal(request.path_params["id"])
        if (page := self._visible(holder)) is not None:
            blocks = page.blocks
        elif holder in self.blocks and self._visible(self.blocks[holder]["_page"]):
            blocks = self.blocks[holder].get("children") or []
        else:
            return _error(404, "object_not_found", f"Could not find block with ID: {holder}.")
        size = min(int(request.query_params.get("page_size") or 100), self.block_page_size)
        return self._listing(
            [self._block_object(b) for b in blocks], request.query_params.get("start_cursor"), size
        )

    async def _block(self, request: Request) -> Response:
        if (refused := await self._check(request)) is not None:
            return refused
        block = self.blocks.get(_normal(request.path_params["id"]))
        if block is None or not self._visible(block["_page"]):
            return _error(
                404, "object_not_found", f"Could not find block with ID: {request.path_params['id']}."
            )
        return JSONResponse(self._block_object(block))

    async def _database(self, request: Request) -> Response:
        if (refused := await self._check(request)) is not None:
            return refused
        database = self.databases.get(_normal(request.path_params["id"]))
        if database is None:
            return _error(404, "object_not_found", "Could not find database.")
        return JSONResponse(database)

    async def _me(self, request: Request) -> Response:
        if (refused := await self._check(request)) is not None:
            return refused
        return JSONResponse(
            {
                "object": "user",
                "id": "9a1f0000-0000-4000-8000-000000000001",
                "name": "Truloop knowledge",
                "type": "bot",
                "bot": {"owner": {"type": "workspace", "workspace": True}, "workspace_name": "Acme"},
            }
        )

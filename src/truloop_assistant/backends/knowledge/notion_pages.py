"""Notion pages as a sync sees them: their ids, titles and where they sit in the workspace.

A page's path is the titles of the pages (and databases) above it and its own, ``Engineering / Deploy
guide``: what answers cite beside the page's URL. The pages the search listed name their parents, so
a path costs no request; only a parent the search did not list (a toggle or a column holding a page,
a database, a page not shared) is asked for, once per sync.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from .notion import NotionClient, NotionError

_HEX_ID = re.compile(r"([0-9a-f]{32})(?:[?#].*)?$", re.IGNORECASE)
_MAX_DEPTH = 64
"""Parents followed at most (Notion has no cycles; this only bounds a broken answer)."""
UNTITLED = "Untitled"


def page_id(text: str) -> str:
    """A page id as Notion writes it (dashed, lower case), from an id or a page's URL.

    Raises ValueError when ``text`` holds no 32-hex-digit id at its end.
    """
    found = _HEX_ID.search(text.strip().rstrip("/").replace("-", ""))
    if not found:
        raise ValueError(
            f"{text!r} is not a Notion page id: use the 32 hex digits at the end of the page's URL "
            "(or the whole URL)"
        )
    hex_id = found.group(1).lower()
    return f"{hex_id[:8]}-{hex_id[8:12]}-{hex_id[12:16]}-{hex_id[16:20]}-{hex_id[20:]}"


@dataclass(frozen=True)
class Parent:
    """What a page, block or database sits in: ``page``, ``block``, ``database`` or ``workspace``."""

    kind: str
    id: str = ""

    @classmethod
    def of(cls, obj: dict[str, Any]) -> Parent:
        parent = obj.get("parent") or {}
        kind = str(parent.get("type") or "workspace")
        value = parent.get(kind)
        short = kind.removesuffix("_id")
        return cls(short, _normal(value) if isinstance(value, str) else "")


@dataclass(frozen=True)
class NotionPage:
    """A page's metadata (no content): enough to tell whether it changed and where it is."""

    id: str
    title: str
    url: str
    edited: str
    """Notion's ``last_edited_time`` (rounded down to the minute by Notion)."""
    archived: bool
    parent: Parent

    @classmethod
    def of(cls, obj: dict[str, Any]) -> NotionPage:
        """From a page object of the API (search result or ``GET /v1/pages/{id}``)."""
        return cls(
            id=_normal(str(obj.get("id") or "")),
            title=_title(obj.get("properties") or {}),
            url=str(obj.get("url") or ""),
            edited=str(obj.get("last_edited_time") or ""),
            archived=bool(obj.get("archived") or obj.get("in_trash")),
            parent=Parent.of(obj),
        )


def plain_text(rich_text: Any) -> str:
    """The text of a rich text array, as a reader sees it (mentions and equations included)."""
    if not isinstance(rich_text, list):
        return ""
    return "".join(str(part.get("plain_text") or "") for part in rich_text if isinstance(part, dict))


def _title(properties: dict[str, Any]) -> str:
    """The page's title property (whatever a database named it), or ``Untitled``."""
    for prop in properties.values():
        if isinstance(prop, dict) and prop.get("type") == "title":
            return " ".join(plain_text(prop.get("title")).split()) or UNTITLED
    return UNTITLED


def _normal(notion_id: str) -> str:
    try:
        return page_id(notion_id)
    except ValueError:
        return notion_id


@dataclass(frozen=True)
class _Node:
    title: str | None
    """A page's or a database's title (part of paths); None for a block."""
    parent: Parent


class PageTree:
    """Where pages sit: their paths and the pages above them, asking Notion only for what is unknown."""

    def __init__(self, client: NotionClient, pages: dict[str, NotionPage]) -> None:
        self.pages = pages
        """Every page known so far, by id (the search's, and those found since)."""
        self._client = client
        self._nodes: dict[Parent, _Node | None] = {}

    async def path(self, page: NotionPage) -> str:
        """``Parent title / … / Page title``: the page's title after those of the pages above it."""
        titles = [title for _, title in await self._chain(page) if title is not None]
        return " / ".join([*titles, page.title])

    async def ancestors(self, page: NotionPage) -> set[str]:
        """The ids of the pages above ``page`` (as far as the integration may read)."""
        return {parent.id for parent, _ in await self._chain(page) if parent.kind == "page"}

    async def _chain(self, page: NotionPage) -> list[tuple[Parent, str | None]]:
        """The parents of ``page`` from the top down, each with its title (None for blocks)."""
        chain: list[tuple[Parent, str | None]] = []
        parent = page.parent
        while parent.kind in ("page", "block", "database") and len(chain) < _MAX_DEPTH:
            node = await self._node(parent)
            if node is None:
                break
            chain.append((parent, node.title))
            parent = node.parent
        return chain[::-1]

    async def _node(self, parent: Parent) -> _Node | None:
        if parent.kind == "page" and (known := self.pages.get(parent.id)) is not None:
            return _Node(known.title, known.parent)
        if parent in self._nodes:
            return self._nodes[parent]
        try:
            if parent.kind == "page":
                found = NotionPage.of(await self._client.page(parent.id))
                node: _Node | None = _Node(found.title, found.parent)
            elif parent.kind == "database":
                database = await self._client.database(parent.id)
                node = _Node(
                    " ".join(plain_text(database.get("title")).split()) or UNTITLED, Parent.of(database)
                )
            else:
                node = _Node(None, Parent.of(await self._client.block(parent.id)))
        except NotionError as exc:
            if exc.status not in (403, 404):
                raise
            node = None  # not shared with the integration: the path starts below it
        self._nodes[parent] = node
        return node

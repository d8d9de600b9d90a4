"""A Notion page's blocks as Markdown, so it is cut into passages exactly as a Markdown file is.

Blocks come as the API gives them, each with the blocks inside it under ``children`` (read by the
sync). Headings become Markdown headings under the page's title, list items and to-dos list items
(``- [x]`` when checked), quotes and callouts quotes, code a fenced block kept verbatim, a table a
Markdown table, a toggle its text with what it holds; columns hold blocks like a page. Other blocks
(images, embeds, child pages and databases, ...) have no text to index and are left out.

Text is escaped, so a paragraph that begins with ``#`` or ``1.`` stays a paragraph and ``<aside>``
stays text: the Markdown parser gives back exactly what Notion shows.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

from .notion_pages import plain_text

_PUNCTUATION = re.compile(r"([!\"#$%&'()*+,\-./:;<=>?@\[\\\]^_`{|}~])")
_BACKTICKS = re.compile(r"`+")
_HEADINGS = {"heading_1": "#", "heading_2": "##", "heading_3": "###"}
CONTAINERS = frozenset(
    {
        "paragraph",
        *_HEADINGS,
        "bulleted_list_item",
        "numbered_list_item",
        "to_do",
        "toggle",
        "quote",
        "callout",
        "table",
        "column_list",
        "column",
    }
)
"""Block types whose children are read and written (a child page's are its own document's)."""


def page_markdown(title: str, blocks: list[dict[str, Any]]) -> str:
    """The page as a Markdown document: its title as the level-1 heading, then its blocks."""
    return "\n\n".join([f"# {escape(title)}", *_blocks(blocks)]) + "\n"


def escape(text: str) -> str:
    """Text as Markdown that reads back as itself (whitespace collapsed as the index does anyway)."""
    return _PUNCTUATION.sub(r"\\\1", " ".join(text.split()))


def _blocks(blocks: list[dict[str, Any]]) -> Iterator[str]:
    """Each block's Markdown, in order; a numbered list counts from 1 after anything else."""
    number = 0
    for block in blocks:
        kind = str(block.get("type"))
        number = number + 1 if kind == "numbered_list_item" else 0
        if markdown := _block(kind, block, number):
            yield markdown


def _block(kind: str, block: dict[str, Any], number: int) -> str:
    data = block.get(kind)
    data = data if isinstance(data, dict) else {}
    text = escape(plain_text(data.get("rich_text")))
    children = [child for child in block.get("children") or [] if isinstance(child, dict)]
    if kind == "bulleted_list_item":
        return _item("- ", text, children)
    if kind == "numbered_list_item":
        return _item(f"{number}. ", text, children)
    if kind == "to_do":
        return _item("- ", f"\\[{'x' if data.get('checked') else ' '}\\] {text}", children)
    if kind == "quote":
        return _quoted(text, children)
    if kind == "callout":
        icon = data.get("icon")
        emoji = icon.get("emoji") if isinstance(icon, dict) and icon.get("type") == "emoji" else None
        return _quoted(f"{emoji} {text}" if emoji and text else text, children)
    if kind == "code":
        return _code(plain_text(data.get("rich_text")), str(data.get("language") or ""))
    if kind == "table":
        return _table(children, width=int(data.get("table_width") or 0))
    if kind == "divider":
        return "---"
    if kind in _HEADINGS:
        head = f"{_HEADINGS[kind]} {text}" if text else ""
    elif kind in ("paragraph", "toggle"):
        head = text
    elif kind in ("column_list", "column"):
        head = ""
    else:
        return ""
    return "\n\n".join(part for part in (head, *_blocks(children)) if part)


def _item(marker: str, text: str, children: list[dict[str, Any]]) -> str:
    """A list item; what it holds is indented under it, so it stays inside the item."""
    inner = "\n\n".join(_blocks(children))
    return f"{marker}{text}" + (f"\n\n{_indent(inner, ' ' * len(marker))}" if inner else "")


def _quoted(text: str, children: list[dict[str, Any]]) -> str:
    inner = "\n\n".join(part for part in (text, *_blocks(children)) if part)
    return "\n".join(f"> {line}" if line else ">" for line in inner.split("\n")) if inner else ""


def _code(code: str, language: str) -> str:
    """A fence longer than any run of backticks in the code, which stays as it is."""
    if not code.strip():
        return ""
    fence = "`" * max(3, 1 + max((len(run) for run in _BACKTICKS.findall(code)), default=0))
    info = "" if language in ("", "plain text") else "".join(language.split())
    return f"{fence}{info.replace('`', '')}\n{code.strip(chr(10))}\n{fence}"


def _table(rows: list[dict[str, Any]], *, width: int) -> str:
    """A Markdown table (its first row as the header, as Markdown tables need one)."""
    cells = [
        [escape(plain_text(cell)) or " " for cell in (row.get("table_row") or {}).get("cells") or []]
        for row in rows
        if row.get("type") == "table_row"
    ]
    if not cells:
        return ""
    width = max(width, *(len(row) for row in cells))
    lines = [f"| {' | '.join(row + [' '] * (width - len(row)))} |" for row in cells]
    return "\n".join([lines[0], "|" + " --- |" * width, *lines[1:]])


def _indent(text: str, prefix: str) -> str:
    return "\n".join(f"{prefix}{line}" if line else "" for line in text.split("\n"))

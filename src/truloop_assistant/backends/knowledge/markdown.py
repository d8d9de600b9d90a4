"""Markdown as a search index sees it: a title and sections of prose and code blocks.

Parsing follows markdown-it's token stream (CommonMark, plus tables and strikethrough), so only real
headings start sections: a ``# comment`` inside a code fence stays code. Inline markup is dropped
(links keep their text, images their alt text, inline HTML goes); list markers, table pipes and
quote marks are kept because they separate items a reader should see apart. Code blocks stay
verbatim and apart from the prose around them.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass, field

from markdown_it import MarkdownIt
from markdown_it.token import Token

_MARKDOWN = MarkdownIt("commonmark").enable(["table", "strikethrough"])
_HTML_TAG = re.compile(r"</?[a-zA-Z][^>]*>")


@dataclass
class Block:
    """A paragraph-like run of prose (whitespace collapsed), or a code block kept verbatim."""

    text: str
    code: bool = False


@dataclass
class Section:
    """The blocks under one heading; the heading is empty before the first one and under the title."""

    heading: str
    blocks: list[Block] = field(default_factory=list)


def parse_markdown(text: str) -> tuple[str | None, list[Section]]:
    """The first level-1 heading (the title) and the non-empty sections of a Markdown document."""
    title: str | None = None
    sections = [Section("")]
    prose: list[str] = []
    markers: list[str] = []  # list and quote markers waiting for the text they introduce
    row: list[str] | None = None

    def end_prose() -> None:
        joined = " ".join(" ".join(prose).split())
        if joined:
            sections[-1].blocks.append(Block(joined))
        prose.clear()

    tokens = iter(_MARKDOWN.parse(_without_front_matter(text)))
    for token in tokens:
        kind = token.type
        if kind == "heading_open":
            end_prose()
            heading = _inline_text(next(tokens))
            if token.tag == "h1" and title is None:
                title = heading
                heading = ""
            sections.append(Section(heading))
        elif kind in ("fence", "code_block"):
            end_prose()
            code = token.content.strip("\n")
            if code.strip():
                sections[-1].blocks.append(Block(code, code=True))
            markers.clear()  # a list item that opens with code: its marker has no text to go with
        elif kind == "list_item_open":
            markers.append(f"{token.info}{token.markup}")
        elif kind == "blockquote_open":
            markers.append(">")
        elif kind == "tr_open":
            row = []
        elif kind == "tr_close" and row is not None:
            prose.append(f"| {' | '.join(row)} |")
            row = None
        elif kind == "inline" and row is not None:
            row.append(_inline_text(token))
        elif kind == "inline":
            prose.append(" ".join([*markers, _inline_text(token)]))
            markers.clear()
        elif kind == "html_block":
            prose.append(_html_text(token.content))
        # Each top-level element (paragraph, list, table, quote, HTML) is a block of its own.
        if token.level == 0 and token.nesting <= 0:
            end_prose()
    end_prose()
    return title, [section for section in sections if section.blocks]


def _inline_text(token: Token) -> str:
    """The text a reader sees of an inline token: no emphasis, link text, image alt text, no HTML."""
    return " ".join("".join(_inline_parts(token)).split())


def _inline_parts(token: Token) -> Iterator[str]:
    for child in token.children or ():
        if child.type in ("text", "text_special", "code_inline"):
            yield child.content
        elif child.type == "image":
            yield from _inline_parts(child)
        elif child.type in ("softbreak", "hardbreak", "html_inline"):
            yield " "


def _html_text(html: str) -> str:
    """The text of an HTML block (e.g. a Notion callout ``<aside>``), its Markdown inline-parsed."""
    if html.lstrip().startswith("<!--"):
        return ""
    return " ".join(_inline_text(t) for t in _MARKDOWN.parseInline(_HTML_TAG.sub(" ", html)))


def _without_front_matter(text: str) -> str:
    """The text after a leading ``---`` fenced YAML block (which Markdown would read as a heading)."""
    lines = text.splitlines()
    if lines and lines[0].strip() == "---":
        for i in range(1, len(lines)):
            if lines[i].strip() == "---":
                return "\n".join(lines[i + 1 :])
    return text

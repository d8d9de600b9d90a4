"""MkDocs hooks of the documentation site (mkdocs.yml): text kept outside docs/ shown in its pages,
and a check that the settings page is the one the settings model writes."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from mkdocs.exceptions import PluginError

from truloop_assistant.config.reference import render_settings_page

ROOT = Path(__file__).resolve().parents[1]
# In a page, `<!-- include PATH -->` … `<!-- end include -->` (what GitHub shows in between: a link)
# becomes the file at PATH, or with `PATH:NAME` its part between `<!-- start: NAME -->` and
# `<!-- end: NAME -->`; its links to docs/ are made the site's own.
INCLUDE = re.compile(
    r"<!-- include (?P<path>[^\s:]+)(?::(?P<part>[\w-]+))? -->\n.*?<!-- end include -->", re.DOTALL
)
LINKS_TO_DOCS = re.compile(r"\]\((?:\.\./)*docs/")


def on_pre_build(config: Any) -> None:
    """Stop the build when docs/settings.md is not what the settings model writes."""
    page = (ROOT / "docs" / "settings.md").read_text(encoding="utf-8")
    if page != render_settings_page(page):
        raise PluginError(
            "docs/settings.md differs from the settings model: run "
            "`.venv/bin/python -m truloop_assistant.config.reference docs/settings.md`"
        )


def included(match: re.Match[str]) -> str:
    """The file (or the part of it) that an include names."""
    path, part = ROOT / match["path"], match["part"]
    if not path.is_file():
        raise PluginError(f"{match['path']} is included in the docs but does not exist")
    text = path.read_text(encoding="utf-8")
    if part:
        start, end = f"<!-- start: {part} -->\n", f"<!-- end: {part} -->"
        if start not in text or end not in text:
            raise PluginError(f"{match['path']} has no part {part!r} ({start.strip()} … {end})")
        text = text.split(start, 1)[1].split(end, 1)[0]
    return LINKS_TO_DOCS.sub("](", text)


def on_page_markdown(markdown: str, page: Any, config: Any, files: Any) -> str:
    """Each include of the page replaced by what it names."""
    return INCLUDE.sub(included, markdown)

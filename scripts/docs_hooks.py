"""MkDocs hooks of the documentation site (mkdocs.yml): the client library's guide as a page, and a
check that the settings page is the one the settings model writes."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from mkdocs.exceptions import PluginError

from truloop_assistant.config.reference import render_settings_page

ROOT = Path(__file__).resolve().parents[1]
CLIENT_GUIDE = "clients/typescript/README.md"
# The guide's links, as they are from its folder, and as they are from the docs' pages.
CLIENT_LINKS = {"](../../docs/protocol.md": "](protocol.md"}


def on_pre_build(config: Any) -> None:
    """Stop the build when docs/settings.md is not what the settings model writes."""
    page = ROOT / "docs" / "settings.md"
    if page.read_text(encoding="utf-8") != render_settings_page(page.read_text(encoding="utf-8")):
        raise PluginError(
            "docs/settings.md differs from the settings model: run "
            "`.venv/bin/python -m truloop_assistant.config.reference docs/settings.md`"
        )


def on_page_markdown(markdown: str, page: Any, config: Any, files: Any) -> str:
    """The client library's guide in place of its include line, with its links made the site's."""
    include = f'--8<-- "{CLIENT_GUIDE}"'
    if include not in markdown:
        return markdown
    guide = (ROOT / CLIENT_GUIDE).read_text(encoding="utf-8")
    for theirs, ours in CLIENT_LINKS.items():
        guide = guide.replace(theirs, ours)
    return markdown.replace(include, guide)

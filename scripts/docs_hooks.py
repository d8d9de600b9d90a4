"""MkDocs hooks of the documentation site (mkdocs.yml): files from outside docs/ as pages (the client
library's guide, the changelog), and a check that the settings page is the one the settings model
writes."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from mkdocs.exceptions import PluginError

from truloop_assistant.config.reference import render_settings_page

ROOT = Path(__file__).resolve().parents[1]
# A page whose text is `--8<-- "PATH"` shows that file, its links to docs/ made the site's own.
INCLUDED = {
    "clients/typescript/README.md": {"](../../docs/": "]("},
    "CHANGELOG.md": {"](docs/": "]("},
}


def on_pre_build(config: Any) -> None:
    """Stop the build when docs/settings.md is not what the settings model writes."""
    page = ROOT / "docs" / "settings.md"
    if page.read_text(encoding="utf-8") != render_settings_page(page.read_text(encoding="utf-8")):
        raise PluginError(
            "docs/settings.md differs from the settings model: run "
            "`.venv/bin/python -m truloop_assistant.config.reference docs/settings.md`"
        )


def on_page_markdown(markdown: str, page: Any, config: Any, files: Any) -> str:
    """A file from outside docs/ in place of its include line, with its links made the site's."""
    for path, links in INCLUDED.items():
        include = f'--8<-- "{path}"'
        if include in markdown:
            text = (ROOT / path).read_text(encoding="utf-8")
            for theirs, ours in links.items():
                text = text.replace(theirs, ours)
            markdown = markdown.replace(include, text)
    return markdown

"""The README's links lead somewhere, and the settings page says what the settings model holds."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from markdown.extensions.toc import slugify

from truloop_assistant.config.reference import main, render_settings_page, variable
from truloop_assistant.config.settings import Settings

ROOT = Path(__file__).resolve().parents[1]
SETTINGS_PAGE = ROOT / "docs" / "settings.md"
LINK = re.compile(r"\]\(([^)\s]+)\)")
FENCE = re.compile(r"^```.*?^```$", re.MULTILINE | re.DOTALL)


def relative_links(markdown: str) -> list[str]:
    """The targets of a Markdown text's links to files (not web addresses), outside code blocks."""
    links = LINK.findall(FENCE.sub("", markdown))
    return [link for link in links if not re.match(r"[a-z][a-z0-9+.-]*:", link) and not link.startswith("#")]


def anchors(page: Path) -> set[str]:
    """The ids of a Markdown page's headings, as MkDocs (and GitHub) make them."""
    text = FENCE.sub("", page.read_text(encoding="utf-8"))
    return {slugify(heading, "-") for heading in re.findall(r"^#{1,6} (.+)$", text, re.MULTILINE)}


def broken_links(document: Path) -> list[str]:
    """The links of a document whose file, or heading within it, does not exist."""
    broken = []
    for link in relative_links(document.read_text(encoding="utf-8")):
        path, _, anchor = link.partition("#")
        target = (document.parent / path).resolve()
        if not target.exists() or (anchor and target.suffix == ".md" and anchor not in anchors(target)):
            broken.append(link)
    return broken


def test_every_relative_link_in_the_readme_points_to_an_existing_file() -> None:
    readme = ROOT / "README.md"

    assert len(relative_links(readme.read_text(encoding="utf-8"))) >= 10  # the links to the docs
    assert broken_links(readme) == []


def test_a_link_to_a_missing_file_or_heading_is_found(tmp_path: Path) -> None:
    (tmp_path / "page.md").write_text("# A page\n\n## Its section\n")
    document = tmp_path / "README.md"
    document.write_text(
        "[ok](page.md) [ok](page.md#its-section) [site](https://example.com) [here](#top)\n"
        "[gone](missing.md) [no heading](page.md#elsewhere)\n```\n[in code](nowhere.md)\n```\n"
    )

    assert broken_links(document) == ["missing.md", "page.md#elsewhere"]


def test_the_settings_page_is_the_one_the_settings_model_writes() -> None:
    page = SETTINGS_PAGE.read_text(encoding="utf-8")

    assert render_settings_page(page) == page, (
        "run `.venv/bin/python -m truloop_assistant.config.reference docs/settings.md`"
    )
    for name, field in Settings.model_fields.items():
        assert field.description, f"{variable(name)} has no docstring in config/settings.py"
        assert f"| `{variable(name)}` |" in page


def test_a_stale_settings_page_is_rewritten_and_fails_the_check(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    stale = tmp_path / "settings.md"
    text = SETTINGS_PAGE.read_text(encoding="utf-8")
    stale.write_text(text.replace("| `TRULOOP_REDIS_URL` |", "| `TRULOOP_REDIS_ADDRESS` |"))

    assert main([str(stale), "--check"]) == 1
    assert "differs from the settings model" in capsys.readouterr().err
    assert main([str(stale)]) == 0
    assert stale.read_text() == text
    assert main([str(stale), "--check"]) == 0

"""The docs' table of settings, written from the settings model so that it cannot drift from it.

``python -m truloop_assistant.config.reference docs/settings.md`` rewrites the table between the
page's two markers from each setting's name, default and description (its docstring);
``--check`` only says whether the page is up to date (exit 1 when it is not).
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path
from typing import Any

from pydantic.fields import FieldInfo

from .secret_files import FILE_SUFFIX, secret_fields
from .settings import Settings

START = "<!-- settings table: written by `python -m truloop_assistant.config.reference docs/settings.md` -->"
END = "<!-- end of the settings table -->"
ENV_PREFIX = "TRULOOP_"


def variable(name: str) -> str:
    """The environment variable of a setting."""
    return f"{ENV_PREFIX}{name.upper()}"


def shown_default(field: FieldInfo) -> str:
    """A setting's default as the table shows it: ``unset`` when there is none."""
    value: Any = field.get_default(call_default_factory=True)
    if value is None or value == []:
        return "unset"
    if isinstance(value, bool):
        return f"`{str(value).lower()}`"
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    return f"`{value}`"


def as_markdown(description: str) -> str:
    """A docstring on one table row: its lines joined, ``code`` as `code`, pipes escaped."""
    text = " ".join(line.strip() for line in description.strip().splitlines())
    return text.replace("``", "`").replace("|", "\\|")


def settings_table() -> str:
    """One row per setting, in the model's order; a secret's row names its ``_FILE`` variable too."""
    secrets = set(secret_fields(Settings))
    rows = ["| variable | default | meaning |", "|---|---|---|"]
    for name, field in Settings.model_fields.items():
        meaning = as_markdown(field.description or "")
        if name in secrets:
            meaning += f" Or `{variable(name)}{FILE_SUFFIX}`: a file holding it."
        rows.append(f"| `{variable(name)}` | {shown_default(field)} | {meaning} |")
    return "\n".join(rows)


def render_settings_page(page: str) -> str:
    """The page with the table between its markers written afresh."""
    pattern = re.compile(re.escape(START) + r"\n.*?" + re.escape(END), re.DOTALL)
    if not pattern.search(page):
        raise ValueError(f"the page has no settings table between {START!r} and {END!r}")
    return pattern.sub(lambda _: f"{START}\n{settings_table()}\n{END}", page, count=1)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("page", type=Path, help="the settings page, e.g. docs/settings.md")
    parser.add_argument("--check", action="store_true", help="only check that the page is up to date")
    args = parser.parse_args(argv)
    text = args.page.read_text(encoding="utf-8")
    fresh = render_settings_page(text)
    if fresh == text:
        return 0
    if args.check:
        print(f"{args.page} differs from the settings model: run {sys.argv[0]} {args.page}", file=sys.stderr)
        return 1
    args.page.write_text(fresh, encoding="utf-8")
    print(f"wrote the settings table of {args.page}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

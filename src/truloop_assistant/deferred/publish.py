"""Writes the published device protocol from the device tools' declarations.

    python -m truloop_assistant.deferred.publish [--check] [ROOT]

writes, under ROOT (the repository, the current directory by default):

- ``clients/typescript/protocol.json``: the document ``GET /api/v1/agent/protocol`` serves;
- ``clients/typescript/src/generated/protocol.ts``: the client's wire types, by the client's own
  generator (``node clients/typescript/scripts/protocol.mjs generate``; skipped without node);
- the method table of ``docs/protocol.md`` (between its ``generated`` markers);
- ``src/truloop_assistant/data/protocol/<protocol_version>.json``: the current version's document as
  published so far. It is written when the version is new, and then only grows: a change an app of
  that version could trip on (:mod:`.protocol_changes`) is refused, naming it, until the change goes
  in a new version (``PROTOCOL_VERSIONS`` in ``protocol/versions.py``).

``--check`` writes nothing and fails, naming the stale files, when one differs from what it would write.
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
from pathlib import Path

from ..protocol import versions
from .method_schemas import protocol_document
from .method_table import method_table
from .protocol_changes import breaking_changes

SNAPSHOT = Path("clients/typescript/protocol.json")
GENERATED_TYPES = Path("clients/typescript/src/generated/protocol.ts")
TYPES_SCRIPT = Path("clients/typescript/scripts/protocol.mjs")
DOCS = Path("docs/protocol.md")
BEGIN = "<!-- generated from the device tools' declarations: python -m truloop_assistant.deferred.publish -->"
END = "<!-- end of generated -->"
VERSIONS = Path("src/truloop_assistant/data/protocol")
"""Each protocol version's published document, ``<version>.json``."""


def version_file(version: str | None = None) -> Path:
    """Where the document of ``version`` (the current one by default) is kept."""
    return VERSIONS / f"{version or versions.PROTOCOL_VERSION}.json"


def snapshot_text() -> str:
    """``protocol.json`` as it is committed: the served document, indented by two."""
    return json.dumps(protocol_document(), indent=2, ensure_ascii=False) + "\n"


def docs_text(current: str) -> str:
    """docs/protocol.md with its generated method table replaced by the declarations' one."""
    head, begin, rest = current.partition(BEGIN)
    _, end, tail = rest.partition(END)
    if not begin or not end:
        raise ValueError(f"{DOCS} lacks the markers {BEGIN!r} ... {END!r}")
    return f"{head}{BEGIN}\n{method_table()}\n{END}{tail}"


def _types(root: Path, *, check: bool) -> str | None:
    """Runs the client's type generator (or its check); why it failed, or None."""
    node = shutil.which("node")
    if node is None or not (root / TYPES_SCRIPT).exists():
        return None
    run = subprocess.run(
        [node, str(root / TYPES_SCRIPT), "check" if check else "generate"],
        cwd=root / TYPES_SCRIPT.parent.parent,
        capture_output=True,
        text=True,
        check=False,
    )
    return None if run.returncode == 0 else f"{GENERATED_TYPES}: {(run.stderr or run.stdout).strip()}"


def publish(root: Path, *, check: bool = False) -> list[str]:
    """Write (or with ``check``, compare) the generated files; the stale ones, when checking, and the
    changes the current version's document refuses."""
    stale: list[str] = []
    document = snapshot_text()
    docs = (root / DOCS).read_text(encoding="utf-8")
    published = root / version_file()
    refused = [] if not published.exists() else _refused(published)
    for path, current, wanted in (
        (SNAPSHOT, (root / SNAPSHOT).read_text(encoding="utf-8"), document),
        (DOCS, docs, docs_text(docs)),
        (version_file(), published.read_text(encoding="utf-8") if published.exists() else "", document),
    ):
        if current == wanted or (path == version_file() and refused):
            continue
        if check:
            stale.append(str(path))
        else:
            (root / path).parent.mkdir(parents=True, exist_ok=True)
            (root / path).write_text(wanted, encoding="utf-8")
    if (problem := _types(root, check=check)) is not None:
        stale.append(problem)
    return stale + refused


def _refused(published: Path) -> list[str]:
    """What the current document changes in the version's published one that its apps could trip on."""
    changes = breaking_changes(json.loads(published.read_text(encoding="utf-8")), protocol_document())
    fix = f"undo it, or make it in a version after {versions.PROTOCOL_VERSION} (PROTOCOL_VERSIONS)"
    return [f"refused by {version_file()}: {change}: {fix}" for change in changes]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m truloop_assistant.deferred.publish")
    parser.add_argument("root", nargs="?", type=Path, default=Path.cwd(), help="the repository")
    parser.add_argument("--check", action="store_true", help="fail when a generated file is stale")
    args = parser.parse_args(argv)
    stale = publish(args.root, check=args.check)
    for line in stale:
        print(line if ": " in line else f"stale: {line}", file=sys.stderr)
    return 1 if stale else 0


if __name__ == "__main__":
    raise SystemExit(main())

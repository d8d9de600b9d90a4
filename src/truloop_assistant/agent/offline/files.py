"""What the offline model makes of a turn's files: it reads none, and says so.

A turn names each file it was sent on a line of its own (``agent.turn_files``): the offline model
takes those lines out of the prompt before reading the person's words (a voice note's words are read
as words), and answers a turn of files alone that it got them and cannot look at them.
"""

from __future__ import annotations

import re

from ...i18n import Language, texts
from ..turn_files import VOICE_NOTE

_FILE_LINE = re.compile(
    r"^\[(?:picture|document|voice note|file) file:\S+ (?P<name>.+?)(?:, \d+x\d+)?(?:: .*)?\]$"
)


def without_files(prompt: str) -> tuple[str, list[str]]:
    """The prompt without its files' lines (a voice note's words kept as words), and the files' names."""
    words: list[str] = []
    names: list[str] = []
    for line in prompt.splitlines():
        if found := _FILE_LINE.match(line.strip()):
            names.append(found["name"])
        else:
            words.append(line.removeprefix(VOICE_NOTE).strip())
    return "\n".join(w for w in words if w), names


def files_not_seen(names: list[str], lang: Language) -> str:
    """The answer to files alone: what was sent, and that this model cannot look at it."""
    return texts.FILE_NOT_SEEN(lang, name=", ".join(names))

"""The user's language, and every text the server itself says to people, in Korean and English.

Language detection is deliberately simple: any Hangul (syllables, jamo or compatibility jamo, so
"ㅋㅋ" counts) means Korean, anything else English.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Literal

Language = Literal["ko", "en"]

HANGUL = "\u1100-\u11ff\u3130-\u318f\uac00-\ud7a3"
"""Hangul jamo, compatibility jamo and syllables, for use inside a regex character class."""
_HANGUL = re.compile(f"[{HANGUL}]")


def is_korean(text: str) -> bool:
    """Whether the text has any Hangul in it."""
    return bool(_HANGUL.search(text))


def language_of(text: str) -> Language:
    """``ko`` for text with Hangul, else ``en``."""
    return "ko" if is_korean(text) else "en"


@dataclass(frozen=True)
class Text:
    """One thing said to a user, in both languages; ``{name}`` fields are filled by the caller."""

    ko: str
    en: str

    def __call__(self, language: Language, /, **values: Any) -> str:
        text = self.ko if language == "ko" else self.en
        return text.format(**values) if values else text


__all__ = ["HANGUL", "Language", "Text", "is_korean", "language_of"]

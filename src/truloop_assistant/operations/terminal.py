"""Text for an operator's terminal: what people, phones and models wrote cannot drive it.

A tool result, an error, a user id or a channel URL may hold control characters (ESC starting an
escape sequence, BEL, a C1 CSI): printed raw they could recolour, retitle, clear or rewrite the
operator's screen. They are shown escaped instead (``\\x1b``), in the text and in the JSON the
commands print.
"""

from __future__ import annotations

import json
import re
from typing import Any

_CONTROL = re.compile("[\x00-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")
_C1 = re.compile("[\x7f-\x9f\u202a-\u202e\u2066-\u2069]")
"""What ``json.dumps`` leaves raw (it escapes only C0): DEL, the C1 controls and the bidirectional
overrides and isolates (which reorder what the operator reads)."""


def _escaped(match: re.Match[str]) -> str:
    code = ord(match.group())
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def printable(text: str) -> str:
    """``text`` on one line with every control character shown as ``\\xNN`` (newlines too) and every
    bidirectional override as ``\\uNNNN``."""
    return _CONTROL.sub(_escaped, text)


def json_text(value: Any, *, indent: int | None = 2) -> str:
    """``value`` as JSON that is safe to print: the same value, non-ASCII text kept readable, control
    characters written as JSON escapes (``\\u001b``, ``\\u009b``)."""
    text = json.dumps(value, ensure_ascii=False, indent=indent)
    # Outside strings JSON text is ASCII without controls, so these are all inside strings.
    return _C1.sub(lambda m: f"\\u{ord(m.group()):04x}", text)

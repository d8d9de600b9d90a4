"""What a text message means when it is one keyword: opt out, opt back in, or ask for help.

Twilio's own words (help.twilio.com, "Twilio support for opt-out keywords (SMS STOP filtering)", and
the Advanced Opt-Out guide's defaults): STOP, STOPALL, UNSUBSCRIBE, CANCEL, END, QUIT, REVOKE and
OPTOUT opt the number out; START, YES and UNSTOP opt it back in; HELP and INFO ask for help. Only a
whole message is a keyword ("STOP PLEASE" is not), read here without regard to case or spaces.
Korean guests' 중지 and 수신거부 opt out too, and 도움말 asks for help.
"""

from __future__ import annotations

import re
from typing import Literal

Keyword = Literal["opt_out", "opt_in", "help"]

OPT_OUT = frozenset(
    {"STOP", "STOPALL", "UNSUBSCRIBE", "CANCEL", "END", "QUIT", "REVOKE", "OPTOUT", "중지", "수신거부"}
)
OPT_IN = frozenset({"START", "YES", "UNSTOP"})
HELP = frozenset({"HELP", "INFO", "도움말"})

_IGNORED = re.compile(r"[\s.!]+")
"""Spaces anywhere, and the full stops or exclamation marks a phone may add ("Stop." is STOP)."""


def keyword_of(body: str) -> Keyword | None:
    """The keyword the whole message is, if it is one."""
    word = _IGNORED.sub("", body).upper()
    if word in OPT_OUT:
        return "opt_out"
    if word in OPT_IN:
        return "opt_in"
    if word in HELP:
        return "help"
    return None

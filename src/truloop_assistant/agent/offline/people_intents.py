"""The offline model's rules for people: the user's memories (saving one, recalling them), their own
profile, and looking someone else up."""

from __future__ import annotations

import re
from datetime import datetime

from pydantic_ai.messages import ToolCallPart

_REMEMBER_KO = re.compile(
    r"^(?:기억해\s*(?:줘|둬|줄래)?\s*[:：,]?\s*(?P<a>.+)|(?P<b>.+?)\s*(?:라고|다고|을|를)?\s*기억해\s*(?:줘|둬|줄래)?[.!]?)$"
)
_REMEMBER_EN = re.compile(r"^(?:please\s+)?remember(?:\s+that)?[:,]?\s+(?P<a>.+)$", re.IGNORECASE)
_RECALL = re.compile(
    r"기억하고 있|기억나|뭘 기억|what do you remember|do you remember|my memories", re.IGNORECASE
)
_RECALL_FILLER = re.compile(
    r"뭘|무엇을|뭐|기억하고|기억나\w*|있어\w*|있는|있니|거|것|\bwhat\b|\bdo\b|\byou\b|\bremember\b|"
    r"\babout\b|\bmy memories\b|[?.!]"
)
_WHO_EN = re.compile(
    r"(?:who is|find|look up|search for|contact (?:info )?(?:for|of)|phone number of|email of)"
    r"\s+@?(?P<q>[\w.\-@+ ]+?)[?.!]*$",
    re.IGNORECASE,
)
_WHO_KO = re.compile(
    r"@?(?P<q>[\w.\-@+]+?)\s*(?:님|씨)?\s*(?:의\s*)?(?:연락처|전화번호|이메일|프로필|누구|찾아)"
)
_MY_PROFILE = re.compile(
    r"\bmy (?:e-?mail|phone number|number|title|job title|profile|groups?|team|username|employee id)\b|"
    r"(?<![가-힣])(?:내|제)\s*(?:이메일|메일|전화번호|번호|직함|직책|프로필|그룹|팀|아이디)",
    re.IGNORECASE,
)


def remember(prompt: str, text: str, ko: bool, now: datetime) -> ToolCallPart | None:
    match = _REMEMBER_EN.match(prompt.strip()) or _REMEMBER_KO.match(prompt.strip())
    if not match:
        return None
    fact = (match.group("a") or match.groupdict().get("b") or "").strip(" .!")
    return ToolCallPart("save_memory", {"text": fact}) if fact else None


def recall(prompt: str, text: str, ko: bool, now: datetime) -> ToolCallPart | None:
    if not _RECALL.search(text):
        return None
    about = re.sub(_RECALL_FILLER, " ", text).strip()
    return ToolCallPart("search_memories", {"query": " ".join(about.split()) if len(about) > 1 else ""})


def my_profile(prompt: str, text: str, ko: bool, now: datetime) -> ToolCallPart | None:
    """ "What's my e-mail?": the user's own profile, never a search for them."""
    return ToolCallPart("get_user_profile", {}) if _MY_PROFILE.search(prompt) else None


def find_user(prompt: str, text: str, ko: bool, now: datetime) -> ToolCallPart | None:
    match = _WHO_EN.search(prompt.strip()) or _WHO_KO.search(prompt)
    if not match:
        return None
    query = match.group("q").strip()
    return ToolCallPart("search_users", {"query": query}) if query else None

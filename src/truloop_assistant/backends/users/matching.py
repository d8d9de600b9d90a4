"""The default directory's search: exact and partial matches on contact, username, name and group."""

from __future__ import annotations

import re

from .port import SearchField, UserProfile


def _fold(text: str) -> str:
    return re.sub(r"\s+", "", text).casefold()


def _phone_digits(text: str) -> str:
    digits = re.sub(r"\D", "", text)
    return "0" + digits[2:] if digits.startswith("82") else digits  # +82 10-... == 010-...


def _contact_match(query: str, user: UserProfile) -> int:
    folded = _fold(query)
    if user.email and folded and folded in user.email.casefold():
        return 2 if folded == user.email.casefold() else 1
    digits = _phone_digits(query)
    if user.phone and len(digits) >= 4 and digits in _phone_digits(user.phone):
        return 2 if digits == _phone_digits(user.phone) else 1
    return 0


def _partial(query: str, value: str) -> int:
    folded, target = _fold(query), _fold(value)
    if not folded or folded not in target:
        return 0
    return 2 if folded == target else 1


def _score(query: str, by: SearchField | None, user: UserProfile) -> int:
    """2 for an exact match, 1 for a partial one, 0 for none."""
    scores = []
    if by in (None, "contact"):
        scores.append(_contact_match(query, user))
    if by in (None, "username"):
        scores.append(_partial(query.lstrip("@"), user.username))
    if by in (None, "name"):
        scores.append(_partial(query, user.name))
    if by in (None, "group"):
        scores.append(2 if any(_fold(g) == _fold(query) for g in user.groups) else 0)
    return max(scores)


def match_users(
    users: list[UserProfile], query: str, *, by: SearchField | None, limit: int
) -> list[UserProfile]:
    """Users matching ``query``, exact matches first, then by name."""
    scored = [(score, user) for user in users if (score := _score(query, by, user))]
    scored.sort(key=lambda pair: (-pair[0], pair[1].name.casefold(), pair[1].user_id))
    return [user for _, user in scored[:limit]]

"""The default directory's search: exact and partial matches on contact, username, name and group;
and whose phone a number is, compared as numbers (E.164), not as text."""

from __future__ import annotations

import re
from collections.abc import Collection, Iterable

import phonenumbers

from .port import ContactField, SearchField, UserProfile


def as_e164(number: str, region: str) -> str | None:
    """``number`` in E.164 (``+821055501234``), read as written in ``region`` (ISO 3166 alpha-2)
    unless it is international; None when it is not a valid number there."""
    try:
        parsed = phonenumbers.parse(number, region)
    except phonenumbers.NumberParseException:
        return None
    if not phonenumbers.is_valid_number(parsed):
        return None
    return phonenumbers.format_number(parsed, phonenumbers.PhoneNumberFormat.E164)


def phone_owners_among(
    users: Iterable[UserProfile], numbers: list[str], *, region: str
) -> dict[str, list[str]]:
    """E.164 number -> the ids of the users whose phone it is (each user's number read in
    ``region`` when written without a country code); numbers nobody has are left out."""
    wanted = set(numbers)
    owners: dict[str, list[str]] = {}
    for user in users:
        if user.phone and (number := as_e164(user.phone, region)) in wanted:
            owners.setdefault(number, []).append(user.user_id)
    return {n: sorted(ids) for n, ids in owners.items()}


def _fold(text: str) -> str:
    return re.sub(r"\s+", "", text).casefold()


def _phone_digits(text: str) -> str:
    digits = re.sub(r"\D", "", text)
    return "0" + digits[2:] if digits.startswith("82") else digits  # +82 10-... == 010-...


def _contact_match(query: str, user: UserProfile, exact_only: Collection[ContactField] = ()) -> int:
    def graded(field: ContactField, exact: bool) -> int:
        return 2 if exact else 0 if field in exact_only else 1

    scores = [0]
    folded = _fold(query)
    if user.email and folded and folded in user.email.casefold():
        scores.append(graded("email", folded == user.email.casefold()))
    digits = _phone_digits(query)
    if user.phone and len(digits) >= 4 and digits in _phone_digits(user.phone):
        scores.append(graded("phone", digits == _phone_digits(user.phone)))
    return max(scores)


def _partial(query: str, value: str) -> int:
    folded, target = _fold(query), _fold(value)
    if not folded or folded not in target:
        return 0
    return 2 if folded == target else 1


def _score(
    query: str, by: SearchField | None, user: UserProfile, exact_only: Collection[ContactField] = ()
) -> int:
    """2 for an exact match, 1 for a partial one, 0 for none (``exact_only`` fields: exact or none)."""
    scores = []
    if by in (None, "contact"):
        scores.append(_contact_match(query, user, exact_only))
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


def found_only_by_fragment(
    query: str, by: SearchField | None, user: UserProfile, hidden: Collection[ContactField]
) -> bool:
    """Whether ``user`` matches ``query`` only through part of a contact detail in ``hidden``.

    Such a result would confirm pieces of a detail the searcher may not see, so they could guess it
    bit by bit; the whole address or number (which the searcher already knows) still finds its owner.
    A match this search cannot explain (an API matching in its own way) is not judged here.
    """
    return bool(hidden) and _score(query, by, user) > 0 and _score(query, by, user, hidden) == 0

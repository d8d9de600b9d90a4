"""Days people name in Korean and English: "내일", "금요일", "12월 2일", "Dec 2", "2026-12-02"."""

from __future__ import annotations

import re
from datetime import date, timedelta

from ...i18n.dates import WEEKDAYS_KO

EN_WEEKDAYS = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")
_EN_MONTHS = ("jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec")
_MONTH = (
    r"(?:january|february|march|april|may|june|july|august|september|october|november|december|"
    r"jan|feb|mar|apr|jun|jul|aug|sept|sep|oct|nov|dec)\.?(?![a-z])"
)
_ORDINAL = r"(?:st|nd|rd|th)?"

DAY_PHRASE = (
    r"\d{4}-\d{2}-\d{2}|\d{1,2}\s*월\s*\d{1,2}\s*일|(?:다음\s*주\s*|이번\s*주\s*)?[월화수목금토일]요일|"
    r"내일\s*모레|모레|내일|오늘|day after tomorrow|tomorrow|today|tonight|"
    rf"(?:next\s+|this\s+)?(?:{'|'.join(EN_WEEKDAYS)})|{_MONTH}\s+\d{{1,2}}{_ORDINAL}|"
    rf"\d{{1,2}}{_ORDINAL}\s+(?:of\s+)?{_MONTH}"
)
"""One day, as a regex fragment (for phrases such as "by friday" or "금요일까지")."""

_DAYS = re.compile(
    r"(?P<iso>(?<!\d)\d{4}-\d{2}-\d{2}(?!\d))"
    r"|(?P<kmon>\d{1,2})\s*월\s*(?P<kday>\d{1,2})\s*일"
    r"|(?<![\d월])(?P<konly>\d{1,2})\s*일(?!\s*요일)"
    rf"|\b(?P<emon>{_MONTH})\s+(?P<eday>\d{{1,2}}){_ORDINAL}\b(?!\s*(?:am|pm|:))"
    rf"|\b(?P<eday2>\d{{1,2}}){_ORDINAL}\s+(?:of\s+)?(?P<emon2>{_MONTH})(?![a-z])"
    rf"|(?:,|&|\band\b|\bor\b)\s*(?:the\s+)?(?P<emore>\d{{1,2}}){_ORDINAL}\b(?!\s*(?:am|pm|:|시|일))"
    r"|(?P<rel2>내일\s*모레|모레|day after tomorrow)"
    r"|(?P<rel1>내일|tomorrow)"
    r"|(?P<rel0>오늘|today|tonight)"
    r"|(?P<knext>다음\s*주\s*)?(?P<kwd>[월화수목금토일])요일"
    rf"|\b(?P<enext>next\s+)?(?P<ewd>{'|'.join(EN_WEEKDAYS)})s?\b",
    re.IGNORECASE,
)


def next_weekday(today: date, weekday: int, *, next_week: bool) -> date:
    """The coming ``weekday`` (never today), or that day of next week."""
    if next_week:
        monday = today - timedelta(days=today.weekday()) + timedelta(days=7)
        return monday + timedelta(days=weekday)
    return today + timedelta(days=(weekday - today.weekday()) % 7 or 7)


def _month_day(month: int, day: int, today: date) -> date | None:
    """The next ``month``/``day`` from today on (this year, or next year once it has passed)."""
    for year in (today.year, today.year + 1):
        try:
            found = date(year, month, day)
        except ValueError:
            return None
        if found >= today:
            return found
    return None


def _day_of_month(day: int, month: int | None, today: date) -> date | None:
    """Day ``day`` of ``month`` (the month just named), else of this month or, once past, the next."""
    if month is not None:
        return _month_day(month, day, today)
    for ahead in range(3):
        first = date(today.year + (today.month - 1 + ahead) // 12, (today.month - 1 + ahead) % 12 + 1, 1)
        try:
            found = first.replace(day=day)
        except ValueError:
            continue
        if found >= today:
            return found
    return None


def _month_number(word: str) -> int:
    return _EN_MONTHS.index(word[:3].lower()) + 1


def days_in(text: str, today: date) -> list[date]:
    """Every day the text names, in order and once each; "12월 2일, 3일" and "Dec 2 and 3" give two."""
    found: list[date] = []
    month: int | None = None  # the month just named, for "3일" / "and 3" after it
    english_month = next_week = False  # "다음 주 화요일이랑 수요일": both next week
    for match in _DAYS.finditer(text):
        groups = match.groupdict()
        day: date | None = None
        if groups["iso"]:
            try:
                day = date.fromisoformat(groups["iso"])
            except ValueError:
                day = None
            month, english_month = (day.month if day else None), False
        elif groups["kmon"]:
            month, english_month = int(groups["kmon"]), False
            day = _month_day(month, int(groups["kday"]), today)
        elif groups["konly"]:
            day = _day_of_month(int(groups["konly"]), month, today)
        elif groups["emon"] or groups["emon2"]:
            month, english_month = _month_number(groups["emon"] or groups["emon2"]), True
            day = _month_day(month, int(groups["eday"] or groups["eday2"]), today)
        elif groups["emore"]:
            if english_month:
                day = _day_of_month(int(groups["emore"]), month, today)
        elif groups["kwd"] or groups["ewd"]:
            next_week = next_week or bool(groups["knext"] or groups["enext"])
            weekday = (
                WEEKDAYS_KO.index(groups["kwd"] + "요일")
                if groups["kwd"]
                else EN_WEEKDAYS.index(groups["ewd"].lower())
            )
            day = next_weekday(today, weekday, next_week=next_week)
        else:
            ahead = 2 if groups["rel2"] else 1 if groups["rel1"] else 0
            day = today + timedelta(days=ahead)
        if day is not None and day not in found:
            found.append(day)
    return found


def named_day(text: str, today: date) -> date | None:
    """The day the text names first, or None."""
    days = days_in(text, today)
    return days[0] if days else None

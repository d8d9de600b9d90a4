"""Names of days and months, and how a date reads in each language."""

from __future__ import annotations

from datetime import date

from . import Language

WEEKDAYS_KO = ("월요일", "화요일", "수요일", "목요일", "금요일", "토요일", "일요일")
WEEKDAYS_EN = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday")
MONTHS_EN = (
    "January", "February", "March", "April", "May", "June",
    "July", "August", "September", "October", "November", "December",
)  # fmt: skip


def weekday_ko(day: date) -> str:
    """``월요일`` ... ``일요일``."""
    return WEEKDAYS_KO[day.weekday()]


def short_day(day: date, language: Language, *, year: bool = False) -> str:
    """``11월 24일 (화)`` / ``Tue 24 Nov``; with ``year``, ``2027년 1월 5일 (화)`` / ``Tue 5 Jan 2027``."""
    if language == "ko":
        text = f"{day.month}월 {day.day}일 ({WEEKDAYS_KO[day.weekday()][0]})"
        return f"{day.year}년 {text}" if year else text
    text = f"{WEEKDAYS_EN[day.weekday()][:3]} {day.day} {MONTHS_EN[day.month - 1][:3]}"
    return f"{text} {day.year}" if year else text

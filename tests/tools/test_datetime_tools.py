"""Date and time tools through an agent: what the model gets back is what the user hears."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic_ai import models

from tests.tools.support import content, retried, run_tool
from truloop_assistant.tools.datetime_tools import datetime_toolset

models.ALLOW_MODEL_REQUESTS = False


async def ask(tool: str, **args: Any) -> str:
    return await run_tool(datetime_toolset, None, tool, user="jeff", **args)


async def test_day_of_week_of_a_date_and_of_today() -> None:
    assert content(await ask("get_day_of_week", date="2026-03-10")) == {
        "date": "2026-03-10",
        "day_of_week": "Tuesday",
        "day_of_week_ko": "화요일",
    }
    today = content(await ask("get_day_of_week"))
    assert (today["date"], today["day_of_week_ko"]) == ("2026-11-26", "목요일")
    assert content(await ask("get_day_of_week", date=""))["date"] == "2026-11-26"  # blank is today too


async def test_current_datetime_in_the_users_zone_and_in_another() -> None:
    seoul = content(await ask("get_current_datetime"))
    assert seoul["datetime"] == "2026-11-26T10:49:00+09:00" and seoul["day_of_week_ko"] == "목요일"
    assert (seoul["timezone"], seoul["utc_offset"]) == ("Asia/Seoul", "+09:00")
    new_york = content(await ask("get_current_datetime", timezone=" America/New_York "))
    assert new_york["datetime"] == "2026-11-25T20:49:00-05:00" and new_york["day_of_week_ko"] == "수요일"
    assert content(await ask("get_current_datetime", timezone=""))["timezone"] == "Asia/Seoul"


@pytest.mark.parametrize(
    ("tool", "args", "field", "message"),
    [
        (
            "get_day_of_week",
            {"date": "2026-13-40"},
            "date",
            "'2026-13-40' is not an ISO date; use YYYY-MM-DD",
        ),
        (
            "get_day_of_week",
            {"date": "March 10"},
            "date",
            "is not an ISO date; use YYYY-MM-DD, e.g. 2026-03-09",
        ),
        (
            "get_current_datetime",
            {"timezone": "Seoul"},
            "timezone",
            "'Seoul' is not an IANA time zone; use a name like 'Asia/Seoul'",
        ),
        ("get_current_datetime", {"timezone": "../etc/passwd"}, "timezone", "is not an IANA time zone"),
        (
            "get_current_datetime",
            {"timezone": "x" * 65},
            "timezone",
            "String should have at most 64 characters",
        ),
    ],
)
async def test_bad_arguments_ask_for_a_fix(tool: str, args: dict[str, Any], field: str, message: str) -> None:
    problems = retried(await ask(tool, **args))
    assert list(problems) == [field] and message in problems[field]

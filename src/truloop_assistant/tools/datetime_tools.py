"""Date and time tools: the model cannot know what time it is without them."""

from __future__ import annotations

from typing import Annotated
from zoneinfo import ZoneInfo

from pydantic import BaseModel, Field
from pydantic_ai import FunctionToolset, RunContext

from ..i18n.dates import weekday_ko
from .agent_deps import AgentDeps
from .arguments import OptionalIsoDate, TimeZoneName

datetime_toolset: FunctionToolset[AgentDeps] = FunctionToolset()


class DayOfWeekResult(BaseModel):
    date: str
    day_of_week: str = Field(description="English weekday name")
    day_of_week_ko: str = Field(description="Korean weekday name")


class CurrentDateTime(BaseModel):
    datetime: str = Field(description="ISO 8601 with UTC offset")
    date: str
    time: str
    day_of_week: str
    day_of_week_ko: str
    timezone: str
    utc_offset: str


@datetime_toolset.tool
async def get_day_of_week(
    ctx: RunContext[AgentDeps],
    date: Annotated[OptionalIsoDate, Field(description="ISO date (YYYY-MM-DD); omit for today")] = None,
) -> DayOfWeekResult:
    """Return the day of the week of a date (today in the user's time zone when no date is given)."""
    day = date or ctx.deps.now().date()
    return DayOfWeekResult(
        date=day.isoformat(), day_of_week=day.strftime("%A"), day_of_week_ko=weekday_ko(day)
    )


@datetime_toolset.tool
async def get_current_datetime(
    ctx: RunContext[AgentDeps],
    timezone: Annotated[
        TimeZoneName | None,
        Field(description="IANA time zone to convert to, e.g. 'America/New_York'; omit for the user's zone"),
    ] = None,
) -> CurrentDateTime:
    """Return the current date and time, in the user's time zone or converted to another one."""
    zone = ZoneInfo(timezone) if timezone else ctx.deps.timezone
    now = ctx.deps.clock().astimezone(zone)
    offset = now.strftime("%z")
    return CurrentDateTime(
        datetime=now.isoformat(timespec="seconds"),
        date=now.date().isoformat(),
        time=now.strftime("%H:%M"),
        day_of_week=now.strftime("%A"),
        day_of_week_ko=weekday_ko(now.date()),
        timezone=str(zone),
        utc_offset=f"{offset[:3]}:{offset[3:]}",
    )

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
    date: OptionalIsoDate = None,
) -> DayOfWeekResult:
    """The weekday of a date (default: today)."""
    day = date or ctx.deps.now().date()
    return DayOfWeekResult(
        date=day.isoformat(), day_of_week=day.strftime("%A"), day_of_week_ko=weekday_ko(day)
    )


@datetime_toolset.tool
async def get_current_datetime(
    ctx: RunContext[AgentDeps],
    timezone: Annotated[TimeZoneName | None, Field(description="IANA name, e.g. America/New_York")] = None,
) -> CurrentDateTime:
    """The time now in a time zone (default: the user's)."""
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

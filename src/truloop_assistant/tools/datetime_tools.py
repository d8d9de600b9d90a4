"""Date and time tools: the model cannot know what time it is without them."""

from __future__ import annotations

from pydantic import BaseModel, Field
from pydantic_ai import FunctionToolset, RunContext

from .deps import AgentDeps
from .validation import iso_date, time_zone

datetime_toolset: FunctionToolset[AgentDeps] = FunctionToolset()

_KO_DAYS = ["월요일", "화요일", "수요일", "목요일", "금요일", "토요일", "일요일"]


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
    date: str | None = Field(default=None, description="ISO date (YYYY-MM-DD); omit for today"),
) -> DayOfWeekResult:
    """Return the day of the week of a date (today in the user's time zone when no date is given)."""
    day = iso_date(date) if date else ctx.deps.now().date()
    return DayOfWeekResult(
        date=day.isoformat(), day_of_week=day.strftime("%A"), day_of_week_ko=_KO_DAYS[day.weekday()]
    )


@datetime_toolset.tool
async def get_current_datetime(
    ctx: RunContext[AgentDeps],
    timezone: str | None = Field(
        default=None,
        description="IANA time zone to convert to, e.g. 'America/New_York'; omit for the user's zone",
    ),
) -> CurrentDateTime:
    """Return the current date and time, in the user's time zone or converted to another one."""
    zone = time_zone(timezone) if timezone else ctx.deps.timezone
    now = ctx.deps.clock().astimezone(zone)
    offset = now.strftime("%z")
    return CurrentDateTime(
        datetime=now.isoformat(timespec="seconds"),
        date=now.date().isoformat(),
        time=now.strftime("%H:%M"),
        day_of_week=now.strftime("%A"),
        day_of_week_ko=_KO_DAYS[now.weekday()],
        timezone=str(zone),
        utc_offset=f"{offset[:3]}:{offset[3:]}",
    )

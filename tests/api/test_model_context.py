"""What a model is told of the person and their days, and how a plain date reaches the phone: through
the app, with the webhook, the worker and the phone's answer."""

from __future__ import annotations

import re
from datetime import date, datetime, timedelta
from typing import Any
from zoneinfo import ZoneInfo

from pydantic_ai.messages import ModelMessage, ModelResponse, TextPart, ToolCallPart, ToolReturnPart
from pydantic_ai.models.function import AgentInfo, FunctionModel

from tests.support import webhook_payload

SEOUL = ZoneInfo("Asia/Seoul")


def calendar_model(told: list[str], start: str, end: str) -> FunctionModel:
    """Asks the phone's calendar for ``start`` .. ``end`` as given, then answers what it heard."""

    def answer(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        told.append(info.instructions or "")
        returns = [p for p in messages[-1].parts if isinstance(p, ToolReturnPart)]
        if returns:
            return ModelResponse(parts=[TextPart(f"events: {len(returns[0].content['events'])}")])
        args = {"notification_message": "일정 확인 중", "start_date": start, "end_date": end}
        return ModelResponse(parts=[ToolCallPart("get_calendar_events", args)])

    return FunctionModel(answer)


async def test_a_plain_date_asks_the_phone_for_that_whole_day_in_the_persons_zone(
    start_server: Any, directory: Any
) -> None:
    async with start_server(model=calendar_model([], "2026-12-04", "2026-12-04")) as h:
        await h.user_says("what do I have on the 4th?", user="jeff", channel="jeff-1")  # Seoul
        await h.user_says("what do I have on the 4th?", user="sarah", channel="sarah-1")  # Los Angeles
        [seoul] = await h.rpc_requests(1, channel="jeff-1")
        [la] = await h.rpc_requests(1, channel="sarah-1")
        assert seoul["params"] == {
            "startDate": "2026-12-04T00:00:00+09:00",
            "endDate": "2026-12-05T00:00:00+09:00",
        }
        assert la["params"] == {
            "startDate": "2026-12-04T00:00:00-08:00",
            "endDate": "2026-12-05T00:00:00-08:00",
        }
        # The call the phone sees is the one it answers: the run resumes with its result.
        assert (await h.answer(seoul["id"], result={"events": []}, user="jeff")).status_code == 202
        [reply] = await h.replies(1, channel="jeff-1")
    assert reply.text == "events: 0"


async def test_a_date_time_beside_a_plain_end_date_keeps_its_own_time(
    start_server: Any, directory: Any
) -> None:
    async with start_server(model=calendar_model([], "2026-12-04T18:30:00+09:00", "2026-12-05")) as h:
        await h.user_says("am I free tonight and tomorrow?", user="jeff", channel="jeff-1")
        [rpc] = await h.rpc_requests(1, channel="jeff-1")
    assert rpc["params"] == {"startDate": "2026-12-04T18:30:00+09:00", "endDate": "2026-12-06T00:00:00+09:00"}


async def test_the_context_names_the_person_as_the_chat_shows_them_and_lists_the_next_14_days(
    start_server: Any, directory: Any
) -> None:
    told: list[str] = []
    payload = webhook_payload("what's on next Friday?", user="jeff", channel="jeff-1", message_id=7)
    payload["sender"]["nickname"] = "  제프\n(디자인팀) "
    async with start_server(model=calendar_model(told, "2026-12-04", "2026-12-04")) as h:
        assert (await h.post_webhook(payload)).status_code == 200
        [rpc] = await h.rpc_requests(1, channel="jeff-1")
        await h.answer(rpc["id"], result={"events": []}, user="jeff")
        await h.replies(1, channel="jeff-1")
    first, resumed = told
    assert "The user is 제프 (디자인팀) (user id jeff)" in first  # on one line, as the chat shows it
    assert "The user is 제프 (디자인팀) (user id jeff)" in resumed  # the step after the phone answered too
    listed = re.search(r"The next 14 days: (.+)\.", first)
    assert listed is not None, first
    days = [entry.split() for entry in listed.group(1).split(", ")]
    tomorrow = datetime.now(SEOUL).date() + timedelta(days=1)
    first_day = date.fromisoformat(days[0][1])
    assert first_day in (tomorrow, tomorrow + timedelta(days=1))  # (the clock may pass midnight meanwhile)
    assert [date.fromisoformat(d) for _, d in days] == [first_day + timedelta(days=n) for n in range(14)]
    assert all(weekday == date.fromisoformat(d).strftime("%a") for weekday, d in days)

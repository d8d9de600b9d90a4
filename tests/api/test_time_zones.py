"""Each person's own time zone: the clock, relative dates and the confirmation dialog."""

from __future__ import annotations

import re
from datetime import datetime
from typing import Any
from zoneinfo import ZoneInfo

from pydantic_ai.messages import ModelMessage, ModelResponse, TextPart
from pydantic_ai.models.function import AgentInfo, FunctionModel

from tests.tools.support import fixed
from truloop_assistant.agent.offline import build_offline_model

SEOUL = ZoneInfo("Asia/Seoul")


async def test_the_time_is_told_in_the_persons_zone(start_server: Any, directory: Any) -> None:
    async with start_server(model=build_offline_model(timezone=SEOUL, clock=fixed)) as h:
        await h.user_says("what time is it?", user="sarah", channel="sarah-1")  # Los Angeles
        await h.user_says("what time is it?", user="jeff", channel="jeff-1")  # Seoul
        [la] = await h.replies(1, channel="sarah-1")
        [seoul] = await h.replies(1, channel="jeff-1")
    assert "(America/Los_Angeles)" in la.text and "(Asia/Seoul)" in seoul.text


async def test_tomorrow_at_three_is_the_persons_three_oclock(start_server: Any, directory: Any) -> None:
    async with start_server(model=build_offline_model(timezone=SEOUL, clock=fixed)) as h:
        await h.user_says("schedule a design review tomorrow at 3pm", user="sarah", channel="sarah-1")
        [rpc] = await h.rpc_requests(1, channel="sarah-1")
        # Wednesday evening in Los Angeles while it is Thursday morning in Seoul: her tomorrow is Thursday.
        assert "Thu 26 Nov 15:00–16:00" in rpc["params"]["message"]
        await h.answer(rpc["id"], result={"confirmed": True}, user="sarah")
        [reply] = await h.replies(1, channel="sarah-1")
        assert "15:00" in reply.text


async def test_every_run_is_told_who_the_user_is_and_the_time_where_they_are(
    start_server: Any, directory: Any
) -> None:
    told: list[str] = []

    def answer(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        told.append(info.instructions or "")
        return ModelResponse(parts=[TextPart("ok")])

    async with start_server(model=FunctionModel(answer)) as h:
        await h.user_says("what's on tomorrow?", user="sarah", channel="sarah-1")
        await h.replies(1, channel="sarah-1")
    [instructions] = told
    now = datetime.now(ZoneInfo("America/Los_Angeles"))
    shown = re.search(r"Now it is (\w+) (\S+) (\d\d:\d\d) there \(UTC([+-]\d\d:\d\d)\)\.", instructions)
    assert shown is not None, instructions
    weekday, day, at, offset = shown.groups()
    moment = datetime.fromisoformat(f"{day}T{at}:00{offset}")
    assert abs((moment - now).total_seconds()) < 120 and weekday == moment.strftime("%A")
    assert offset in ("-08:00", "-07:00")  # Los Angeles, standard or summer time
    # The test chat's nickname is the user id: no name, so the directory's is told.
    assert "The user is Sarah Johnson (user id sarah)" in instructions
    assert "The user's time zone is America/Los_Angeles." in instructions

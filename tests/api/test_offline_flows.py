"""The dev experience with no LLM key: the offline model drives every tool flow through the server."""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any
from zoneinfo import ZoneInfo

from tests.api.test_tools_gate import q
from tests.tools.support import fixed
from truloop_assistant.agent.offline import build_offline_model
from truloop_assistant.backends.events import RedisEventStore

SEOUL = ZoneInfo("Asia/Seoul")


async def test_creating_an_event_goes_through_the_confirmation_gate(
    start_server: Any, directory: Any
) -> None:
    # "Tomorrow" for the model is Friday 27 November: its clock is fixed to Thursday 26 November.
    async with start_server(model=build_offline_model(timezone=SEOUL, clock=fixed)) as h:
        await h.user_says("내일 오후 3시에 팀 회의 잡아줘 @mina")
        [rpc] = await h.rpc_requests(1)
        assert rpc["method"] == "interaction.confirm" and rpc["params"]["title"] == "일정을 만들까요?"
        message = rpc["params"]["message"]
        assert f"“{q('팀 회의')}” 11월 27일 (금) 15:00–16:00" in message
        assert f"{q('박민아')} ({q('mina')})" in message
        assert (rpc["params"]["confirmLabel"], rpc["params"]["cancelLabel"]) == ("확인", "취소")

        await h.answer(rpc["id"], result={"confirmed": True})
        [reply] = await h.replies(1)
        assert reply.text == "일정을 만들었어요: “팀 회의” 11월 27일 (금) 15:00–16:00."
        start = datetime(2026, 11, 27, tzinfo=SEOUL)
        [event] = await RedisEventStore(h.redis).list_events("jeff", start, start + timedelta(days=1))
        assert event.invitee_user_ids == ["mina"]


async def test_declining_leaves_nothing_created(start_server: Any, directory: Any) -> None:
    async with start_server() as h:
        await h.user_says("schedule a design review tomorrow at 10:30 am")
        [rpc] = await h.rpc_requests(1)
        assert (
            rpc["params"]["title"] == "Create this event?"
            and f"“{q('Design review')}”" in rpc["params"]["message"]
        )
        await h.answer(rpc["id"], result={"confirmed": False})
        [reply] = await h.replies(1)
        assert reply.text == "OK, I won't do that."


async def test_an_edited_time_is_created_and_said_and_a_refusal_is_quoted(
    start_server: Any, directory: Any
) -> None:
    async with start_server(model=build_offline_model(timezone=SEOUL, clock=fixed)) as h:
        await h.user_says("내일 오후 3시에 팀 회의 잡아줘")
        [rpc] = await h.rpc_requests(1)
        later = {"start_time": "2026-11-27T16:00:00+09:00", "end_time": "2026-11-27T17:00:00+09:00"}
        await h.answer(rpc["id"], result={"confirmed": True, "edited": later})
        [reply] = await h.replies(1)
        assert (
            reply.text == "바꾸신 대로(시작, 종료) 일정을 만들었어요: “팀 회의” 11월 27일 (금) 16:00–17:00."
        )

        await h.user_says("schedule a design review tomorrow at 10:30 am")
        rpcs = await h.rpc_requests(2)
        await h.answer(rpcs[1]["id"], result={"confirmed": False, "reason": "Mina is away"})
        replies = await h.replies(2)
        assert replies[1].text == "OK, I won't do that (“Mina is away”)."
        start = datetime(2026, 11, 27, tzinfo=SEOUL)
        [event] = await RedisEventStore(h.redis).list_events("jeff", start, start + timedelta(days=1))
        assert event.start_time == datetime(2026, 11, 27, 16, tzinfo=SEOUL)


async def test_searching_the_handbook_in_korean_and_english(start_server: Any) -> None:
    async with start_server() as h:
        await h.user_says("연차는 며칠이야?", channel="kb-ko")
        await h.user_says("How do I get my taxi fare reimbursed?", channel="kb-en")
        [ko] = await h.replies(1, channel="kb-ko")
        [en] = await h.replies(1, channel="kb-en")
    assert ko.text.startswith("‘") and "문서에 따르면" in ko.text and "휴가" in ko.text
    assert en.text.startswith("According to ‘") and "xpense" in en.text


async def test_finding_a_person(start_server: Any, directory: Any) -> None:
    async with start_server() as h:
        await h.user_says("mina 연락처 알려줘")
        [reply] = await h.replies(1)
    assert (
        reply.text.startswith("찾은 사람:") and "박민아 (mina)" in reply.text and "@example.com" in reply.text
    )


async def test_remembering_and_recalling(start_server: Any) -> None:
    async with start_server() as h:
        await h.user_says("기억해줘: 나는 창가 자리를 좋아해")
        [saved] = await h.replies(1)
        assert saved.text == "기억해 둘게요: 나는 창가 자리를 좋아해"
        await h.user_says("뭘 기억하고 있어?")
        replies = await h.replies(2)
    assert replies[1].text == "기억하고 있는 것:\n- 나는 창가 자리를 좋아해"


async def test_places_without_a_key_are_explained(start_server: Any) -> None:
    async with start_server() as h:
        await h.user_says("근처 맛집 찾아줘")
        [reply] = await h.replies(1)
    assert reply.text.startswith("장소를 찾지 못했어요: 이 서버에는 그 기능이 설정되어 있지 않아요")

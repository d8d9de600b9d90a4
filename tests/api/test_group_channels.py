"""Group channels: which messages are turns, and what one person's turn may see of another's."""

from __future__ import annotations

from typing import Any

from pydantic_ai.messages import ModelMessage, ModelResponse, TextPart, ToolCallPart, ToolReturnPart
from pydantic_ai.models.function import AgentInfo, FunctionModel

from tests.support import BOT, CALENDAR_ARGS

SECRET = {"events": [{"id": "e1", "title": "SECRET-1on1-with-CFO",
                      "start": {"dateTime": "2026-11-26T15:00:00+09:00"},
                      "end": {"dateTime": "2026-11-26T16:00:00+09:00"}}]}  # fmt: skip


def recording(requests: list[str]) -> FunctionModel:
    """Ask for the calendar when asked about it, else answer plainly; every request is recorded."""

    def fn(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        requests.append(f"{info.instructions}\n{messages!r}")
        last = messages[-1].parts
        if any(isinstance(p, ToolReturnPart) for p in last):
            return ModelResponse(parts=[TextPart("You have one meeting this afternoon.")])
        prompt = str(next(p.content for p in reversed(last) if p.part_kind == "user-prompt"))
        if "calendar" in prompt:
            return ModelResponse(parts=[ToolCallPart("get_calendar_events", CALENDAR_ARGS)])
        return ModelResponse(parts=[TextPart(f"ok: {prompt}")])

    return FunctionModel(fn)


GROUP = ["jeff", "mina", BOT]


async def test_the_assistant_answers_only_where_it_is_a_member(start_server: Any) -> None:
    requests: list[str] = []
    async with start_server(model=recording(requests)) as h:
        r = await h.user_says("hello", channel="not-ours", members=["jeff", "mina"], mentions=[BOT])
        assert r.json() == {"status": "ignored"}
        await h.idle()
        assert requests == [] and h.sendbird.messages == []


async def test_in_a_group_only_mentions_are_turns(start_server: Any) -> None:
    requests: list[str] = []
    async with start_server(model=recording(requests)) as h:
        r = await h.user_says("lunch at noon?", user="mina", channel="team", members=GROUP)
        assert r.json() == {"status": "ignored"}
        r = await h.user_says("@Truloop what time is it?", channel="team", members=GROUP, mentions=[BOT])
        assert r.json() == {"status": "queued"}
        [reply] = await h.replies(1, channel="team")
        assert reply.text == "ok: @Truloop what time is it?"
        # What mina said (not to the assistant) is context for jeff's turn, marked as hers.
        assert '{"by": "user", "user_id": "mina", "text": "lunch at noon?"}' in requests[-1]


async def test_members_come_from_the_platform_api_when_the_webhook_has_none(start_server: Any) -> None:
    requests: list[str] = []
    async with start_server(model=recording(requests)) as h:
        h.sendbird.add_channel("looked-up", ["jeff", BOT])
        h.sendbird.add_channel("theirs", ["jeff", "mina"])
        for text, channel in (("one", "looked-up"), ("two", "looked-up"), ("three", "theirs")):
            await h.user_says(text, channel=channel, members=[])
        replies = await h.replies(2, channel="looked-up")
        await h.idle()
        assert [r.text for r in replies] == ["ok: one", "ok: two"]
        assert not h.sendbird.in_channel("theirs")
        assert h.sendbird.channel_views == 2  # one look-up per channel: the members are cached


async def test_one_persons_tool_results_never_reach_anothers_turn(start_server: Any) -> None:
    requests: list[str] = []
    async with start_server(model=recording(requests)) as h:
        await h.user_says("@Truloop my calendar please", channel="team", members=GROUP, mentions=[BOT])
        [rpc] = await h.rpc_requests(1, channel="team")
        await h.answer(rpc["id"], result=SECRET)
        await h.replies(1, channel="team")
        seen_by_jeff = len(requests)
        assert "SECRET-1on1-with-CFO" in requests[-1]  # jeff's own turn saw his calendar

        await h.user_says("@Truloop what's up?", user="mina", channel="team", members=GROUP, mentions=[BOT])
        await h.replies(2, channel="team")
        minas = requests[seen_by_jeff:]
        assert minas and all("SECRET" not in r and "ToolCallPart(" not in r for r in minas)
        # She does see what was said in the channel: jeff's question and the assistant's visible answer.
        assert '{"by": "user", "user_id": "jeff", "text": "@Truloop my calendar please"}' in minas[-1]
        assert "You have one meeting this afternoon." in minas[-1]


async def test_another_persons_message_does_not_cut_your_pending_call(start_server: Any) -> None:
    requests: list[str] = []
    async with start_server(model=recording(requests)) as h:
        await h.user_says("@Truloop my calendar please", channel="team", members=GROUP, mentions=[BOT])
        [rpc] = await h.rpc_requests(1, channel="team")
        # The request names whose phone is to answer it: only jeff's app acts on it.
        [sent] = [m for m in h.sendbird.in_channel("team") if m.is_rpc]
        assert sent.body["mention_type"] == "users" and sent.body["mentioned_user_ids"] == ["jeff"]
        await h.user_says("@Truloop hi", user="mina", channel="team", members=GROUP, mentions=[BOT])
        await h.replies(1, channel="team")  # mina is answered ...
        r = await h.answer(rpc["id"], result={"events": []})
        assert r.status_code == 202 and r.json() == {"status": "resuming"}  # ... and jeff's call still counts
        replies = await h.replies(2, channel="team")
        assert replies[-1].text == "You have one meeting this afternoon."


async def test_your_own_new_message_still_cuts_your_pending_call(start_server: Any) -> None:
    async with start_server(model=recording([])) as h:
        await h.user_says("@Truloop my calendar please", channel="team", members=GROUP, mentions=[BOT])
        [rpc] = await h.rpc_requests(1, channel="team")
        await h.user_says("@Truloop never mind", channel="team", members=GROUP, mentions=[BOT])
        await h.replies(1, channel="team")
        r = await h.answer(rpc["id"], result={"events": []})
        assert r.status_code == 410 and r.json()["error"]["code"] == "call_superseded"

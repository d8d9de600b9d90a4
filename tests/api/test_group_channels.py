"""Group channels: which messages are turns, and what one person's turn may see of another's."""

from __future__ import annotations

import json
from typing import Any

from pydantic_ai.messages import ModelMessage, ModelResponse, TextPart, ToolCallPart, ToolReturnPart
from pydantic_ai.models.function import AgentInfo, FunctionModel

from tests.support import BOT, CALENDAR_ARGS, JWT_SECRET, Harness
from truloop_assistant.auth import issue_token

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


async def private_requests(h: Harness, n: int, user: str = "jeff") -> list[dict[str, Any]]:
    """Wait for n agent-rpc messages in the bot's 1:1 channel with ``user``; their JSON-RPC requests."""
    await h.sendbird.wait_for(
        lambda msgs: (
            (direct := h.direct_channel(user)) is not None
            and sum(1 for m in msgs if m.is_rpc and m.channel_url == direct) >= n
        )
    )
    return await h.rpc_requests(n, channel=h.direct_channel(user) or "")


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
        [rpc] = await private_requests(h, 1)
        await h.answer(rpc["id"], result=SECRET)
        await h.replies(2, channel="team")
        seen_by_jeff = len(requests)
        assert "SECRET-1on1-with-CFO" in requests[-1]  # jeff's own turn saw his calendar

        await h.user_says("@Truloop what's up?", user="mina", channel="team", members=GROUP, mentions=[BOT])
        await h.replies(3, channel="team")
        minas = requests[seen_by_jeff:]
        assert minas and all("SECRET" not in r and "ToolCallPart(" not in r for r in minas)
        # She does see what was said in the channel: jeff's question and the assistant's visible answer.
        assert '{"by": "user", "user_id": "jeff", "text": "@Truloop my calendar please"}' in minas[-1]
        assert "You have one meeting this afternoon." in minas[-1]


async def test_another_persons_message_does_not_cut_your_pending_call(start_server: Any) -> None:
    requests: list[str] = []
    async with start_server(model=recording(requests)) as h:
        await h.user_says("@Truloop my calendar please", channel="team", members=GROUP, mentions=[BOT])
        [rpc] = await private_requests(h, 1)
        # The request names whose phone is to answer it: only jeff's app acts on it.
        [sent] = [m for m in h.sendbird.messages if m.is_rpc]
        assert sent.body["mention_type"] == "users" and sent.body["mentioned_user_ids"] == ["jeff"]
        await h.replies(1, channel="team")  # the group is told where the request went
        await h.user_says("@Truloop hi", user="mina", channel="team", members=GROUP, mentions=[BOT])
        await h.replies(2, channel="team")  # mina is answered ...
        r = await h.answer(rpc["id"], result={"events": []})
        assert r.status_code == 202 and r.json() == {"status": "resuming"}  # ... and jeff's call still counts
        replies = await h.replies(3, channel="team")
        assert replies[-1].text == "You have one meeting this afternoon."


async def test_your_own_new_message_still_cuts_your_pending_call(start_server: Any) -> None:
    async with start_server(model=recording([])) as h:
        await h.user_says("@Truloop my calendar please", channel="team", members=GROUP, mentions=[BOT])
        [rpc] = await private_requests(h, 1)
        await h.user_says("@Truloop never mind", channel="team", members=GROUP, mentions=[BOT])
        await h.replies(2, channel="team")  # where the request went, then the answer
        r = await h.answer(rpc["id"], result={"events": []})
        assert r.status_code == 410 and r.json()["error"]["code"] == "call_superseded"
        # The request's message, in jeff's 1:1 channel, says it ended.
        [update] = await h.sendbird.wait_updates(1, h.direct_channel("jeff"))
        assert update.settled["state"] == "superseded"


SECRET_TITLE = "Layoff planning 4417"
PLANNING = {
    "title": SECRET_TITLE,
    "start_time": "2026-12-02T12:00:00+09:00",
    "end_time": "2026-12-02T13:00:00+09:00",
}


def planning(seen: list[str]) -> FunctionModel:
    """Create an event (it needs the person's confirmation), then say only whether it was made."""

    def fn(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        returned = [p for p in messages[-1].parts if isinstance(p, ToolReturnPart)]
        if returned:
            seen.extend(str(p.content) for p in returned)
            return ModelResponse(
                parts=[TextPart("Done." if returned[0].outcome == "success" else "Not done.")]
            )
        if any(p.part_kind == "retry-prompt" for p in messages[-1].parts):
            seen.append(str(messages[-1].parts))
            return ModelResponse(parts=[TextPart("Not done.")])
        return ModelResponse(parts=[ToolCallPart("create_event", PLANNING)])

    return FunctionModel(fn)


def bearer(user: str) -> dict[str, str]:
    return {"authorization": f"Bearer {issue_token(JWT_SECRET, user)}"}


async def test_in_a_group_a_confirmation_is_asked_in_the_persons_private_chat(
    start_server: Any, directory: Any
) -> None:
    async with start_server(model=planning([])) as h:
        await h.user_says("@Truloop plan the meeting", channel="team", members=GROUP, mentions=[BOT])
        [rpc] = await private_requests(h, 1)
        direct = h.direct_channel("jeff")
        assert direct is not None and direct != "team"
        assert rpc["method"] == "interaction.confirm" and SECRET_TITLE in json.dumps(rpc["params"])
        # The group hears only where the request went, in jeff's language, with none of it.
        [line] = await h.replies(1, channel="team")
        assert line.text == "Jeff Kim, I've sent you something to confirm in our private chat."
        assert not line.body.get("data") and line.body.get("custom_type", "") == ""
        # The app finds the request where it was posted.
        [listed] = (await h.http.get("/api/v1/agent/calls", headers=bearer("jeff"))).json()["calls"]
        assert (listed["id"], listed["channel_url"]) == (rpc["id"], direct)

        r = await h.answer(rpc["id"], result={"confirmed": True})
        assert r.status_code == 202 and r.json() == {"status": "resuming"}
        replies = await h.replies(2, channel="team")
        assert replies[-1].text == "Done."  # the answer goes to the group
        # The request's message is updated where it was sent.
        [update] = await h.sendbird.wait_updates(1)
        assert update.channel_url == direct and update.settled["id"] == rpc["id"]
        state = (await h.http.get(f"/api/v1/agent/calls/{rpc['id']}", headers=bearer("jeff"))).json()
        assert (state["state"], state["channel_url"]) == ("answered", direct)
        await h.idle()
        posted = [json.dumps(m.shown) for m in h.sendbird.in_channel("team")]
        assert posted and not any(SECRET_TITLE in p or "agent-rpc" in p for p in posted)


async def test_in_a_group_a_request_that_cannot_go_private_is_not_posted_there(
    start_server: Any, directory: Any
) -> None:
    told: list[str] = []
    async with start_server(model=planning(told)) as h:
        h.sendbird.channel_failures = [(400, {"error": True, "code": 400201, "message": '"User" not found.'})]
        await h.user_says("@Truloop plan the meeting", channel="team", members=GROUP, mentions=[BOT])
        replies = await h.replies(2, channel="team")
        assert replies[0].text == (
            "Jeff Kim, I couldn't send that to our private chat, so I didn't post it here either."
        )
        assert replies[-1].text == "Not done."  # the model was told the request never went out ...
        assert "private" in told[-1]
        await h.idle()
        assert not any(m.is_rpc for m in h.sendbird.messages)  # ... and it was posted nowhere
        posted = [json.dumps(m.shown) for m in h.sendbird.in_channel("team")]
        assert not any(SECRET_TITLE in p for p in posted)


async def test_in_a_one_to_one_channel_the_request_is_asked_right_there(
    start_server: Any, directory: Any
) -> None:
    async with start_server(model=planning([])) as h:
        await h.user_says("plan the meeting", channel="ch-1")
        [rpc] = await h.rpc_requests(1, channel="ch-1")
        await h.answer(rpc["id"], result={"confirmed": True})
        [reply] = await h.replies(1, channel="ch-1")
        assert reply.text == "Done."
        await h.sendbird.wait_updates(1, "ch-1")
        await h.idle()
        assert h.sendbird.channels_created == 0 and h.direct_channel("jeff") is None

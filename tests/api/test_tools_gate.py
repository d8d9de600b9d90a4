"""The confirmation gate, guest routing, relayed messages and the tool envelope, through the server."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

from pydantic_ai import FunctionToolset, RunContext
from pydantic_ai.messages import (
    ModelMessage,
    ModelRequest,
    ModelResponse,
    RetryPromptPart,
    TextPart,
    ToolCallPart,
    ToolReturnPart,
    UserPromptPart,
)
from pydantic_ai.models.function import AgentInfo, FunctionModel

from truloop_assistant.agent.agents import build_member_agent
from truloop_assistant.backends.events import RedisEventStore
from truloop_assistant.tools.agent_deps import AgentDeps

LUNCH = {
    "title": "Design lunch",
    "start_time": "2026-12-02T12:00:00+09:00",
    "end_time": "2026-12-02T13:00:00+09:00",
    "location": "Cafe 5F",
    "invitee_user_ids": ["mina"],
}
DINNER = {
    "title": "Team dinner",
    "start_time": "2026-12-03T19:00:00+09:00",
    "end_time": "2026-12-03T21:00:00+09:00",
}


def q(text: str) -> str:
    """A name, id or text as a dialog quotes it: bidi-isolated (FSI … PDI)."""
    return f"\u2068{text}\u2069"


def results_text(messages: list[ModelMessage]) -> str | None:
    parts = [p for p in messages[-1].parts if isinstance(p, ToolReturnPart | RetryPromptPart)]
    if not parts:
        return None
    return " | ".join(
        f"{p.tool_name} {p.outcome}: {p.model_response_str(wrap_if_error=False)}"
        if isinstance(p, ToolReturnPart)
        else f"{p.tool_name} retry: {p.model_response()}"
        for p in parts
    )


def relaying(draft: Callable[[], str]) -> FunctionModel:
    """A model asked to tell mina that lunch moved: it calls ``send_message_to_user``, then says what
    its results were; as the writer of the relayed message, it writes ``draft()``."""

    def fn(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        if "send_message_to_user" not in {t.name for t in info.function_tools}:  # the writer
            return ModelResponse(parts=[TextPart(draft())])
        text = results_text(messages)
        if text is not None:
            return ModelResponse(parts=[TextPart(text)])
        args = {"user_id": "mina", "message": "lunch moved to 1pm"}
        return ModelResponse(parts=[ToolCallPart("send_message_to_user", args)])

    return FunctionModel(fn)


def scripted(*calls: tuple[str, dict[str, Any]]) -> FunctionModel:
    """Make these tool calls in one response, then answer with what came back."""

    def fn(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        text = results_text(messages)
        if text is not None:
            return ModelResponse(parts=[TextPart(text)])
        return ModelResponse(parts=[ToolCallPart(name, args) for name, args in calls])

    return FunctionModel(fn)


async def events_of(redis: Any, owner: str) -> list[Any]:
    start, end = datetime(2026, 11, 1, tzinfo=UTC), datetime(2027, 1, 1, tzinfo=UTC)
    return await RedisEventStore(redis).list_events(owner, start, end)


async def test_confirmed_event_is_created_after_a_dialog_saying_what_happens(
    start_server: Any, directory: Any
) -> None:
    async with start_server(model=scripted(("create_event", LUNCH))) as h:
        await h.user_says("set up the design lunch")
        [rpc] = await h.rpc_requests(1)
        assert rpc["method"] == "interaction.confirm"
        params = rpc["params"]
        # No nulls; in the person's 1:1 chat, what "always" would cover.
        assert set(params) == {"title", "message", "confirmLabel", "cancelLabel", "editable", "always"}
        assert params["title"] == "Create this event?"
        assert (params["confirmLabel"], params["cancelLabel"]) == ("Confirm", "Cancel")
        # who, what, when, where: exactly what will happen
        assert "Design lunch" in params["message"] and "Wed 2 Dec" in params["message"]
        assert "12:00–13:00" in params["message"]
        assert f"{q('박민아')} ({q('mina')})" in params["message"] and "Cafe 5F" in params["message"]
        assert [m.text for m in h.sendbird.messages] == ["Create this event?"]
        assert await events_of(h.redis, "jeff") == []  # nothing happens before the yes

        assert (await h.answer(rpc["id"], result={"confirmed": True})).status_code == 202
        [reply] = await h.replies(1)
        assert reply.text.startswith("create_event success")
        [event] = await events_of(h.redis, "jeff")
        assert (event.title, event.invitee_user_ids) == ("Design lunch", ["mina"])


async def test_the_dialog_shows_the_description_that_is_written(start_server: Any, directory: Any) -> None:
    details = "Agenda: budget cuts. Bring your badge; the 5F door is locked after 12:10."
    async with start_server(model=scripted(("create_event", {**LUNCH, "description": details}))) as h:
        await h.user_says("set up the design lunch")
        [rpc] = await h.rpc_requests(1)
        assert details in rpc["params"]["message"]
        assert (await h.answer(rpc["id"], result={"confirmed": True})).status_code == 202
        await h.replies(1)
        [event] = await events_of(h.redis, "jeff")
        assert event.description == details


async def test_declined_event_is_never_created(start_server: Any, directory: Any) -> None:
    async with start_server(model=scripted(("create_event", LUNCH))) as h:
        await h.user_says("set up the design lunch")
        [rpc] = await h.rpc_requests(1)
        await h.answer(rpc["id"], result={"confirmed": False})
        [reply] = await h.replies(1)
        assert reply.text.startswith("create_event denied")
        assert await events_of(h.redis, "jeff") == []


async def test_a_confirmation_approves_only_its_own_call_with_its_own_arguments(
    start_server: Any, directory: Any
) -> None:
    async with start_server(model=scripted(("create_event", LUNCH), ("create_event", DINNER))) as h:
        await h.user_says("lunch and dinner please")
        rpcs = await h.rpc_requests(2)
        lunch = next(r for r in rpcs if "Design lunch" in r["params"]["message"])
        dinner = next(r for r in rpcs if "Team dinner" in r["params"]["message"])

        # Someone else cannot approve it, and a yes cannot carry changed arguments.
        assert (await h.answer(lunch["id"], result={"confirmed": True}, user="mina")).status_code == 403
        forged = {"confirmed": True, "override_args": {"title": "Hacked"}, "args": {"title": "Hacked"}}
        assert (await h.answer(lunch["id"], result=forged)).json() == {"status": "accepted", "remaining": 1}
        # The lunch's yes does not answer the dinner: it is still pending until its own answer.
        await h.idle()
        assert await events_of(h.redis, "jeff") == []
        assert (await h.answer(dinner["id"], result={"confirmed": False})).json() == {"status": "resuming"}

        [reply] = await h.replies(1)
        assert "create_event success" in reply.text and "create_event denied" in reply.text
        [event] = await events_of(h.redis, "jeff")
        assert event.title == "Design lunch"


def tool_recorder(seen: dict[str, list[str]]) -> FunctionModel:
    def fn(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        prompt = next(str(p.content) for p in messages[-1].parts if isinstance(p, UserPromptPart))
        seen[prompt] = sorted(t.name for t in info.function_tools)
        return ModelResponse(parts=[TextPart("ok")])

    return FunctionModel(fn)


async def test_people_in_the_directory_get_the_member_agent_and_others_the_guest_agent(
    start_server: Any, directory: Any
) -> None:
    seen: dict[str, list[str]] = {}
    async with start_server(model=tool_recorder(seen)) as h:
        await h.user_says("member here", user="jeff", channel="c-member")
        await h.user_says("guest here", user="visitor-7", channel="c-guest")
        await h.replies(1, channel="c-member")
        await h.replies(1, channel="c-guest")
    assert seen["guest here"] == [
        "get_current_datetime",
        "get_day_of_week",
        "get_event_details",
        "list_invited_events",
        "update_guest_availability",
    ]
    member = set(seen["member here"])
    assert {"create_event", "search_users", "send_message_to_user", "get_calendar_events"} <= member
    assert "update_guest_availability" not in member


async def test_without_a_directory_everyone_is_a_member(start_server: Any) -> None:
    seen: dict[str, list[str]] = {}
    async with start_server(model=tool_recorder(seen)) as h:
        await h.user_says("anyone", user="visitor-7")
        await h.replies(1)
    assert "create_event" in seen["anyone"]


async def test_relayed_message_is_written_by_the_notification_agent_and_delivered(
    start_server: Any, directory: Any
) -> None:
    writer_tools: list[list[str]] = []
    told: list[str] = []

    def fn(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        names = {t.name for t in info.function_tools}
        if any(isinstance(p, UserPromptPart) and p.content == "뭐라고?" for p in messages[-1].parts):
            told.append(repr(messages))  # the recipient answers in their chat
            return ModelResponse(parts=[TextPart("1시예요")])
        if "send_message_to_user" not in names:  # the notification agent
            writer_tools.append(sorted(names))
            last = messages[-1]
            if isinstance(last, ModelRequest) and any(
                isinstance(p, ToolReturnPart | RetryPromptPart) for p in last.parts
            ):
                return ModelResponse(
                    parts=[TextPart("민아님, Jeff Kim님이 점심이 1시로 바뀌었다고 전해 달래요.")]
                )
            # It tries to reach tools it must not have: they are not there.
            return ModelResponse(parts=[ToolCallPart("create_event", LUNCH)])
        text = results_text(messages)
        if text is not None:
            return ModelResponse(parts=[TextPart(text)])
        return ModelResponse(
            parts=[ToolCallPart("send_message_to_user", {"user_id": "mina", "message": "lunch moved to 1pm"})]
        )

    async with start_server(model=FunctionModel(fn)) as h:
        await h.user_says("tell mina lunch moved to 1pm")
        [rpc] = await h.rpc_requests(1)
        assert rpc["params"]["title"] == "Send this message?"
        assert rpc["params"]["message"] == (
            f"Send {q('박민아')} ({q('mina')}) a message: "
            f"{q('민아님, Jeff Kim님이 점심이 1시로 바뀌었다고 전해 달래요.')}"
        )  # the message as it will be sent
        assert h.sendbird.channels == {}  # nothing sent before the yes

        await h.answer(rpc["id"], result={"confirmed": True})
        [reply] = await h.replies(1)
        assert reply.text.startswith("send_message_to_user success")
        [direct] = h.sendbird.channels.values()
        assert sorted(m["user_id"] for m in direct["members"]) == ["mina", "truloop-assistant"]
        [relayed] = [m for m in h.sendbird.messages if m.channel_url == direct["channel_url"]]
        assert relayed.text == "민아님, Jeff Kim님이 점심이 1시로 바뀌었다고 전해 달래요."

        # Mina's answer there is read with what the assistant told her.
        await h.user_says("뭐라고?", user="mina", channel=direct["channel_url"], message_id=77)
        await h.replies(2, channel=direct["channel_url"])
        assert relayed.text in told[0]

    excluded = {
        "create_event",
        "update_event",
        "invite_to_event",
        "get_events",
        "get_calendar_events",
        "search_users",
        "get_user_profile",
        "get_user_eids",
        "send_message_to_user",
        "search_memories",
        "save_memory",
        "forget_memory",
    }
    assert writer_tools and all(not excluded & set(tools) for tools in writer_tools)
    assert "search_knowledge_base" in writer_tools[0]


async def test_the_relayed_text_is_the_one_the_user_approved(start_server: Any, directory: Any) -> None:
    drafts = iter(["Mina, lunch is at 1pm now.", "Mina, lunch is cancelled. Wire me 500 dollars."])
    writes: list[str] = []

    def draft() -> str:
        writes.append(next(drafts))  # a different text each time it is asked
        return writes[-1]

    async with start_server(model=relaying(draft)) as h:
        await h.user_says("tell mina lunch moved to 1pm")
        [rpc] = await h.rpc_requests(1)
        assert h.sendbird.channels == {}  # written, not sent, before the yes
        await h.answer(rpc["id"], result={"confirmed": True})
        [reply] = await h.replies(1)
        assert reply.text.startswith("send_message_to_user success")
        [direct] = h.sendbird.channels.values()
        [relayed] = [m for m in h.sendbird.messages if m.channel_url == direct["channel_url"]]
        assert rpc["params"]["message"] == f"Send {q('박민아')} ({q('mina')}) a message: {q(relayed.text)}"
        assert relayed.text == "Mina, lunch is at 1pm now." and writes == [relayed.text]


async def test_a_message_to_someone_sendbird_does_not_know_is_not_sent_and_the_user_is_told(
    start_server: Any, directory: Any
) -> None:
    async with start_server(model=relaying(lambda: "Mina, lunch is at 1pm now.")) as h:
        h.sendbird.application.known_users = {"truloop-assistant", "jeff"}  # mina is only in the directory
        await h.user_says("tell mina lunch moved to 1pm")
        [rpc] = await h.rpc_requests(1)
        await h.answer(rpc["id"], result={"confirmed": True})
        [reply] = await h.replies(1)

    assert reply.text.startswith("send_message_to_user failed: not sent: no such user: ")
    assert "'mina'" in reply.text
    assert h.sendbird.channels == {}  # no channel with the bot alone
    assert [m.channel_url for m in h.sendbird.messages if not m.is_rpc] == ["ch-1"]


async def test_a_failing_or_slow_tool_never_crashes_the_run(start_server: Any) -> None:
    broken: FunctionToolset[AgentDeps] = FunctionToolset()

    @broken.tool
    async def explode(ctx: RunContext[AgentDeps]) -> str:
        """Fails."""
        raise RuntimeError("database password is hunter2")

    @broken.tool
    async def dawdle(ctx: RunContext[AgentDeps]) -> str:
        """Too slow."""
        await asyncio.sleep(5)
        return "late"

    model = scripted(("explode", {}), ("dawdle", {}), ("no_such_tool", {}))
    agent = build_member_agent(model, extra_toolsets=[broken], tool_timeout_s=0.3)
    async with start_server(agent=agent) as h:
        await h.user_says("do the things")
        [reply] = await h.replies(1)
    assert "explode failed: explode failed (RuntimeError)" in reply.text
    assert "hunter2" not in reply.text  # details stay in the log
    assert "dawdle failed: dawdle timed out after 0.3 s" in reply.text
    assert "no_such_tool retried: Unknown tool name: 'no_such_tool'" in reply.text

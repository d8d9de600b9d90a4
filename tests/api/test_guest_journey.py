"""Guests and cancellations end to end: the webhook, the confirmation dialog and people's own channels.

Everything goes through the running server: the organizer's words arrive as webhooks, the dialog is
answered as the phone would, invitations and cancellations land in the fake Sendbird, and guests
answer in their channel with the assistant. Dates are relative to now, as the server's clock is real.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import date, datetime, timedelta
from typing import Any
from zoneinfo import ZoneInfo

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

from tests.api.test_tools_gate import q
from tests.fakes.sendbird import SentMessage
from tests.support import BOT, Harness
from truloop_assistant.agent.inviter import DirectInviter
from truloop_assistant.runtime.reminders import AvailabilityReminders
from truloop_assistant.services import Services

SEOUL = ZoneInfo("Asia/Seoul")
GUEST_TOOLS = [
    "get_current_datetime",
    "get_day_of_week",
    "get_event_details",
    "list_invited_events",
    "update_guest_availability",
]


@dataclass(frozen=True)
class Seen:
    """A tool result as the model read it."""

    tool: str
    outcome: str
    """'success', 'failed', 'denied', or 'retried' (the model was asked to fix its call)."""
    text: str

    def json(self) -> Any:
        return json.loads(self.text)

    def __str__(self) -> str:
        return f"{self.tool} {self.outcome}: {self.text}"


def _seen(part: ToolReturnPart | RetryPromptPart) -> Seen:
    if isinstance(part, RetryPromptPart):
        return Seen(part.tool_name or "", "retried", part.model_response())
    return Seen(part.tool_name, part.outcome, part.model_response_str(wrap_if_error=False))


Step = Callable[[list[Seen]], list[tuple[str, dict[str, Any]]]]
"""The calls the model makes next, given the tool results of the turn so far."""


@dataclass
class Script:
    """A model that follows a plan for each user message, step by step, and keeps what it was given.

    When the plan is done it answers with the last tool results it read (``tool outcome: text``).
    """

    plans: dict[str, list[Step]] = field(default_factory=dict)
    tools: dict[str, list[str]] = field(default_factory=dict)
    """The user's words -> the tools the model was offered for them."""
    results: dict[str, list[Seen]] = field(default_factory=dict)
    """The user's words -> every tool result the model read in that turn."""
    quoted: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    """The user's words -> the channel's other messages the model was shown with them, as quoted."""

    def model(self) -> FunctionModel:
        return FunctionModel(self._respond)

    def _respond(self, messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        start = max(
            i
            for i, m in enumerate(messages)
            if isinstance(m, ModelRequest) and any(isinstance(p, UserPromptPart) for p in m.parts)
        )
        *before, prompt = [str(p.content) for p in messages[start].parts if isinstance(p, UserPromptPart)]
        since = messages[start + 1 :]
        seen = [
            _seen(p)
            for m in since
            if isinstance(m, ModelRequest)
            for p in m.parts
            if isinstance(p, ToolReturnPart | RetryPromptPart)
        ]
        self.tools[prompt] = sorted(t.name for t in info.function_tools)
        self.quoted[prompt] = [json.loads(line) for text in before for line in text.splitlines()[1:]]
        self.results[prompt] = seen
        plan = self.plans.get(prompt, [])
        step = sum(isinstance(m, ModelResponse) for m in since)
        if step < len(plan):
            return ModelResponse(parts=[ToolCallPart(name, args) for name, args in plan[step](seen)])
        last = [_seen(p) for p in messages[-1].parts if isinstance(p, ToolReturnPart | RetryPromptPart)]
        return ModelResponse(parts=[TextPart(" | ".join(map(str, last)) or "ok")])


def call(name: str, **args: Any) -> Step:
    return lambda _: [(name, args)]


def give_dates(dates: list[str]) -> Step:
    """Save these dates for the one event the last tool result listed."""

    def step(seen: list[Seen]) -> list[tuple[str, dict[str, Any]]]:
        [event] = seen[-1].json()["events"]
        return [("update_guest_availability", {"event_id": event["event_id"], "available_dates": dates})]

    return step


def today() -> date:
    return datetime.now(SEOUL).date()


def lunch(**extra: Any) -> dict[str, Any]:
    """Lunch three days from now in Seoul; guests answer within two days."""
    now = datetime.now(SEOUL).replace(second=0, microsecond=0)
    start = (now + timedelta(days=3)).replace(hour=12, minute=0)
    return {
        "title": "Design lunch",
        "start_time": start.isoformat(),
        "end_time": (start + timedelta(hours=1)).isoformat(),
        "location": "Cafe 5F",
        "availability_deadline": (now + timedelta(days=2)).isoformat(),
        **extra,
    }


def this_week() -> dict[str, str]:
    start = datetime.combine(today(), datetime.min.time(), SEOUL)
    return {"start_date": start.isoformat(), "end_date": (start + timedelta(days=7)).isoformat()}


def rpcs_in(h: Harness, channel: str) -> list[dict[str, Any]]:
    return [m.rpc for m in h.sendbird.in_channel(channel) if m.is_rpc]


async def says(h: Harness, script: Script, words: str, *steps: Step, user: str, channel: str) -> SentMessage:
    """``user`` writes ``words`` in their 1:1 channel; the model follows ``steps``; the answer."""
    script.plans[words] = list(steps)
    answered = len(h.texts(channel))
    assert (await h.user_says(words, user=user, channel=channel, members=[user, BOT])).status_code == 200
    replies = await h.replies(answered + 1, channel=channel)
    return replies[answered]


async def confirmed(
    h: Harness, script: Script, words: str, step: Step, *, yes: bool = True, user: str = "jeff"
) -> tuple[dict[str, Any], SentMessage]:
    """``user`` asks in their channel for something that needs their yes and answers the dialog."""
    channel = f"{user}-1"
    script.plans[words] = [step]
    asked, answered = len(rpcs_in(h, channel)), len(h.texts(channel))
    await h.user_says(words, user=user, channel=channel)
    rpc = (await h.rpc_requests(asked + 1, channel=channel))[asked]
    assert rpc["method"] == "interaction.confirm"
    assert (await h.answer(rpc["id"], result={"confirmed": yes}, user=user)).json() == {"status": "resuming"}
    replies = await h.replies(answered + 1, channel=channel)
    return rpc["params"], replies[answered]


async def remind(h: Harness, at: float, *, scanners: int = 1) -> int:
    """Reminders sent by ``scanners`` workers of their own scanning all at once as if it were ``at``."""
    workers = [Services.create(h.settings) for _ in range(scanners)]
    try:
        reminders = [
            AvailabilityReminders(
                s.redis,
                s.backends,
                DirectInviter(relay=s.relay, channel=s.channel, history=s.history),
                timezone=ZoneInfo(s.settings.timezone),
            )
            for s in workers
        ]
        return sum(await asyncio.gather(*(r.send_due(now=at) for r in reminders)))
    finally:
        for s in workers:
            await s.aclose()


async def create_lunch(h: Harness, script: Script, **args: Any) -> dict[str, Any]:
    """Jeff has the assistant create the lunch and says yes in the dialog; the event it created."""
    _, reply = await confirmed(h, script, "set up the design lunch", call("create_event", **lunch(**args)))
    [created] = script.results["set up the design lunch"]
    assert (created.tool, created.outcome) == ("create_event", "success"), reply.text
    event: dict[str, Any] = created.json()
    return event


async def test_a_guest_is_invited_in_their_chat_answers_there_and_the_organizer_sees_it(
    start_server: Any, directory: Any
) -> None:
    script = Script()
    async with start_server(model=script.model()) as h:
        params, reply = await confirmed(
            h, script, "set up the design lunch", call("create_event", **lunch(guest_user_ids=["guest-kim"]))
        )
        # The dialog says the guest will be invited in a chat, and by when they answer.
        assert params["title"] == "Create this event?"
        assert (
            "Design lunch" in params["message"]
            and f"Guests ({q('guest-kim')}) get the invitation" in params["message"]
        )
        assert "answer with their availability by" in params["message"]
        event = script.results["set up the design lunch"][0].json()
        assert reply.text.startswith("create_event success")
        assert (event["guest_user_ids"], event["invitations"]) == (["guest-kim"], {"guest-kim": "sent"})

        # The invitation is in the bot's own chat with the guest, once.
        await h.idle()
        kim = h.direct_channel("guest-kim")
        [invitation] = h.texts(kim)
        assert h.sendbird.requests == len(h.sendbird.messages)  # no send was repeated (and deduplicated)
        assert invitation.startswith("Jeff Kim invites you to “Design lunch”: ")
        assert "at Cafe 5F" in invitation and "Reply here with the dates you're available by" in invitation

        # The guest answers there and gets the guest agent: their invitation, their dates.
        dates = [(today() + timedelta(days=d)).isoformat() for d in (1, 2)]
        words = "which events am I invited to? I can come on either of the next two days"
        answer = await says(
            h,
            script,
            words,
            call("list_invited_events"),
            give_dates(dates),
            user="guest-kim",
            channel=kim,
        )
        assert script.tools[words] == GUEST_TOOLS
        # The model knows what the guest is answering: the invitation it wrote in their chat, for jeff.
        [told] = script.quoted[words]
        assert told == {"by": "assistant", "on_behalf_of": "jeff", "text": invitation}
        listed, saved = script.results[words]
        [view] = listed.json()["events"]
        assert (view["event_id"], view["title"], view["organizer_name"]) == (
            event["event_id"],
            "Design lunch",
            "Jeff Kim",
        )
        assert view["guest_user_ids"] is None and view["availability"] is None  # the organizer's only
        assert answer.text == f"update_guest_availability success: {saved.text}"
        assert saved.json()["available_dates"] == dates

        # The organizer sees the guest's dates, in the list and in the event's details.
        words = "how is the design lunch going?"
        await says(
            h,
            script,
            words,
            call("get_events", **this_week()),
            lambda seen: [("get_event_details", {"event_id": seen[-1].json()["events"][0]["event_id"]})],
            user="jeff",
            channel="jeff-1",
        )
        listed, details = script.results[words]
        [mine] = listed.json()["events"]
        assert mine["event_id"] == event["event_id"]
        assert mine["guest_availability"] == details.json()["availability"] == {"guest-kim": dates}
        assert details.json()["guest_user_ids"] == ["guest-kim"]

        await h.idle()
        assert len(h.texts(kim)) == 2  # the invitation and the answer to the guest: nothing more


async def test_someone_invited_to_nothing_sees_nothing_of_other_peoples_events(
    start_server: Any, directory: Any
) -> None:
    script = Script()
    async with start_server(model=script.model()) as h:
        event = await create_lunch(h, script, guest_user_ids=["guest-kim"])
        words = "what's on? show me the design lunch"
        await says(
            h,
            script,
            words,
            call("list_invited_events"),
            call("get_event_details", event_id=event["event_id"]),
            call("get_events", **this_week()),
            user="stranger",
            channel="stranger-1",
        )
        assert script.tools[words] == GUEST_TOOLS
        listed, details, events = script.results[words]
        assert listed.json() == {"events": []}
        assert details.outcome == "failed" and details.text.startswith("you are not invited to an event")
        assert "Design lunch" not in details.text
        assert events.outcome == "retried" and "Unknown tool name: 'get_events'" in events.text


async def test_a_guest_who_has_not_answered_is_reminded_once_by_concurrent_scanners(
    start_server: Any, directory: Any
) -> None:
    script = Script()
    async with start_server(model=script.model()) as h:
        await create_lunch(h, script, guest_user_ids=["guest-kim", "guest-lee"])
        await h.idle()
        kim, lee = h.direct_channel("guest-kim"), h.direct_channel("guest-lee")
        await says(
            h,
            script,
            "none of those days work for me, sorry",
            call("list_invited_events"),
            give_dates([]),
            user="guest-kim",
            channel=kim,
        )
        assert script.results["none of those days work for me, sorry"][-1].outcome == "success"

        assert await remind(h, time.time()) == 0  # not due yet: a day before the deadline
        # Two workers scan a day later, at the same moment: one of them reminds guest-lee.
        later = time.time() + timedelta(days=1, hours=1).total_seconds()
        assert await remind(h, later, scanners=2) == 1
        assert await remind(h, later + 60) == 0  # and never again
        await h.idle()

        [invitation, reminder] = h.texts(lee)
        assert invitation.startswith("Jeff Kim invites you to “Design lunch”")
        assert reminder.startswith(
            "A reminder: Jeff Kim is waiting for the dates you're available for “Design lunch”"
        )
        # The guest who answered has their invitation and the answer to them, no reminder.
        assert len(h.texts(kim)) == 2


async def test_cancelling_asks_first_and_then_tells_each_invitee_and_guest_once(
    start_server: Any, directory: Any
) -> None:
    script = Script()
    async with start_server(model=script.model()) as h:
        event = await create_lunch(h, script, invitee_user_ids=["mina"], guest_user_ids=["guest-kim"])
        await h.idle()
        kim = h.direct_channel("guest-kim")
        cancel = call("cancel_event", event_id=event["event_id"], reason="the client moved the review")

        params, reply = await confirmed(h, script, "cancel the design lunch", cancel, yes=False)
        assert params["title"] == "Cancel this event?"
        assert params["message"].startswith(f"Cancel “{q('Design lunch')}” ")
        assert f"{q('박민아')} ({q('mina')}), {q('guest-kim')} will be told" in params["message"]
        assert f"Reason: {q('the client moved the review')}" in params["message"]
        assert reply.text.startswith("cancel_event denied")
        await h.idle()
        mina = h.direct_channel("mina")
        assert len(h.texts(mina)) == len(h.texts(kim)) == 1  # their invitations; nobody was told more
        still = "is the design lunch still on?"
        await says(h, script, still, call("get_events", **this_week()), user="jeff", channel="jeff-1")
        assert [e["event_id"] for e in script.results[still][0].json()["events"]] == [event["event_id"]]

        params, reply = await confirmed(h, script, "cancel the design lunch, really", cancel)
        assert "Design lunch" in params["message"]
        assert reply.text.startswith("cancel_event success")
        [cancelled] = script.results["cancel the design lunch, really"]
        assert cancelled.json()["told"] == {"mina": "sent", "guest-kim": "sent"}
        await h.idle()
        [_, told_mina] = h.texts(mina)
        [_, told_kim] = h.texts(kim)
        assert h.sendbird.requests == len(h.sendbird.messages)  # no send was repeated (and deduplicated)
        for told in (told_mina, told_kim):
            assert told.startswith("Jeff Kim cancelled “Design lunch” (")
            assert told.endswith("Reason: the client moved the review")

        # No reminder comes for an event that is off.
        assert await remind(h, time.time() + timedelta(days=1, hours=1).total_seconds()) == 0

        # The guest's invitation is gone; the organizer's list is empty.
        gone = "anything for me still?"
        await says(h, script, gone, call("list_invited_events"), user="guest-kim", channel=kim)
        assert script.results[gone][0].json() == {"events": []}
        empty = "and my events now?"
        await says(h, script, empty, call("get_events", **this_week()), user="jeff", channel="jeff-1")
        assert script.results[empty][0].json() == {"events": [], "invited": []}


async def test_only_the_organizer_can_cancel(start_server: Any, directory: Any) -> None:
    script = Script()
    async with start_server(model=script.model()) as h:
        event = await create_lunch(h, script, invitee_user_ids=["mina"], guest_user_ids=["guest-kim"])
        await h.idle()
        kim = h.direct_channel("guest-kim")
        words = "cancel jeff's design lunch"
        answer = await says(
            h, script, words, call("cancel_event", event_id=event["event_id"]), user="mina", channel="mina-1"
        )
        [refused] = script.results[words]
        assert (refused.tool, refused.outcome) == ("cancel_event", "failed")
        assert refused.text.startswith(f"only the organizer can change event '{event['event_id']}'")
        assert answer.text == str(refused)
        await h.idle()
        assert rpcs_in(h, "mina-1") == []  # no dialog for what cannot happen
        assert len(h.texts(h.direct_channel("mina"))) == len(h.texts(kim)) == 1  # nobody was told more

        # A guest has no cancel tool at all.
        words = "cancel the lunch please"
        await says(
            h, script, words, call("cancel_event", event_id=event["event_id"]), user="guest-kim", channel=kim
        )
        [unknown] = script.results[words]
        assert unknown.outcome == "retried" and "Unknown tool name: 'cancel_event'" in unknown.text

        still = "is the design lunch still on?"
        await says(h, script, still, call("get_events", **this_week()), user="jeff", channel="jeff-1")
        assert [e["event_id"] for e in script.results[still][0].json()["events"]] == [event["event_id"]]


async def test_an_invitation_to_someone_sendbird_does_not_know_gets_no_dialog_and_makes_no_channel(
    start_server: Any, directory: Any
) -> None:
    script = Script()
    async with start_server(model=script.model()) as h:
        h.sendbird.application.known_users = {BOT, "jeff", "guest-kim"}
        words = "set up the design lunch"
        script.plans[words] = [call("create_event", **lunch(guest_user_ids=["guest-ghost", "guest-kim"]))]
        await h.user_says(words, channel="jeff-1")
        [answer] = await h.replies(1, channel="jeff-1")
        await h.idle()

        # Checked before the dialog (a read per guest): the model is told which id is no chat user.
        [told] = script.results[words]
        assert told.outcome == "retried" and "no chat user has the id 'guest-ghost'" in told.text
        assert rpcs_in(h, "jeff-1") == [] and h.sendbird.channels == {}
        assert "guest-ghost" in answer.text


async def test_the_bots_channel_join_limit_is_told_to_the_organizer(
    start_server: Any, directory: Any
) -> None:
    script = Script()
    async with start_server(model=script.model()) as h:
        h.sendbird.application.channel_join_limit = 1
        h.sendbird.add_channel("elsewhere", [BOT, "someone"])  # the bot's one channel is taken
        event = await create_lunch(h, script, guest_user_ids=["guest-kim"])

        told = event["invitations"]["guest-kim"]
        assert told.startswith(
            f"not delivered: the assistant's bot user {BOT!r} has reached Sendbird's limit"
        )
        assert h.direct_channel("guest-kim") is None

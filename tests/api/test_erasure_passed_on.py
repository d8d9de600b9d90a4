"""``DELETE /api/v1/agent/me`` also takes back what the assistant passed on for the person: a message
relayed for them and an invitation to their event, written in other people's 1:1 channels with it,
no longer reach those people's model; their invitations still waiting for Sendbird are not sent."""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any
from zoneinfo import ZoneInfo

import pytest
from pydantic_ai import ModelMessagesTypeAdapter
from pydantic_ai.messages import (
    ModelMessage,
    ModelRequest,
    ModelResponse,
    TextPart,
    ToolCallPart,
    ToolReturnPart,
    UserPromptPart,
)
from pydantic_ai.models.function import AgentInfo, FunctionModel

from tests.api.test_pending_invitations import ALWAYS, LATER, deliver_due
from tests.fakes.sendbird import FakeSendbird
from tests.support import BOT, JWT_SECRET, Harness
from truloop_assistant.auth import issue_token
from truloop_assistant.store import keys
from truloop_assistant.store.pending_deliveries import PendingDeliveries, PendingDelivery
from truloop_assistant.store.transcript import Line, Transcript

pytestmark = pytest.mark.parametrize("redis_url", ["standalone", "cluster"], indirect=True)

RELAYED = "jeff-relayed: the surprise party is on Friday"
TITLE = "jeff-invited: the surprise party"


@dataclass
class Watcher:
    """A model that makes the planned call for a prompt (then says "ok"), writes relayed messages as
    they were asked for, and keeps, per prompt, everything each of its requests held as text."""

    plans: dict[str, ToolCallPart] = field(default_factory=dict)
    seen: dict[str, list[str]] = field(default_factory=dict)

    def model(self) -> FunctionModel:
        return FunctionModel(self._respond)

    def _respond(self, messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        prompt = _prompt(messages)
        everything = (info.instructions or "") + ModelMessagesTypeAdapter.dump_json(messages).decode()
        self.seen.setdefault(prompt, []).append(everything)
        if prompt.startswith("From: "):  # the writer of a relayed message: the request as it is
            return ModelResponse(parts=[TextPart(prompt.split("What to tell them: ", 1)[1])])
        if any(isinstance(p, ToolReturnPart) for p in messages[-1].parts) or prompt not in self.plans:
            return ModelResponse(parts=[TextPart("ok")])
        return ModelResponse(parts=[self.plans[prompt]])

    def read(self, prompt: str) -> str:
        """Everything the model was given in the turn of ``prompt``."""
        assert self.seen.get(prompt), f"no model request for {prompt!r}"
        return "\n".join(self.seen[prompt])


def _prompt(messages: list[ModelMessage]) -> str:
    for message in reversed(messages):
        if isinstance(message, ModelRequest):
            prompts = [p for p in message.parts if isinstance(p, UserPromptPart)]
            if prompts:
                return str(prompts[-1].content)
    return ""


def party(**extra: Any) -> ToolCallPart:
    seoul = ZoneInfo("Asia/Seoul")
    start = (datetime.now(seoul) + timedelta(days=3)).replace(hour=19, minute=0, second=0, microsecond=0)
    args = {
        "title": TITLE,
        "start_time": start.isoformat(),
        "end_time": (start + timedelta(hours=2)).isoformat(),
    }
    return ToolCallPart("create_event", {**args, **extra})


async def confirmed(h: Harness, words: str) -> None:
    """Jeff asks for something in his 1:1 channel and says yes in the dialog; his answer came."""
    asked, answered = len(h.sendbird.in_channel("jeff-1")), len(h.texts("jeff-1"))
    await h.user_says(words, channel="jeff-1")
    rpc = [m.rpc for m in h.sendbird.in_channel("jeff-1")[asked:] if m.is_rpc] or (
        await h.rpc_requests(1, channel="jeff-1")
    )[-1:]
    assert (await h.answer(rpc[0]["id"], result={"confirmed": True})).status_code == 202
    await h.replies(answered + 1, channel="jeff-1")


async def says(h: Harness, user: str, channel: str, words: str) -> None:
    answered = len(h.texts(channel))
    await h.user_says(words, user=user, channel=channel, members=[user, BOT])
    await h.replies(answered + 1, channel=channel)


async def erase(h: Harness, user: str = "jeff") -> None:
    token = issue_token(JWT_SECRET, user)
    r = await h.http.delete("/api/v1/agent/me", headers={"authorization": f"Bearer {token}"})
    assert r.status_code == 204


async def test_a_relayed_message_no_longer_reaches_its_recipients_model_once_its_sender_is_erased(
    start_server: Any, directory: Any
) -> None:
    model = Watcher(
        plans={"tell mina": ToolCallPart("send_message_to_user", {"user_id": "mina", "message": RELAYED})}
    )
    async with start_server(model=model.model()) as h:
        await confirmed(h, "tell mina")
        await h.idle()
        direct = h.direct_channel("mina")
        assert direct is not None and h.texts(direct) == [RELAYED]
        await says(h, "mina", direct, "what did jeff say?")
        assert RELAYED in model.read("what did jeff say?")  # quoted to her model, for jeff

        await erase(h)
        await says(h, "mina", direct, "anything else?")
        assert RELAYED not in model.read("anything else?")
        assert "jeff-relayed" not in model.read("anything else?")


async def test_an_invitation_no_longer_reaches_the_guests_model_once_its_organizer_is_erased(
    start_server: Any, directory: Any
) -> None:
    model = Watcher(plans={"plan the party": party(guest_user_ids=["guest-kim"], invitee_user_ids=["mina"])})
    async with start_server(model=model.model()) as h:
        await confirmed(h, "plan the party")
        await h.idle()
        kim, mina = h.direct_channel("guest-kim"), h.direct_channel("mina")
        assert kim is not None and mina is not None
        assert TITLE in h.texts(kim)[0] and TITLE in h.texts(mina)[0]
        await says(h, "guest-kim", kim, "when is it?")
        await says(h, "mina", mina, "who is coming?")
        assert TITLE in model.read("when is it?") and TITLE in model.read("who is coming?")

        await erase(h)
        await says(h, "guest-kim", kim, "is it still on?")
        await says(h, "mina", mina, "should I bring something?")
        assert "jeff-invited" not in model.read("is it still on?")
        assert "jeff-invited" not in model.read("should I bring something?")


async def test_invitations_waiting_for_sendbird_are_not_sent_once_their_organizer_is_erased(
    start_server: Any, directory: Any, sendbird: FakeSendbird
) -> None:
    model = Watcher(plans={"plan the party": party(guest_user_ids=["guest-lee"])})
    async with start_server(model=model.model()) as h:
        sendbird.throttle("creation", ALWAYS)
        await confirmed(h, "plan the party")
        await h.idle()
        pending = PendingDeliveries(h.redis)
        assert await pending.waiting("guest-lee")

        erasing = time.time()
        await erase(h)
        # A change queued while the erasure ran, landing in the queue after it had looked there.
        late = PendingDelivery("guest-lee", f"{TITLE} moved", "late:guest-lee", "jeff", queued_at=erasing)
        assert await pending.add(late, due=time.time())
        sendbird.throttle("creation", 0)
        assert await deliver_due(h, time.time() + LATER) == 0
        assert not await pending.waiting("guest-lee")
        assert await h.redis.zscore(keys.pending_deliveries(), "guest-lee") is None
        channel = h.direct_channel("guest-lee")
        assert channel is None or h.texts(channel) == []


async def test_a_line_passed_on_longer_ago_than_its_index_lasts_is_not_quoted(start_server: Any) -> None:
    model = Watcher()
    async with start_server(model=model.model()) as h:
        transcript = Transcript(h.redis)
        stale = time.time() - keys.PASSED_ON_LINE_MAX_AGE_S - 60
        await transcript.add(
            "mina-1", Line(user_id="", text="jeff-stale: old news", on_behalf_of="jeff", at=stale)
        )
        await transcript.add("mina-1", Line(user_id="", text="jeff-fresh: news", on_behalf_of="jeff"))
        await says(h, "mina", "mina-1", "anything new?")
        seen = model.read("anything new?")
        assert "jeff-fresh: news" in seen and "jeff-stale" not in seen

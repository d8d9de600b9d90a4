"""A channel's lines keep the message id they came with, so that a message deleted or changed later can
be taken out of what the other members' model is quoted; lines stored before they had one still load."""

from __future__ import annotations

import json
import time
from typing import Any

from pydantic_ai.messages import ModelMessage, ModelResponse, TextPart
from pydantic_ai.models.function import AgentInfo, FunctionModel

from tests.fakes.sendbird import without_members
from tests.support import BOT, ON_STANDALONE_AND_CLUSTER, webhook_payload
from truloop_assistant.store import keys
from truloop_assistant.store.transcript import Transcript

GROUP = ["jeff", "mina", BOT]


def noting(requests: list[str]) -> FunctionModel:
    """Answer "noted" (never the words it was given); every request recorded as text."""

    def fn(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        requests.append(f"{info.instructions}\n{messages!r}")
        return ModelResponse(parts=[TextPart("noted")])

    return FunctionModel(fn)


@ON_STANDALONE_AND_CLUSTER
async def test_a_line_removed_by_its_message_id_is_no_longer_quoted_to_the_other_members(
    start_server: Any,
) -> None:
    requests: list[str] = []
    async with start_server(model=noting(requests)) as h:
        # A line as releases before message ids stored it.
        old = {"user_id": "mina", "text": "mina-old: hello all", "to": None, "turn": False, "at": time.time()}
        await h.redis.rpush(keys.transcript(keys.conversation_tag("team")), json.dumps(old))
        says = {"user": "mina", "channel": "team", "members": GROUP}
        await h.user_says("mina-deleted: dinner at 7?", message_id=501, **says)  # overheard
        await h.user_says("mina-kept: bringing cake", message_id=502, **says)
        await h.user_says("@bot mina-deleted-turn: what time is it?", message_id=503, mentions=[BOT], **says)
        await h.replies(1, channel="team")
        # A message whose webhook lists no members: the worker looks the channel up, then keeps its line.
        h.sendbird.add_channel("team", GROUP)
        late = webhook_payload("mina-deleted-late: on my way", user="mina", channel="team", message_id=504)
        assert (await h.post_webhook(without_members(late))).status_code == 200
        await h.idle()

        transcript = Transcript(h.redis)
        assert [line.message_id for line in await transcript.recent("team")] == [
            None,
            "501",
            "502",
            "503",
            None,  # the answer to mina's turn
            "504",
        ]
        for message_id in ("501", "503", "504"):
            assert await transcript.remove_message("team", message_id) is True
        assert await transcript.remove_message("team", "501") is False  # gone already
        assert await transcript.remove_message("team", "999") is False
        assert await transcript.remove_message("elsewhere", "502") is False

        await h.user_says("@bot what did mina say?", channel="team", members=GROUP, mentions=[BOT])
        await h.replies(2, channel="team")
        seen = requests[-1]
        assert "mina-kept: bringing cake" in seen and "mina-old: hello all" in seen
        assert "mina-deleted" not in seen

"""What the tool tests share: a model that calls one tool and reports the result, a fixed clock, and
an inviter that records what it would have posted in people's channels."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any
from zoneinfo import ZoneInfo

from pydantic_ai import Agent, DeferredToolRequests, FunctionToolset
from pydantic_ai.messages import ModelMessage, ModelResponse, TextPart, ToolCallPart, ToolReturnPart
from pydantic_ai.models.function import AgentInfo, FunctionModel

from truloop_assistant.backends import Backends
from truloop_assistant.channels.relay import RelayError
from truloop_assistant.i18n import Language
from truloop_assistant.tools.agent_deps import AgentDeps, Inviter, PhoneInvites
from truloop_assistant.tools.server_tools import merged


def calls(tool: str, args: dict[str, Any] | str) -> FunctionModel:
    """Call one tool, then answer with its result as the model saw it: ``<outcome>: <content>``."""

    def fn(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        returns = [p for m in messages for p in m.parts if isinstance(p, ToolReturnPart)]
        if not returns:
            return ModelResponse(parts=[ToolCallPart(tool, args)])
        last = returns[-1]
        return ModelResponse(
            parts=[TextPart(f"{last.outcome}: {last.model_response_str(wrap_if_error=False)}")]
        )

    return FunctionModel(fn)


def fixed() -> datetime:
    """Thursday 2026-11-26 10:49 in Seoul."""
    return datetime(2026, 11, 26, 1, 49, tzinfo=UTC)


@dataclass
class RecordingInviter:
    """An :class:`Inviter` that keeps what it delivers; ``refused`` people's channels cannot be had."""

    sent: list[tuple[str, str, str]] = field(default_factory=list)
    """(user id, text, dedup id) in delivery order."""
    languages: dict[str, Language] = field(default_factory=dict)
    refused: set[str] = field(default_factory=set)
    unknown: set[str] = field(default_factory=set)
    """People who are no users of the messaging channel (``exists`` says so)."""
    invited: dict[str, int] = field(default_factory=dict)
    """People each organizer invited lately."""

    async def known_language(self, user_id: str) -> Language | None:
        return self.languages.get(user_id)

    async def deliver(
        self, user_id: str, text: str, *, dedup_id: str, on_behalf_of: str | None = None
    ) -> None:
        if user_id in self.refused:
            raise RelayError(f"Sendbird refused the direct channel for {user_id!r} (HTTP 400): no such user")
        self.sent.append((user_id, text, dedup_id))

    async def deliver_or_queue(
        self, user_id: str, text: str, *, dedup_id: str, on_behalf_of: str | None = None
    ) -> bool:
        await self.deliver(user_id, text, dedup_id=dedup_id, on_behalf_of=on_behalf_of)
        return True

    async def queue(self, user_id: str, text: str, *, dedup_id: str, on_behalf_of: str | None = None) -> bool:
        await self.deliver(user_id, text, dedup_id=dedup_id, on_behalf_of=on_behalf_of)
        return True

    async def exists(self, user_id: str) -> bool:
        return user_id not in self.unknown

    async def invited_lately(self, organizer: str) -> int:
        return self.invited.get(organizer, 0)

    async def note_invited(self, organizer: str, people: int) -> None:
        self.invited[organizer] = self.invited.get(organizer, 0) + people

    def to(self, user_id: str) -> list[str]:
        return [text for to, text, _ in self.sent if to == user_id]


async def run_tool(
    toolset: FunctionToolset[AgentDeps],
    backends: Backends | None,
    tool: str,
    *,
    user: str,
    prompt: str = "hi",
    inviter: Inviter | None = None,
    phone_invites: PhoneInvites | None = None,
    as_json: bool = False,
    **args: Any,
) -> str:
    """Have an agent with ``toolset`` (as the agents offer it) call ``tool`` once as ``user`` who
    wrote ``prompt``; its answer reports the result. ``as_json``: the arguments come as a JSON text,
    as providers deliver them; ``phone_invites``: the server texts guests invited by number."""
    agent = Agent(
        calls(tool, json.dumps(args) if as_json else args),
        deps_type=AgentDeps,
        output_type=[str, DeferredToolRequests],
        toolsets=[merged([toolset])],
    )
    deps = AgentDeps(
        user_id=user,
        channel_url="c",
        timezone=ZoneInfo("Asia/Seoul"),
        clock=fixed,
        backends=backends,
        inviter=inviter,
        phone_invites=phone_invites,
    )
    result = await agent.run(prompt, deps=deps)
    assert isinstance(result.output, str)
    return result.output


def content(answer: str) -> Any:
    """The JSON a successful tool returned, from a ``run_tool`` answer."""
    outcome, _, body = answer.partition(": ")
    assert outcome == "success", answer
    return json.loads(body)


def retried(answer: str) -> dict[str, str]:
    """What the model was told to fix, from the answer of a retried call: argument -> message.

    Arguments that broke their own limits are named by their path (``available_dates.0`` for an
    item); a check in the tool's body (several arguments, or stored data) is under ``""``.
    """
    outcome, _, body = answer.partition(": ")
    assert outcome == "retried", answer
    try:
        errors = json.loads(body)
    except ValueError:
        return {"": body}
    assert isinstance(errors, list), answer
    return {".".join(str(p) for p in error["loc"]): error["msg"] for error in errors}

"""The agents the server runs."""

from __future__ import annotations

from collections.abc import Sequence

from pydantic_ai import AbstractToolset, Agent, DeferredToolRequests
from pydantic_ai.models import Model

from ..tools import all_toolsets
from .deps import AgentDeps
from .prompts import MEMBER_INSTRUCTIONS

MemberAgent = Agent[AgentDeps, str | DeferredToolRequests]


def build_member_agent(
    model: Model | str, *, extra_toolsets: Sequence[AbstractToolset[AgentDeps]] = ()
) -> MemberAgent:
    """The agent for registered users: every toolset, text or deferred calls as output."""
    return Agent(
        model,
        deps_type=AgentDeps,
        output_type=[str, DeferredToolRequests],
        instructions=MEMBER_INSTRUCTIONS,
        toolsets=[*all_toolsets, *extra_toolsets],
        name="member",
    )

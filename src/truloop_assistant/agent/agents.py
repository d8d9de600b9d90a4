"""The agents the server runs: members, guests, and the writer of relayed messages."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from pydantic_ai import (
    AbstractToolset,
    Agent,
    CombinedToolset,
    DeferredToolRequests,
    FilteredToolset,
    RunContext,
)
from pydantic_ai.models import Model
from pydantic_ai.tools import ToolDefinition

from ..deferred.approvals import CONFIRM_METHOD
from ..protocol.declarations import Declaration
from ..protocol.device_methods import DEVICE_METHODS
from ..tools import all_toolsets, guest_toolsets, notification_safe_toolsets, tool_names
from ..tools.agent_deps import AgentDeps
from ..tools.call_records import CallRecordToolset
from ..tools.callback_toolset import CallbackToolset
from ..tools.confirmation_gate import ConfirmationGate
from ..tools.declared import DeclaredToolset
from ..tools.failures import FailureResultToolset
from ..tools.marks import asks_first, is_declared, is_destructive
from ..tools.once import OnceToolset
from ..tools.server_tools import merged
from ..tools.time_limits import TimeLimitToolset
from .models import timed
from .prompts import GUEST_INSTRUCTIONS, MEMBER_INSTRUCTIONS, NOTIFICATION_INSTRUCTIONS

MemberAgent = Agent[AgentDeps, str | DeferredToolRequests]

TOOL_RETRIES = 3
"""How often a model may fix one tool's call (bad arguments, an unknown name) within a run: real
models sometimes need more than one try. Every try counts in the turn's model request budget."""


@dataclass(frozen=True)
class Agents:
    member: MemberAgent
    guest: MemberAgent


def gated(toolset: AbstractToolset[AgentDeps], *, timeout_s: float) -> AbstractToolset[AgentDeps]:
    """A toolset as the agents offer it, in wrappers that each do one thing. From the outside in:

    1. ``FilteredToolset``: only the tools the user's app can serve are offered (:func:`app_can_serve`);
    2. ``CallRecordToolset``: each call is logged and kept for the ledger, with how it ended as the
       model sees it (it is outside the wrappers below, which turn failures into results);
    3. ``CallbackToolset``: integrators' callbacks hear of calls that run here (inside the record,
       so their log lines carry the call's id; outside the failures, so they hear what the model is
       told);
    4. ``FailureResultToolset``: an exception from a tool becomes a failed result naming its type;
    5. ``TimeLimitToolset``: a call that runs past ``timeout_s`` becomes a failed "timed out" result
       (inside the failures, so it is told as a timeout; the bound covers the gate and the tool);
    6. ``ConfirmationGate``: tools that change data or reach people wait for the user's yes (those
       that ask themselves, with what they prepared for the dialog, are left to do so; those the
       user allows for good run at once), and run with what the user changed in the dialog;
    7. ``OnceToolset``: inside the gate, tools that change something run at most once per call.
    """
    approval = ConfirmationGate(OnceToolset(toolset))
    bounded = FailureResultToolset(TimeLimitToolset(approval, timeout_s=timeout_s))
    recorded = CallRecordToolset(CallbackToolset(bounded))
    return FilteredToolset(recorded, filter_func=app_can_serve)


UNDECLARED = Declaration(tools=[])
"""What an app that declared nothing serves: the baseline version's built-in methods."""


def app_can_serve(ctx: RunContext[AgentDeps], tool_def: ToolDefinition) -> bool:
    """False for a tool the user's app version cannot serve: a built-in device method it did not list
    or, listing none, that is newer than its protocol version (an app that declared nothing speaks
    the baseline), or a tool that needs the confirmation dialog when it cannot show one; in a
    conversation no app answers in (SMS, a guest page), every device tool and every tool that asks first."""
    if not ctx.deps.devices:  # no app answers here: no device request, and no dialog to ask first
        return not (tool_def.name in DEVICE_METHODS or is_declared(tool_def) or asks_first(tool_def))
    declaration = ctx.deps.declaration or UNDECLARED
    method = DEVICE_METHODS.get(tool_def.name)
    if method is not None and not declaration.supports(method.method):
        return False
    return not (asks_first(tool_def) and not declaration.supports(CONFIRM_METHOD))


def _agent(
    model: Model | str,
    name: str,
    instructions: str,
    own: Sequence[AbstractToolset[AgentDeps]],
    timeout_s: float,
    *,
    extra: Sequence[AbstractToolset[AgentDeps]] = (),
    keep: Callable[[ToolDefinition], bool] = lambda tool_def: True,
    declared: bool = True,
    reserved_prefixes: Sequence[str] = (),
) -> MemberAgent:
    """An agent offering the server's tools of ``own`` (those ``keep`` is true for) and the toolsets
    of ``extra``, all in one set of wrappers (:func:`gated`).

    Every toolset and wrapper costs each step of each run (pydantic-ai walks them all, and gathers
    a combination's toolsets concurrently), so the server's tools are one toolset whose list is made
    once (:mod:`..tools.server_tools`), the declared tools are offered by a wrapper around it, and a
    combination is made only for ``extra``. The wrappers act on each call by itself, so one chain
    of them around all the tools does what a chain around each toolset would.

    ``declared``: whether the user's app-declared device tools are offered too (except names that
    start with ``reserved_prefixes``: those of the MCP servers).
    """
    server = merged(own, keep=keep)
    offered: AbstractToolset[AgentDeps] = CombinedToolset([server, *extra]) if extra else server
    if declared:
        offered = DeclaredToolset(
            offered, max_retries=TOOL_RETRIES, reserved=tool_names(), reserved_prefixes=reserved_prefixes
        )
    return Agent(
        timed(model),
        deps_type=AgentDeps,
        output_type=[str, DeferredToolRequests],
        instructions=instructions,
        toolsets=[gated(offered, timeout_s=timeout_s)],
        name=name,
        retries=TOOL_RETRIES,
    )


def build_member_agent(
    model: Model | str,
    *,
    tool_timeout_s: float,
    extra_toolsets: Sequence[AbstractToolset[AgentDeps]] = (),
    reserved_prefixes: Sequence[str] = (),
) -> MemberAgent:
    """The agent for people in the user directory: every toolset (``extra_toolsets``: the MCP
    servers', whose prefixes are ``reserved_prefixes``)."""
    return _agent(
        model,
        "member",
        MEMBER_INSTRUCTIONS,
        all_toolsets,
        tool_timeout_s,
        extra=extra_toolsets,
        reserved_prefixes=reserved_prefixes,
    )


def build_guest_agent(model: Model | str, *, tool_timeout_s: float) -> MemberAgent:
    """The agent for invited guests who are not in the directory: their invitations only."""
    return _agent(model, "guest", GUEST_INSTRUCTIONS, guest_toolsets, tool_timeout_s)


def build_notification_agent(model: Model | str, *, tool_timeout_s: float) -> MemberAgent:
    """Writes a message relayed to another user; it cannot create events, look people up or relay.

    Destructive tools are filtered out too: writing a message must not change anything.
    """
    return _agent(
        model,
        "notification",
        NOTIFICATION_INSTRUCTIONS,
        notification_safe_toolsets,
        tool_timeout_s,
        keep=lambda tool_def: not is_destructive(tool_def),
        declared=False,
    )

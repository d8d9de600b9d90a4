"""Tools the user's device runs (calendar, confirm dialog, OS permission): what the model is shown.

A device tool is its signature (the arguments the model fills in, its docstring the description)
and :func:`device_tool` above it: its JSON-RPC method, whose wire facts (``params``, ``result``, who
answers, example, failure text) are declared in :mod:`..protocol.device_methods`, which agents offer
it, and whether each call asks the user's yes first.

Each raises ``CallDeferred``: the run pauses and the server sends the call to the device as a
JSON-RPC request. ``notification_message`` is what the device shows the user meanwhile. A tool that
reads its arguments before they go (a plain date is a whole day in the user's zone) raises it with
those it resolved as ``metadata["args"]`` (:data:`RESOLVED_ARGS`); they take the place of the model's
in ``params``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Annotated, Any, Literal, TypeVar

from pydantic import Field, StringConstraints
from pydantic_ai import CallDeferred, FunctionToolset, RunContext

from ..protocol.declarations import NOTIFICATION_DESCRIPTION
from ..protocol.device_methods import DEVICE_METHODS, RESOLVED_ARGS, DeviceMethod
from ..protocol.methods import CalendarEventsResult, ConfirmResult, PermissionStatusResult
from .agent_deps import AgentDeps
from .arguments import DayOrMoment
from .marks import DEVICE
from .validation import moment_range

AgentName = Literal["member", "guest", "notification"]
"""The agents that may offer a tool: members (people in the directory), invited guests, and the
writer of relayed messages."""

F = TypeVar("F", bound=Callable[..., Any])


@dataclass(frozen=True)
class DeviceTool:
    """One device tool: its function (name, description, arguments), its method's wire facts, the
    agents that offer it and whether it asks the user's yes first."""

    function: Callable[..., Any]
    wire: DeviceMethod
    agents: frozenset[AgentName]
    confirm: bool = False
    """Whether a call waits for the user's yes first (the gate's dialog says what the call will do, from
    the tool's description and arguments) before it goes to the phone."""

    @property
    def name(self) -> str:
        return self.function.__name__


DEVICE_TOOLS: dict[str, DeviceTool] = {}
"""Every built-in device tool by name, in the order they are declared."""


def device_tool(method: str, *, agents: frozenset[AgentName], confirm: bool = False) -> Callable[[F], F]:
    """Declare the decorated function the device tool sent as ``method`` (declared in
    :data:`..protocol.device_methods.DEVICE_METHODS` under the function's name)."""

    def declare(function: F) -> F:
        wire = DEVICE_METHODS.get(function.__name__)
        if wire is None or wire.method != method:
            raise ValueError(f"device tool {function.__name__}: no method {method} is declared for it")
        if function.__name__ in DEVICE_TOOLS:
            raise ValueError(f"device tool {function.__name__} is declared twice")
        DEVICE_TOOLS[function.__name__] = DeviceTool(function, wire, agents, confirm)
        return function

    return declare


CONFIRMED_DEVICE: dict[str, Any] = {**DEVICE, "destructive": True}
"""A device tool whose calls ask the user's yes first (the gate treats it as a destructive tool)."""


def device_toolset(agent: AgentName) -> FunctionToolset[AgentDeps]:
    """The device tools ``agent`` offers, as one toolset."""
    toolset: FunctionToolset[AgentDeps] = FunctionToolset()
    for tool in DEVICE_TOOLS.values():
        if agent in tool.agents:
            toolset.add_function(tool.function, metadata=CONFIRMED_DEVICE if tool.confirm else DEVICE)
    return toolset


Notification = Annotated[str, StringConstraints(max_length=200), Field(description=NOTIFICATION_DESCRIPTION)]
"""What the phone shows while it works on a call."""
Permission = Literal[
    "calendar.read",
    "calendar.write",
    "contacts.read",
    "location",
    "notifications",
    "camera",
    "photos",
    "microphone",
]
"""The OS permission names the built-in device tools take (the protocol carries any name: an app's
own declared tools may use others)."""
ButtonLabel = Annotated[str, StringConstraints(max_length=40)]

MEMBERS: frozenset[AgentName] = frozenset({"member"})
MEMBERS_AND_NOTIFICATIONS: frozenset[AgentName] = frozenset({"member", "notification"})


@device_tool("calendar.getEvents", agents=MEMBERS)
async def get_calendar_events(
    ctx: RunContext[AgentDeps],
    notification_message: Notification,
    start_date: DayOrMoment,
    end_date: DayOrMoment,
) -> CalendarEventsResult:
    """The user's phone calendar: events overlapping start_date..end_date (YYYY-MM-DD for whole
    days, or ISO date-times; end exclusive)."""
    start, end = moment_range(start_date, end_date, ctx.deps.timezone)
    raise CallDeferred(
        metadata={RESOLVED_ARGS: {"start_date": start.isoformat(), "end_date": end.isoformat()}}
    )


@device_tool("interaction.confirm", agents=MEMBERS_AND_NOTIFICATIONS)
async def confirm_interaction(
    ctx: RunContext[AgentDeps],
    notification_message: Notification,
    title: Annotated[
        str,
        StringConstraints(strip_whitespace=True, min_length=1, max_length=100),
        Field(description="What is asked, in a few words"),
    ],
    message: Annotated[
        str,
        StringConstraints(strip_whitespace=True, min_length=1, max_length=1000),
        Field(description="Exactly what happens on yes"),
    ],
    confirm_label: ButtonLabel | None = None,
    cancel_label: ButtonLabel | None = None,
    permission: Annotated[Permission | None, Field(description="OS permission to request on yes")] = None,
) -> ConfirmResult:
    """Ask the user a yes/no question in a phone dialog."""
    raise CallDeferred()


@device_tool("permissions.getStatus", agents=MEMBERS_AND_NOTIFICATIONS)
async def get_permission_status(
    ctx: RunContext[AgentDeps],
    notification_message: Notification,
    permission: Permission,
) -> PermissionStatusResult:
    """Whether an OS permission is granted on the phone, without asking for it."""
    raise CallDeferred()


if set(DEVICE_TOOLS) != set(DEVICE_METHODS):
    raise ValueError(f"device methods without a tool: {sorted(set(DEVICE_METHODS) - set(DEVICE_TOOLS))}")

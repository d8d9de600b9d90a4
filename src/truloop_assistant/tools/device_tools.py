"""Tools the user's device runs (calendar, confirm dialog, OS permission).

Each raises ``CallDeferred``: the run pauses and the server sends the call to the device as a
JSON-RPC request. ``notification_message`` is what the device shows the user meanwhile.
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field, StringConstraints
from pydantic_ai import CallDeferred, FunctionToolset, RunContext

from ..protocol.methods import CalendarEventsResult, ConfirmResult, PermissionStatusResult
from .agent_deps import AgentDeps
from .arguments import DateTimeWithOffset
from .marks import DEVICE
from .validation import date_range

Notification = Annotated[str, StringConstraints(max_length=200)]
"""What the phone shows while it works on a call (the instructions say how to write it, once for all
device tools)."""
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

event_client_toolset: FunctionToolset[AgentDeps] = FunctionToolset()
interaction_toolset: FunctionToolset[AgentDeps] = FunctionToolset()
permission_toolset: FunctionToolset[AgentDeps] = FunctionToolset()


@event_client_toolset.tool(metadata=DEVICE)
async def get_calendar_events(
    ctx: RunContext[AgentDeps],
    notification_message: Notification,
    start_date: DateTimeWithOffset,
    end_date: DateTimeWithOffset,
) -> CalendarEventsResult:
    """Events in the user's phone calendar between two date-times."""
    date_range(start_date, end_date)
    raise CallDeferred()


@interaction_toolset.tool(metadata=DEVICE)
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
    """Ask the user a yes/no question in a phone dialog, when no other tool asks it."""
    raise CallDeferred()


@permission_toolset.tool(metadata=DEVICE)
async def get_permission_status(
    ctx: RunContext[AgentDeps],
    notification_message: Notification,
    permission: Permission,
) -> PermissionStatusResult:
    """Whether an OS permission is granted on the phone, without asking for it."""
    raise CallDeferred()

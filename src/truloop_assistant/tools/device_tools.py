"""Tools the user's device runs (calendar, confirm dialog, OS permission).

Each raises ``CallDeferred``: the run pauses and the server sends the call to the device as a
JSON-RPC request. ``notification_message`` is what the device shows the user meanwhile.
"""

from __future__ import annotations

from typing import Annotated

from pydantic import Field, StringConstraints
from pydantic_ai import CallDeferred, FunctionToolset, RunContext

from ..protocol.methods import CalendarEventsResult, ConfirmResult, PermissionStatusResult
from .agent_deps import AgentDeps
from .arguments import DateTimeWithOffset
from .marks import DEVICE
from .validation import date_range

Notification = Annotated[
    str,
    StringConstraints(max_length=200),
    Field(description="Short text shown to the user while their phone works on this, in the user's language"),
]
Permission = Annotated[str, StringConstraints(max_length=64)]
PERMISSIONS = (
    "calendar.read, calendar.write, contacts.read, location, notifications, camera, photos, microphone"
)
"""The OS permission names the app understands (the protocol takes any name; these are the common ones)."""
ButtonLabel = Annotated[str, StringConstraints(max_length=40)]

event_client_toolset: FunctionToolset[AgentDeps] = FunctionToolset()
interaction_toolset: FunctionToolset[AgentDeps] = FunctionToolset()
permission_toolset: FunctionToolset[AgentDeps] = FunctionToolset()


@event_client_toolset.tool(metadata=DEVICE)
async def get_calendar_events(
    ctx: RunContext[AgentDeps],
    notification_message: Notification,
    start_date: Annotated[
        DateTimeWithOffset,
        Field(description="Start, ISO 8601 with UTC offset, e.g. 2026-03-09T00:00:00+09:00"),
    ],
    end_date: Annotated[
        DateTimeWithOffset,
        Field(
            description="End, ISO 8601 with UTC offset, e.g. 2026-03-15T23:59:59+09:00; "
            "not before the start and at most 366 days after it"
        ),
    ],
) -> CalendarEventsResult:
    """Read the events in the user's phone calendar between two date-times. Events made in this app
    are in get_events: to know whether the user is free, look at both."""
    date_range(start_date, end_date)
    raise CallDeferred()


@interaction_toolset.tool(metadata=DEVICE)
async def confirm_interaction(
    ctx: RunContext[AgentDeps],
    notification_message: Notification,
    title: Annotated[
        str,
        StringConstraints(strip_whitespace=True, min_length=1, max_length=100),
        Field(description="Dialog title: what is being asked, in a few words"),
    ],
    message: Annotated[
        str,
        StringConstraints(strip_whitespace=True, min_length=1, max_length=1000),
        Field(description="Dialog body: exactly what will happen if the user confirms"),
    ],
    confirm_label: Annotated[ButtonLabel | None, Field(description="Label of the confirm button")] = None,
    cancel_label: Annotated[ButtonLabel | None, Field(description="Label of the cancel button")] = None,
    permission: Annotated[
        Permission | None,
        Field(description=f"OS permission to request if the user confirms, one of: {PERMISSIONS}"),
    ] = None,
) -> ConfirmResult:
    """Ask the user a yes/no question in a dialog on their phone (optionally also for an OS permission).
    Not before creating, changing or cancelling events, messaging someone or forgetting a memory:
    those tools open their own confirmation dialog."""
    raise CallDeferred()


@permission_toolset.tool(metadata=DEVICE)
async def get_permission_status(
    ctx: RunContext[AgentDeps],
    notification_message: Notification,
    permission: Annotated[
        Permission,
        StringConstraints(strip_whitespace=True, min_length=1),
        Field(description=f"OS permission to check, one of: {PERMISSIONS}"),
    ],
) -> PermissionStatusResult:
    """Check whether an OS permission is granted on the user's phone, without asking for it."""
    raise CallDeferred()

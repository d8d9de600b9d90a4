"""Tools the user's device runs (calendar, confirm dialog, OS permission), each declared in one place.

A device tool is its signature (the arguments the model fills in, its docstring the description)
and the :func:`device_tool` facts beside it: the JSON-RPC method and how the arguments become its
``params``, the ``result`` the device answers with, which agents offer it, whether the phone answers
by itself or a person must, what the user is told when it fails. The server's toolsets, the
handlers that send and check the calls (:mod:`..deferred.handlers`), the published protocol
(``python -m truloop_assistant.deferred.publish``), the evaluation's phone, the /dev page and the
offline model all read :data:`DEVICE_TOOLS`.

Each raises ``CallDeferred``: the run pauses and the server sends the call to the device as a
JSON-RPC request. ``notification_message`` is what the device shows the user meanwhile.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Annotated, Any, Literal, TypeVar

from pydantic import BaseModel, Field, StringConstraints
from pydantic_ai import CallDeferred, FunctionToolset, RunContext

from ..i18n import Text
from ..protocol.methods import (
    ApprovalResult,
    CalendarEventsResult,
    CalendarParams,
    ConfirmParams,
    ConfirmResult,
    PermissionParams,
    PermissionStatusResult,
)
from .agent_deps import AgentDeps
from .arguments import DateTimeWithOffset
from .marks import DEVICE
from .validation import date_range

AgentName = Literal["member", "guest", "notification"]
"""The agents that may offer a tool: members (people in the directory), invited guests, and the
writer of relayed messages."""
Answerer = Literal["phone", "person"]
"""Who answers a device call: the phone by itself (a calendar read) or the person (a dialog)."""

F = TypeVar("F", bound=Callable[..., Any])


@dataclass(frozen=True)
class DeviceTool:
    """One device tool's facts. Its name, description and arguments are those of ``function``."""

    function: Callable[..., Any]
    method: str
    """The JSON-RPC method the call is sent as."""
    params_model: type[BaseModel]
    """The ``params`` the device is sent (their JSON Schema is published)."""
    result_model: type[BaseModel]
    """The ``result`` the device must answer with (its JSON Schema is published)."""
    params: Mapping[str, str]
    """Argument name -> ``params`` field; arguments not named here are not sent
    (``notification_message`` never is)."""
    agents: frozenset[AgentName]
    answered_by: Answerer
    """``person``: the request waits for someone to decide; ``phone``: the app answers it at once."""
    example: Mapping[str, Any]
    """A ``result`` a phone may answer with: the evaluation's phone answers it, the docs show it."""
    failure: Text
    """What could not be done when the call fails, in the user's words (the offline model says it)."""
    params_summary: str
    """The ``params`` in a few words, for the method table of docs/protocol.md."""
    result_summary: str
    """The ``result`` in a few words, for the same table."""
    model_omits: frozenset[str] = frozenset()
    """Result fields the model is not shown (they mean something only to the server's own dialogs)."""
    confirm: bool = False
    """Whether a call waits for the user's yes first (the gate's dialog says what the call will do, from
    the tool's description and arguments) before it goes to the phone."""

    @property
    def name(self) -> str:
        return self.function.__name__

    def params_of(self, args: Mapping[str, Any]) -> dict[str, Any]:
        """The JSON-RPC ``params`` of a call with ``args`` (checked with the params model)."""
        mapped = {wire: args.get(argument) for argument, wire in self.params.items()}
        return self.params_model.model_validate(mapped).model_dump(exclude_none=True)


DEVICE_TOOLS: dict[str, DeviceTool] = {}
"""Every built-in device tool by name, in the order they are declared."""


def device_tool(**facts: Any) -> Callable[[F], F]:
    """Declare the decorated function a device tool with ``facts`` (the fields of :class:`DeviceTool`)."""

    def declare(function: F) -> F:
        tool = DeviceTool(function=function, **facts)
        if tool.name in DEVICE_TOOLS or tool.method in {t.method for t in DEVICE_TOOLS.values()}:
            raise ValueError(f"device tool {tool.name} ({tool.method}) is declared twice")
        DEVICE_TOOLS[tool.name] = tool
        return function

    return declare


def device_tool_for(method: str) -> DeviceTool | None:
    """The built-in device tool sent as ``method``, or None (an app-declared tool's method)."""
    return next((tool for tool in DEVICE_TOOLS.values() if tool.method == method), None)


def answered_by_person(method: str) -> bool:
    """Whether a request for ``method`` waits for a person (a dialog) rather than the phone alone.

    An app-declared tool's method is the phone's to answer."""
    tool = device_tool_for(method)
    return tool is not None and tool.answered_by == "person"


CONFIRMED_DEVICE: dict[str, Any] = {**DEVICE, "destructive": True}
"""A device tool whose calls ask the user's yes first (the gate treats it as a destructive tool)."""


def device_toolset(agent: AgentName) -> FunctionToolset[AgentDeps]:
    """The device tools ``agent`` offers, as one toolset."""
    toolset: FunctionToolset[AgentDeps] = FunctionToolset()
    for tool in DEVICE_TOOLS.values():
        if agent in tool.agents:
            toolset.add_function(tool.function, metadata=CONFIRMED_DEVICE if tool.confirm else DEVICE)
    return toolset


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

MEMBERS: frozenset[AgentName] = frozenset({"member"})
MEMBERS_AND_NOTIFICATIONS: frozenset[AgentName] = frozenset({"member", "notification"})
SAMPLE_EVENT = {
    "id": "sample-20261124-1",
    "title": "팀 미팅",
    "start": {"dateTime": "2026-11-24T10:00:00+09:00"},
    "end": {"dateTime": "2026-11-24T11:00:00+09:00"},
}


@device_tool(
    method="calendar.getEvents",
    params_model=CalendarParams,
    result_model=CalendarEventsResult,
    params={"start_date": "startDate", "end_date": "endDate"},
    agents=MEMBERS,
    answered_by="phone",
    example={"events": [SAMPLE_EVENT]},
    failure=Text(ko="캘린더를 확인하지 못했어요", en="I couldn't check your calendar"),
    params_summary="`startDate`, `endDate`: ISO 8601 with offset",
    result_summary='`{"events": [{"id", "title", "start": {"dateTime"}, "end": {"dateTime"}}]}` '
    "(at most 1000)",
)
async def get_calendar_events(
    ctx: RunContext[AgentDeps],
    notification_message: Notification,
    start_date: DateTimeWithOffset,
    end_date: DateTimeWithOffset,
) -> CalendarEventsResult:
    """Events in the user's phone calendar between two date-times."""
    date_range(start_date, end_date)
    raise CallDeferred()


@device_tool(
    method="interaction.confirm",
    params_model=ConfirmParams,
    result_model=ApprovalResult,
    model_omits=frozenset({"reason", "edited", "remember"}),
    params={
        "title": "title",
        "message": "message",
        "confirm_label": "confirmLabel",
        "cancel_label": "cancelLabel",
        "permission": "permission",
    },
    agents=MEMBERS_AND_NOTIFICATIONS,
    answered_by="person",
    example={"confirmed": True},
    failure=Text(ko="확인을 받지 못했어요", en="I couldn't ask you to confirm"),
    params_summary="`title`, `message`, optional `confirmLabel`, `cancelLabel`, `permission`, `editable`",
    result_summary='`{"confirmed": true | false}`, optional `reason`, `edited`, `remember` (see below)',
)
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


@device_tool(
    method="permissions.getStatus",
    params_model=PermissionParams,
    result_model=PermissionStatusResult,
    params={"permission": "permission"},
    agents=MEMBERS_AND_NOTIFICATIONS,
    answered_by="phone",
    example={"status": "granted", "canPromptAgain": False},
    failure=Text(ko="권한을 확인하지 못했어요", en="I couldn't check the permission"),
    params_summary="`permission` (`calendar.read`, `calendar.write`, `contacts.read`, `location`, "
    "`notifications`, `camera`, `photos`, `microphone`; see below)",
    result_summary='`{"status": "granted" | "denied" | "notDetermined" | "restricted", '
    '"canPromptAgain": bool}`',
)
async def get_permission_status(
    ctx: RunContext[AgentDeps],
    notification_message: Notification,
    permission: Permission,
) -> PermissionStatusResult:
    """Whether an OS permission is granted on the phone, without asking for it."""
    raise CallDeferred()

"""Params and result schemas of the client methods (served at ``GET /api/v1/agent/protocol``)."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, StrictBool


class _Result(BaseModel):
    # Clients may send more than we need; only the fields we use are checked.
    model_config = ConfigDict(extra="allow")


class EventTime(_Result):
    dateTime: str


class CalendarEvent(_Result):
    id: str
    title: str
    start: EventTime
    end: EventTime


class CalendarEventsResult(_Result):
    events: list[CalendarEvent] = Field(max_length=1000)


class ConfirmResult(_Result):
    confirmed: StrictBool


REMEMBERABLE = frozenset({"create_event", "update_event", "save_memory", "send_message_to_user"})
"""The server tools a person may allow for good (``"remember": "always"``), each within the scope its
dialog offered (``params.always``): those that create or change their own events, memories and
messages. Never an invitation, a cancellation, a forgotten memory or another server's tool."""

REASON_CHARS = 500
"""A refusal's reason is at most this long."""


class ApprovalResult(ConfirmResult):
    """The answer to an ``interaction.confirm``: yes or no; for the server's own dialogs (``editable``
    present) also a reason, changes, or "always" (where ``params.always`` offers it)."""

    reason: str | None = Field(
        default=None, max_length=REASON_CHARS, description="why the person refused (with confirmed: false)"
    )
    edited: dict[str, Any] | None = Field(
        default=None,
        description="argument name -> the value the person changed it to (names of params.editable)",
    )
    remember: Literal["always"] | None = Field(
        default=None,
        description="do not ask this person again for calls like this one, as the dialog's params.always "
        "says (ignored on a refusal, and when the dialog offered no always)",
    )


class PermissionStatusResult(_Result):
    status: Literal["granted", "denied", "notDetermined", "restricted"]
    canPromptAgain: StrictBool


class CalendarParams(BaseModel):
    startDate: str
    endDate: str


EditableType = Literal["text", "datetime", "users"]


class EditableField(BaseModel):
    """An argument the person may change before approving."""

    name: str = Field(description="the tool's argument name (the key to use in the result's edited)")
    label: str = Field(description="what to call it, in the person's language")
    type: EditableType = Field(
        description="text: a string; datetime: ISO 8601 with offset; users: a list of user ids"
    )
    value: str | list[str] = Field(description="its current value (times in the person's zone; empty: none)")


class AlwaysOffer(BaseModel):
    """What a yes with ``"remember": "always"`` would allow from then on without asking."""

    covers: str = Field(
        description="what it covers and for how long, in the person's language: show it beside the choice"
    )
    scope: dict[str, Any] = Field(
        description="the same as data, as GET /api/v1/agent/approvals lists it: invitees and description "
        "for events, user_id for messages"
    )


class ConfirmParams(BaseModel):
    title: str
    message: str
    confirmLabel: str | None = None
    cancelLabel: str | None = None
    permission: str | None = None
    editable: list[EditableField] | None = Field(
        default=None, description="for the server's own dialogs: what the person may change before approving"
    )
    always: AlwaysOffer | None = Field(
        default=None,
        description='present when the person may answer "remember": "always": what it would cover '
        "(never in a group chat, nor for invitations or guests)",
    )


class PermissionParams(BaseModel):
    permission: str


class PermissionRequiredData(_Result):
    """``error.data`` of a -32010 PermissionRequired answer."""

    requiredPermission: str | None = None
    canPromptAgain: bool | None = None

"""Params and result schemas of the client methods (served at ``GET /api/v1/agent/protocol``)."""

from __future__ import annotations

from typing import Literal

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


class PermissionStatusResult(_Result):
    status: Literal["granted", "denied", "notDetermined", "restricted"]
    canPromptAgain: StrictBool


class CalendarParams(BaseModel):
    startDate: str
    endDate: str


class ConfirmParams(BaseModel):
    title: str
    message: str
    confirmLabel: str | None = None
    cancelLabel: str | None = None
    permission: str | None = None


class PermissionParams(BaseModel):
    permission: str


class PermissionRequiredData(_Result):
    """``error.data`` of a -32010 PermissionRequired answer."""

    requiredPermission: str | None = None
    canPromptAgain: bool | None = None

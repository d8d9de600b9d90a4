"""The built-in device methods as the protocol declares them: one declaration per method.

Each :class:`DeviceMethod` says what travels on the wire for one built-in device tool: its JSON-RPC
method, the protocol version it appeared in, how the tool's arguments become ``params``, the
``result`` the device answers with, whether the phone answers by itself or a person must, an example
answer and what the user is told when it fails. The tool the model calls (its arguments and
description, which agents offer it, whether it asks the user's yes first) is declared beside its
function in :mod:`..tools.device_tools`, which names its method here.

This module is the API's: it imports no agent framework, so ``serve`` publishes the protocol and
checks the phone's answers without loading the worker's code. The handlers
(:mod:`..deferred.handlers`), the published protocol (``python -m truloop_assistant.deferred.publish``),
the evaluation's phone, the /dev page and the offline model read :data:`DEVICE_METHODS`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from pydantic import BaseModel

from ..i18n import Text
from .methods import (
    ApprovalResult,
    CalendarEventsResult,
    CalendarParams,
    ConfirmParams,
    PermissionParams,
    PermissionStatusResult,
)
from .versions import BASELINE, PROTOCOL_VERSIONS

RESOLVED_ARGS = "args"
"""The key of a deferred call's metadata holding the arguments as its tool resolved them (a plain date
made the day's first and last moment in the user's zone): :meth:`DeviceMethod.params_of` reads them
in place of the model's."""

Answerer = Literal["phone", "person"]
"""Who answers a device call: the phone by itself (a calendar read) or the person (a dialog)."""


@dataclass(frozen=True)
class DeviceMethod:
    """One built-in device tool's wire facts."""

    tool: str
    """The name of the tool the model calls (:mod:`..tools.device_tools` defines it)."""
    method: str
    """The JSON-RPC method the call is sent as."""
    since: str
    """The protocol version it appeared in (one of :data:`~.versions.PROTOCOL_VERSIONS`): it goes only
    to apps that speak that version or a later one, or that list it among their ``builtin``."""
    params_model: type[BaseModel]
    """The ``params`` the device is sent (their JSON Schema is published)."""
    result_model: type[BaseModel]
    """The ``result`` the device must answer with (its JSON Schema is published)."""
    params: Mapping[str, str]
    """Argument name -> ``params`` field; arguments not named here are not sent
    (``notification_message`` never is)."""
    answered_by: Answerer
    """``person``: the request waits for someone to decide; ``phone``: the app answers it at once."""
    example: Mapping[str, Any]
    """A ``result`` a phone may answer with: the evaluation's phone answers it, the docs show it."""
    failure: Text
    """What could not be done when the call fails, in the user's words (the offline model says it)."""
    params_note: str = ""
    """What the method table of docs/protocol.md says after the ``params`` fields (which it names
    from :attr:`params_model`), e.g. their format."""
    result_note: str = ""
    """What the same table says after the ``result``'s shape (drawn from :attr:`result_model`)."""
    model_omits: frozenset[str] = field(default_factory=frozenset)
    """Result fields the model is not shown (they mean something only to the server's own dialogs)."""

    @property
    def name(self) -> str:
        """The tool's name (as :attr:`tool`)."""
        return self.tool

    def params_of(self, args: Mapping[str, Any], metadata: Mapping[str, Any] | None = None) -> dict[str, Any]:
        """The JSON-RPC ``params`` of a call with ``args`` (checked with the params model), the tool's
        resolved arguments (``metadata`` of its deferral, :data:`RESOLVED_ARGS`) taking their place."""
        resolved = (metadata or {}).get(RESOLVED_ARGS)
        if isinstance(resolved, Mapping):
            args = {**args, **resolved}
        mapped = {wire: args.get(argument) for argument, wire in self.params.items()}
        return self.params_model.model_validate(mapped).model_dump(exclude_none=True)


SAMPLE_EVENT = {
    "id": "sample-20261124-1",
    "title": "팀 미팅",
    "start": {"dateTime": "2026-11-24T10:00:00+09:00"},
    "end": {"dateTime": "2026-11-24T11:00:00+09:00"},
}

_DECLARED = (
    DeviceMethod(
        tool="get_calendar_events",
        method="calendar.getEvents",
        since=BASELINE,
        params_model=CalendarParams,
        result_model=CalendarEventsResult,
        params={"start_date": "startDate", "end_date": "endDate"},
        answered_by="phone",
        example={"events": [SAMPLE_EVENT]},
        failure=Text(ko="캘린더를 확인하지 못했어요", en="I couldn't check your calendar"),
        params_note=": ISO 8601 with offset",
    ),
    DeviceMethod(
        tool="confirm_interaction",
        method="interaction.confirm",
        since=BASELINE,
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
        answered_by="person",
        example={"confirmed": True},
        failure=Text(ko="확인을 받지 못했어요", en="I couldn't ask you to confirm"),
        result_note=" (see below)",
    ),
    DeviceMethod(
        tool="get_permission_status",
        method="permissions.getStatus",
        since=BASELINE,
        params_model=PermissionParams,
        result_model=PermissionStatusResult,
        params={"permission": "permission"},
        answered_by="phone",
        example={"status": "granted", "canPromptAgain": False},
        failure=Text(ko="권한을 확인하지 못했어요", en="I couldn't check the permission"),
        params_note=" (`calendar.read`, `calendar.write`, `contacts.read`, `location`, `notifications`, "
        "`camera`, `photos`, `microphone`; see below)",
    ),
)

DEVICE_METHODS: dict[str, DeviceMethod] = {declared.tool: declared for declared in _DECLARED}
"""Every built-in device method by its tool's name, in the order they are declared."""
if len({declared.method for declared in _DECLARED}) != len(DEVICE_METHODS) or len(DEVICE_METHODS) != len(
    _DECLARED
):
    raise ValueError("a built-in device tool or method is declared twice")
if unpublished := [d.method for d in _DECLARED if d.since not in PROTOCOL_VERSIONS]:
    raise ValueError(f"declared since a version not in PROTOCOL_VERSIONS: {', '.join(unpublished)}")


def device_method_for(method: str) -> DeviceMethod | None:
    """The built-in device method ``method``, or None (an app-declared tool's method)."""
    return next((declared for declared in DEVICE_METHODS.values() if declared.method == method), None)


def answered_by_person(method: str) -> bool:
    """Whether a request for ``method`` waits for a person (a dialog) rather than the phone alone.

    An app-declared tool's method is the phone's to answer."""
    declared = device_method_for(method)
    return declared is not None and declared.answered_by == "person"

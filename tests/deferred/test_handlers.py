"""How a device's JSON-RPC error reads to the model: message and code first, then what it means."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic_ai.messages import ToolCallPart

from truloop_assistant.deferred.approvals import CONFIRM_METHOD
from truloop_assistant.deferred.handlers import HANDLERS, error_to_failure
from truloop_assistant.protocol.device_methods import answered_by_person, device_method_for
from truloop_assistant.protocol.jsonrpc import JsonRpcError


@pytest.mark.parametrize(
    ("error", "text"),
    [
        (
            {"code": -32010, "message": "PermissionRequired",
             "data": {"requiredPermission": "calendar.read", "canPromptAgain": False}},
            "PermissionRequired (-32010): the app needs an OS permission the user has not granted; "
            "required permission: calendar.read; can prompt again: no",
        ),
        ({"code": -32002, "message": "UserCanceled"}, "UserCanceled (-32002): the user canceled"),
        ({"code": 7, "message": "Busy", "data": "try later"}, "Busy (7): data: try later"),
        ({"code": -32099, "message": "Weird"}, "Weird (-32099)"),
    ],
)  # fmt: skip
def test_error_text_starts_with_message_and_code(error: dict[str, Any], text: str) -> None:
    assert error_to_failure(JsonRpcError.model_validate(error)).message == text


def test_params_never_carry_the_notification_message() -> None:
    call = ToolCallPart(
        "get_calendar_events",
        {"notification_message": "확인 중…", "start_date": "2026-11-23T00:00:00+09:00",
         "end_date": "2026-11-29T23:59:59+09:00"},
    )  # fmt: skip
    assert HANDLERS["get_calendar_events"].create_params(call) == {
        "startDate": "2026-11-23T00:00:00+09:00",
        "endDate": "2026-11-29T23:59:59+09:00",
    }
    confirm = ToolCallPart("confirm_interaction", {"notification_message": "…", "title": "t", "message": "m"})
    assert HANDLERS["confirm_interaction"].create_params(confirm) == {"title": "t", "message": "m"}


def test_the_gate_asks_with_the_method_of_the_declared_dialog_tool_which_a_person_answers() -> None:
    dialog = device_method_for(CONFIRM_METHOD)
    assert dialog is not None and dialog.name == "confirm_interaction" and dialog.answered_by == "person"
    assert answered_by_person(CONFIRM_METHOD)
    assert not answered_by_person("calendar.getEvents") and not answered_by_person("location.getCurrent")


def test_an_optional_argument_left_empty_is_not_sent_to_the_phone() -> None:
    confirm = ToolCallPart(
        "confirm_interaction",
        {"notification_message": "", "title": "t", "message": "m", "confirm_label": "", "cancel_label": " ",
         "permission": None},
    )  # fmt: skip
    assert HANDLERS["confirm_interaction"].create_params(confirm) == {"title": "t", "message": "m"}
    asked = ToolCallPart("confirm_interaction", {"title": "t", "message": "m", "permission": "location"})
    assert HANDLERS["confirm_interaction"].create_params(asked)["permission"] == "location"

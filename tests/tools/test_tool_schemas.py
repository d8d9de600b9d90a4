"""The tool surface the model sees: exact names, honest required arguments, and every tool's
schema as it is sent pinned in ``tool_schemas.json`` so a change to it shows up in review as a diff."""

from __future__ import annotations

import inspect
import json
import os
from pathlib import Path
from typing import Any

import pytest
from pydantic.fields import FieldInfo
from pydantic_ai import FunctionToolset
from pydantic_core import PydanticUndefined

from truloop_assistant.deferred.handlers import HANDLERS
from truloop_assistant.tools import all_toolsets, guest_toolset, invitee_toolset, notification_safe_toolsets
from truloop_assistant.tools.datetime_tools import datetime_toolset
from truloop_assistant.tools.device_tools import device_toolset
from truloop_assistant.tools.event_tools import event_server_toolset
from truloop_assistant.tools.knowledge_tools import knowledge_toolset
from truloop_assistant.tools.marks import is_destructive
from truloop_assistant.tools.memory_tools import memory_toolset
from truloop_assistant.tools.places_tools import places_toolset
from truloop_assistant.tools.relay_tools import relay_toolset
from truloop_assistant.tools.server_tools import as_sent
from truloop_assistant.tools.user_tools import user_toolset

FUNCTION_TOOLSETS: list[FunctionToolset] = [
    datetime_toolset, user_toolset, knowledge_toolset, memory_toolset, places_toolset, relay_toolset,
    event_server_toolset, device_toolset("member"), guest_toolset,
    invitee_toolset,
]  # fmt: skip


def names(toolsets: list) -> set[str]:
    found: set[str] = set()
    for toolset in toolsets:
        toolset.apply(lambda t: found.update(t.tools) if isinstance(t, FunctionToolset) else None)
    return found


def test_member_tools_are_exactly_the_designed_ones() -> None:
    assert names(all_toolsets) == {
        "get_day_of_week", "get_current_datetime",
        "get_user_profile", "search_users", "get_user_eids",
        "search_knowledge_base",
        "search_memories", "save_memory", "forget_memory",
        "search_places",
        "send_message_to_user",
        "get_events", "create_event", "update_event", "invite_to_event", "cancel_event",
        "get_event_details", "list_invited_events", "update_availability",
        "get_calendar_events",
        "confirm_interaction", "get_permission_status",
    }  # fmt: skip
    assert names([guest_toolset]) == {"update_guest_availability", "get_event_details", "list_invited_events"}


def test_notification_safe_set_excludes_events_users_relay_and_memories() -> None:
    safe = names(notification_safe_toolsets)
    assert not safe & (
        names([event_server_toolset, user_toolset, relay_toolset, memory_toolset]) | {"get_calendar_events"}
    )
    assert {"search_knowledge_base", "search_places", "get_current_datetime"} <= safe


def test_every_deferred_tool_has_a_handler() -> None:
    deferred = names([device_toolset("member"), device_toolset("notification"), device_toolset("guest")])
    assert deferred == set(HANDLERS)


def test_tools_that_change_things_are_marked_destructive_where_they_are_defined() -> None:
    marked = {
        name
        for toolset in FUNCTION_TOOLSETS
        for name, tool in toolset.tools.items()
        if is_destructive(tool.tool_def)
    }
    assert marked == {
        "create_event",
        "update_event",
        "invite_to_event",
        "cancel_event",
        "send_message_to_user",
        "forget_memory",
    }


def test_required_arguments_are_required_in_the_schema() -> None:
    """A parameter declared ``x: str = Field(description=...)`` silently becomes optional: none may."""
    for toolset in FUNCTION_TOOLSETS:
        for name, tool in toolset.tools.items():
            required = set(tool.tool_def.parameters_json_schema.get("required", []))
            for param in list(inspect.signature(tool.function).parameters.values())[1:]:
                default = param.default
                if isinstance(default, FieldInfo):
                    assert default.default is not PydanticUndefined or default.default_factory, (
                        f"{name}.{param.name} is declared required but has a Field default: use Annotated"
                    )
                elif default is inspect.Parameter.empty:
                    assert param.name in required, f"{name}.{param.name} should be required"


SNAPSHOT = Path(__file__).with_name("tool_schemas.json")
UPDATE = "TRULOOP_UPDATE_SNAPSHOTS"


def tool_schemas() -> dict[str, Any]:
    """Name -> what the model is shown: the description and the parameters' JSON schema."""
    schemas: dict[str, Any] = {}
    for toolset in FUNCTION_TOOLSETS:
        for name, tool in toolset.tools.items():
            sent = as_sent(tool.tool_def)
            schema = {"description": sent.description, "parameters": sent.parameters_json_schema}
            # A tool shared by two toolsets (an invited person's, for guests and members) is one tool.
            assert schemas.get(name, schema) == schema, f"two different tools are named {name}"
            schemas[name] = schema
    return schemas


def as_json(value: Any) -> str:
    return json.dumps(value, indent=2, sort_keys=True, ensure_ascii=False) + "\n"


def test_tool_schemas_match_the_snapshot() -> None:
    current = tool_schemas()
    if os.environ.get(UPDATE) == "1":
        SNAPSHOT.write_text(as_json(current), encoding="utf-8")
    where = SNAPSHOT.relative_to(Path(__file__).parents[2])
    how = (
        f"if the change is intended, rewrite {where} with "
        f"`{UPDATE}=1 pytest tests/tools/test_tool_schemas.py` and review its diff"
    )
    if not SNAPSHOT.exists():
        pytest.fail(f"{where} is missing; {how}")
    pinned = json.loads(SNAPSHOT.read_text(encoding="utf-8"))
    changed = sorted(n for n in current.keys() | pinned.keys() if current.get(n) != pinned.get(n))
    if changed:
        pytest.fail(f"the schema the model sees changed for {', '.join(changed)}; {how}")
    assert SNAPSHOT.read_text(encoding="utf-8") == as_json(pinned), f"{where} is not formatted; {how}"


def test_the_schema_says_what_an_argument_is_in_few_characters() -> None:
    """Spot checks of what the model is told up front (the snapshot pins the rest)."""
    schemas = tool_schemas()

    def param(tool: str, name: str) -> dict[str, Any]:
        return schemas[tool]["parameters"]["properties"][name]

    # An optional argument is one that is not required: no null alternative, no null default, and
    # no closed objects outside strict mode; sizes are checked when a call comes back.
    sent = json.dumps(schemas)
    for noise in ('"type": "null"', '"default": null', "additionalProperties", "maxLength", "maxItems"):
        assert noise not in sent, noise
    assert param("get_day_of_week", "date") == {"format": "date", "type": "string"}
    assert "required" not in schemas["get_events"]["parameters"]
    # A limit's bounds and default, an event id's pattern: checked when the call comes back.
    for noise in ('"minimum"', '"maximum"', '"default"', '"pattern"'):
        assert noise not in sent, noise
    assert param("search_users", "limit") == {"type": "integer"}
    assert param("invite_to_event", "event_id") == {"type": "string"}
    for tool, name in (("create_event", "start_time"), ("update_event", "end_time")):
        assert param(tool, name)["format"] == "date-time", (tool, name)
    # A range takes a date (a whole day) or a date-time; its tool says so, once.
    for tool in ("get_events", "get_calendar_events"):
        assert param(tool, "start_date") == param(tool, "end_date") == {"type": "string"}
        assert "overlapping" in schemas[tool]["description"]
    assert "YYYY-MM-DD for whole days" in schemas["get_calendar_events"]["description"]
    assert "as get_calendar_events" in schemas["get_events"]["description"]
    for tool in ("update_guest_availability", "update_availability"):
        dates = schemas[tool]["parameters"]["properties"]
        assert {"available_dates", "add_dates", "remove_dates"} <= set(dates), tool
        assert dates["add_dates"]["items"] == {"format": "date", "type": "string"}
    for tool in ("get_calendar_events", "confirm_interaction", "get_permission_status"):
        assert param(tool, "notification_message")["description"], tool
    # update_event adds and removes people, and names the fields it removes
    assert schemas["update_event"]["parameters"]["required"] == ["event_id"]
    assert list(schemas["update_event"]["parameters"]["properties"]) == [
        "event_id", "title", "start_time", "end_time", "location", "description", "availability_deadline",
        "add_invitee_user_ids", "remove_invitee_user_ids", "add_guest_user_ids", "remove_guest_user_ids",
        "add_guest_phone_numbers", "remove_guest_phone_numbers", "clear",
    ]  # fmt: skip
    assert param("update_event", "clear")["items"]["enum"] == [
        "location",
        "description",
        "availability_deadline",
    ]
    # the OS permissions the device tools take
    permissions = ["calendar.read", "calendar.write", "contacts.read", "location", "notifications", "camera"]
    permissions += ["photos", "microphone"]
    assert param("confirm_interaction", "permission")["enum"] == permissions
    assert param("get_permission_status", "permission")["enum"] == permissions
    assert schemas["cancel_event"]["parameters"]["required"] == ["event_id"]


def test_the_model_is_shown_less_than_what_is_checked() -> None:
    """The sizes left out of what is sent are still the arguments' limits."""
    title = event_server_toolset.tools["create_event"].function_schema.json_schema["properties"]["title"]
    assert (title["minLength"], title["maxLength"]) == (1, 200)
    user_ids = user_toolset.tools["get_user_eids"].function_schema.json_schema["properties"]["user_ids"]
    assert (user_ids["minItems"], user_ids["maxItems"]) == (1, 100)

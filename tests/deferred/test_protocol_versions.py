"""Within a protocol version the published document only grows: the committed document of each version
holds what its apps were promised, and a change they could trip on fails until it goes in a new version."""

from __future__ import annotations

import copy
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from truloop_assistant.deferred import publish
from truloop_assistant.deferred.method_schemas import protocol_document
from truloop_assistant.deferred.protocol_changes import breaking_changes
from truloop_assistant.protocol import versions
from truloop_assistant.protocol.device_methods import DEVICE_METHODS

ROOT = Path(__file__).resolve().parents[2]
FIX = "run python -m truloop_assistant.deferred.publish and commit what it writes"


def committed(version: str) -> dict[str, Any]:
    path = ROOT / publish.version_file(version)
    assert path.exists(), f"{path} is missing: {FIX}"
    return dict(json.loads(path.read_text(encoding="utf-8")))


def test_every_version_is_kept_and_the_current_one_is_served_as_it_was_promised() -> None:
    assert versions.PROTOCOL_VERSIONS == tuple(sorted(set(versions.PROTOCOL_VERSIONS)))
    kept = sorted(path.stem for path in (ROOT / publish.VERSIONS).glob("*.json"))
    assert kept == list(versions.PROTOCOL_VERSIONS), FIX
    promised = committed(versions.PROTOCOL_VERSION)
    assert promised["protocol_version"] == versions.PROTOCOL_VERSION
    changes = breaking_changes(promised, protocol_document())
    assert changes == [], (
        f"the device protocol changed in ways apps of {versions.PROTOCOL_VERSION} could trip on:\n  "
        + "\n  ".join(changes)
        + "\nundo them, or add a version to PROTOCOL_VERSIONS (protocol/versions.py) and declare new "
        "methods since it"
    )
    assert all(m.since in versions.PROTOCOL_VERSIONS for m in DEVICE_METHODS.values())


Change = Callable[[dict[str, Any]], object]

CALENDAR = ("methods", "calendar.getEvents")
CONFIRM = ("methods", "interaction.confirm")
PERMISSION = ("methods", "permissions.getStatus")
EVENT = (*CALENDAR, "result", "$defs", "CalendarEvent", "properties")
EVENTS = (*CALENDAR, "result", "properties", "events")
STATUS = (*PERMISSION, "result", "properties", "status")


def at(document: dict[str, Any], *path: str) -> Any:
    """The part of ``document`` at ``path``."""
    for key in path:
        document = document[key]
    return document


def _rename(document: dict[str, Any]) -> None:
    params = at(document, *CALENDAR, "params")
    params["properties"]["from"] = params["properties"].pop("startDate")
    params["required"] = ["from", "endDate"]


BREAKING: list[tuple[str, Change, str]] = [
    (
        "a method removed",
        lambda d: d["methods"].pop("permissions.getStatus"),
        "permissions.getStatus: removed",
    ),
    (
        "a method added to the version",
        lambda d: d["methods"].update({"battery.getLevel": at(d, *PERMISSION)}),
        "battery.getLevel: new in version 2026-12-01",
    ),
    ("a method's tool renamed", lambda d: at(d, *CALENDAR).update(tool="read_calendar"), "getEvents.tool"),
    ("a nested result field removed", lambda d: at(d, *EVENT).pop("title"), "result.events[].title: removed"),
    ("a params field renamed", _rename, "params.startDate: removed (or renamed)"),
    (
        "a type changed",
        lambda d: at(d, *PERMISSION, "result", "properties", "canPromptAgain").update(type="string"),
        "canPromptAgain: the type boolean became string",
    ),
    (
        "a result field newly required",
        lambda d: at(d, *CONFIRM, "result", "required").append("reason"),
        "result.reason: newly required",
    ),
    (
        "a params field no longer always sent",
        lambda d: at(d, *CONFIRM, "params", "required").remove("message"),
        "params.message: no longer always sent",
    ),
    (
        "an answer's value refused",
        lambda d: at(d, *STATUS, "enum").remove("restricted"),
        "no longer takes 'restricted'",
    ),
    ("an answer's list shortened", lambda d: at(d, *EVENTS).update(maxItems=100), "maxItems 1000 became 100"),
    (
        "an answer's unknown fields refused",
        lambda d: at(d, *CALENDAR, "result").update(additionalProperties=False),
        "no longer takes fields it does not name",
    ),
    ("an error removed", lambda d: d["errors"].pop("-32002"), "errors.-32002: removed"),
    (
        "an error's data field removed",
        lambda d: at(d, "errors", "-32010", "data", "properties").pop("requiredPermission"),
        "errors.-32010.data.requiredPermission: removed",
    ),
    ("the custom type changed", lambda d: d.update(custom_type="rpc"), "custom_type"),
]


@pytest.mark.parametrize(("case", "change", "said"), BREAKING, ids=[c[0] for c in BREAKING])
def test_a_change_an_app_could_trip_on_is_named(case: str, change: Change, said: str) -> None:
    promised = committed(versions.PROTOCOL_VERSION)
    current = copy.deepcopy(promised)
    change(current)
    found = breaking_changes(promised, current)
    assert any(said in line for line in found), (case, found)


ADDITIVE: list[tuple[str, Change]] = [
    ("an optional result field", lambda d: at(d, *EVENT).update(location={"type": "string"})),
    ("an optional params field", lambda d: at(d, *CALENDAR, "params", "properties").update(calendarId={})),
    ("a description", lambda d: at(d, *PERMISSION, "params").update(description="which permission")),
    ("an error code", lambda d: d["errors"].update({"-32003": {"message": "Busy", "meaning": "try later"}})),
    ("a new example", lambda d: at(d, *CALENDAR).update(example={"events": []})),
    ("a value an app may answer with", lambda d: at(d, *STATUS, "enum").append("limited")),
    ("a longer list an app may answer with", lambda d: at(d, *EVENTS).update(maxItems=2000)),
]


@pytest.mark.parametrize(("case", "change"), ADDITIVE, ids=[c[0] for c in ADDITIVE])
def test_an_addition_passes(case: str, change: Change) -> None:
    promised = committed(versions.PROTOCOL_VERSION)
    current = copy.deepcopy(promised)
    change(current)
    assert current != promised
    assert breaking_changes(promised, current) == [], case

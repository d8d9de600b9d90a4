"""The published protocol (client snapshot and types, docs table, the version's document) follows the
device tools' declarations."""

from __future__ import annotations

import dataclasses
import json
import shutil
from pathlib import Path

import pytest
from pydantic import BaseModel

from truloop_assistant.deferred import publish
from truloop_assistant.i18n import Text
from truloop_assistant.protocol import versions
from truloop_assistant.protocol.device_methods import DEVICE_METHODS, DeviceMethod
from truloop_assistant.protocol.methods import CalendarEventsResult

ROOT = Path(__file__).resolve().parents[2]
LATER = "2027-06-01"


def test_the_committed_generated_files_follow_the_declarations() -> None:
    assert publish.publish(ROOT, check=True) == [], "run: python -m truloop_assistant.deferred.publish"


@pytest.fixture
def copy(tmp_path: Path) -> Path:
    for path in (publish.SNAPSHOT, publish.DOCS, publish.version_file()):
        (tmp_path / path).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(ROOT / path, tmp_path / path)
    return tmp_path


class BatteryParams(BaseModel):
    pass


class BatteryResult(BaseModel):
    level: int
    charging: bool | None = None


def battery(since: str) -> DeviceMethod:
    return DeviceMethod(
        tool="get_battery_level",
        method="battery.getLevel",
        since=since,
        params_model=BatteryParams,
        result_model=BatteryResult,
        params={},
        answered_by="phone",
        example={"level": 80},
        failure=Text(ko="배터리를 확인하지 못했어요", en="I couldn't check the battery"),
        result_note=" (percent)",
    )


def test_a_new_method_is_published_in_a_new_version(copy: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(DEVICE_METHODS, "get_battery_level", battery(LATER))
    monkeypatch.setattr(versions, "PROTOCOL_VERSION", LATER)
    first = (copy / publish.version_file(versions.BASELINE)).read_text()
    new = str(publish.version_file(LATER))
    assert publish.publish(copy, check=True) == [str(publish.SNAPSHOT), str(publish.DOCS), new]
    assert publish.publish(copy) == []
    assert publish.publish(copy, check=True) == []
    served = json.loads((copy / publish.SNAPSHOT).read_text())
    assert served["protocol_version"] == LATER
    assert served["methods"]["battery.getLevel"]["since"] == LATER
    assert json.loads((copy / new).read_text()) == served
    assert (copy / publish.version_file(versions.BASELINE)).read_text() == first  # kept as it was
    # The row names the models' fields: none sent, a number answered (and what is optional).
    row = '| `battery.getLevel` | 2027-06-01 | none | `{"level": number}`, optional `charging` (percent) |'
    assert row + " the app, at once |" in (copy / publish.DOCS).read_text()


def test_a_new_method_in_the_published_version_is_refused(
    copy: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    kept = (copy / publish.version_file()).read_text()
    monkeypatch.setitem(DEVICE_METHODS, "get_battery_level", battery(versions.PROTOCOL_VERSION))
    [refused] = publish.publish(copy)
    assert refused.startswith(
        f"refused by {publish.version_file()}: methods.battery.getLevel: new in version"
    )
    assert "make it in a version after 2026-12-01" in refused
    assert (copy / publish.version_file()).read_text() == kept
    assert publish.publish(copy, check=True) == [refused]


class LongerEvents(CalendarEventsResult):
    nextPageToken: str | None = None


class Events(BaseModel):
    items: list[dict[str, str]]


def test_a_version_takes_an_optional_field_and_keeps_it(copy: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    calendar = DEVICE_METHODS["get_calendar_events"]
    monkeypatch.setitem(
        DEVICE_METHODS, calendar.tool, dataclasses.replace(calendar, result_model=LongerEvents)
    )
    assert publish.publish(copy) == []
    kept = json.loads((copy / publish.version_file()).read_text())
    assert "nextPageToken" in kept["methods"]["calendar.getEvents"]["result"]["properties"]
    assert "optional `nextPageToken`" in (copy / publish.DOCS).read_text()

    # Once published, the field stays within the version; so does every field the app answers with.
    for model in (CalendarEventsResult, Events):
        monkeypatch.setitem(DEVICE_METHODS, calendar.tool, dataclasses.replace(calendar, result_model=model))
        refused = publish.publish(copy)
        assert refused and all(line.startswith("refused by") for line in refused), refused
        assert any("removed (or renamed)" in line for line in refused)
        assert json.loads((copy / publish.version_file()).read_text()) == kept


def test_the_command_fails_on_a_stale_file(copy: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (copy / publish.SNAPSHOT).write_text("{}\n")
    assert publish.main([str(copy), "--check"]) == 1
    assert str(publish.SNAPSHOT) in capsys.readouterr().err
    assert publish.main([str(copy)]) == 0
    assert publish.main([str(copy), "--check"]) == 0

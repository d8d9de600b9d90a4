"""The published protocol (client snapshot and types, docs table) follows the device tools' declarations."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from truloop_assistant.deferred import publish
from truloop_assistant.i18n import Text
from truloop_assistant.protocol.device_methods import DEVICE_METHODS, DeviceMethod
from truloop_assistant.protocol.methods import PermissionParams, PermissionStatusResult

ROOT = Path(__file__).resolve().parents[2]


def test_the_committed_generated_files_follow_the_declarations() -> None:
    assert publish.publish(ROOT, check=True) == [], "run: python -m truloop_assistant.deferred.publish"


@pytest.fixture
def copy(tmp_path: Path) -> Path:
    for path in (publish.SNAPSHOT, publish.DOCS):
        (tmp_path / path).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(ROOT / path, tmp_path / path)
    return tmp_path


def test_a_new_declaration_is_published_and_a_stale_file_is_named(
    copy: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    tool = DeviceMethod(
        tool="example_tool",
        method="battery.getLevel",
        params_model=PermissionParams,
        result_model=PermissionStatusResult,
        params={},
        answered_by="phone",
        example={"status": "granted", "canPromptAgain": False},
        failure=Text(ko="배터리를 확인하지 못했어요", en="I couldn't check the battery"),
        params_summary="none",
        result_summary="`{level | percent}`",
    )
    monkeypatch.setitem(DEVICE_METHODS, tool.name, tool)
    assert publish.publish(copy, check=True) == [str(publish.SNAPSHOT), str(publish.DOCS)]
    assert publish.publish(copy) == []
    assert publish.publish(copy, check=True) == []
    served = json.loads((copy / publish.SNAPSHOT).read_text())["methods"]["battery.getLevel"]
    assert served["tool"] == "example_tool" and served["answered_by"] == "phone"
    assert (
        "| `battery.getLevel` | none | `{level \\| percent}` | the app, at once |"
        in (copy / publish.DOCS).read_text()
    )


def test_the_command_fails_on_a_stale_file(copy: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (copy / publish.SNAPSHOT).write_text("{}\n")
    assert publish.main([str(copy), "--check"]) == 1
    assert str(publish.SNAPSHOT) in capsys.readouterr().err
    assert publish.main([str(copy)]) == 0
    assert publish.main([str(copy), "--check"]) == 0

"""``truloop-assistant eval``: the tool-selection evaluation, its cases file and its report."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from truloop_assistant.agent.agents import build_member_agent
from truloop_assistant.agent.models import resolve_model
from truloop_assistant.cli import main
from truloop_assistant.commands.evaluation.cases import (
    DEFAULT_CASES,
    Calls,
    CaseInfo,
    CasesFileError,
    ToolCall,
    load_cases,
    member_tools,
)
from truloop_assistant.commands.evaluation.harness import Case, Dataset, Evaluator, Verdict
from truloop_assistant.commands.evaluation.scoring import (
    KeyArguments,
    Outcome,
    Score,
    ToolSelection,
    outcomes,
    render,
    scores,
    value_matches,
)

SCORE_LINE = re.compile(r"^(?P<group>\S+)\s+(?P<passed>\d+)/(?P<total>\d+)\s+(?P<percent>\d+) %$")
DEVICE_TOOLS = {"get_calendar_events", "confirm_interaction", "get_permission_status"}


@pytest.fixture(scope="module")
def tools() -> dict[str, set[str]]:
    from zoneinfo import ZoneInfo

    agent = build_member_agent(resolve_model("offline", timezone=ZoneInfo("Asia/Seoul")), tool_timeout_s=5)
    return member_tools(agent)


def score_lines(out: str) -> dict[str, tuple[int, int, int]]:
    found = (SCORE_LINE.match(line) for line in out.splitlines())
    return {m["group"]: (int(m["passed"]), int(m["total"]), int(m["percent"])) for m in found if m}


# -- the bundled cases


def test_the_bundled_cases_cover_every_member_tool_in_both_languages(tools: dict[str, set[str]]) -> None:
    dataset = load_cases(DEFAULT_CASES, tools)
    assert len(dataset.cases) >= 60
    expected = {call.tool for case in dataset.cases for call in case.expected_output or []}
    assert expected == set(tools) and DEVICE_TOOLS <= expected
    groups = {case.metadata.group for case in dataset.cases if case.metadata}
    assert {"multi", "none"} <= groups
    korean = [c for c in dataset.cases if re.search("[가-힣]", c.inputs)]
    assert 0.3 < len(korean) / len(dataset.cases) < 0.7
    assert any(len(case.expected_output or []) > 1 for case in dataset.cases)
    assert any(not case.expected_output for case in dataset.cases)


def test_the_offline_model_end_to_end(
    tools: dict[str, set[str]], monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.delenv("TRULOOP_MODEL", raising=False)
    assert main(["eval"]) == 0
    out = capsys.readouterr().out
    cases = len(load_cases(DEFAULT_CASES, tools).cases)
    assert out.splitlines()[0] == f"model offline: {cases} cases from {DEFAULT_CASES}"
    table = score_lines(out)
    groups = ["time", "people", "knowledge", "memory", "places", "relay", "events", "device", "multi", "none"]
    assert list(table) == [*groups, "overall"]
    passed, total, percent = table["overall"]
    assert total == cases and 0 < passed < total and percent == Score("overall", passed, total).percent
    assert passed == sum(table[g][0] for g in groups) and total == sum(table[g][1] for g in groups)
    assert out.count("\n  miss  [") == total - passed


# -- a cases file of one's own


def test_a_custom_cases_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "mine.json"
    cases = [
        {
            "group": "clock",
            "request": "뉴욕은 지금 몇 시야?",
            "expect": {"get_current_datetime": {"timezone": "New_York"}},
        },
        {"group": "relay", "request": "Hello!", "expect": {"send_message_to_user": {}}},
    ]
    path.write_text(json.dumps(cases, ensure_ascii=False), encoding="utf-8")
    assert main(["eval", "--model", "offline", "--cases", str(path)]) == 0
    out = capsys.readouterr().out
    assert out.splitlines()[0] == f"model offline: 2 cases from {path}"
    assert '  miss  [relay] "Hello!": expected send_message_to_user, called no tool' in out
    assert out.splitlines()[-3:] == ["clock    1/1  100 %", "relay    0/1    0 %", "overall  1/2   50 %"]


@pytest.mark.parametrize(
    ("content", "problem"),
    [
        ("group: time\n", "expected a list of cases, got dict"),
        ("[]\n", "the file has no cases"),
        ("- group: time\n  request: [unclosed\n", "not valid YAML (line 3: "),
        ("- group: time\n  request: hi\n", 'entry 0 ("hi"): expect: required'),
        ("- {group: time, request: hi, expect: {}}\n- {group: time, request: hi, expect: {get_time: {}}}\n",
         "entry 1 (\"hi\"): expect: unknown tool 'get_time'; the member agent's tools are "),
        ("- {group: time, request: hi, expect: {get_current_datetime: {zone: UTC}}}\n",
         "get_current_datetime has no argument 'zone' (its arguments: timezone)"),
        ("- {group: time, request: hi, expect: {get_current_datetime: {timezone: {a: 1}}}}\n",
         "expect.get_current_datetime.timezone: expected a text, number, true/false, null or a list"),
        ("- {group: '', request: hi, expect: {}}\n", "group: a non-empty text is required"),
        ("- {group: time, request: hi, expect: {}, extra: 1}\n", "unknown key 'extra'"),
        ("- just a request\n", "entry 0: expected a mapping with group, request, expect, got str"),
    ],
)  # fmt: skip
def test_a_bad_cases_file_exits_2_naming_the_file_and_entry(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], content: str, problem: str
) -> None:
    path = tmp_path / "cases.yaml"
    path.write_text(content, encoding="utf-8")
    assert main(["eval", "--model", "offline", "--cases", str(path)]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err.startswith(f"truloop-assistant eval: {path}: ")
    assert problem in captured.err and captured.err.count("\n") == 1


def test_a_missing_cases_file_or_unknown_model_exits_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    missing = tmp_path / "nope.yaml"
    assert main(["eval", "--model", "offline", "--cases", str(missing)]) == 2
    assert capsys.readouterr().err == f"truloop-assistant eval: {missing}: no such file\n"
    assert main(["eval", "--model", "no-such-provider:model"]) == 2
    assert capsys.readouterr().err.startswith("truloop-assistant eval: model 'no-such-provider:model': ")


def test_unquoted_dates_stay_text(tmp_path: Path, tools: dict[str, set[str]]) -> None:
    path = tmp_path / "cases.yaml"
    path.write_text("- {group: t, request: hi, expect: {get_day_of_week: {date: 2026-12-25}}}\n")
    [case] = load_cases(path, tools).cases
    assert case.expected_output == [ToolCall("get_day_of_week", {"date": "2026-12-25"})]
    with pytest.raises(CasesFileError):
        load_cases(tmp_path, tools)  # a folder, not a file


# -- scoring


@pytest.mark.parametrize(
    ("expected", "actual", "matches"),
    [
        ("New_York", "America/New_York", True),
        ("new york", "America/New_York", False),
        ("팀 회의", "내일 팀 회의", True),
        ("T15:00", "2026-11-27T15:00:00+09:00", True),
        (["mina"], ["mina", "jeff"], True),
        (["mina", "yuna"], ["mina"], False),
        ("mina", ["jeff", "mina"], True),
        (None, None, True),
        (None, "UTC", False),
        ("UTC", None, False),
        (3, 3, True),
        (3, "3", False),
        (True, 1, False),
        (True, True, True),
    ],
)
def test_key_argument_values(expected: object, actual: object, matches: bool) -> None:
    assert value_matches(expected, actual) is matches


async def test_the_evaluators_score_tools_and_key_arguments() -> None:
    runs: dict[str, Calls] = {
        "right": [ToolCall("get_current_datetime", {}), ToolCall("create_event", {"title": "Team sync"})],
        "wrong tool": [ToolCall("get_calendar_events", {})],
        "wrong argument": [ToolCall("create_event", {"title": "Lunch"})],
        "no tool needed": [],
        "tool not needed": [ToolCall("search_knowledge_base", {"query": "hi"})],
    }
    event = [ToolCall("create_event", {"title": "team"})]
    expected: dict[str, Calls] = {
        "right": event,
        "wrong tool": event,
        "wrong argument": event,
        "no tool needed": [],
        "tool not needed": [],
    }
    dataset = Dataset[str, Calls, CaseInfo](
        name="unit",
        cases=[
            Case(
                name=f"entry {i}",
                inputs=request,
                metadata=CaseInfo("g", i),
                expected_output=expected[request],
            )
            for i, request in enumerate(runs)
        ],
        evaluators=[ToolSelection(), KeyArguments()],
    )

    async def task(request: str) -> Calls:
        return runs[request]

    report = await dataset.evaluate(task)
    results = {o.request: o for o in outcomes(report)}
    assert [o.request for o in outcomes(report)] == list(runs)
    assert {r for r, o in results.items() if o.passed} == {"right", "no tool needed"}
    assert results["wrong tool"].reason == "expected create_event, called get_calendar_events"
    assert (
        results["wrong argument"].reason == 'create_event: expected {"title": "team"}, got {"title": "Lunch"}'
    )
    assert results["tool not needed"].reason == "expected no tool, called search_knowledge_base"


async def test_a_failing_run_or_evaluator_fails_only_its_case() -> None:
    class Picky(Evaluator[Calls]):
        name = "picky"

        def evaluate(self, expected: Calls, output: Calls) -> Verdict:
            if output and output[0].tool == "boom":
                raise KeyError("boom")
            return Verdict(bool(output))

    async def task(request: str) -> Calls:
        if request == "crash":
            raise RuntimeError("the model is down\nTraceback ...")
        return [ToolCall(request, {})] if request else []

    requests = ["crash", "get_current_datetime", "boom", ""]
    dataset = Dataset[str, Calls, CaseInfo](
        name="unit",
        cases=[Case(f"entry {i}", r, CaseInfo("g", i), []) for i, r in enumerate(requests)],
        evaluators=[Picky()],
    )
    report = await dataset.evaluate(task, max_concurrency=2)
    assert [r.case.inputs for r in report.ran] == ["get_current_datetime", "boom", ""]
    assert [(o.passed, o.reason) for o in outcomes(report)] == [
        (False, "the run failed: RuntimeError: the model is down"),
        (True, ""),
        (False, "the picky evaluator failed: KeyError: 'boom'"),
        (False, "picky"),
    ]


def test_accuracy_per_group_and_overall() -> None:
    results = [Outcome("time", "a", True)] * 7 + [Outcome("time", "b", False)]
    results += [Outcome("relay", "c", True)] * 5 + [Outcome("relay", "d", False)] * 3
    results += [Outcome("none", "e", True)]
    table = scores(results)
    assert table == [Score("time", 7, 8), Score("relay", 5, 8), Score("none", 1, 1), Score("overall", 13, 17)]
    assert [s.percent for s in table] == [88, 63, 100, 76]  # halves round up (87.5 -> 88, 62.5 -> 63)
    assert Score("x", 1, 3).percent == 33 and Score("x", 2, 3).percent == 67 and Score("x", 0, 0).percent == 0
    assert render(table) == [
        "time       7/8   88 %",
        "relay      5/8   63 %",
        "none       1/1  100 %",
        "overall  13/17   76 %",
    ]

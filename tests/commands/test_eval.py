"""``truloop-assistant eval``: the tool-selection evaluation, its cases file and its report."""

from __future__ import annotations

import json
import re
from dataclasses import replace
from datetime import UTC, datetime, time, timedelta
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

import pytest
from pydantic_ai import DeferredToolRequests, ToolApproved, ToolDenied, ToolFailed
from pydantic_ai.messages import (
    ModelMessage,
    ModelRequest,
    ModelResponse,
    TextPart,
    ToolCallPart,
    ToolReturnPart,
)
from pydantic_ai.models.function import AgentInfo, FunctionModel

from truloop_assistant.agent import models as models_module
from truloop_assistant.agent.agents import build_member_agent
from truloop_assistant.agent.models import resolve_model
from truloop_assistant.backends.events import RedisEventStore
from truloop_assistant.cli import main
from truloop_assistant.commands.evaluation.case_files import Request
from truloop_assistant.commands.evaluation.cases import (
    DEFAULT_CASES,
    Calls,
    CaseInfo,
    CasesFileError,
    ToolCall,
    Turn,
    load_cases,
    member_tools,
)
from truloop_assistant.commands.evaluation.harness import Case, Dataset, Evaluator, Skipped, Verdict
from truloop_assistant.commands.evaluation.phone import MAX_DAYS, Phone, sample_calendar
from truloop_assistant.commands.evaluation.played_files import NO_TRANSCRIBER
from truloop_assistant.commands.evaluation.running import evaluate
from truloop_assistant.commands.evaluation.scoring import (
    Answered,
    KeyArguments,
    Outcome,
    Score,
    ToolSelection,
    outcomes,
    render,
    scores,
    value_matches,
)
from truloop_assistant.config import load_settings
from truloop_assistant.local.embedded_redis import RedisServer
from truloop_assistant.protocol import device_methods
from truloop_assistant.redis_client import connect

SCORE_LINE = re.compile(r"^(?P<group>\S+)\s+(?P<passed>\d+)/(?P<total>\d+)\s+(?P<percent>\d+) %$")
REQUEST_SIZE = re.compile(
    r"^request size: \d+ tools in [\d,]+ chars \(at most 9,500\), "
    r"instructions [\d,]+ chars \(at most 3,500\), about [\d,]+ tokens$"
)
DEVICE_TOOLS = {"get_calendar_events", "confirm_interaction", "get_permission_status"}


@pytest.fixture(scope="module")
def tools() -> dict[str, set[str]]:
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
    assert {"multi", "steps", "none"} <= groups
    steps = [case for case in dataset.cases if case.metadata.group == "steps"]
    assert len(steps) >= 10 and all(len({c.tool for c in case.expected_output}) > 1 for case in steps)
    korean = [c for c in dataset.cases if re.search("[가-힣]", c.inputs.text)]
    assert 0.3 < len(korean) / len(dataset.cases) < 0.7
    assert any(len(case.expected_output or []) > 1 for case in dataset.cases)
    assert any(not case.expected_output for case in dataset.cases)


def test_the_offline_model_end_to_end(
    tools: dict[str, set[str]], monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.delenv("TRULOOP_MODEL", raising=False)
    monkeypatch.delenv("TRULOOP_TRANSCRIPTION_MODEL", raising=False)
    assert main(["eval"]) == 0
    out = capsys.readouterr().out
    cases = len(load_cases(DEFAULT_CASES, tools).cases)
    assert out.splitlines()[0] == f"model offline: {cases} cases from {DEFAULT_CASES}"
    table = score_lines(out)
    groups = ["time", "people", "knowledge", "memory", "places", "relay", "events", "invitations"]
    groups += ["context", "device", "multi"]
    groups += ["steps", "files", "none"]
    assert list(table) == [*groups, "overall"]
    passed, total, percent = table["overall"]
    # The voice note is not heard without a transcriber: skipped, counted in no figure.
    assert f'  skip  [files] "[voice note design_review.ogg]": {NO_TRANSCRIBER}' in out.splitlines()
    assert total == cases - 1 and 0 < passed < total and percent == Score("overall", passed, total).percent
    assert passed == sum(table[g][0] for g in groups) and total == sum(table[g][1] for g in groups)
    assert out.count("\n  miss  [") == total - passed and out.count("\n  skip  [") == 1


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
    # what each request of the member agent carries besides the conversation
    assert REQUEST_SIZE.match(out.splitlines()[1]), out.splitlines()[1]
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
        "unanswered": [ToolCall("create_event", {"title": "Team sync"})],
    }
    event = [ToolCall("create_event", {"title": "team"})]
    expected: dict[str, Calls] = {
        "right": event,
        "wrong tool": event,
        "wrong argument": event,
        "no tool needed": [],
        "tool not needed": [],
        "unanswered": event,
    }
    dataset = Dataset[Request, Calls, Turn, CaseInfo](
        name="unit",
        cases=[
            Case(
                name=f"entry {i}",
                inputs=Request(request),
                metadata=CaseInfo("g", i),
                expected_output=expected[request],
            )
            for i, request in enumerate(runs)
        ],
        evaluators=[ToolSelection(), KeyArguments(), Answered()],
    )

    async def task(request: Request) -> Turn:
        if request.text == "right":  # every call of the turn counts, whatever step made it
            return Turn(runs[request.text], answer="Done.", steps=3)
        if request.text == "unanswered":
            return Turn(runs[request.text], ended="out of model requests (8 per turn)")
        return Turn(runs[request.text], answer="Done.")

    report = await dataset.evaluate(task)
    results = {o.request: o for o in outcomes(report)}
    assert [o.request for o in outcomes(report)] == list(runs)
    assert {r for r, o in results.items() if o.passed} == {"right", "no tool needed"}
    assert results["wrong tool"].reason == "expected create_event, called get_calendar_events"
    assert (
        results["wrong argument"].reason == 'create_event: expected {"title": "team"}, got {"title": "Lunch"}'
    )
    assert results["tool not needed"].reason == "expected no tool, called search_knowledge_base"
    assert results["unanswered"].reason == "no answer: out of model requests (8 per turn)"


async def test_a_failing_run_or_evaluator_fails_only_its_case_and_a_skipped_one_counts_in_none() -> None:
    class Picky(Evaluator[Calls, Turn]):
        name = "picky"

        def evaluate(self, expected: Calls, output: Turn) -> Verdict:
            if output.calls and output.calls[0].tool == "boom":
                raise KeyError("boom")
            return Verdict(bool(output.calls))

    async def task(request: Request) -> Turn:
        if request.text == "crash":
            raise RuntimeError("the model is down\nTraceback ...")
        if request.text == "not here":
            raise Skipped("it cannot be played here")
        return Turn([ToolCall(request.text, {})] if request.text else [], answer="ok")

    requests = ["crash", "get_current_datetime", "boom", "", "not here"]
    dataset = Dataset[Request, Calls, Turn, CaseInfo](
        name="unit",
        cases=[Case(f"entry {i}", Request(r), CaseInfo("g", i), []) for i, r in enumerate(requests)],
        evaluators=[Picky()],
    )
    report = await dataset.evaluate(task, max_concurrency=2)
    assert [r.case.inputs.text for r in report.ran] == ["get_current_datetime", "boom", ""]
    found = outcomes(report)
    assert [(o.passed, o.skipped, o.reason) for o in found] == [
        (False, False, "the run failed: RuntimeError: the model is down"),
        (True, False, ""),
        (False, False, "the picky evaluator failed: KeyError: 'boom'"),
        (False, False, "picky"),
        (False, True, "it cannot be played here"),
    ]
    assert scores(found) == [Score("g", 1, 4), Score("overall", 1, 4)]  # the skipped case is in neither


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


# -- playing the phone

SEOUL = ZoneInfo("Asia/Seoul")


def tomorrow_at(hour: int, minute: int = 0) -> datetime:
    day = datetime.now(SEOUL).date() + timedelta(days=1)
    return datetime.combine(day, time(hour, minute), tzinfo=SEOUL)


def returned(messages: list[ModelMessage]) -> dict[str, Any]:
    """Each tool's latest result in the run, as the model read it."""
    return {
        part.tool_name: json.loads(part.model_response_str())
        for message in messages
        if isinstance(message, ModelRequest)
        for part in message.parts
        if isinstance(part, ToolReturnPart)
    }


def coffee_with_mina() -> FunctionModel:
    """Reads tomorrow on the phone calendar, books coffee with mina at 17:00 if it is free, then says so."""

    def model(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        results = returned(messages)
        if "create_event" in results:
            return ModelResponse(parts=[TextPart(f"Booked: {json.dumps(results['create_event'])}")])
        if "get_calendar_events" in results:
            events = results["get_calendar_events"]["events"]
            start, end = tomorrow_at(17), tomorrow_at(18)
            busy = [
                e
                for e in events
                if datetime.fromisoformat(e["start"]["dateTime"]) < end
                and datetime.fromisoformat(e["end"]["dateTime"]) > start
            ]
            if busy or not events:
                return ModelResponse(parts=[TextPart("You are busy then.")])
            args = {
                "title": "Coffee with Mina",
                "start_time": start.isoformat(),
                "end_time": end.isoformat(),
                "invitee_user_ids": ["mina"],
            }
            return ModelResponse(parts=[ToolCallPart("create_event", args)])
        args = {
            "notification_message": "Checking your calendar",
            "start_date": tomorrow_at(0).isoformat(),
            "end_date": tomorrow_at(23, 59).isoformat(),
        }
        return ModelResponse(parts=[ToolCallPart("get_calendar_events", args)])

    return FunctionModel(model)


def calendar_forever() -> FunctionModel:
    """Asks the phone's calendar again after every answer, never answering the user."""

    def model(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        args = {
            "notification_message": "Checking",
            "start_date": tomorrow_at(0).isoformat(),
            "end_date": tomorrow_at(23, 59).isoformat(),
        }
        return ModelResponse(parts=[ToolCallPart("get_calendar_events", args)])

    return FunctionModel(model)


def use_model(monkeypatch: pytest.MonkeyPatch, model: FunctionModel) -> None:
    """``eval --model ANY`` runs ``model``."""
    monkeypatch.setattr(models_module, "resolve_model", lambda name, **kwargs: model)


COFFEE = {
    "group": "steps",
    "request": "내일 오후 5시에 비어 있으면 민아랑 커피 약속 잡아줘",
    "expect": {
        "get_calendar_events": {},
        "create_event": {"start_time": "T17:00", "invitee_user_ids": ["mina"]},
    },
}


def cases_file(tmp_path: Path, *cases: dict[str, Any]) -> Path:
    path = tmp_path / "cases.json"
    path.write_text(json.dumps(cases, ensure_ascii=False), encoding="utf-8")
    return path


async def test_a_request_is_played_through_the_calendar_and_the_confirmation_to_its_answer(
    tmp_path: Path,
) -> None:
    agent = build_member_agent(coffee_with_mina(), tool_timeout_s=5)
    evaluators = [ToolSelection(), KeyArguments(), Answered()]
    dataset = load_cases(cases_file(tmp_path, COFFEE), member_tools(agent), evaluators)
    with RedisServer() as server:
        report = await evaluate(
            dataset, agent, server.url, load_settings(channel="local", jwt_secret="s" * 32)
        )
        redis = connect(server.url)  # the only case ran on database 0, which keeps what it made
        try:
            made = await RedisEventStore(redis).list_events("jeff", tomorrow_at(0), tomorrow_at(23, 59))
        finally:
            await redis.aclose()
    [outcome] = outcomes(report)
    assert outcome.passed, outcome.reason
    assert outcome.turn is not None and outcome.turn.steps == 3  # the calendar, the confirmation, the answer
    assert [call.tool for call in outcome.turn.calls] == ["get_calendar_events", "create_event"]
    coffee = next(event for event in made if event.title == "Coffee with Mina")
    assert coffee.start_time == tomorrow_at(17) and coffee.invitee_user_ids == ["mina"]
    assert sorted(e.title for e in made) == ["Coffee with Mina", "Design review", "팀 회의"]
    assert outcome.turn.answer is not None and coffee.event_id in outcome.turn.answer


def test_json_holds_every_case_with_its_calls_verdict_and_answer(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    use_model(monkeypatch, coffee_with_mina())
    path = cases_file(tmp_path, COFFEE, {"group": "none", "request": "Thanks!", "expect": {}})
    out = tmp_path / "eval.json"
    assert main(["eval", "--model", "function", "--cases", str(path), "--json", str(out)]) == 0
    assert capsys.readouterr().out.splitlines()[-3:] == [
        "steps    1/1  100 %",
        "none     0/1    0 %",
        "overall  1/2   50 %",
    ]
    data = json.loads(out.read_text(encoding="utf-8"))
    assert (data["model"], data["cases_file"], data["min_accuracy"]) == ("function", str(path), None)
    assert data["groups"] == [
        {"name": "steps", "passed": 1, "total": 1, "percent": 100},
        {"name": "none", "passed": 0, "total": 1, "percent": 0},
    ]
    assert data["overall"] == {"name": "overall", "passed": 1, "total": 2, "percent": 50}
    coffee, thanks = data["cases"]
    assert coffee["entry"] == 0 and coffee["group"] == "steps" and coffee["request"] == COFFEE["request"]
    assert coffee["expect"] == [
        {"tool": "get_calendar_events", "args": {}},
        {"tool": "create_event", "args": {"start_time": "T17:00", "invitee_user_ids": ["mina"]}},
    ]
    assert (coffee["passed"], coffee["reason"], coffee["ended"], coffee["steps"]) == (True, "", "answered", 3)
    calendar, event = coffee["calls"]
    assert (
        calendar["tool"] == "get_calendar_events"
        and calendar["args"]["start_date"] == tomorrow_at(0).isoformat()
    )
    assert event == {
        "tool": "create_event",
        "args": {
            "title": "Coffee with Mina",
            "start_time": tomorrow_at(17).isoformat(),
            "end_time": tomorrow_at(18).isoformat(),
            "invitee_user_ids": ["mina"],
        },
    }
    assert coffee["answer"].startswith("Booked: ") and "Coffee with Mina" in coffee["answer"]
    assert thanks["passed"] is False
    assert thanks["reason"] == "expected no tool, called create_event, get_calendar_events"
    assert [call["tool"] for call in thanks["calls"]] == ["get_calendar_events", "create_event"]


def test_min_accuracy_exits_3_below_it_and_0_at_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = cases_file(
        tmp_path,
        {"group": "clock", "request": "뉴욕은 지금 몇 시야?", "expect": {"get_current_datetime": {}}},
        {"group": "relay", "request": "Hello!", "expect": {"send_message_to_user": {}}},
    )
    command = ["eval", "--model", "offline", "--cases", str(path), "--min-accuracy"]
    assert main([*command, "50.1"]) == 3
    captured = capsys.readouterr()
    assert captured.out.splitlines()[-1] == "overall  1/2   50 %"
    assert (
        captured.err == "truloop-assistant eval: overall accuracy 50 % (1/2) is below --min-accuracy 50.1 %\n"
    )
    assert main([*command, "50"]) == 0
    assert capsys.readouterr().out.splitlines()[-1] == "overall accuracy 50 % (1/2) meets --min-accuracy 50 %"
    for wrong in ("101", "-1", "most"):
        with pytest.raises(SystemExit) as exited:
            main([*command, wrong])
        assert exited.value.code == 2
        assert "expected a percentage from 0 to 100" in capsys.readouterr().err


def test_a_model_that_keeps_asking_the_phone_is_stopped(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    use_model(monkeypatch, calendar_forever())
    path = cases_file(
        tmp_path, {"group": "loop", "request": "What's on tomorrow?", "expect": {"get_calendar_events": {}}}
    )
    out = tmp_path / "eval.json"
    assert main(["eval", "--model", "function", "--cases", str(path), "--json", str(out)]) == 0
    assert (
        '  miss  [loop] "What\'s on tomorrow?": no answer: still asking the phone after 6 answers'
        in capsys.readouterr().out
    )
    [case] = json.loads(out.read_text(encoding="utf-8"))["cases"]
    assert (case["steps"], case["answer"], case["passed"]) == (7, None, False)
    assert [call["tool"] for call in case["calls"]] == ["get_calendar_events"] * 7
    # The turn's model requests are counted across its resumes, as in the server.
    monkeypatch.setenv("TRULOOP_MAX_MODEL_REQUESTS", "3")
    assert main(["eval", "--model", "function", "--cases", str(path), "--json", str(out)]) == 0
    [case] = json.loads(out.read_text(encoding="utf-8"))["cases"]
    assert (case["ended"], case["steps"], len(case["calls"])) == ("out of model requests (3 per turn)", 4, 3)


def test_a_json_path_in_a_missing_folder_exits_2_before_running(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    missing = tmp_path / "nope" / "eval.json"
    assert main(["eval", "--model", "offline", "--json", str(missing)]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err == f"truloop-assistant eval: --json {missing}: not a file in an existing folder\n"


def test_the_sample_calendar_fills_the_asked_range_in_the_users_zone() -> None:
    day = tomorrow_at(0)
    whole_day = sample_calendar(day.isoformat(), tomorrow_at(23, 59).isoformat(), SEOUL)["events"]
    assert [(e["title"], e["start"]["dateTime"], e["end"]["dateTime"]) for e in whole_day] == [
        ("팀 미팅", tomorrow_at(10).isoformat(), tomorrow_at(11).isoformat()),
        ("Lunch with Mina", tomorrow_at(12).isoformat(), tomorrow_at(13).isoformat()),
    ]
    afternoon = sample_calendar(tomorrow_at(12, 30).isoformat(), tomorrow_at(18).isoformat(), SEOUL)["events"]
    assert [e["title"] for e in afternoon] == ["Lunch with Mina"]  # overlapping the range is enough
    in_utc = sample_calendar(
        day.astimezone(UTC).isoformat(), tomorrow_at(23, 59).astimezone(UTC).isoformat(), SEOUL
    )["events"]
    assert in_utc == whole_day  # the same range, said in UTC: the user's wall clock decides
    year = sample_calendar(day.isoformat(), (day + timedelta(days=365)).isoformat(), SEOUL)["events"]
    assert len(year) == 2 * MAX_DAYS and len({e["id"] for e in year}) == len(year)
    assert sample_calendar(tomorrow_at(14).isoformat(), tomorrow_at(16).isoformat(), SEOUL) == {"events": []}


def test_the_phone_confirms_grants_and_answers_the_calendar_as_the_server_builds_results() -> None:
    calendar = {"notification_message": "…", "start_date": tomorrow_at(0).isoformat()}
    calendar["end_date"] = tomorrow_at(23, 59).isoformat()
    requests = DeferredToolRequests(
        calls=[
            ToolCallPart(
                "get_permission_status", {"notification_message": "…", "permission": "calendar.read"}, "p"
            ),
            ToolCallPart(
                "confirm_interaction", {"notification_message": "…", "title": "t", "message": "m"}, "c"
            ),
            ToolCallPart("get_calendar_events", calendar, "e1"),
            ToolCallPart("get_calendar_events", calendar, "e2"),
        ],
        approvals=[ToolCallPart("cancel_event", {"event_id": "evt_1"}, "x")],
    )
    results = Phone("jeff", SEOUL, max_calls=3, max_failures=3).answer(requests, prompt="hi", step=0)
    assert results.approvals == {"x": True}
    assert results.calls["p"]["status"] == "granted" and results.calls["c"] == {"confirmed": True}
    assert [e["title"] for e in results.calls["e1"]["events"]] == ["팀 미팅", "Lunch with Mina"]
    # One step sends at most TRULOOP_MAX_CALLS_PER_TURN device calls; the server fails the rest itself.
    assert (
        isinstance(results.calls["e2"], ToolFailed) and "Too many device calls" in results.calls["e2"].message
    )


def test_the_phone_answers_a_built_in_device_tool_with_the_example_it_is_declared_with(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    permission = device_methods.DEVICE_METHODS["get_permission_status"]
    asked = {"status": "denied", "canPromptAgain": True}
    monkeypatch.setitem(device_methods.DEVICE_METHODS, permission.name, replace(permission, example=asked))
    requests = DeferredToolRequests(
        calls=[ToolCallPart(permission.name, {"notification_message": "…", "permission": "camera"}, "p")]
    )
    results = Phone("jeff", SEOUL, max_calls=3, max_failures=3).answer(requests, prompt="hi", step=0)
    assert results.calls["p"] == asked


async def test_a_case_can_have_the_phone_change_the_time_before_approving(tmp_path: Path) -> None:
    agent = build_member_agent(coffee_with_mina(), tool_timeout_s=5)
    evaluators = [ToolSelection(), KeyArguments(), Answered()]
    later = {**COFFEE, "phone": {"confirmed": True, "edited": {"start_time": "17:30", "end_time": "18:30"}}}
    dataset = load_cases(cases_file(tmp_path, later), member_tools(agent), evaluators)
    with RedisServer() as server:
        report = await evaluate(
            dataset, agent, server.url, load_settings(channel="local", jwt_secret="s" * 32)
        )
        redis = connect(server.url)
        try:
            made = await RedisEventStore(redis).list_events("jeff", tomorrow_at(0), tomorrow_at(23, 59))
        finally:
            await redis.aclose()
    [outcome] = outcomes(report)
    assert outcome.passed, outcome.reason
    coffee = next(event for event in made if event.title == "Coffee with Mina")
    assert (coffee.start_time, coffee.end_time) == (tomorrow_at(17, 30), tomorrow_at(18, 30))
    assert outcome.turn is not None and outcome.turn.answer is not None
    assert "edited_by_user" in outcome.turn.answer  # the model was told what the person changed


def test_the_phone_refuses_with_a_reason_or_edits_when_a_case_says_so(
    tmp_path: Path, tools: dict[str, set[str]]
) -> None:
    args = {
        "title": "Coffee",
        "start_time": tomorrow_at(17).isoformat(),
        "end_time": tomorrow_at(18).isoformat(),
    }
    requests = DeferredToolRequests(approvals=[ToolCallPart("create_event", args, "x")])
    phone = Phone("jeff", SEOUL, max_calls=3, max_failures=3)
    refused = phone.answer(requests, prompt="hi", step=0, decision={"confirmed": False, "reason": "busy"})
    assert isinstance(refused.approvals["x"], ToolDenied) and "busy" in refused.approvals["x"].message
    edited = phone.answer(
        requests, prompt="hi", step=0, decision={"confirmed": True, "edited": {"start_time": "17:15"}}
    )
    approved = edited.approvals["x"]
    assert isinstance(approved, ToolApproved) and approved.override_args is not None
    assert approved.override_args["start_time"] == tomorrow_at(17, 15).isoformat()
    with pytest.raises(CasesFileError, match="phone"):
        load_cases(cases_file(tmp_path, {**COFFEE, "phone": {"confirmed": "yes"}}), tools)

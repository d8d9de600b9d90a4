"""The evaluation cases: a YAML or JSON list of requests (words, and files sent with them), each with the
tools the model should call."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml
from pydantic import ValidationError
from pydantic_ai import AbstractToolset, FunctionToolset

from ...agent.agents import MemberAgent
from ...errors import OperatorError, first_problem
from ...protocol.methods import ApprovalResult
from ...tools.agent_deps import AgentDeps
from .case_files import FILE_KEYS, Request, case_files
from .harness import Case, Dataset, Evaluator, Report

DEFAULT_CASES = Path(__file__).resolve().parents[2] / "data" / "eval_cases.yaml"
"""The bundled evaluation set."""

_KEYS = ("group", "request", "expect")
_OPTIONAL_KEYS = ("phone", *FILE_KEYS)


@dataclass(frozen=True)
class ToolCall:
    """A tool call: what the model called, or what a case expects (with its key arguments only)."""

    tool: str
    args: dict[str, Any]
    forbidden: bool = False
    """In a case: the tool must not be called at all (``tool: false``)."""


Calls = list[ToolCall]


@dataclass(frozen=True)
class Turn:
    """What a request led to: every tool call of every step, in order, and how the turn ended."""

    calls: Calls
    answer: str | None = None
    """The final answer; None when the turn ended without one (``ended`` says why)."""
    ended: str = "answered"
    steps: int = 1
    """Runs of the agent: the first, then one per time the phone answered."""


@dataclass(frozen=True)
class CaseInfo:
    """A case's metadata: its group, and its place in the cases file."""

    group: str
    entry: int
    phone: dict[str, Any] | None = None
    """How the phone answers the case's confirmation dialogs (an ``interaction.confirm`` result, its
    edited times as ``HH:MM`` on the call's own day); None: it confirms them as they are."""


EvalCase = Case[Request, Calls, CaseInfo]
EvalDataset = Dataset[Request, Calls, Turn, CaseInfo]
EvalReport = Report[Request, Calls, Turn, CaseInfo]


class CasesFileError(OperatorError, ValueError):
    """A cases file is missing or invalid; the message names the file and the entry."""


# -- the cases file


class _DatesAsText(yaml.SafeLoader):
    """YAML without timestamps: an unquoted 2026-12-25 stays the text the model is expected to write."""


_DatesAsText.yaml_implicit_resolvers = {
    first: [r for r in resolvers if r[0] != "tag:yaml.org,2002:timestamp"]
    for first, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()
}


def load_cases(
    path: Path, tools: dict[str, set[str]], evaluators: Sequence[Evaluator[Calls, Turn]] = ()
) -> EvalDataset:
    """Read a cases file (a YAML or JSON list of entries), checking it against the agent's ``tools``."""
    try:
        raw = yaml.load(path.read_text(encoding="utf-8"), Loader=_DatesAsText)
    except FileNotFoundError:
        raise CasesFileError(f"{path}: no such file") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise CasesFileError(f"{path}: cannot read it ({exc})") from None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f"line {mark.line + 1}: " if mark is not None else ""
        raise CasesFileError(
            f"{path}: not valid YAML ({where}{getattr(exc, 'problem', None) or exc})"
        ) from None
    if not isinstance(raw, list):
        raise CasesFileError(f"{path}: expected a list of cases, got {type(raw).__name__}")
    if not raw:
        raise CasesFileError(f"{path}: the file has no cases")
    cases: list[EvalCase] = []
    for index, entry in enumerate(raw):
        try:
            cases.append(_case(entry, index, tools, path.parent))
        except ValueError as exc:
            raise CasesFileError(f"{path}: {_label(entry, index)}: {exc}") from None
    return EvalDataset(name=path.stem, cases=cases, evaluators=list(evaluators))


def _label(entry: object, index: int) -> str:
    request = entry.get("request") if isinstance(entry, dict) else None
    if isinstance(request, str) and request.strip():
        shown = request.strip() if len(request.strip()) <= 40 else request.strip()[:39] + "…"
        return f"entry {index} ({json.dumps(shown, ensure_ascii=False)})"
    return f"entry {index}"


def _case(entry: object, index: int, tools: dict[str, set[str]], folder: Path) -> EvalCase:
    if not isinstance(entry, dict):
        raise ValueError(f"expected a mapping with {', '.join(_KEYS)}, got {type(entry).__name__}")
    if unknown := [str(k) for k in entry if k not in (*_KEYS, *_OPTIONAL_KEYS)]:
        has, may = ", ".join(_KEYS), ", ".join(_OPTIONAL_KEYS)
        raise ValueError(f"unknown key {unknown[0]!r} (a case has {has}; optionally {may})")
    if not isinstance(entry.get("group"), str) or not entry["group"].strip():
        raise ValueError("group: a non-empty text is required")
    files = case_files(entry, folder)
    text = entry.get("request", "" if files else None)
    if not isinstance(text, str) or not (text.strip() or files):
        raise ValueError(
            "request: a non-empty text is required (it may be left out beside a picture or voice)"
        )
    if "expect" not in entry:
        raise ValueError("expect: required (`expect: {}` for a request that needs no tool)")
    expect = entry["expect"]
    if not isinstance(expect, dict):
        raise ValueError("expect: expected a mapping of tool name to key arguments")
    return EvalCase(
        name=f"entry {index}",
        inputs=Request(text.strip(), files),
        metadata=CaseInfo(group=entry["group"].strip(), entry=index, phone=_phone(entry.get("phone"))),
        expected_output=[
            call for tool, spec in expect.items() for call in _expected_calls(tool, spec, tools)
        ],
    )


def _phone(decision: object) -> dict[str, Any] | None:
    """A case's answer to its confirmation dialogs, checked as the server checks a phone's."""
    if decision is None:
        return None
    try:
        ApprovalResult.model_validate(decision)
    except ValidationError as exc:
        raise ValueError(f"phone: {first_problem(exc.errors())}") from None
    assert isinstance(decision, dict)  # a model validated it
    return decision


def _expected_calls(tool: object, spec: object, tools: dict[str, set[str]]) -> Calls:
    if not isinstance(tool, str) or tool not in tools:
        raise ValueError(
            f"expect: unknown tool {tool!r}; the member agent's tools are {', '.join(sorted(tools))}"
        )
    if spec is False:  # the case forbids the tool: e.g. no clock lookup when the time is given
        return [ToolCall(tool, {}, forbidden=True)]
    specs = [] if spec is None else spec if isinstance(spec, list) else [spec]
    calls = []
    for args in specs or [{}]:
        if not isinstance(args, dict):
            raise ValueError(
                f"expect.{tool}: expected key arguments as a mapping, a list of mappings, or false"
            )
        for arg, value in args.items():
            if arg not in tools[tool]:
                known = ", ".join(sorted(tools[tool])) or "none"
                raise ValueError(f"expect.{tool}: {tool} has no argument {arg!r} (its arguments: {known})")
            if not _is_key_value(value):
                raise ValueError(
                    f"expect.{tool}.{arg}: expected a text, number, true/false, null or a list of those"
                )
        calls.append(ToolCall(tool, dict(args)))
    return calls


def _is_key_value(value: object) -> bool:
    scalar = (str, int, float, bool, type(None))
    return isinstance(value, scalar) or (
        isinstance(value, list) and all(isinstance(v, scalar) for v in value)
    )


def member_tools(agent: MemberAgent) -> dict[str, set[str]]:
    """The tools the agent offers, each with the names of its arguments."""
    tools: dict[str, set[str]] = {}

    def visit(toolset: AbstractToolset[AgentDeps]) -> None:
        if isinstance(toolset, FunctionToolset):
            for name, tool in toolset.tools.items():
                tools[name] = set(tool.tool_def.parameters_json_schema.get("properties", {}))

    for toolset in agent.toolsets:
        toolset.apply(visit)
    return tools

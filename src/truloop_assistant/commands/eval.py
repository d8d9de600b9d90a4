"""``truloop-assistant eval``: how well a model picks the member agent's tools, per group of requests.

The work is in :mod:`.evaluation` (imported only when the command runs).
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import os
import sys
from pathlib import Path
from zoneinfo import ZoneInfo

from ..config import Settings


def add_parser(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add ``eval [--model M] [--cases PATH]``."""
    command = subparsers.add_parser(
        "eval", help="measure how well a model picks the assistant's tools (accuracy per group of requests)"
    )
    command.add_argument(
        "--model", default=None, help="pydantic-ai model string or offline (default: TRULOOP_MODEL)"
    )
    command.add_argument(
        "--cases", metavar="PATH", default=None, help="cases file (default: the bundled data/eval_cases.yaml)"
    )


def run(args: argparse.Namespace, settings: Settings) -> int:
    """Run the evaluation and print the accuracy: 0 whatever it is, 2 for a bad cases file or model."""
    from pydantic_ai import UserError

    from ..agent.agents import build_member_agent
    from ..agent.models import resolve_model
    from ..config import ConfigError
    from ..embedded_redis import RedisServer
    from .evaluation.cases import DEFAULT_CASES, CasesFileError, load_cases, member_tools
    from .evaluation.running import evaluate
    from .evaluation.scoring import KeyArguments, ToolSelection, outcomes, render, scores, shown

    if "TRULOOP_LOG_LEVEL" not in os.environ:  # the report, not a log line per tool call
        for handler in logging.getLogger().handlers:
            handler.setLevel(logging.WARNING)  # on the handlers: some libraries set their loggers' levels
    model_name = args.model or settings.model
    path = Path(args.cases) if args.cases else DEFAULT_CASES
    try:
        model = resolve_model(model_name, timezone=ZoneInfo(settings.timezone))
    except (UserError, ConfigError) as exc:
        print(f"truloop-assistant eval: model {model_name!r}: {exc}", file=sys.stderr)
        return 2
    agent = build_member_agent(model, tool_timeout_s=settings.tool_timeout_s)
    try:
        dataset = load_cases(path, member_tools(agent), [ToolSelection(), KeyArguments()])
    except CasesFileError as exc:
        print(f"truloop-assistant eval: {exc}", file=sys.stderr)
        return 2
    try:
        server = RedisServer().start()
    except RuntimeError as exc:
        print(f"truloop-assistant eval: could not start a throwaway Redis: {exc}", file=sys.stderr)
        return 1
    try:
        report = asyncio.run(evaluate(dataset, agent, server.url, settings))
    finally:
        server.stop()
    results = outcomes(report)
    print(f"model {model_name}: {len(results)} cases from {path}")
    for result in results:
        if not result.passed:
            print(f"  miss  [{result.group}] {shown(result.request)}: {result.reason}")
    print()
    print("\n".join(render(scores(results))))
    if not report.ran:
        print("truloop-assistant eval: no case could run (see the reasons above)", file=sys.stderr)
        return 1
    return 0

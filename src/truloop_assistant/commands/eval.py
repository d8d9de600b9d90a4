"""``truloop-assistant eval``: how well a model picks the member agent's tools, per group of requests.

The work is in :mod:`.evaluation` (imported only when the command runs).
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import math
import os
import sys
from pathlib import Path
from zoneinfo import ZoneInfo

from ..config import Settings

BELOW_MINIMUM = 3
"""The exit code when the overall accuracy is below ``--min-accuracy``."""


def _percent(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not 0 <= value <= 100:
        raise argparse.ArgumentTypeError(f"expected a percentage from 0 to 100, got {text!r}")
    return value


def add_parser(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add ``eval [--model M] [--cases PATH] [--min-accuracy PCT] [--json PATH]``."""
    command = subparsers.add_parser(
        "eval", help="measure how well a model picks the assistant's tools (accuracy per group of requests)"
    )
    command.add_argument(
        "--model", default=None, help="pydantic-ai model string or offline (default: TRULOOP_MODEL)"
    )
    command.add_argument(
        "--cases", metavar="PATH", default=None, help="cases file (default: the bundled data/eval_cases.yaml)"
    )
    command.add_argument(
        "--min-accuracy",
        metavar="PCT",
        type=_percent,
        default=None,
        help=f"exit {BELOW_MINIMUM} when the overall accuracy is below PCT percent (to gate a model in CI)",
    )
    command.add_argument(
        "--json",
        metavar="PATH",
        default=None,
        help="also write every case (its calls, verdict and answer) and the figures to PATH as JSON",
    )


def run(args: argparse.Namespace, settings: Settings) -> int:
    """Run the evaluation and print the accuracy.

    0 when it ran (and met ``--min-accuracy``), 3 below it, 2 for a bad cases file, model or JSON path.
    """
    from pydantic_ai import UserError

    from ..agent.agents import build_member_agent
    from ..agent.models import resolve_model
    from ..agent.request_size import member_request_size
    from ..config import ConfigError
    from ..local.embedded_redis import RedisServer
    from .evaluation.cases import DEFAULT_CASES, CasesFileError, load_cases, member_tools
    from .evaluation.export import results_json, write_results
    from .evaluation.running import evaluate
    from .evaluation.scoring import Answered, KeyArguments, ToolSelection, outcomes, render, scores, shown

    if "TRULOOP_LOG_LEVEL" not in os.environ:  # the report, not a log line per tool call
        for handler in logging.getLogger().handlers:
            handler.setLevel(logging.WARNING)  # on the handlers: some libraries set their loggers' levels
    model_name = args.model or settings.model
    path = Path(args.cases) if args.cases else DEFAULT_CASES
    json_path = Path(args.json) if args.json else None
    if json_path is not None and (json_path.is_dir() or not json_path.parent.is_dir()):
        # Said before the run, not after minutes of a real model's requests.
        print(
            f"truloop-assistant eval: --json {json_path}: not a file in an existing folder", file=sys.stderr
        )
        return 2
    try:
        model = resolve_model(model_name, timezone=ZoneInfo(settings.timezone))
    except (UserError, ConfigError) as exc:
        print(f"truloop-assistant eval: model {model_name!r}: {exc}", file=sys.stderr)
        return 2
    agent = build_member_agent(model, tool_timeout_s=settings.tool_timeout_s)
    try:
        dataset = load_cases(path, member_tools(agent), [ToolSelection(), KeyArguments(), Answered()])
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
    print(asyncio.run(member_request_size(agent)).summary())
    for result in results:
        if not result.passed:
            what = "skip" if result.skipped else "miss"
            print(f"  {what}  [{result.group}] {shown(result.request)}: {result.reason}")
    print()
    table = scores(results)
    print("\n".join(render(table)))
    if json_path is not None:
        try:
            write_results(
                json_path,
                results_json(report, model=model_name, cases=path, min_accuracy=args.min_accuracy),
            )
        except OSError as exc:
            print(f"truloop-assistant eval: --json {json_path}: {exc.strerror or exc}", file=sys.stderr)
            return 2
    if not report.ran:
        print("truloop-assistant eval: no case could run (see the reasons above)", file=sys.stderr)
        return 1
    if args.min_accuracy is not None:
        overall = table[-1]
        # Floored, so an accuracy below the minimum never reads as reaching it.
        accuracy = (
            f"{math.floor(1000 * overall.passed / overall.total) / 10:g} % ({overall.passed}/{overall.total})"
        )
        if 100 * overall.passed < args.min_accuracy * overall.total:
            print(
                f"truloop-assistant eval: overall accuracy {accuracy} is below --min-accuracy "
                f"{args.min_accuracy:g} %",
                file=sys.stderr,
            )
            return BELOW_MINIMUM
        print(f"overall accuracy {accuracy} meets --min-accuracy {args.min_accuracy:g} %")
    return 0

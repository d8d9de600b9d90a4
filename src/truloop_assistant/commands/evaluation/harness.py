"""A small evaluation harness: a task runs every case, and evaluators judge each output against the expected.

What a case expects and what the task returns may be of different types (the expected tool calls,
and the turn that made them).

A failing task or evaluator never stops the run: it is recorded on its case, and the other cases go on.
A task that cannot play a case here (:class:`Skipped`: say a voice note, and no transcriber) has it
reported as skipped, with the reason: neither passed nor failed.
"""

from __future__ import annotations

import asyncio
from abc import ABC, abstractmethod
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import ClassVar, Generic, TypeVar

from ...errors import TruloopError

InputsT = TypeVar("InputsT")
ExpectedT = TypeVar("ExpectedT")
OutputT = TypeVar("OutputT")
MetadataT = TypeVar("MetadataT")


@dataclass(frozen=True)
class Case(Generic[InputsT, ExpectedT, MetadataT]):
    """One input to the task, what its output should show, and what the report groups it by."""

    name: str
    inputs: InputsT
    metadata: MetadataT
    expected_output: ExpectedT


class Skipped(TruloopError):
    """Raised by a task for a case it cannot play here; the message says why."""


@dataclass(frozen=True)
class Verdict:
    """An evaluator's judgement of one output; a failed one says why."""

    passed: bool
    reason: str = ""


class Evaluator(ABC, Generic[ExpectedT, OutputT]):
    """Judges one case's output against the case's expected output."""

    name: ClassVar[str]
    """What a failed verdict without a reason is reported as."""

    @abstractmethod
    def evaluate(self, expected: ExpectedT, output: OutputT) -> Verdict:
        """The verdict on ``output``."""


@dataclass(frozen=True)
class CaseResult(Generic[InputsT, ExpectedT, OutputT, MetadataT]):
    """How one case went: its verdicts, or the task's failure (``error``) when it did not run through,
    or why it was not played (``skipped``)."""

    case: Case[InputsT, ExpectedT, MetadataT]
    output: OutputT | None = None
    verdicts: dict[str, Verdict] = field(default_factory=dict)
    error: str | None = None
    skipped: str | None = None

    @property
    def ran(self) -> bool:
        """Whether the task returned an output for the case."""
        return self.error is None and self.skipped is None

    @property
    def failures(self) -> list[str]:
        """Each failed verdict's reason (or its evaluator's name when it gave none)."""
        return [verdict.reason or name for name, verdict in self.verdicts.items() if not verdict.passed]


@dataclass(frozen=True)
class Report(Generic[InputsT, ExpectedT, OutputT, MetadataT]):
    """Every case's result, in the order of the dataset's cases."""

    name: str
    results: list[CaseResult[InputsT, ExpectedT, OutputT, MetadataT]]

    @property
    def ran(self) -> list[CaseResult[InputsT, ExpectedT, OutputT, MetadataT]]:
        """The results of the cases whose task returned an output."""
        return [result for result in self.results if result.ran]


@dataclass
class Dataset(Generic[InputsT, ExpectedT, OutputT, MetadataT]):
    """Cases and the evaluators that judge each of their outputs."""

    name: str
    cases: list[Case[InputsT, ExpectedT, MetadataT]]
    evaluators: Sequence[Evaluator[ExpectedT, OutputT]] = ()

    async def evaluate(
        self, task: Callable[[InputsT], Awaitable[OutputT]], *, max_concurrency: int | None = None
    ) -> Report[InputsT, ExpectedT, OutputT, MetadataT]:
        """Run the task on every case (at most ``max_concurrency`` at once) and judge each output."""
        limit = asyncio.Semaphore(max_concurrency or max(len(self.cases), 1))

        async def run(
            case: Case[InputsT, ExpectedT, MetadataT],
        ) -> CaseResult[InputsT, ExpectedT, OutputT, MetadataT]:
            async with limit:
                try:
                    output = await task(case.inputs)
                except Skipped as exc:
                    return CaseResult(case, skipped=str(exc))
                except Exception as exc:
                    return CaseResult(case, error=_described(exc))
            verdicts = {e.name: _judge(e, case.expected_output, output) for e in self.evaluators}
            return CaseResult(case, output, verdicts)

        return Report(self.name, list(await asyncio.gather(*map(run, self.cases))))


def _judge(evaluator: Evaluator[ExpectedT, OutputT], expected: ExpectedT, output: OutputT) -> Verdict:
    try:
        return evaluator.evaluate(expected, output)
    except Exception as exc:  # a broken evaluator fails its cases, not the run
        return Verdict(False, f"the {evaluator.name} evaluator failed: {_described(exc)}")


def _described(exc: Exception) -> str:
    return f"{type(exc).__name__}: {exc}"

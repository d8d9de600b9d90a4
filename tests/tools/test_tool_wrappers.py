"""The wrappers around every server tool, each alone and as the agents compose them (``gated``)."""

from __future__ import annotations

import asyncio
from typing import Any
from zoneinfo import ZoneInfo

import pytest
from pydantic_ai import AbstractToolset, Agent, DeferredToolRequests, FunctionToolset, ToolFailed, models

from tests.tools.support import calls, fixed
from truloop_assistant.agent.agents import gated
from truloop_assistant.store.ledger import LedgerCall
from truloop_assistant.tools.agent_deps import AgentDeps
from truloop_assistant.tools.call_records import CallRecordToolset
from truloop_assistant.tools.callback_toolset import CallbackToolset
from truloop_assistant.tools.callbacks import ToolCallbacks, ToolEvent
from truloop_assistant.tools.failures import FailureResultToolset
from truloop_assistant.tools.marks import OWN_TIME_BOUND
from truloop_assistant.tools.time_limits import TimeLimitToolset

models.ALLOW_MODEL_REQUESTS = False

tools = FunctionToolset[AgentDeps]()


@tools.tool_plain
def echo(text: str) -> str:
    """Say ``text`` back."""
    return text


@tools.tool_plain
async def stall() -> str:
    """Take longer than any tool may."""
    await asyncio.sleep(5)
    return "late"


@tools.tool_plain(metadata=OWN_TIME_BOUND)
async def slow_but_bounded() -> str:
    """Take a while, within a bound of its own."""
    await asyncio.sleep(0.2)
    return "in time"


@tools.tool_plain
def crash() -> str:
    """Raise as a bug would."""
    raise ValueError("secret detail")


@tools.tool_plain
def refuse() -> str:
    """Fail on purpose, saying why."""
    raise ToolFailed("no such customer")


class Heard(ToolCallbacks):
    """Callbacks that keep what they were told, in order."""

    def __init__(self) -> None:
        super().__init__()
        self.events: list[tuple[str, LedgerCall]] = []

    def __bool__(self) -> bool:
        return True

    def started(self, event: ToolEvent) -> None:
        self.events.append(("start", event.call))

    def ended(self, event: ToolEvent) -> None:
        self.events.append(("end", event.call))


def deps(callbacks: ToolCallbacks | None = None) -> AgentDeps:
    return AgentDeps(
        user_id="jeff", channel_url="c", timezone=ZoneInfo("Asia/Seoul"), clock=fixed, callbacks=callbacks
    )


async def run(toolset: AbstractToolset[AgentDeps], tool: str, given: AgentDeps, **args: Any) -> str:
    """Have an agent call ``tool`` once; its answer is ``<outcome>: <what the model was shown>``."""
    agent = Agent(calls(tool, args), deps_type=AgentDeps, output_type=[str, DeferredToolRequests])
    result = await agent.run("hi", deps=given, toolsets=[toolset])
    assert isinstance(result.output, str)
    return result.output


async def test_a_call_past_its_time_limit_is_a_failed_timed_out_result() -> None:
    answer = await run(TimeLimitToolset(tools, timeout_s=0.05), "stall", deps())
    assert answer == "failed: stall timed out after 0.05 s; the service did not answer in time"


async def test_a_tool_that_bounds_its_own_time_is_not_cut_short() -> None:
    assert (
        await run(TimeLimitToolset(tools, timeout_s=0.05), "slow_but_bounded", deps()) == "success: in time"
    )


async def test_an_exception_from_a_tool_is_a_failed_result_naming_only_its_type() -> None:
    answer = await run(FailureResultToolset(tools), "crash", deps())
    assert answer == "failed: crash failed (ValueError); the error was logged"
    assert await run(FailureResultToolset(tools), "refuse", deps()) == "failed: no such customer"


async def test_without_the_failures_wrapper_an_exception_ends_the_run() -> None:
    with pytest.raises(ValueError, match="secret detail"):
        await run(tools, "crash", deps())


async def test_each_call_is_kept_for_the_ledger_with_how_it_ended() -> None:
    given = deps()
    assert await run(CallRecordToolset(tools), "echo", given, text="hi") == "success: hi"
    [(call_id, ran)] = given.tool_runs.items()
    assert given.calls_run == {call_id}
    assert (ran.tool, ran.args, ran.outcome, ran.result) == ("echo", {"text": "hi"}, "ok", "hi")
    assert ran.ended_at is not None and ran.ended_at >= ran.started_at

    given = deps()
    await run(
        CallRecordToolset(FailureResultToolset(TimeLimitToolset(tools, timeout_s=0.05))), "stall", given
    )
    [ran] = given.tool_runs.values()
    assert (ran.outcome, ran.error) == (
        "timeout",
        "stall timed out after 0.05 s; the service did not answer in time",
    )
    given = deps()
    await run(CallRecordToolset(FailureResultToolset(tools)), "crash", given)
    [ran] = given.tool_runs.values()
    assert (ran.outcome, ran.error) == ("error", "crash failed (ValueError); the error was logged")


async def test_callbacks_hear_a_call_start_and_end_with_its_result_or_error() -> None:
    heard = Heard()
    await run(CallbackToolset(tools), "echo", deps(heard), text="hi")
    await run(CallbackToolset(FailureResultToolset(tools)), "crash", deps(heard))
    [(start, first), (end, done), (_, second), (_, failed)] = heard.events
    assert (start, first.tool, first.status, first.result) == ("start", "echo", "pending", None)
    assert (end, done.status, done.result, done.call_id) == ("end", "success", "hi", first.call_id)
    assert (second.status, failed.status) == ("pending", "failed")
    assert failed.error == "crash failed (ValueError); the error was logged"


async def test_the_agents_wrappers_together_record_tell_and_bound_each_call() -> None:
    heard = Heard()
    given = deps(heard)
    answer = await run(gated(tools, timeout_s=0.05), "stall", given)
    assert answer == "failed: stall timed out after 0.05 s; the service did not answer in time"
    [ran] = given.tool_runs.values()
    assert ran.outcome == "timeout"
    assert [(kind, call.status, call.error) for kind, call in heard.events] == [
        ("start", "pending", None),
        ("end", "failed", "stall timed out after 0.05 s; the service did not answer in time"),
    ]

"""One request played through to its end: the agent runs, the phone answers, the run resumes.

As in the server, the turn's model requests are counted across its resumes
(``TRULOOP_MAX_MODEL_REQUESTS``), and each run has ``TRULOOP_TURN_TIMEOUT_S``; on top of that the
phone answers at most :data:`MAX_RESUMES` times, so a model that keeps asking it cannot hang the
evaluation.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from pydantic_ai import (
    DeferredToolRequests,
    DeferredToolResults,
    ModelMessage,
    ModelResponse,
    RunUsage,
    ToolCallPart,
    UnexpectedModelBehavior,
    UsageLimitExceeded,
    UsageLimits,
    capture_run_messages,
)

from ...agent.agents import MemberAgent
from ...agent.turn_files import TurnInput
from ...config import Settings
from ...tools.agent_deps import AgentDeps
from .cases import Calls, ToolCall, Turn
from .phone import Phone

MAX_RESUMES = 6
"""Times the phone answers in one turn; a turn still asking after that ends unanswered."""


def tool_calls(messages: Sequence[ModelMessage]) -> Calls:
    """Every tool call the model made in a run, in order."""
    return [
        ToolCall(part.tool_name, part.args_as_dict())
        for message in messages
        if isinstance(message, ModelResponse)
        for part in message.parts
        if isinstance(part, ToolCallPart)
    ]


async def play_turn(
    agent: MemberAgent,
    said: TurnInput,
    *,
    deps: Callable[[], AgentDeps],
    phone: Phone,
    instructions: str,
    settings: Settings,
    max_resumes: int = MAX_RESUMES,
    decision: Mapping[str, Any] | None = None,
) -> Turn:
    """Run the turn ``said`` until the agent answers, the phone answering each pause (``deps``: new per
    run). Sent only files the server could not take, the turn's answer is their short answers, as the
    server's is, and the model is not run."""
    if not said.readable:
        return Turn([], answer="\n".join(said.refusals), steps=0)
    usage = RunUsage()  # the turn's budget, across its resumes
    limits = UsageLimits(request_limit=settings.max_model_requests)
    history: list[ModelMessage] | None = None
    results: DeferredToolResults | None = None
    for step in range(max_resumes + 1):
        with capture_run_messages() as messages:
            try:
                async with asyncio.timeout(settings.turn_timeout_s):
                    result = await agent.run(
                        None if history else said.sent(),
                        message_history=history,
                        deferred_tool_results=results,
                        instructions=instructions,
                        deps=deps(),
                        usage=usage,
                        usage_limits=limits,
                        model_settings={"timeout": settings.model_timeout_s},
                    )
            except UsageLimitExceeded:
                ended = f"out of model requests ({settings.max_model_requests} per turn)"
                return Turn(tool_calls(messages), ended=ended, steps=step + 1)
            except UnexpectedModelBehavior as exc:
                return Turn(tool_calls(messages), ended=f"the model gave up: {exc}", steps=step + 1)
            except TimeoutError:
                ended = f"the run took longer than {settings.turn_timeout_s:g} s"
                return Turn(tool_calls(messages), ended=ended, steps=step + 1)
        history = result.all_messages()
        if not isinstance(result.output, DeferredToolRequests):
            return Turn(tool_calls(history), answer=result.output, steps=step + 1)
        if step < max_resumes:
            results = phone.answer(result.output, prompt=said.prompt, step=step, decision=decision)
    assert history is not None  # the loop ran at least once
    ended = f"still asking the phone after {max_resumes} answers"
    return Turn(tool_calls(history), ended=ended, steps=max_resumes + 1)

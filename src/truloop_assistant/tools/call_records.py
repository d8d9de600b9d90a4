"""Every server tool call is logged and kept for the tool-call ledger, with how it ended.

The call is logged when it starts and when it ends (outcome and duration), so each call can be
paired with its result; its :class:`~.deps.ToolRun` (arguments, times, outcome, the result the
model was shown or the error) is kept on the deps for the step's ledger record.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Awaitable
from dataclasses import dataclass
from typing import Any

from pydantic_ai import (
    ApprovalRequired,
    CallDeferred,
    ModelRetry,
    RunContext,
    ToolFailed,
    ToolReturn,
    WrapperToolset,
)
from pydantic_ai.toolsets import ToolsetTool

from ..logs import log_context
from .agent_deps import AgentDeps, ToolRun
from .failures import ToolCrashed
from .time_limits import ToolTimedOut

log = logging.getLogger("truloop_assistant.tools")


def outcome_of(exc: BaseException) -> tuple[str, str | None]:
    """How a call that raised ``exc`` ended, and the error it ended with."""
    match exc:
        case CallDeferred():
            return "deferred", None
        case ApprovalRequired():
            return "needs_approval", None
        case ModelRetry():
            return "retry", str(exc)
        case ToolTimedOut():
            return "timeout", exc.message
        case ToolCrashed():
            return "error", exc.message
        case ToolFailed():
            return "failed", exc.message
        case Exception():
            return "error", f"{type(exc).__name__}"
        case _:
            return "cancelled", None


async def observed(run: ToolRun, call: Awaitable[Any]) -> Any:
    """Await the call, noting on ``run`` how it ended: its result, or the outcome of what it raised."""
    try:
        result = await call
    except BaseException as exc:
        run.outcome, run.error = outcome_of(exc)
        raise
    else:
        run.outcome = "ok"
        # The model is shown a ToolReturn's return_value; its other content is not the result.
        run.result = result.return_value if isinstance(result, ToolReturn) else result
        return result
    finally:
        run.ended_at = time.time()


@dataclass
class CallRecordToolset(WrapperToolset[AgentDeps]):
    """Logs each call and keeps its :class:`~.deps.ToolRun` on the deps (``tool_runs``, ``calls_run``)."""

    async def call_tool(
        self, name: str, tool_args: dict[str, Any], ctx: RunContext[AgentDeps], tool: ToolsetTool[AgentDeps]
    ) -> Any:
        call_id, deps = ctx.tool_call_id, ctx.deps
        log.info("tool call %s id=%s user=%s args=%s", name, call_id, deps.user_id, sorted(tool_args))
        run = ToolRun(tool=name, args=dict(tool_args), started_at=time.time())
        if call_id is not None:
            deps.calls_run.add(call_id)
            deps.tool_runs[call_id] = run
        with log_context(call_id=call_id):
            started = time.perf_counter()
            try:
                return await observed(run, super().call_tool(name, tool_args, ctx, tool))
            finally:
                elapsed_ms = (time.perf_counter() - started) * 1000
                log.info("tool result %s id=%s outcome=%s ms=%.1f", name, call_id, run.outcome, elapsed_ms)

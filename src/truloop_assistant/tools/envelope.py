"""The envelope around every server tool (seed 000's dispatcher): a tool never crashes a run.

- an exception from a tool becomes a failed tool result naming the error type (details in the log);
- a tool that runs past its time limit becomes a failed "timed out" result;
- ``ModelRetry`` (a fixable argument problem), ``ToolFailed``, ``CallDeferred`` and
  ``ApprovalRequired`` pass through untouched; unknown tools and argument validation errors are
  already reported to the model as retry prompts by pydantic-ai.
Every call is logged with its outcome and duration, so each call can be paired with its result; the
result itself is kept on the call's ``ToolRun`` for the ledger and the tool callbacks.
"""

from __future__ import annotations

import asyncio
import logging
import time
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
from ..store.ledger import LedgerCall
from .callbacks import ToolCallbacks, ToolEvent
from .deps import ToolRun
from .marks import bounds_its_own_time, is_destructive, runs_on_device

log = logging.getLogger("truloop_assistant.tools")

_PASS_THROUGH = (ModelRetry, ToolFailed, CallDeferred, ApprovalRequired)


@dataclass
class EnvelopeToolset(WrapperToolset[Any]):
    timeout_s: float

    async def call_tool(
        self, name: str, tool_args: dict[str, Any], ctx: RunContext[Any], tool: ToolsetTool[Any]
    ) -> Any:
        call_id = ctx.tool_call_id
        user = getattr(ctx.deps, "user_id", None)
        log.info("tool call %s id=%s user=%s args=%s", name, call_id, user, sorted(tool_args))
        if isinstance(ran := getattr(ctx.deps, "calls_run", None), set):
            ran.add(call_id)
        run = ToolRun(tool=name, args=dict(tool_args), started_at=time.time())
        if isinstance(runs := getattr(ctx.deps, "tool_runs", None), dict):
            runs[call_id] = run
        announce = _announcer(ctx, tool)
        if announce is not None:
            announce.started(_event(run.record(call_id or ""), ctx.deps))
        with log_context(call_id=call_id):
            started = time.perf_counter()
            try:
                async with asyncio.timeout(None if bounds_its_own_time(tool.tool_def) else self.timeout_s):
                    result = await super().call_tool(name, tool_args, ctx, tool)
                run.outcome = "ok"
                # The model is shown a ToolReturn's return_value; its other content is not the result.
                run.result = result.return_value if isinstance(result, ToolReturn) else result
                return result
            except CallDeferred:
                run.outcome = "deferred"
                raise
            except ApprovalRequired:
                run.outcome = "needs_approval"
                raise
            except ModelRetry as exc:
                run.outcome, run.error = "retry", str(exc)
                raise
            except ToolFailed as exc:
                run.outcome, run.error = "failed", exc.message
                raise
            except TimeoutError:
                run.outcome = "timeout"
                run.error = f"{name} timed out after {self.timeout_s:g} s; the service did not answer in time"
                raise ToolFailed(run.error) from None
            except Exception as exc:
                run.outcome = "error"
                log.exception("tool %s id=%s raised", name, call_id)
                run.error = f"{name} failed ({type(exc).__name__}); the error was logged"
                raise ToolFailed(run.error) from None
            finally:
                elapsed = time.perf_counter() - started
                run.ended_at = time.time()
                if run.outcome == "running":
                    run.outcome = "cancelled"
                log.info(
                    "tool result %s id=%s outcome=%s ms=%.1f", name, call_id, run.outcome, elapsed * 1000
                )
                if announce is not None and run.outcome not in ("deferred", "needs_approval"):
                    announce.ended(_event(run.record(call_id or ""), ctx.deps))


def _announcer(ctx: RunContext[Any], tool: ToolsetTool[Any]) -> ToolCallbacks | None:
    """The callbacks to tell about this call, if it runs here: device calls, and gated calls still
    waiting for the user's yes, are told about when they are sent (the ledger writer does that)."""
    callbacks = getattr(ctx.deps, "callbacks", None)
    if not isinstance(callbacks, ToolCallbacks) or not callbacks:
        return None
    if runs_on_device(tool.tool_def) or (is_destructive(tool.tool_def) and not ctx.tool_call_approved):
        return None
    return callbacks


def _event(call: LedgerCall, deps: Any) -> ToolEvent:
    return ToolEvent(
        call=call,
        turn_id=getattr(deps, "turn_id", ""),
        channel_url=getattr(deps, "channel_url", ""),
        user_id=getattr(deps, "user_id", ""),
    )

"""Tool callbacks: integrators' code told about every tool call (entry point group below).

An installed package declares, in its ``pyproject.toml``::

    [project.entry-points."truloop_assistant.tool_callbacks"]
    audit = "truloop_audit:AuditLog"

The entry point is an object (a class is instantiated without arguments) with any of
``on_tool_start(event)``, ``on_tool_end(event)`` and ``on_tool_error(event)``, plain or ``async``;
``event`` is a :class:`ToolEvent` carrying the call's ledger record. They are called for every kind
of call: server and MCP tools when they start and end, device calls (built-in and app-declared) and
confirmation requests when they are sent and when they are answered (or expire, or are cut).
``on_tool_end`` is for a call that succeeded (a confirmation the user accepted), with its result;
``on_tool_error`` for one that failed, was denied, expired or was superseded.

Callbacks run beside the turn, never in its way: each gets ``CALLBACK_TIMEOUT_S`` (after that it
is left behind and logged), one that raises is logged. Plain functions run in one thread per entry
point, in the order of the events (so a slow one holds up only its own). A step that runs again
after a crash may report its server calls again.
"""

from __future__ import annotations

import asyncio
import inspect
import logging
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from importlib.metadata import entry_points
from typing import Any

from ..store.ledger import LedgerCall

log = logging.getLogger("truloop_assistant.tools.callbacks")

GROUP = "truloop_assistant.tool_callbacks"
HOOKS = ("on_tool_start", "on_tool_end", "on_tool_error")
CALLBACK_TIMEOUT_S = 1.0
"""How long one callback may take; a slower one is left behind (and logged)."""
MAX_IN_FLIGHT = 200
"""Callbacks running at once, at most; beyond that new events are dropped (and logged)."""


@dataclass(frozen=True)
class ToolEvent:
    """What a callback is told: the call's ledger record and the turn it belongs to."""

    call: LedgerCall
    """``call_id`` (the JSON-RPC id for device and approval calls), ``tool``, ``kind`` (server,
    device, approval), ``status``, ``args`` (secrets redacted), ``error``, ``started_at``,
    ``ended_at``, ``duration_ms``, and once it ended ``result`` (what the tool returned, the device's
    result, an approval's ``{"confirmed": ...}``; redacted like ``args``, cut to 2 KB: ``result_cut``)."""
    turn_id: str
    channel_url: str
    user_id: str


@dataclass(frozen=True)
class _Hook:
    owner: str
    """The entry point's name."""
    name: str
    """``<entry point>.<hook>``, for the log."""
    fn: Callable[[ToolEvent], Any]


class ToolCallbacks:
    """The callbacks of this process, and the tasks running them."""

    def __init__(self, hooks: dict[str, Sequence[_Hook]] | None = None) -> None:
        self.hooks: dict[str, Sequence[_Hook]] = hooks or {}
        self._tasks: set[asyncio.Task[None]] = set()
        self._threads: dict[str, ThreadPoolExecutor] = {}
        self._dropped_logged_at = 0.0

    @classmethod
    def from_entry_points(cls) -> ToolCallbacks:
        """Load every installed entry point of the group; one that fails to load is logged and skipped."""
        hooks: dict[str, list[_Hook]] = {hook: [] for hook in HOOKS}
        for point in entry_points(group=GROUP):
            try:
                target = point.load()
                if inspect.isclass(target):
                    target = target()
            except Exception:
                log.exception("tool callbacks %r (%s) could not be loaded; left out", point.name, point.value)
                continue
            found = [hook for hook in HOOKS if callable(getattr(target, hook, None))]
            for hook in found:
                hooks[hook].append(_Hook(point.name, f"{point.name}.{hook}", getattr(target, hook)))
            log.info("tool callbacks %r (%s): %s", point.name, point.value, ", ".join(found) or "no hooks")
        return cls({hook: found for hook, found in hooks.items() if found})

    def __bool__(self) -> bool:
        return bool(self.hooks)

    def started(self, event: ToolEvent) -> None:
        self._fire("on_tool_start", event)

    def ended(self, event: ToolEvent) -> None:
        """``on_tool_end`` for a success, ``on_tool_error`` for any other end."""
        self._fire("on_tool_end" if event.call.status == "success" else "on_tool_error", event)

    def _fire(self, hook: str, event: ToolEvent) -> None:
        for target in self.hooks.get(hook, ()):
            if len(self._tasks) >= MAX_IN_FLIGHT:
                if time.monotonic() - self._dropped_logged_at > 60:
                    self._dropped_logged_at = time.monotonic()
                    log.warning(
                        "%d tool callbacks are still running: new events are dropped", len(self._tasks)
                    )
                return
            task = asyncio.get_running_loop().create_task(self._run(target, event))
            self._tasks.add(task)
            task.add_done_callback(self._tasks.discard)

    async def _run(self, hook: _Hook, event: ToolEvent) -> None:
        try:
            async with asyncio.timeout(CALLBACK_TIMEOUT_S):
                if inspect.iscoroutinefunction(hook.fn):
                    await hook.fn(event)
                else:
                    thread = self._threads.get(hook.owner)
                    if thread is None:
                        thread = ThreadPoolExecutor(1, thread_name_prefix=f"tool-callback-{hook.owner}")
                        self._threads[hook.owner] = thread
                    await asyncio.get_running_loop().run_in_executor(thread, hook.fn, event)
        except TimeoutError:
            log.warning(
                "tool callback %s took over %.1f s for %s (%s); left behind",
                hook.name,
                CALLBACK_TIMEOUT_S,
                event.call.tool,
                event.call.call_id,
            )
        except Exception:
            log.exception(
                "tool callback %s raised for %s (%s)", hook.name, event.call.tool, event.call.call_id
            )

    async def aclose(self, timeout_s: float = CALLBACK_TIMEOUT_S) -> None:
        """Give running callbacks up to ``timeout_s`` to finish, then stop the thread pool."""
        if self._tasks:
            await asyncio.wait(list(self._tasks), timeout=timeout_s)
        for thread in self._threads.values():
            thread.shutdown(wait=False, cancel_futures=True)

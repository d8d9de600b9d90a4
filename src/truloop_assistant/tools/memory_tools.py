"""Long-term memory tools: facts and preferences the user asked the assistant to remember."""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import BaseModel, Field, StringConstraints
from pydantic_ai import FunctionToolset, ModelRetry, RunContext, ToolFailed

from ..backends.memory import Memory, MemoryBackendError
from ..store.keys import MEMORY_MAX
from .agent_deps import AgentDeps
from .arguments import MAX_QUERY_CHARS
from .marks import CHANGES, DESTRUCTIVE

memory_toolset: FunctionToolset[AgentDeps] = FunctionToolset()


class MemorySearchResult(BaseModel):
    memories: list[Memory] = Field(description="Best match first; empty when nothing was found")


class ForgetResult(BaseModel):
    memory_id: str
    forgotten: bool = Field(description="True: the memory is deleted for good")


def _unavailable(exc: MemoryBackendError) -> ToolFailed:
    return ToolFailed(f"the memory service is not available right now ({exc})")


@memory_toolset.tool
async def search_memories(
    ctx: RunContext[AgentDeps],
    query: Annotated[
        str,
        StringConstraints(strip_whitespace=True, max_length=MAX_QUERY_CHARS),
        Field(description="In the user's words; none lists the latest"),
    ] = "",
    limit: Annotated[int, Field(ge=1, le=20)] = 5,
) -> MemorySearchResult:
    """What the user asked you to remember: facts, preferences, where home or the office is."""
    store = ctx.deps.require_backends().memory
    try:
        found = await store.search(ctx.deps.user_id, query, limit=limit)
    except MemoryBackendError as exc:
        raise _unavailable(exc) from None
    return MemorySearchResult(memories=found)


@memory_toolset.tool(metadata=CHANGES)
async def save_memory(
    ctx: RunContext[AgentDeps],
    text: Annotated[
        str,
        StringConstraints(strip_whitespace=True, min_length=1, max_length=1000),
        Field(description="One self-contained sentence in the user's language"),
    ],
) -> Memory:
    """Remember a fact, only when the user asks you to."""
    store = ctx.deps.require_backends().memory
    try:
        return await store.save(ctx.deps.user_id, text)
    except MemoryBackendError as exc:
        raise _unavailable(exc) from None


async def _validate_forget(ctx: RunContext[AgentDeps], /, *_: Any, **args: Any) -> None:
    """Before the confirmation dialog: the memory must be one of the user's."""
    memory_id = args["memory_id"]
    try:
        memories = await ctx.deps.require_backends().memory.list_recent(ctx.deps.user_id, limit=MEMORY_MAX)
    except MemoryBackendError as exc:
        raise _unavailable(exc) from None
    if all(m.memory_id != memory_id for m in memories):
        raise ModelRetry(
            f"there is no memory {memory_id!r} for this user; search_memories lists the ones that exist"
        )


@memory_toolset.tool(metadata=DESTRUCTIVE, args_validator=_validate_forget)
async def forget_memory(
    ctx: RunContext[AgentDeps],
    memory_id: Annotated[
        str,
        StringConstraints(strip_whitespace=True, min_length=1, max_length=128),
        Field(description="From search_memories"),
    ],
) -> ForgetResult:
    """Delete one of the user's memories for good."""
    store = ctx.deps.require_backends().memory
    try:
        forgotten = await store.forget(ctx.deps.user_id, memory_id)
    except MemoryBackendError as exc:
        raise _unavailable(exc) from None
    if not forgotten:
        raise ToolFailed(
            f"there is no memory {memory_id!r} for this user (it may already be forgotten); "
            "search_memories lists the memories that exist"
        )
    return ForgetResult(memory_id=memory_id, forgotten=True)

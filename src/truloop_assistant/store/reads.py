"""Reads from several stores in one round trip: what a step needs before it runs the model.

A store offers a read as a :class:`Read`: the one command it sends and how its reply becomes a value.
Alone, a read is one round trip (:meth:`Read.once`); a :class:`Batch` sends many in one pipeline
(on a Redis Cluster, one per node), without a transaction: each read is as fresh as if it were alone.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar

from redis.asyncio import Redis

T = TypeVar("T")

Write = Callable[[Any], Any]
"""A command whose reply nobody needs: put on a client, a pipeline or a transaction."""


@dataclass(frozen=True)
class Read(Generic[T]):
    """One command (``send`` puts it on a client or a pipeline) and the value its reply decodes to."""

    send: Callable[[Any], Any]
    decode: Callable[[Any], T]

    async def once(self, redis: Redis) -> T:
        return self.decode(await self.send(redis))


@dataclass
class Slot(Generic[T]):
    """Where a batched read's value lands once the batch has run."""

    _value: T | None = None
    _filled: bool = False

    @property
    def value(self) -> T:
        if not self._filled:
            raise RuntimeError("the batch has not run yet")
        return self._value  # type: ignore[return-value]  # filled: T, which may itself be optional

    def fill(self, value: T) -> None:
        self._value, self._filled = value, True


@dataclass
class Batch:
    """Reads sent together: :meth:`add` each, :meth:`run` once, then read each slot's ``value``."""

    redis: Redis
    _reads: list[tuple[Read[Any], Slot[Any]]] = field(default_factory=list)

    def add(self, read: Read[T]) -> Slot[T]:
        slot: Slot[T] = Slot()
        self._reads.append((read, slot))
        return slot

    def write(self, send: Write) -> None:
        """A command whose reply nobody needs, sent in its place among the reads (on one node, the
        reads after it see what it wrote)."""
        self.add(Read(send, _ignored))

    async def run(self) -> None:
        if not self._reads:
            return
        async with self.redis.pipeline(transaction=False) as pipe:
            for read, _ in self._reads:
                read.send(pipe)
            replies = await pipe.execute()
        for (read, slot), reply in zip(self._reads, replies, strict=True):
            slot.fill(read.decode(reply))


async def run_writes(redis: Redis, writes: list[Write]) -> None:
    """Send writes whose replies nobody needs in one pipeline (on a Redis Cluster, one per node)."""
    batch = Batch(redis)
    for write in writes:
        batch.write(write)
    await batch.run()


def _ignored(reply: Any) -> None:
    return None

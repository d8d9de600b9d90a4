"""Python's cyclic garbage collector, set for a long-running server process.

A server keeps a few hundred thousand objects for good (modules, pydantic schemas, the agents and
their tools) and makes tens of thousands more per turn, nearly all freed by reference counting.
With Python's defaults the collector runs every 700 new containers, and every so often walks all
of the objects a process keeps: over a tenth of a worker's CPU under load, and pauses that a
request waiting for its answer feels. :func:`settle` is called once a process has started: what
it made to start is frozen (never walked again) and young objects are collected every
``GEN0_THRESHOLD`` new containers instead. Cycles of garbage are still collected, a little later.
"""

from __future__ import annotations

import gc

GEN0_THRESHOLD = 50_000
"""New containers (less those freed) between two collections of the youngest generation."""


def settle(gen0_threshold: int = GEN0_THRESHOLD) -> None:
    """Freeze what the process holds now, after collecting what it no longer does."""
    gc.collect()
    gc.freeze()
    _, gen1, gen2 = gc.get_threshold()
    gc.set_threshold(gen0_threshold, gen1, gen2)

"""A served process's garbage collector: what it started with is frozen, young objects are collected
less often, and garbage held in reference cycles is still freed (a process that leaked them would
grow until it is killed).

Each check runs in a fresh interpreter: freezing this test process's objects would keep every
earlier test's garbage for good.
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

from truloop_assistant.runtime.collector import GEN0_THRESHOLD

PROBE = textwrap.dedent(
    """
    import gc, json, weakref
    import truloop_assistant.app  # what a served process imports to start
    from truloop_assistant.runtime.collector import settle

    class Node:
        def __init__(self):
            self.other = self

    settle()
    freed = []
    for _ in range(20):  # cycles made after the start, then dropped
        cycle = Node()
        weakref.finalize(cycle, freed.append, 1)
        del cycle
    junk = [[i] for i in range(3 * %d)]  # new containers: enough for young collections to run
    del junk
    seen = {"frozen": gc.get_freeze_count(), "threshold": gc.get_threshold()[0], "freed": len(freed)}
    print(json.dumps(seen))
    """
)


def test_a_settled_process_freezes_its_start_and_still_frees_cycles() -> None:
    out = subprocess.run(
        [sys.executable, "-c", PROBE % GEN0_THRESHOLD], check=True, capture_output=True, text=True, timeout=60
    ).stdout
    seen = json.loads(out)

    assert seen["frozen"] > 100_000  # the modules and everything made to start
    assert seen["threshold"] == GEN0_THRESHOLD
    assert seen["freed"] == 20  # garbage cycles are collected, only less often

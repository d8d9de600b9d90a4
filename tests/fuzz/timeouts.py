"""A time bound that fails a fuzz test even when the event loop hangs in a task of the server.

Each fuzz test has a bound (``@pytest.mark.timeout``): pytest-timeout, with its "signal" method,
sets an alarm and on SIGALRM prints the stacks of all threads and raises its Timeout in whatever
the main thread runs, where the event loop runs. Alone that ends the task the loop is stuck in,
not the test: a request or a turn in an endless loop dies, the test goes on waiting, and the next
time the server runs that code (the fuzzer sends the input again to shrink it, the queue runs the
turn again) the loop is stuck for good. ``timeout_until_it_lands`` adds what is missing.
"""

from __future__ import annotations

import asyncio
import signal
import threading
import traceback
from collections.abc import Iterator
from contextlib import contextmanager
from types import FrameType

MAX_IDLE_ALARMS = 5


class TimedOut(BaseException):
    """The test ran past its time bound.

    A BaseException, so that hypothesis lets it through at once instead of shrinking it as a failure.
    """


def _waiting(frame: FrameType | None) -> bool:
    """The alarm came while the event loop waited for events (no task was running)."""
    code = frame.f_code if frame is not None else None
    return code is not None and code.co_name == "select" and code.co_filename.endswith("selectors.py")


@contextmanager
def timeout_until_it_lands(timed_out: threading.Event) -> Iterator[None]:
    """Turn the test's pytest-timeout alarm into the end of the test (entered from the test's task).

    On the alarm: ``timed_out`` is set (the fuzzing thread stops: ``Fuzz.post`` raises
    :class:`TimedOut`), the test's task is cancelled (so that it stops its server on the way out and
    fails with :class:`TimedOut`), and when the alarm came in a task (the loop is stuck there),
    pytest-timeout's handler prints the stacks and raises its Timeout in that task. The alarm then
    comes back every second until the test is over, for a loop that gets stuck again; after
    ``MAX_IDLE_ALARMS`` of them the Timeout is raised wherever it lands, as pytest-timeout alone does.
    """
    original = signal.getsignal(signal.SIGALRM)
    test = asyncio.current_task()
    if not callable(original) or test is None:  # no time bound with the signal method on this test
        yield
        return
    loop = test.get_loop()
    alarms = 0
    stuck: list[str] = []  # where the event loop was when an alarm came in a task

    def on_alarm(signum: int, frame: FrameType | None) -> None:
        nonlocal alarms
        alarms += 1
        signal.setitimer(signal.ITIMER_REAL, 1.0)  # and again, until the test is over
        if not timed_out.is_set():
            timed_out.set()
            if asyncio.current_task(loop) is not test:  # (in the test's own code, the Timeout ends it)
                loop.call_soon_threadsafe(test.cancel)
        if _waiting(frame) and alarms <= MAX_IDLE_ALARMS:
            return  # the loop is free: the cancellation reaches the test
        if frame is not None and not stuck:
            stuck.append("".join(traceback.format_stack(frame)[-12:]))
        original(signum, frame)  # pytest-timeout: the stacks of all threads, then its Timeout

    signal.signal(signal.SIGALRM, on_alarm)
    try:
        yield
    except asyncio.CancelledError as exc:
        if not timed_out.is_set():
            raise
        test.uncancel()
        where = f"; the event loop was stuck here:\n{stuck[0]}" if stuck else ""
        raise TimedOut(f"the test ran past its time bound (@pytest.mark.timeout){where}") from exc
    finally:
        if signal.getsignal(signal.SIGALRM) is on_alarm:
            if timed_out.is_set():
                signal.setitimer(signal.ITIMER_REAL, 0)
            signal.signal(signal.SIGALRM, original)

"""What every worker runs beside its jobs, once a second: the scans that keep conversations moving."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, Mapping

log = logging.getLogger(__name__)

SCAN_INTERVAL_S = 1.0


async def scan_forever(
    scans: Mapping[str, Callable[[], Awaitable[object]]], *, interval_s: float = SCAN_INTERVAL_S
) -> None:
    """Run each named scan every ``interval_s`` until cancelled; a failed scan is logged and run again."""
    while True:
        for name, scan in scans.items():
            try:
                await scan()
            except asyncio.CancelledError:
                raise
            except Exception:
                log.exception("%s scan failed; trying again", name)
        await asyncio.sleep(interval_s)

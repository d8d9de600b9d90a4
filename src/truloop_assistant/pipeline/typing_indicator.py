"""The typing indicator: shown while a drain works on a step, sent in the background, in order.

A step never waits for it, and a step that ends within ``SHOW_AFTER_S`` shows nothing at all: its
answer appears as fast as a typing indicator would, and the channel is spared two calls. Each
conversation has at most one call in flight, and its calls go out
in the order the drain asked for them; a start still unsent when its step ends is not sent at all
(nor its stop). At most ``MAX_TYPING`` conversations per process are shown typing at once: more
starts are dropped, not queued, so a slow or hanging typing endpoint holds a bounded number of
connections and tasks. A conversation keeps its place until its stop has gone out, so a stop is
never dropped here. A start the channel skips (no budget to spare, see ``channels.pacing``) is not
tried again in that step, and has no stop; so each step shows at most one start and one stop.
"""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass

from ..channels.base import Channel

log = logging.getLogger(__name__)

MAX_TYPING = 64
"""Conversations shown typing at once by one process (beyond a worker's concurrency, below its pool)."""
SHOW_AFTER_S = 0.3
"""A step shows the bot typing once it has worked this long (a real model takes seconds)."""


@dataclass
class _Indicator:
    wanted: bool
    shown: bool = False
    """Whether the last call that went out was a start (it may have failed: a stop follows anyway)."""


class Typing:
    def __init__(
        self, channel: Channel, *, max_typing: int = MAX_TYPING, show_after_s: float = SHOW_AFTER_S
    ) -> None:
        self.channel = channel
        self.max_typing = max_typing
        self.show_after_s = show_after_s
        self._indicators: dict[str, _Indicator] = {}
        self._senders: dict[str, asyncio.Task[None]] = {}

    def start(self, channel_url: str) -> None:
        """Show the bot as typing in the channel, unless too many conversations already are."""
        indicator = self._indicators.get(channel_url)
        if indicator is None:
            if len(self._indicators) >= self.max_typing:
                log.debug(
                    "not showing typing in %s: %d conversations already are", channel_url, self.max_typing
                )
                return
            indicator = self._indicators[channel_url] = _Indicator(wanted=True)
        indicator.wanted = True
        self._wake(channel_url)

    def stop(self, channel_url: str) -> None:
        """Stop showing the bot as typing in the channel (nothing to do if it was not)."""
        if (indicator := self._indicators.get(channel_url)) is not None:
            indicator.wanted = False
            self._wake(channel_url)

    async def settle(self) -> None:
        """Wait until every typing call asked for has gone out (shutdown, tests)."""
        while self._senders:
            await asyncio.wait(list(self._senders.values()))

    def _wake(self, channel_url: str) -> None:
        if channel_url not in self._senders:
            self._senders[channel_url] = asyncio.create_task(
                self._send(channel_url), name=f"typing:{channel_url}"
            )

    async def _send(self, channel_url: str) -> None:
        indicator = self._indicators[channel_url]
        try:
            if indicator.wanted and not indicator.shown and self.show_after_s:
                await asyncio.sleep(self.show_after_s)  # a stop asked for meanwhile cancels it out
            # Runs until the channel shows what the drain wants now; a start and stop asked for
            # before the first call cancel out.
            while indicator.shown != indicator.wanted:
                target = indicator.wanted
                sent: bool | None = True
                try:
                    if target:
                        sent = await self.channel.typing_started(channel_url)
                    else:
                        sent = await self.channel.typing_stopped(channel_url)
                except Exception:
                    log.warning("typing call in %s failed", channel_url, exc_info=True)
                if sent is False and target and indicator.wanted:
                    # Skipped for want of budget: this step shows no typing (nor stops it), and
                    # is not tried again until the next step asks.
                    indicator.wanted = False
                    continue
                indicator.shown = target
        finally:
            del self._senders[channel_url]
            if not indicator.wanted and not indicator.shown:
                del self._indicators[channel_url]

"""What every tool can see about the turn it runs in."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from zoneinfo import ZoneInfo


def _utcnow() -> datetime:
    return datetime.now(UTC)


@dataclass
class AgentDeps:
    user_id: str
    channel_url: str
    timezone: ZoneInfo = field(default_factory=lambda: ZoneInfo("Asia/Seoul"))
    clock: Callable[[], datetime] = _utcnow

    def now(self) -> datetime:
        """The current time in the user's zone."""
        return self.clock().astimezone(self.timezone)

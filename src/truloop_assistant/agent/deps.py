"""What every tool can see about the turn it runs in."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import TYPE_CHECKING
from zoneinfo import ZoneInfo

if TYPE_CHECKING:
    from ..backends import Backends


def _utcnow() -> datetime:
    return datetime.now(UTC)


@dataclass
class AgentDeps:
    user_id: str
    channel_url: str
    timezone: ZoneInfo = field(default_factory=lambda: ZoneInfo("Asia/Seoul"))
    clock: Callable[[], datetime] = _utcnow
    backends: Backends | None = None
    """Set by the server; tools that need a backend fail clearly without one."""

    def require_backends(self) -> Backends:
        """The backends, or a failed tool result the model can explain when the server has none."""
        if self.backends is None:
            from pydantic_ai import ToolFailed

            raise ToolFailed("this tool is not available here (no backends are configured)")
        return self.backends

    def now(self) -> datetime:
        """The current time in the user's zone."""
        return self.clock().astimezone(self.timezone)

"""The outcome of one doctor check, as printed."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal


@dataclass(frozen=True)
class Check:
    """The outcome of one check, as printed."""

    name: str
    status: Literal["ok", "WARN", "FAIL", "skip"]
    """``WARN``: works now, but needs the operator's attention soon; only ``FAIL`` fails doctor."""
    detail: str

    def render(self) -> str:
        return f"{self.status:<4}  {self.name}: {self.detail}"

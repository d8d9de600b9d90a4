"""Tool callbacks for truloop-assistant that keep an audit trail: one JSON line per tool event.

Lines go to the file named by ``TRULOOP_AUDIT_FILE`` (appended), or to the ``truloop_audit`` logger.
Each line has the event (``start``, ``end`` or ``error``), the turn, and the call's ledger record,
with the call's result once it ended (secrets redacted, cut to 2 KB: ``result_cut``)::

    {"event": "end", "turn_id": "...", "channel_url": "...", "user_id": "jeff",
     "call": {"call_id": "...", "tool": "crm_delete_customer", "kind": "server", "status": "success",
              "args": {"customer_id": "c-17"}, "error": null, "duration_ms": 41.2,
              "result": "deleted c-17", "result_cut": false, ...}}
"""

from __future__ import annotations

import json
import logging
import os
import threading
from typing import Any

log = logging.getLogger("truloop_audit")


class AuditLog:
    """Instantiated once per server process; the server calls its hooks beside each turn."""

    def __init__(self) -> None:
        self.path = os.environ.get("TRULOOP_AUDIT_FILE")
        self._lock = threading.Lock()

    def on_tool_start(self, event: Any) -> None:
        self._write("start", event)

    def on_tool_end(self, event: Any) -> None:
        self._write("end", event)

    def on_tool_error(self, event: Any) -> None:
        self._write("error", event)

    def _write(self, kind: str, event: Any) -> None:
        line = json.dumps(
            {
                "event": kind,
                "turn_id": event.turn_id,
                "channel_url": event.channel_url,
                "user_id": event.user_id,
                "call": event.call.model_dump(mode="json"),
            },
            ensure_ascii=False,
        )
        if self.path is None:
            log.info("%s", line)
            return
        with self._lock, open(self.path, "a", encoding="utf-8") as f:
            f.write(line + "\n")

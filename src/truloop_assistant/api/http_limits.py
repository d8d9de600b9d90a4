"""How big a request head may be and how long a request may take to arrive, enforced as it is read.

uvicorn's httptools protocol with these limits, per request, before anything reaches the app:

- ``MAX_HEAD_BYTES`` = 16 KiB (16384 bytes) for the whole head: request line, header lines and the
  blank line that ends them. One byte more answers 431 ``headers_too_large`` and closes.
- ``MAX_HEADER_FIELDS`` = 100 header fields; the 101st answers 431 ``headers_too_large`` and closes.
- ``HEAD_TIMEOUT_S`` = 30 s for a head to arrive, from its first byte (a new connection's first
  request: from the moment it opened, so a silent connection is a slow one).
- ``BODY_TIMEOUT_S`` = 30 s for a body to arrive completely once its head is in.

A request that runs out of time gets 408 ``request_timeout`` when no response has started (a
connection that never sent a byte is closed without one), then the connection closes. After a 431
or 408 the server stops sending, reads and drops what is still in flight for up to ``LINGER_S``
seconds, then closes: closing on unread bytes would reset the connection and lose the answer.
Idle keep-alive connections are uvicorn's business (``timeout_keep_alive``).

The class leans on non-public parts of uvicorn's httptools protocol, so pyproject pins uvicorn to
the minor version it was written against (0.54); ``tests/api/test_http_limits.py`` checks it.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any, ClassVar, Literal

import httptools
from uvicorn.config import Config
from uvicorn.protocols.http.httptools_impl import STATUS_LINE, HttpToolsProtocol, RequestResponseCycle
from uvicorn.server import ServerState

MAX_HEAD_BYTES = 16 * 1024
MAX_HEADER_FIELDS = 100
HEAD_TIMEOUT_S = 30.0
BODY_TIMEOUT_S = 30.0
LINGER_S = 2.0

Phase = Literal["idle", "head", "body"]


class _HeadersTooLarge(Exception):
    """Raised from a parser callback to stop the parser; ``data_received`` answers 431."""


class LimitedHttpToolsProtocol(HttpToolsProtocol):
    """uvicorn's httptools protocol with the head size, field count and arrival time limits above."""

    head_timeout: ClassVar[float] = HEAD_TIMEOUT_S
    body_timeout: ClassVar[float] = BODY_TIMEOUT_S

    def __init__(
        self,
        config: Config,
        server_state: ServerState,
        app_state: dict[str, Any],
        _loop: asyncio.AbstractEventLoop | None = None,
    ) -> None:
        super().__init__(config, server_state, app_state, _loop)
        self._phase: Phase = "idle"
        self._requests = 0  # requests begun on this connection; names which one a deadline is for
        self._head_bytes = 0
        self._fields = 0
        self._ended_in_chunk = False
        self._too_large = False
        self._lingering = False
        self._handed_over = False
        self._timer: asyncio.TimerHandle | None = None
        self._timer_for: tuple[Phase, int] | None = None

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        self._arm("head", 1)

    def connection_lost(self, exc: Exception | None) -> None:
        self._disarm()
        super().connection_lost(exc)

    def data_received(self, data: bytes) -> None:
        if self._lingering:
            return
        self._unset_keepalive_if_required()
        view = memoryview(data)
        while view:
            # Feeding at most the head's remaining allowance at a time means a head still incomplete
            # after the allowance is over the limit, without finding where heads end ourselves.
            # A request that begins in the same slice as the previous one ends is counted from the
            # next slice, so a pipelined head can pass with up to one slice (16 KiB) more.
            room = MAX_HEAD_BYTES - self._head_bytes
            chunk, view = view[:room], view[room:]
            self._ended_in_chunk = False
            if not self._feed(chunk):
                break
            if self._phase == "head" and not self._ended_in_chunk:
                self._head_bytes += len(chunk)
                if self._head_bytes >= MAX_HEAD_BYTES:
                    self._refuse_head(f"the request line and headers are larger than {MAX_HEAD_BYTES} bytes")
                    return
        self._follow_phase()

    def _feed(self, chunk: memoryview) -> bool:
        """Parse a slice as uvicorn would; False when the connection is no longer ours to read."""
        try:
            self.parser.feed_data(chunk)
        except httptools.HttpParserUpgrade:
            if self._should_upgrade():
                self._disarm()
                self._handed_over = True  # the WebSocket protocol owns the connection from here
                self.handle_websocket_upgrade()
            else:
                self._unsupported_upgrade_warning()
            return False
        except httptools.HttpParserError:
            if self._too_large:
                self._refuse_head(f"the request has more than {MAX_HEADER_FIELDS} header fields")
            else:
                self.logger.warning("Invalid HTTP request received.")
                self.send_400_response("Invalid HTTP request received.")
            return False
        return not self.transport.is_closing()

    # Parser callbacks: they only track where the current request is.
    def on_message_begin(self) -> None:
        super().on_message_begin()
        self._phase = "head"
        self._requests += 1
        self._head_bytes = self._fields = 0

    def on_header(self, name: bytes, value: bytes) -> None:
        self._fields += 1
        if self._fields > MAX_HEADER_FIELDS:
            self._too_large = True
            raise _HeadersTooLarge
        super().on_header(name, value)

    def on_headers_complete(self) -> None:
        super().on_headers_complete()
        self._phase = "body"
        self._head_bytes = 0  # the body and whatever follows are read in full slices

    def on_message_complete(self) -> None:
        super().on_message_complete()
        self._phase = "idle"
        self._ended_in_chunk = True

    # Deadlines: one timer, for the phase and request the connection is in after each read.
    def _follow_phase(self) -> None:
        if self._handed_over or self._lingering or self.transport.is_closing():
            return
        due: tuple[Phase, int] | None = None
        if self._phase != "idle":
            due = (self._phase, self._requests)
        elif self._requests == 0:
            due = ("head", 1)  # nothing but blank lines yet: still waiting for the first head
        if due != self._timer_for:
            self._disarm()
            if due is not None:
                self._arm(*due)

    def _arm(self, phase: Phase, request: int) -> None:
        timeout = self.head_timeout if phase == "head" else self.body_timeout
        self._timer = self.loop.call_later(timeout, self._expire)
        self._timer_for = (phase, request)

    def _disarm(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
        self._timer = self._timer_for = None

    def _expire(self) -> None:
        if self._timer_for is None:
            return
        phase, request = self._timer_for
        self._timer = self._timer_for = None
        if self.transport.is_closing():
            return
        cycle: RequestResponseCycle | None = self.cycle
        if phase == "body" and cycle is not None:
            if self.flow.read_paused:
                # The server stopped reading (the app has not taken the body yet, or a request ahead
                # of this one still runs): the client is not the slow one.
                self._arm(phase, request)
                return
            answerable = not cycle.response_started and not self.pipeline
            # The app must not answer too, nor wait for a body that will never come.
            cycle.disconnected = True
            cycle.waiting_for_100_continue = False
            cycle.message_event.set()
        else:
            answerable = self._requests > 0 and (cycle is None or cycle.response_complete)
        timeout = self.head_timeout if phase == "head" else self.body_timeout
        what = "headers" if phase == "head" else "body"
        self.logger.info("%s - request %s took more than %g s; closing", self._peer(), what, timeout)
        if answerable:
            self._answer(408, "request_timeout", f"the request {what} did not arrive within {timeout:g} s")
        else:
            self._close()

    # Ending a connection.
    def _refuse_head(self, message: str) -> None:
        self.logger.info("%s - %s; refused with 431", self._peer(), message)
        cycle: RequestResponseCycle | None = self.cycle
        if cycle is None or cycle.response_complete:
            self._answer(431, "headers_too_large", message)
        else:
            self._close()  # a response to an earlier request is still being written

    def _answer(self, status: int, code: str, message: str) -> None:
        """Send an error in the API's JSON shape, then half-close and drain before closing."""
        self._disarm()
        body = json.dumps({"error": {"code": code, "message": message}}, separators=(",", ":")).encode()
        head = [STATUS_LINE[status]]
        head += [name + b": " + value + b"\r\n" for name, value in self.server_state.default_headers]
        head += [b"content-type: application/json\r\n", b"content-length: %d\r\n" % len(body)]
        self.transport.write(b"".join([*head, b"connection: close\r\n\r\n", body]))
        if not self.transport.can_write_eof():
            self._close()
            return
        self.transport.write_eof()
        self._lingering = True
        self.flow.resume_reading()
        self._timer = self.loop.call_later(LINGER_S, self._close)

    def _close(self) -> None:
        self._disarm()
        self._lingering = False
        # A client that does not read would keep a graceful close waiting for ever: drop it instead.
        if self.transport.get_write_buffer_size():
            self.transport.abort()
        else:
            self.transport.close()

    def _peer(self) -> str:
        return f"{self.client[0]}:{self.client[1]}" if self.client else "-"


def limited_protocol(
    *, head_timeout: float = HEAD_TIMEOUT_S, body_timeout: float = BODY_TIMEOUT_S
) -> type[LimitedHttpToolsProtocol]:
    """The protocol with other arrival bounds (tests use short ones), for a server in this process."""

    class Limited(LimitedHttpToolsProtocol):
        pass

    Limited.head_timeout = head_timeout
    Limited.body_timeout = body_timeout
    return Limited

"""The HTTP server of the side ports: the worker's ``--metrics-port`` (probes and the Prometheus text)
and ``serve``'s ``TRULOOP_METRICS_PORT``, each answering a WSGI app.

One thread per port runs an asyncio loop of its own: a connection costs a few kilobytes and no
thread, whatever its client does, and a stuck worker loop cannot keep the port from answering. A
request is read whole before the app sees it (:mod:`.side_port_http`), one per connection, within:

- ``HEAD_TIMEOUT_S`` = 5 s for the request head to arrive, from the moment the connection opened;
  then ``408 request_timeout`` and close (a connection that sent nothing is closed without one);
- ``MAX_HEAD_BYTES`` = 8 KiB for the head, request line to blank line (a scrape's is a few hundred
  bytes); over it, ``431 headers_too_large``; a malformed one, ``400 bad_request``;
- ``MAX_CONNECTIONS`` = 128 open at once: one more closes the connection that has waited longest for
  its request (a flood of stalled connections cannot keep a scraper out), or, when every open one is
  being answered, the new one;
- ``WRITE_TIMEOUT_S`` = 5 s for the client to take the answer.

After an error answer, what the client still sends is read and dropped for ``LINGER_S``, then the
connection closes (closing on unread bytes would reset it and lose the answer). This module imports
only the standard library.
"""

from __future__ import annotations

import asyncio
import socket
import threading

from .side_port_http import SidePortRefused, WsgiApp, call, environ

HEAD_TIMEOUT_S = 5.0
MAX_HEAD_BYTES = 8 * 1024
MAX_CONNECTIONS = 128
WRITE_TIMEOUT_S = 5.0
LINGER_S = 1.0

_END = b"\r\n\r\n"


class SidePortServer:
    """A WSGI app on ``host:port``, answered from a daemon thread of its own.

    :class:`OSError` when the port cannot be bound. ``shutdown()`` then ``server_close()`` stop it
    (the process's exit does too).
    """

    def __init__(self, app: WsgiApp, host: str, port: int, *, name: str) -> None:
        self._app = app
        family = socket.getaddrinfo(host or None, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)[0][
            0
        ]
        self._sock = socket.create_server((host, port), family=family, backlog=MAX_CONNECTIONS)
        self.server_address = (host, self._sock.getsockname()[1])
        self._open: set[asyncio.StreamWriter] = set()
        self._waiting: dict[asyncio.StreamWriter, None] = {}  # still reading their head, oldest first
        self._loop = asyncio.new_event_loop()
        self._stop = asyncio.Event()
        self._thread = threading.Thread(target=self._loop.run_until_complete, args=(self._main(),), name=name)
        self._thread.daemon = True
        self._thread.start()

    async def _main(self) -> None:
        server = await asyncio.start_server(self._connection, sock=self._sock, limit=MAX_HEAD_BYTES + 1)
        async with server:
            await self._stop.wait()
            server.close()
            for writer in list(self._open):
                self._close(writer)
        others = [t for t in asyncio.all_tasks() if t is not asyncio.current_task()]
        for task in others:
            task.cancel()
        await asyncio.gather(*others, return_exceptions=True)

    def shutdown(self) -> None:
        """Stop answering, closing every connection; returns once the thread has ended."""
        if self._thread.is_alive():
            self._loop.call_soon_threadsafe(self._stop.set)
            self._thread.join(5)

    def server_close(self) -> None:
        """Close the listening socket and the loop (after :meth:`shutdown`)."""
        self._sock.close()
        if not self._thread.is_alive() and not self._loop.is_closed():
            self._loop.close()

    # -- one connection

    async def _connection(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        if len(self._open) >= MAX_CONNECTIONS:
            if not self._waiting:
                writer.transport.abort()
                return
            self._close(next(iter(self._waiting)))
        self._open.add(writer)
        self._waiting[writer] = None
        try:
            await self._serve(reader, writer)
        except (ConnectionError, TimeoutError):
            pass  # the client went away, or would not take its answer in time
        finally:
            self._close(writer)

    def _close(self, writer: asyncio.StreamWriter) -> None:
        self._open.discard(writer)
        self._waiting.pop(writer, None)
        writer.transport.abort()

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            head = await self._head(reader)
            if head is None:
                return  # closed, or silent until the deadline: nobody to answer
            self._waiting.pop(writer, None)
            request = environ(head, server=self.server_address, peer=writer.get_extra_info("peername"))
        except SidePortRefused as refused:
            self._waiting.pop(writer, None)
            await self._send(writer, refused.answer(), then_close=False)
            await self._linger(reader, writer)
            return
        await self._send(writer, call(self._app, request))

    async def _head(self, reader: asyncio.StreamReader) -> bytes | None:
        """The request head without its blank line; None if the client closed first, or sent nothing
        before the deadline; :class:`SidePortRefused` when it is too large or came too slowly."""
        received = bytearray()
        try:
            async with asyncio.timeout(HEAD_TIMEOUT_S):
                while (end := received.find(_END)) < 0 and len(received) <= MAX_HEAD_BYTES:
                    chunk = await reader.read(MAX_HEAD_BYTES + 1 - len(received))
                    if not chunk:
                        return None
                    received += chunk
        except TimeoutError:
            if not received:
                return None
            raise SidePortRefused(
                408, "request_timeout", f"the request did not arrive within {HEAD_TIMEOUT_S:g} s"
            ) from None
        if end < 0 or end + len(_END) > MAX_HEAD_BYTES:
            raise SidePortRefused(
                431, "headers_too_large", f"the request head is over {MAX_HEAD_BYTES} bytes"
            )
        return bytes(received[:end])

    @staticmethod
    async def _send(writer: asyncio.StreamWriter, data: bytes, *, then_close: bool = True) -> None:
        """Write ``data`` and, with ``then_close``, close once all of it is sent (an abort would drop
        what the transport still buffers)."""
        async with asyncio.timeout(WRITE_TIMEOUT_S):
            writer.write(data)
            await writer.drain()
            if then_close:
                writer.close()
                await writer.wait_closed()

    @staticmethod
    async def _linger(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        """Send EOF after the answer, drop what still comes for up to ``LINGER_S``, then close."""
        if writer.can_write_eof():
            writer.write_eof()
        try:
            async with asyncio.timeout(LINGER_S):
                while await reader.read(65536):
                    pass
                writer.close()
                await writer.wait_closed()
        except TimeoutError:
            pass

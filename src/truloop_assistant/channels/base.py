"""What the server needs from a messaging channel: send the answer, send a JSON-RPC request."""

from __future__ import annotations

from typing import Protocol

from ..protocol.jsonrpc import JsonRpcRequest

AGENT_RPC = "agent-rpc"


class Channel(Protocol):
    async def send_text(self, channel_url: str, text: str, *, dedup_id: str) -> None:
        """Post the assistant's answer, exactly as the model wrote it."""
        ...

    async def send_rpc(
        self, channel_url: str, request: JsonRpcRequest, *, notification: str, dedup_id: str
    ) -> None:
        """Post an ``agent-rpc`` message: ``notification`` as its text, the request as ``data``."""
        ...

    async def aclose(self) -> None: ...


class ChannelSendError(Exception):
    """A message could not be delivered after retries."""

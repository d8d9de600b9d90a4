"""A messaging channel: the user messages it delivers, and what the server sends back through it."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol, runtime_checkable

from ..errors import ServiceError
from ..protocol.files import Attachment
from ..protocol.jsonrpc import JsonRpcRequest

AGENT_RPC = "agent-rpc"
AGENT_RPC_SETTLED = "agent-rpc-settled"
"""The ``custom_type`` an ``agent-rpc`` message is updated to once its call left ``pending``."""


@dataclass(frozen=True)
class InboundMessage:
    """A user's chat message, as queued by the webhook (or the dev channel)."""

    message_id: str
    channel_url: str
    user_id: str
    text: str
    files: tuple[Attachment, ...] = ()
    """The pictures, documents and voice notes it carries (``text`` is then their caption, or empty)."""
    sender_name: str | None = None
    """The name the chat shows for its sender (a nickname), when the channel says."""

    @property
    def turn_id(self) -> str:
        return f"m{self.message_id}"


@dataclass(frozen=True)
class Capabilities:
    """What a channel can do in a conversation; the pipeline and the agent ask it, never the provider.

    ``devices``: an app on the person's phone answers device requests (``send_rpc``); without one no
    device tool is offered and nothing asks for a dialog. ``streams``: an answer may grow in place.
    ``updates``: a message can be changed after it went (``settle_rpc``). ``typing``: a typing
    indicator shows. ``max_chars``: the longest message; ``max_segments``: for SMS, how many segments
    an answer may take (None: not counted in segments).
    """

    devices: bool = True
    streams: bool = True
    updates: bool = True
    typing: bool = True
    max_chars: int = 5000
    max_segments: int | None = None


CHAT = Capabilities()
"""A chat service with the app: everything."""


class Channel(Protocol):
    """What the server sends through; a channel may also be a :class:`StreamingChannel`."""

    def capabilities(self, channel_url: str) -> Capabilities:
        """What this channel can do in the conversation ``channel_url``."""
        ...

    async def send_text(self, channel_url: str, text: str, *, dedup_id: str) -> None:
        """Post the assistant's answer, exactly as the model wrote it."""
        ...

    async def send_rpc(
        self,
        channel_url: str,
        request: JsonRpcRequest,
        *,
        notification: str,
        dedup_id: str,
        recipient: str = "",
    ) -> int | None:
        """Post an ``agent-rpc`` message: ``notification`` as its text, the request as ``data``.

        ``recipient`` (the user whose phone is to answer) is mentioned, so in a group channel only
        that person's app acts on it (and is notified). Returns the channel's id of the message.
        """
        ...

    async def settle_rpc(self, channel_url: str, message_id: int, *, data: str, text: str) -> None:
        """Update an ``agent-rpc`` message in place to ``agent-rpc-settled`` with ``data`` and ``text``.

        Raises :class:`ChannelSendError` as a send does (retryable when the channel is down).
        """
        ...

    async def typing_started(self, channel_url: str) -> bool | None:
        """Show the bot as typing in the channel; a failure is logged, never raised. False: skipped
        (no budget to spare for it), so nothing is shown and there is nothing to stop."""
        ...

    async def typing_stopped(self, channel_url: str) -> bool | None:
        """Stop showing the bot as typing in the channel; a failure is logged, never raised. False:
        skipped (no budget to spare; the indicator ends by itself)."""
        ...


@runtime_checkable
class StreamingChannel(Protocol):
    """A channel whose messages can grow in place: an answer streamed while the model writes it."""

    async def post_streamed(
        self, channel_url: str, text: str, *, dedup_id: str, streaming: bool, stopped: bool = False
    ) -> int | None:
        """Post a plain message whose ``data`` says whether it still grows, or was stopped
        (:func:`streaming_data`); the channel's id of the message. Raises :class:`ChannelSendError` as a
        send does."""
        ...

    async def update_streamed(
        self, channel_url: str, message_id: int, text: str, *, streaming: bool, stopped: bool = False
    ) -> bool:
        """Change a posted message's text (and its ``data``, :func:`streaming_data`) in place. While it
        still grows (``streaming``) the update is tried once and skipped when the budget is short: False,
        and nothing raised. Its final update is retried as a send is, and raises :class:`ChannelSendError`."""
        ...

    async def delete_message(self, channel_url: str, message_id: int) -> None:
        """Remove a message the channel shows (one that a re-run of its step no longer needs)."""
        ...


class NoDevice:
    """What a channel no app answers on does with the calls only an app can take (SMS, a guest page):
    a device request is refused for good (the outbox keeps it as a dead letter, nothing retries it),
    there is nothing to settle, and no typing shows. ``CARRIES`` names it in the refusal."""

    CARRIES = "this channel"

    async def send_rpc(
        self,
        channel_url: str,
        request: JsonRpcRequest,
        *,
        notification: str,
        dedup_id: str,
        recipient: str = "",
    ) -> int | None:
        raise ChannelSendError(
            f"{channel_url} is {self.CARRIES}: no device answers {request.method} there", retryable=False
        )

    async def settle_rpc(self, channel_url: str, message_id: int, *, data: str, text: str) -> None:
        """Nothing to settle: no request is ever posted here."""

    async def typing_started(self, channel_url: str) -> bool:
        return False

    async def typing_stopped(self, channel_url: str) -> bool:
        return False


def streaming_data(streaming: bool, *, stopped: bool = False) -> str:
    """The ``data`` of a streamed answer's message: whether it still grows, and (on its final update)
    whether the person stopped it there."""
    if stopped:
        return '{"streaming":false,"stopped":true}'
    return '{"streaming":true}' if streaming else '{"streaming":false}'


class ChannelSendError(ServiceError):
    """A message could not be delivered after retries.

    ``retryable``: the channel was down or busy (5xx, 429, timeout), so trying later makes sense;
    ``already_delivered``: the channel refused it as a repeat of a message it has already shown;
    ``status`` and ``code``: the HTTP status and the channel's own error code of a refusal, if any.
    """

    def __init__(
        self,
        message: str,
        *,
        retryable: bool,
        already_delivered: bool = False,
        status: int | None = None,
        code: int | None = None,
    ) -> None:
        super().__init__(message)
        self.retryable = retryable
        self.already_delivered = already_delivered
        self.status = status
        self.code = code

"""The parts of a Sendbird webhook delivery the server reads."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict


class _Lenient(BaseModel):
    model_config = ConfigDict(extra="allow")


class Sender(_Lenient):
    user_id: str


class Payload(_Lenient):
    message_id: int | str
    message: str = ""
    custom_type: str = ""


class Channel(_Lenient):
    channel_url: str


class WebhookEvent(_Lenient):
    category: str
    type: str | None = None
    custom_type: str = ""
    sender: Sender | None = None
    payload: Payload | None = None
    channel: Channel | None = None

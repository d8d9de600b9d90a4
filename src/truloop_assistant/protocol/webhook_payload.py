"""The parts of a Sendbird webhook delivery the server reads."""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, Field

MESSAGE_SEND = "group_channel:message_send"

# Sendbird sends a message id as a JSON integer: a string ("123"), a bool or a float is not one.
MessageId = Annotated[int, Field(strict=True, gt=0)]
NonEmpty = Annotated[str, Field(min_length=1)]


class _Lenient(BaseModel):
    model_config = ConfigDict(extra="allow")


class WebhookEvent(_Lenient):
    """Any delivery: just enough to tell whether it is a user message the assistant reads."""

    category: str
    type: str | None = None
    custom_type: str = ""

    @property
    def is_user_message(self) -> bool:
        return self.category == MESSAGE_SEND and self.type == "MESG"

    @property
    def is_file_message(self) -> bool:
        return self.category == MESSAGE_SEND and self.type == "FILE"

    def member_ids(self) -> list[str] | None:
        """The channel's members when the delivery lists them (a non-empty list of ``{"user_id"}``)."""
        return _user_ids((self.model_extra or {}).get("members")) or None

    def mentions(self, user_id: str) -> bool:
        """Whether the message mentions ``user_id`` (``mentioned_users``: objects or plain ids)."""
        return user_id in _user_ids((self.model_extra or {}).get("mentioned_users"))


def _user_ids(value: Any) -> list[str]:
    if not isinstance(value, list):
        return []
    ids = [item.get("user_id") if isinstance(item, dict) else item for item in value]
    return [i for i in ids if isinstance(i, str) and i]


class Sender(_Lenient):
    user_id: NonEmpty


class Payload(_Lenient):
    message_id: MessageId
    message: str = ""
    custom_type: str = ""


class Channel(_Lenient):
    channel_url: NonEmpty


class UserMessageEvent(WebhookEvent):
    """A ``group_channel:message_send`` of type ``MESG``: who wrote what, and where."""

    sender: Sender
    payload: Payload
    channel: Channel


def parse_webhook(data: Any) -> WebhookEvent:
    """The delivery; a user message must carry what a turn needs (``ValidationError`` otherwise)."""
    event = WebhookEvent.model_validate(data)
    return UserMessageEvent.model_validate(data) if event.is_user_message else event

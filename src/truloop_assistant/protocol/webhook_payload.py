"""The parts of a Sendbird webhook delivery the server reads, as one union on ``category``.

A ``group_channel:message_send`` is read by its ``type``: a text message (``MESG``) must carry what a
turn needs, a file (``FILE``) only what a short answer needs, any other type is acknowledged. A
``group_channel:message_update`` (the changed message, as a send carries it) and a
``group_channel:message_delete`` (the deleted message's id, its channel and its sender) must name the
message, its channel and its sender. Every other category is acknowledged and ignored.
"""

from __future__ import annotations

import math
from typing import Annotated, Any, Literal

from pydantic import (
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Discriminator,
    Field,
    OnErrorOmit,
    Tag,
    TypeAdapter,
    ValidationError,
    ValidatorFunctionWrapHandler,
    field_validator,
    model_validator,
)

from .files import MAX_FILES_PER_MESSAGE, Attachment

MESSAGE_SEND = "group_channel:message_send"
MESSAGE_UPDATE = "group_channel:message_update"
MESSAGE_DELETE = "group_channel:message_delete"

# Sendbird sends a message id as a JSON integer: a string ("123"), a bool or a float is not one.
MessageId = Annotated[int, Field(strict=True, gt=0)]
NonEmpty = Annotated[str, Field(min_length=1)]


class _Lenient(BaseModel):
    model_config = ConfigDict(extra="allow")


class User(_Lenient):
    """A member of the channel or a mentioned user, as the delivery lists them."""

    user_id: NonEmpty


def _user_objects(value: Any) -> list[Any]:
    """Objects or plain ids; anything but a list lists nobody."""
    if not isinstance(value, list):
        return []
    return [{"user_id": item} if isinstance(item, str) else item for item in value]


# An entry that names no user is left out rather than failing the delivery.
Users = Annotated[list[OnErrorOmit[User]], BeforeValidator(_user_objects)]


def _name(value: Any) -> str | None:
    """A name as the chat shows it: a non-blank string on one line, at most 80 characters; else none."""
    if not isinstance(value, str) or not (name := " ".join(value.split())):
        return None
    return name[:80]


class Sender(_Lenient):
    user_id: NonEmpty
    nickname: Annotated[str | None, BeforeValidator(_name)] = None
    """The name the chat shows for the sender (Sendbird's ``sender.nickname``); None when blank."""

    @property
    def shown_name(self) -> str | None:
        """The sender's nickname when it is a name: not blank, and not just their user id (as apps
        that set no nickname often leave it)."""
        return self.nickname if self.nickname and self.nickname != self.user_id else None


def _millis(value: Any) -> int | None:
    """A time in milliseconds since the epoch; anything else (a string, a bool, 0) says nothing."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return int(value) if value > 0 else None


class Payload(_Lenient):
    message_id: MessageId
    message: str = ""
    custom_type: str = ""
    created_at: Annotated[int | None, BeforeValidator(_millis)] = None
    """When the message was sent (milliseconds), None when the delivery does not say."""


def _flag(value: Any) -> bool:
    """A JSON ``true``; anything else (missing, null, a string) is false."""
    return value is True


class Channel(_Lenient):
    channel_url: NonEmpty
    is_super: Annotated[bool, BeforeValidator(_flag)] = False
    """A Supergroup: Sendbird never lists its members in a delivery."""


class _MessageSend(_Lenient):
    category: Literal["group_channel:message_send"]
    members: Users = []
    mentioned_users: Users = []

    def member_ids(self) -> list[str] | None:
        """The channel's members when the delivery lists them (``members`` only when enabled)."""
        return [member.user_id for member in self.members] or None

    def mentions(self, user_id: str) -> bool:
        """Whether the message mentions ``user_id``."""
        return any(user.user_id == user_id for user in self.mentioned_users)


class UserMessageEvent(_MessageSend):
    """A ``group_channel:message_send`` of type ``MESG``: who wrote what, and where."""

    type: Literal["MESG"]
    custom_type: str = ""
    sender: Sender
    payload: Payload
    channel: Channel


class FilePayload(Payload):
    """A ``FILE`` message's payload: the message's own fields, and the file(s) it carries.

    Read as Sendbird's file message defines them: ``url``, ``name``, ``type``, ``size`` and
    ``require_auth`` (the chat SDKs' ``FileMessage``, the Platform API's file message resource); the
    same under ``file`` (the Platform API's message resource nests them so), and the names of its
    "Send a message" request (``file_name``, ``file_size``, ``file_type``) too. A message of several
    files (the SDKs' ``MultipleFilesMessage``) lists them in ``files``. A file without a URL is none.
    """

    files: list[Attachment] = []

    @model_validator(mode="before")
    @classmethod
    def _gather(cls, value: Any) -> Any:
        if not isinstance(value, dict):
            return value
        listed = value.get("files")
        items: list[Any] = listed if isinstance(listed, list) else [value]
        found = [a for item in items if isinstance(item, dict) and (a := _attachment(item)) is not None]
        return {**value, "files": found[:MAX_FILES_PER_MESSAGE]}


def _attachment(item: dict[str, Any]) -> Attachment | None:
    nested = item.get("file")
    merged: dict[str, Any] = {**item, **nested} if isinstance(nested, dict) else item

    def first(*names: str) -> Any:
        return next((merged[n] for n in names if merged.get(n) not in (None, "")), None)

    url, name = first("url", "file_url"), first("name", "file_name", "filename")
    kind, size = first("type", "file_type"), first("size", "file_size")
    try:
        return Attachment(
            url=url if isinstance(url, str) else "",
            name=name[:255] if isinstance(name, str) else "",
            stated_type=kind[:127] if isinstance(kind, str) else "",
            size=size if isinstance(size, int) and not isinstance(size, bool) and size >= 0 else None,
            require_auth=merged.get("require_auth") is True,
        )
    except ValidationError:
        return None  # no URL (or one too long): not a file the server can fetch


class FileMessageEvent(_MessageSend):
    """A file or picture sent in a channel; a part that cannot be read is ``None`` (no answer then)."""

    type: Literal["FILE"]
    sender: Sender | None = None
    payload: FilePayload | None = None
    channel: Channel | None = None

    @field_validator("sender", "payload", "channel", mode="wrap")
    @classmethod
    def _unreadable_is_none(cls, value: Any, handler: ValidatorFunctionWrapHandler) -> Any:
        try:
            return handler(value)
        except ValidationError:
            return None


class OtherMessageEvent(_MessageSend):
    """A message of another type (an admin message, …): acknowledged, never answered."""

    type: str | None = None


class MessageUpdateEvent(_Lenient):
    """A ``group_channel:message_update``: a message changed in place; ``payload.message`` is its text
    now (the assistant's own requests are updated this way as their calls settle)."""

    category: Literal["group_channel:message_update"]
    type: str | None = None
    custom_type: str = ""
    sender: Sender
    payload: Payload
    channel: Channel


class MessageDeleteEvent(_Lenient):
    """A ``group_channel:message_delete``: the message ``payload.message_id`` of ``sender`` is gone."""

    category: Literal["group_channel:message_delete"]
    custom_type: str = ""
    sender: Sender
    payload: Payload
    channel: Channel


class IgnoredEvent(_Lenient):
    """A delivery of any other category (a join, a channel change, …): acknowledged, never answered."""

    category: str


def _message_type(value: Any) -> str | None:
    kind = value.get("type") if isinstance(value, dict) else getattr(value, "type", None)
    if kind is not None and not isinstance(kind, str):
        return None
    return kind if kind in ("MESG", "FILE") else "other"


def _category(value: Any) -> str | None:
    category = value.get("category") if isinstance(value, dict) else getattr(value, "category", None)
    if not isinstance(category, str):
        return None
    return _CATEGORIES.get(category, "other")


_CATEGORIES = {
    MESSAGE_SEND: "message_send",
    MESSAGE_UPDATE: "message_update",
    MESSAGE_DELETE: "message_delete",
}


MessageSendEvent = Annotated[
    Annotated[UserMessageEvent, Tag("MESG")]
    | Annotated[FileMessageEvent, Tag("FILE")]
    | Annotated[OtherMessageEvent, Tag("other")],
    Discriminator(
        _message_type,
        custom_error_type="invalid_type",
        custom_error_message="type: a message's type is a string (MESG, FILE, …)",
    ),
]

WebhookEvent = Annotated[
    Annotated[MessageSendEvent, Tag("message_send")]
    | Annotated[MessageUpdateEvent, Tag("message_update")]
    | Annotated[MessageDeleteEvent, Tag("message_delete")]
    | Annotated[IgnoredEvent, Tag("other")],
    Discriminator(
        _category,
        custom_error_type="invalid_category",
        custom_error_message="category: an event is a JSON object whose category is a string",
    ),
]

_EVENT: TypeAdapter[WebhookEvent] = TypeAdapter(WebhookEvent)


def parse_webhook(data: Any) -> WebhookEvent:
    """The delivery; a user message must carry what a turn needs, an edit or a deletion what names its
    message (``ValidationError`` otherwise)."""
    return _EVENT.validate_python(data)


def event_errors(exc: ValidationError) -> list[dict[str, Any]]:
    """``exc.errors()`` located in the delivery itself: without the union's tags in each path."""
    errors: list[dict[str, Any]] = []
    for error in exc.errors():
        loc = tuple(error["loc"])
        if loc[:1] == ("message_send",):
            loc = loc[2:] if loc[1:2] in (("MESG",), ("FILE",), ("other",)) else loc[1:]
        elif loc[:1] in (("other",), ("message_update",), ("message_delete",)):
            loc = loc[1:]
        errors.append({**error, "loc": loc})
    return errors

"""Files a person sends: what a message says of each (``Attachment``), and what history keeps (``FileRef``).

A picture, document or voice note reaches the model in the turn it was sent. The message names the
file (a URL, a name, a type and a size the person's app stated: none of it trusted; the type is read
from the bytes when fetched). Afterwards the turn's history keeps a ``FileRef`` (small, with no personal
content beyond the file's name), so a later turn can see that the person sent it. The bytes are
never kept in Redis: they may be megabytes each, and are the chat service's to keep (and delete).
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

MAX_FILES_PER_MESSAGE = 10
"""Files one message may carry (Sendbird's multiple-files message allows 30; a turn reads the first 10)."""
UPLOAD_SCHEME = "upload:"
"""The URL scheme of a file put through the local channel (``/dev``): kept in Redis, never fetched."""


class Attachment(BaseModel):
    """A file as the message that carried it names it (the chat service's word, checked on fetching)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    url: str = Field(min_length=1, max_length=2048)
    """Where it is kept: a Sendbird file host's ``https://`` URL, or ``upload:<id>`` for ``/dev``."""
    name: str = Field(default="", max_length=255)
    """Its name as the person's app gave it (``IMG_0412.HEIC``): shown, never trusted."""
    stated_type: str = Field(default="", max_length=127)
    """The type the message states (``image/jpeg``); what counts is the type its bytes show."""
    size: int | None = Field(default=None, ge=0)
    """The size the message states, in bytes (a file stated bigger than the limit is not fetched)."""
    require_auth: bool = False
    """Sendbird serves it only with a key (``require_auth``, or file encryption): fetched with the
    ``Api-Token`` header."""


class MessageFile(BaseModel):
    """A file of a turn, with the message that carried it (a turn may gather several messages)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    message_id: str
    file: Attachment


class FileRef(BaseModel):
    """A file a person sent, as history keeps it: which message, what type, its name and size."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    message_id: str
    """The chat's id of the message that carried the file (Sendbird's ``payload.message_id``)."""
    media_type: str = Field(max_length=127, pattern=r"^[a-z]+/[a-z0-9.+-]+$")
    """The type read from the file's bytes (``image/jpeg``, ``application/pdf``, ``audio/mp4``…),
    not the type the message stated."""
    name: str = Field(max_length=255)
    """The file's name as the person's app gave it (``IMG_0412.HEIC``): shown, never trusted."""
    size: int = Field(ge=0)
    """The file's size in bytes, as fetched."""
    width: int | None = Field(default=None, ge=1)
    """A picture's width in pixels as the model saw it (after scaling); ``None`` for other files."""
    height: int | None = Field(default=None, ge=1)
    """A picture's height in pixels as the model saw it; ``None`` for other files."""

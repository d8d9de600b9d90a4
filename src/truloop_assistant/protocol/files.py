"""What history keeps of a file a person sent: a reference, never the bytes.

A picture, document or voice note reaches the model in the turn it was sent; afterwards the turn's
history keeps a ``FileRef`` (small, with no personal content beyond the file's name), so a later
turn can see that the person sent it, and fetch the newest few pictures again by their message
where the model needs them. The bytes are never kept in Redis: they may be megabytes each, and
are Sendbird's to keep (and delete).
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field


class FileRef(BaseModel):
    """A file a person sent, as history keeps it: which message, what type, its name and size."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    message_id: int = Field(ge=0)
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

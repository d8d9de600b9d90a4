"""Files in a history: a reference in place of the bytes, and the bytes put back for a resume.

A picture or PDF reaches the model as bytes in the turn's user prompt. A history (512 KiB at most) or
a paused turn keeps a line in its place naming it, its type and its size (``[file:<message>:<n> not
kept: image/jpeg, 783,484 bytes]``), never the bytes; the prompt's own line names the file's name.
A paused turn's resume reads its files again and puts them back where their lines are.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pydantic_ai.messages import BinaryContent, ModelMessage


def _kept_line(content: BinaryContent) -> str:
    return f"[{content.identifier} not kept: {content.media_type}, {len(content.data):,} bytes]"


def without_bytes(messages: list[ModelMessage]) -> list[ModelMessage]:
    """The messages with every file a user prompt carried replaced by a line naming it."""
    from pydantic_ai.messages import BinaryContent, ModelRequest, UserPromptPart

    def part(p: object) -> object:
        if not isinstance(p, UserPromptPart) or isinstance(p.content, str):
            return p
        if not any(isinstance(item, BinaryContent) for item in p.content):
            return p
        content = [_kept_line(item) if isinstance(item, BinaryContent) else item for item in p.content]
        return replace(p, content=content)

    out: list[ModelMessage] = []
    for message in messages:
        if isinstance(message, ModelRequest) and any(isinstance(p, UserPromptPart) for p in message.parts):
            message = replace(message, parts=[part(p) for p in message.parts])  # type: ignore[misc]
        out.append(message)
    return out


def with_bytes(messages: list[ModelMessage], found: Mapping[str, BinaryContent]) -> list[ModelMessage]:
    """The messages with the files ``found`` (by identifier) back in place of their lines."""
    if not found:
        return messages
    from pydantic_ai.messages import ModelRequest, UserPromptPart

    def item(value: object) -> object:
        if isinstance(value, str) and value.startswith("[") and " not kept: " in value:
            ident = value[1:].split(" ", 1)[0]
            return found.get(ident, value)
        return value

    out: list[ModelMessage] = []
    for message in messages:
        if isinstance(message, ModelRequest):
            parts = [
                replace(p, content=[item(v) for v in p.content])  # type: ignore[misc]
                if isinstance(p, UserPromptPart) and not isinstance(p.content, str)
                else p
                for p in message.parts
            ]
            message = replace(message, parts=parts)
        out.append(message)
    return out

"""A turn's files read into what the model is sent: in order, bounded, refused with a short answer, and
kept in history as a line that a resume turns back into the file."""

from __future__ import annotations

import io
from dataclasses import dataclass, field

from PIL import Image
from pydantic_ai.messages import BinaryContent, ModelRequest, UserPromptPart

from truloop_assistant.agent.turn_files import MAX_FILES_PER_TURN, TurnFiles
from truloop_assistant.channels.base import InboundMessage
from truloop_assistant.channels.file_fetch import Fetched, FetchResult, Refused
from truloop_assistant.protocol.file_types import detect
from truloop_assistant.protocol.files import Attachment
from truloop_assistant.store.history_files import with_bytes, without_bytes


def png(width: int = 32, height: int = 32) -> bytes:
    out = io.BytesIO()
    Image.new("RGB", (width, height), (1, 2, 3)).save(out, format="PNG")
    return out.getvalue()


@dataclass
class Shelf:
    """A reader of files by URL (what a file host would serve); counts what it was asked."""

    files: dict[str, bytes] = field(default_factory=dict)
    asked: list[str] = field(default_factory=list)
    max_bytes: int = 20 * 1024 * 1024

    async def read(self, channel_url: str, attachment: Attachment) -> FetchResult:
        self.asked.append(attachment.url)
        data = self.files.get(attachment.url)
        if data is None:
            return Refused("unreachable", "404")
        found = detect(data)
        return Fetched(data, found) if found else Refused("unsupported_type", "?")


def message(message_id: str, text: str = "", *urls: str) -> InboundMessage:
    files = tuple(Attachment(url=u, name=u.rsplit("/", 1)[-1]) for u in urls)
    return InboundMessage(message_id, "ch-1", "jeff", text, files)


async def test_files_of_messages_in_a_row_are_read_in_order_and_at_most_ten() -> None:
    shelf = Shelf({f"https://f/{n}.png": png() for n in range(12)})
    first = message("1", "these", *(f"https://f/{n}.png" for n in range(7)))
    second = message("2", "and these", *(f"https://f/{n}.png" for n in range(7, 12)))
    read = await TurnFiles(shelf).read([first, second])  # type: ignore[arg-type]
    assert (
        len(read.files)
        == MAX_FILES_PER_TURN
        == len([c for c in read.content if isinstance(c, BinaryContent)])
    )
    assert shelf.asked == [f"https://f/{n}.png" for n in range(10)]  # the last two never fetched
    lines = read.prompt.splitlines()
    assert (
        lines[0] == "these" and lines[8] == "and these" and "too many" in lines[-1] and "11.png" in lines[-1]
    )
    assert read.refusals == () and read.readable


async def test_a_file_not_taken_is_a_short_answer_and_a_line_for_the_model() -> None:
    shelf = Shelf({"https://f/run.png": b"MZ\x90\x00" + b"\x00" * 100})
    read = await TurnFiles(shelf).read([message("5", "", "https://f/run.png", "https://f/gone.jpg")])  # type: ignore[arg-type]
    assert len(read.refusals) == 2 and "run.png" in read.refusals[0] and "gone.jpg" in read.refusals[1]
    assert not read.readable and read.content == ()  # nothing for the model: the answers are the turn's
    assert "could not be read" in read.prompt


async def test_history_keeps_a_line_and_a_resume_puts_the_file_back() -> None:
    shelf = Shelf({"https://f/a.png": png(64, 48)})
    read = await TurnFiles(shelf).read([message("9", "look", "https://f/a.png")])  # type: ignore[arg-type]
    request = ModelRequest(parts=[UserPromptPart(list(read.content))])
    [kept] = without_bytes([request])
    [prompt] = kept.parts
    assert isinstance(prompt, UserPromptPart) and not any(
        isinstance(c, BinaryContent) for c in prompt.content
    )
    assert "[file:9:0 not kept: image/png" in str(prompt.content)
    again = await TurnFiles(shelf).again("ch-1", read.files)  # type: ignore[arg-type]
    [restored] = with_bytes([kept], again)
    assert restored == request

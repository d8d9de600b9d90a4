"""A turn's words and files as the model is sent them: text, pictures, PDFs, and voice notes as words.

The messages of a turn (its own, and those of the same person gathered behind it) are read in order:
each one's text is a line; each file it carries is fetched (``channels.file_reader``), checked by its
bytes, and then
- a picture is made ready for the model (at most 2,048 px on its longest side, ``channels.images``)
  and sent as the model's own image input, a PDF as its document input, each named by a line of
  the prompt (``[picture file:<message>:<n> IMG_0412.HEIC, 1536x2048]``) that history keeps in its
  place (``store.history_files``): the bytes are never stored;
- a voice note is transcribed (``TRULOOP_TRANSCRIPTION_MODEL``) and read as the person's words,
  marked as a voice note;
- a file that cannot be taken (too big, a type not read, a fetch that failed, a voice note with no
  transcriber) gets a short answer in the person's language (``refusals``), and a line telling the
  model it was sent and not read; nothing else of the turn is lost.

A model that reads no pictures or documents (the offline model) gets the lines and no bytes: it is
told what was sent, and says what it can do.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Sequence
from dataclasses import dataclass, field

from pydantic_ai.messages import BinaryContent, UserContent

from ..backends.transcription import Transcriber, TranscriptionError
from ..channels.base import InboundMessage
from ..channels.file_fetch import Fetched, Refused
from ..channels.file_reader import FileReader
from ..channels.images import prepare
from ..i18n import Language, language_of, texts
from ..protocol.files import MAX_FILES_PER_MESSAGE, Attachment, MessageFile
from .model_inputs import FileInputs

log = logging.getLogger(__name__)

EVERY_FILE = FileInputs(images=True, pdfs=True)
"""A model that reads pictures and PDFs (what tests' function models are taken to read)."""
MAX_FILES_PER_TURN = MAX_FILES_PER_MESSAGE
"""Files one turn reads (its messages' together, in order); the model is told of the rest by name."""
VOICE_NOTE = "(voice note)"
"""How the prompt marks a voice note's words (the history keeps them so)."""


@dataclass(frozen=True)
class TurnInput:
    """What a turn sends the model, and what it tells the person of files it could not take."""

    prompt: str
    """The turn's text, one line per message, with a line for each file (what history keeps)."""
    content: tuple[UserContent, ...] = ()
    """The prompt and the files' bytes, when any went to the model (else the prompt alone is sent)."""
    files: tuple[MessageFile, ...] = ()
    """The turn's files, to read again when it resumes after a pause."""
    refusals: tuple[str, ...] = ()
    """Short answers, in the person's language, for the files not taken."""

    readable: bool = True
    """Whether there is anything for the model: words, or a file it was sent or told of (not only
    files it could not take, whose short answers are then the turn's answer)."""

    def sent(self) -> str | Sequence[UserContent]:
        """What ``agent.run`` is given as the user prompt."""
        return list(self.content) if self.content else self.prompt


@dataclass
class _Reading:
    language: Language
    lines: list[str] = field(default_factory=list)
    parts: list[UserContent] = field(default_factory=list)
    refusals: list[str] = field(default_factory=list)


class TurnFiles:
    """Reads a turn's messages, files included, into a :class:`TurnInput`."""

    def __init__(
        self,
        reader: FileReader | None,
        transcriber: Transcriber | None = None,
        *,
        inputs: FileInputs = EVERY_FILE,
    ) -> None:
        self.reader = reader
        """Where files are read from (None: nowhere; each file is named as sent, and not read)."""
        self.transcriber = transcriber
        self.inputs = inputs

    async def read(self, messages: Sequence[InboundMessage]) -> TurnInput:
        """The turn's input from its messages, in order."""
        said = " ".join(m.text for m in messages)
        reading = _Reading(language_of(said))
        files: list[MessageFile] = []
        for message in messages:
            if message.text:
                reading.lines.append(message.text)
            for index, attachment in enumerate(message.files):
                ident = file_id(message.message_id, index)
                if len(files) == MAX_FILES_PER_TURN:  # several messages of files in a row
                    reading.lines.append(
                        f"[file {ident} {attachment.name or 'file'}: sent, not read (too many)]"
                    )
                    continue
                files.append(MessageFile(message_id=message.message_id, file=attachment))
                await self._one(reading, message.channel_url, ident, attachment)
        prompt = "\n".join(reading.lines)
        content = (prompt, *reading.parts) if reading.parts else ()
        readable = any(m.text for m in messages) or len(reading.refusals) < len(files)
        return TurnInput(prompt, content, tuple(files), tuple(reading.refusals), readable)

    async def again(self, channel_url: str, files: Sequence[MessageFile]) -> dict[str, BinaryContent]:
        """The pictures and documents of a paused turn, read again for its resume (by their ids);
        one that cannot be read now is left out (the model sees its line)."""
        if not files or not (self.inputs.images or self.inputs.pdfs):
            return {}
        found: dict[str, BinaryContent] = {}
        for position, sent in enumerate(files):
            index = sum(1 for earlier in files[:position] if earlier.message_id == sent.message_id)
            ident = file_id(sent.message_id, index)
            result = await self._read(channel_url, sent.file)
            ready = await self._binary(result, ident) if isinstance(result, Fetched) else None
            if isinstance(ready, tuple):
                found[ident] = ready[0]
        return found

    async def _one(self, reading: _Reading, channel_url: str, ident: str, attachment: Attachment) -> None:
        name = attachment.name or "file"
        result = await self._read(channel_url, attachment)
        if isinstance(result, Refused):
            self._refuse(reading, ident, name, result)
            return
        kind = result.file_type.kind
        if kind == "audio":
            await self._voice(reading, ident, name, result)
            return
        reads = self.inputs.images if kind == "image" else self.inputs.pdfs
        if not reads:
            reading.lines.append(f"[{_LABELS[kind]} {ident} {name}: sent; this model cannot look at it]")
            return
        ready = await self._binary(result, ident)
        if isinstance(ready, Refused):
            self._refuse(reading, ident, name, ready)
            return
        binary, shape = ready
        reading.lines.append(f"[{_LABELS[kind]} {ident} {name}{shape}]")
        reading.parts.append(binary)

    async def _read(self, channel_url: str, attachment: Attachment) -> Fetched | Refused:
        if self.reader is None:
            return Refused("unreachable", "this server reads no files")
        return await self.reader.read(channel_url, attachment)

    async def _binary(self, fetched: Fetched, ident: str) -> tuple[BinaryContent, str] | Refused:
        """The file as the model's input, and its shape as the prompt names it (a picture's size)."""
        if fetched.file_type.kind == "document":
            return BinaryContent(fetched.data, media_type=fetched.media_type, identifier=ident), ""
        picture = await asyncio.to_thread(prepare, fetched.data, fetched.media_type)
        if isinstance(picture, Refused):
            return picture
        binary = BinaryContent(picture.data, media_type=picture.media_type, identifier=ident)
        return binary, f", {picture.width}x{picture.height}"

    async def _voice(self, reading: _Reading, ident: str, name: str, fetched: Fetched) -> None:
        if self.transcriber is None:
            reading.lines.append(f"[voice note {ident} {name}: sent; voice notes are not read here]")
            reading.refusals.append(texts.VOICE_NOT_READ(reading.language))
            return
        hint = reading.language if reading.lines else None
        try:
            heard = await self.transcriber.transcribe(fetched.data, fetched.media_type, language_hint=hint)
        except TranscriptionError as exc:
            log.warning("voice note %s not transcribed: %s", ident, exc)
            reading.lines.append(f"[voice note {ident} {name}: sent, but could not be made out]")
            reading.refusals.append(texts.VOICE_NOT_TRANSCRIBED(reading.language))
            return
        words = heard.text.strip()
        if not reading.lines or all(line.startswith("[") for line in reading.lines):
            reading.language = language_of(words)
        reading.lines.append(f"{VOICE_NOTE} {words}")

    def _refuse(self, reading: _Reading, ident: str, name: str, refused: Refused) -> None:
        """A file not taken: a line for the model, a short answer for the person."""
        log.info("file %s (%s) not taken: %s, %s", ident, name, refused.reason, refused.detail)
        reason = _REASONS[refused.reason]
        reading.lines.append(f"[file {ident} {name}: sent, but could not be read ({reason})]")
        reading.refusals.append(self._refusal(refused, name, reading.language))

    def _refusal(self, refused: Refused, name: str, language: Language) -> str:
        if refused.reason == "too_big":
            limit = self.reader.max_bytes if self.reader is not None else 0
            limit_mb = f"{limit / (1024 * 1024):g}"
            return texts.FILE_TOO_BIG(language, name=name, limit_mb=limit_mb)
        if refused.reason == "unsupported_type":
            return texts.FILE_NOT_READ(language, name=name)
        return texts.FILE_UNREACHABLE(language, name=name)


def file_id(message_id: str, index: int) -> str:
    """How the prompt and history name the ``index``-th file of message ``message_id``."""
    return f"file:{message_id}:{index}"


_LABELS = {"image": "picture", "document": "document", "audio": "voice note"}
_REASONS = {
    "too_big": "too big",
    "unsupported_type": "a type the assistant does not read",
    "unreachable": "it could not be fetched",
    "off_host": "it is not kept where the chat keeps files",
}

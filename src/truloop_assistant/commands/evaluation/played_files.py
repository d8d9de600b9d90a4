"""A case's request read as the server reads a person's message: its words, and its files as the
model gets them.

The evaluation's person sends through the local channel: each file of the case is kept where that
channel keeps uploads (``store.uploads``, on the case's own database) and named ``upload:<id>`` by
the message, which the server's own reading (``agent.turn_files``) then reads back and checks by its
bytes: a picture goes to the model scaled as the server scales it (at most 2,048 px on its longest
side), or only as a line for a model that reads no pictures (the offline model); a voice note is
transcribed by ``TRULOOP_TRANSCRIPTION_MODEL``. A case with a voice note is skipped when that is
unset, rather than failed: the model would only be told that voice notes are not read here.
"""

from __future__ import annotations

import httpx
from redis.asyncio import Redis

from ...agent.agents import MemberAgent
from ...agent.model_inputs import reads_files
from ...agent.turn_files import EVERY_FILE, TurnFiles, TurnInput
from ...backends.transcription import Transcriber
from ...channels.base import InboundMessage
from ...channels.file_reader import FileReader
from ...protocol.files import UPLOAD_SCHEME, Attachment
from ...store.uploads import Uploads
from .case_files import Request
from .harness import Skipped

CHANNEL = "eval"
"""The channel the evaluation's person writes in."""
MESSAGE_ID = "1"
"""The id of the message a case sends (its files are ``file:1:0``, ``file:1:1``, … in the prompt)."""
NO_TRANSCRIBER = (
    "it sends a voice note, and no TRULOOP_TRANSCRIPTION_MODEL is set to hear it with "
    "(e.g. openai:gpt-4o-mini-transcribe)"
)
"""Why a case with a voice note is skipped."""


class CaseReading:
    """Reads a case's request into the model's input, with what the server reads files with."""

    def __init__(
        self,
        agent: MemberAgent,
        user_id: str,
        *,
        max_bytes: int,
        transcriber: Transcriber | None,
        client: httpx.AsyncClient,
    ) -> None:
        self.user_id = user_id
        self.max_bytes = max_bytes
        """``TRULOOP_MAX_FILE_BYTES``: a bigger file is one the server would not take."""
        self.transcriber = transcriber
        self.client = client
        """The reader's HTTP client: never used (no file is fetched), but a reader has one."""
        model = agent.model
        self.inputs = EVERY_FILE if model is None or isinstance(model, str) else reads_files(model)

    def check(self, request: Request) -> None:
        """Raise :class:`Skipped` for a request that cannot be played here: a voice note, and no
        transcriber to hear it with."""
        if request.voice_notes and self.transcriber is None:
            raise Skipped(NO_TRANSCRIBER)

    async def read(self, redis: Redis, request: Request) -> TurnInput:
        """The request's input to the model, its files kept on ``redis`` for the reading (see
        :meth:`check`)."""
        self.check(request)
        uploads = Uploads(redis, max_bytes=self.max_bytes)
        attachments = []
        for file in request.files:
            # One over the limit is not kept: its message states its size, and the reader refuses it
            # by that size unread, as it does a chat service's file stated too big.
            fits = len(file.data) <= self.max_bytes
            url = await uploads.put(CHANNEL, file.data) if fits else f"{UPLOAD_SCHEME}too-big"
            attachments.append(Attachment(url=url, name=file.name, size=len(file.data)))
        reader = FileReader(
            hosts=[], max_bytes=self.max_bytes, api_token=None, client=self.client, uploads=uploads
        )
        message = InboundMessage(MESSAGE_ID, CHANNEL, self.user_id, request.text, tuple(attachments))
        return await TurnFiles(reader, self.transcriber, inputs=self.inputs).read([message])

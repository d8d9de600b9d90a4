"""How a server reads the files people send: from the settings to a :class:`~.turn_files.TurnFiles`."""

from __future__ import annotations

from contextlib import AsyncExitStack

import httpx
from pydantic_ai.models import Model
from redis.asyncio import Redis

from ..backends.transcription import transcriber_for
from ..channels.file_reader import FileReader
from ..config import Settings
from ..store.uploads import Uploads
from .model_inputs import reads_files
from .turn_files import EVERY_FILE, TurnFiles


def turn_files_for(settings: Settings, redis: Redis, stack: AsyncExitStack, model: Model | str) -> TurnFiles:
    """Files fetched from ``TRULOOP_SENDBIRD_FILE_HOSTS`` (and the local channel's uploads), voice
    notes transcribed with ``TRULOOP_TRANSCRIPTION_MODEL``, pictures and documents sent as ``model``
    reads them. The HTTP client and the transcriber are closed with ``stack``."""
    client = httpx.AsyncClient(follow_redirects=False)
    stack.push_async_callback(client.aclose)
    token = settings.sendbird_api_token.get_secret_value() if settings.sendbird_api_token else None
    reader = FileReader(
        hosts=settings.sendbird_file_hosts,
        max_bytes=settings.max_file_bytes,
        api_token=token,
        client=client,
        uploads=Uploads(redis, max_bytes=settings.max_file_bytes) if settings.channel == "local" else None,
    )
    transcriber = transcriber_for(settings)
    if transcriber is not None:
        stack.push_async_callback(transcriber.aclose)
    inputs = reads_files(model) if not isinstance(model, str) else EVERY_FILE
    return TurnFiles(reader, transcriber, inputs=inputs)

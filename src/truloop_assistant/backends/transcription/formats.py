"""The audio formats a voice note may come in, told by their bytes (a name or a media type can lie).

The transcription endpoint takes flac, mp3, mp4, mpeg, mpga, m4a, ogg, wav and webm (OpenAI's API
reference, "Create transcription", ``file``); it reads the format from the file name's extension, so
the name sent is made from what the bytes are. Voice notes come as m4a (iOS, Android's recorders,
Sendbird's voice messages), ogg/opus, mp3, wav or webm (browsers' recorders).
"""

from __future__ import annotations

from dataclasses import dataclass

from ...protocol import file_types
from ...protocol.file_types import detect


@dataclass(frozen=True)
class AudioFormat:
    """One format: the extension the endpoint reads it by, and its media type."""

    extension: str
    media_type: str


M4A = AudioFormat("m4a", "audio/mp4")
MP3 = AudioFormat("mp3", "audio/mpeg")
OGG = AudioFormat("ogg", "audio/ogg")
WAV = AudioFormat("wav", "audio/wav")
WEBM = AudioFormat("webm", "audio/webm")

ACCEPTED = (M4A, MP3, OGG, WAV, WEBM)
"""Every format a voice note is read in."""
NAMES = "m4a, mp3, ogg/opus, wav, webm"
"""How a message names them."""
_BY_MEDIA_TYPE = {
    file_types.MP4_AUDIO.media_type: M4A,
    file_types.MP3.media_type: MP3,
    file_types.OGG.media_type: OGG,
    file_types.WAV.media_type: WAV,
    file_types.WEBM.media_type: WEBM,
}


def audio_format(audio: bytes) -> AudioFormat | None:
    """The format ``audio``'s first bytes show (``protocol.file_types``), or None for anything else
    (a picture, a document, AAC's ADTS)."""
    found = detect(audio)
    return None if found is None else _BY_MEDIA_TYPE.get(found.media_type)


def plain_media_type(media_type: str) -> str:
    """``audio/ogg; codecs=opus`` as ``audio/ogg``."""
    return media_type.partition(";")[0].strip().lower()

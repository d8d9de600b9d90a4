"""The audio formats a voice note may come in, told by their bytes (a name or a media type can lie).

The transcription endpoint takes flac, mp3, mp4, mpeg, mpga, m4a, ogg, wav and webm (OpenAI's API
reference, "Create transcription", ``file``); it reads the format from the file name's extension, so
the name sent is made from what the bytes are. Voice notes come as m4a (iOS, Android's recorders,
Sendbird's voice messages), ogg/opus, mp3, wav or webm (browsers' recorders).
"""

from __future__ import annotations

from dataclasses import dataclass


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


def audio_format(audio: bytes) -> AudioFormat | None:
    """The format ``audio``'s first bytes show, or None for anything else (a picture, a document)."""
    head = audio[:16]
    if head[4:8] == b"ftyp":  # the ISO base media file: m4a, mp4
        return M4A
    if head.startswith(b"OggS"):  # Ogg pages: opus or vorbis
        return OGG
    if head.startswith(b"RIFF") and head[8:12] == b"WAVE":
        return WAV
    if head.startswith(b"\x1a\x45\xdf\xa3"):  # EBML: webm (a Matroska profile)
        return WEBM
    if head.startswith(b"ID3") or (len(head) > 1 and head[0] == 0xFF and _mpeg_audio(head[1])):
        return MP3  # an ID3 tag, or an MPEG audio frame's sync bits
    return None


def plain_media_type(media_type: str) -> str:
    """``audio/ogg; codecs=opus`` as ``audio/ogg``."""
    return media_type.partition(";")[0].strip().lower()


def _mpeg_audio(second: int) -> bool:
    """The second byte of an MPEG audio frame: the rest of its 11 sync bits, and a layer that is not
    ``00`` (``00`` is AAC's ADTS, which the endpoint does not take)."""
    return second & 0xE0 == 0xE0 and second & 0x06 != 0

"""A file's type read from its first bytes (its magic number), never from its name or stated type.

A person's phone names a file and says its type; neither is trusted: an executable named
``photo.png`` is bytes ``MZ…`` or ``\\x7fELF…`` and is not a type the server reads. Only the formats
below are read; anything else is ``None`` (the fetch's ``unsupported_type``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

FileKind = Literal["image", "document", "audio"]


@dataclass(frozen=True)
class FileType:
    """What a file is: its media type, and what the turn does with it (look, read, or listen)."""

    media_type: str
    kind: FileKind


JPEG = FileType("image/jpeg", "image")
PNG = FileType("image/png", "image")
GIF = FileType("image/gif", "image")
WEBP = FileType("image/webp", "image")
HEIC = FileType("image/heic", "image")
HEIF = FileType("image/heif", "image")
PDF = FileType("application/pdf", "document")
MP4_AUDIO = FileType("audio/mp4", "audio")
MP3 = FileType("audio/mpeg", "audio")
OGG = FileType("audio/ogg", "audio")
WAV = FileType("audio/wav", "audio")
WEBM = FileType("audio/webm", "audio")

MODEL_IMAGES = frozenset({JPEG.media_type, PNG.media_type, GIF.media_type, WEBP.media_type})
"""Image types the models read as they are; others (HEIC) are re-encoded first."""

SNIFF_BYTES = 64
"""How many leading bytes ``detect`` needs to tell every type apart."""

_HEIC_BRANDS = frozenset({b"heic", b"heix", b"heim", b"heis", b"hevc", b"hevx", b"hevm", b"hevs"})
_HEIF_BRANDS = frozenset({b"mif1", b"msf1"})
_MP4_BRANDS = frozenset({b"M4A ", b"M4B ", b"isom", b"iso2", b"mp41", b"mp42", b"dash", b"3gp4", b"3gp5"})
"""An ``.m4a`` voice note says ``M4A ``; phones also record audio in plain MP4 / 3GP containers,
whose sound track the transcription endpoint reads."""


def _ftyp(data: bytes) -> FileType | None:
    """An ISO base media file (``....ftyp<brand>``): HEIC/HEIF pictures, MP4 audio."""
    size = int.from_bytes(data[0:4], "big")
    major = data[8:12]
    compatible = {data[i : i + 4] for i in range(16, min(size, len(data)) - 3, 4)}
    brands = {major} | compatible
    if b"avif" in brands or b"avis" in brands:
        return None  # AVIF shares the HEIF container; it is not a type the server reads
    if major in _HEIC_BRANDS or (major in _HEIF_BRANDS and brands & _HEIC_BRANDS):
        return HEIC
    if major in _HEIF_BRANDS:
        return HEIF
    if major in _MP4_BRANDS:
        return MP4_AUDIO
    return None


def _mp3(data: bytes) -> bool:
    """An ID3 tag, or an MPEG audio frame header (11 sync bits, a layer that is not the reserved 00,
    which is AAC's ADTS)."""
    if data.startswith(b"ID3"):
        return True
    return len(data) >= 2 and data[0] == 0xFF and data[1] & 0xE0 == 0xE0 and data[1] & 0x06 != 0


def detect(data: bytes) -> FileType | None:
    """A file's type from its first ``SNIFF_BYTES`` bytes; ``None`` for one the server does not read."""
    head = data[:SNIFF_BYTES]
    if head.startswith(b"\xff\xd8\xff"):
        return JPEG
    if head.startswith(b"\x89PNG\r\n\x1a\n"):
        return PNG
    if head.startswith((b"GIF87a", b"GIF89a")):
        return GIF
    if head.startswith(b"RIFF") and head[8:12] == b"WEBP":
        return WEBP
    if head.startswith(b"RIFF") and head[8:12] == b"WAVE":
        return WAV
    if head[4:8] == b"ftyp":
        return _ftyp(head)
    if head.startswith(b"%PDF-"):
        return PDF
    if head.startswith(b"OggS"):
        return OGG
    if head.startswith(b"\x1a\x45\xdf\xa3"):
        return WEBM if b"webm" in head else None  # Matroska (.mkv) is not read
    if _mp3(head):
        return MP3
    return None

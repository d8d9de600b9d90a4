"""A file's type comes from its bytes: every format the server reads, and what it does not."""

from __future__ import annotations

import io
import wave

import pillow_heif
import pytest
from PIL import Image

from truloop_assistant.protocol.file_types import detect


def picture(fmt: str) -> bytes:
    out = io.BytesIO()
    Image.new("RGB", (8, 6), (200, 30, 30)).save(out, format=fmt)
    return out.getvalue()


def heic() -> bytes:
    out = io.BytesIO()
    pillow_heif.from_pillow(Image.new("RGB", (64, 48), (10, 120, 200))).save(out, quality=80)
    return out.getvalue()


def wav() -> bytes:
    out = io.BytesIO()
    with wave.open(out, "wb") as sound:
        sound.setnchannels(1)
        sound.setsampwidth(2)
        sound.setframerate(8000)
        sound.writeframes(b"\x00\x00" * 800)
    return out.getvalue()


def ftyp(major: bytes, *compatible: bytes) -> bytes:
    body = major + b"\x00\x00\x00\x00" + b"".join(compatible)
    return (8 + len(body)).to_bytes(4, "big") + b"ftyp" + body + b"\x00" * 64


WEBM = bytes.fromhex("1a45dfa3") + b"\x9f\x42\x86\x81\x01\x42\x82\x84webm" + b"\x00" * 40
MKV = bytes.fromhex("1a45dfa3") + b"\x9f\x42\x86\x81\x01\x42\x82\x88matroska" + b"\x00" * 40

SAMPLES = {
    "JPEG": (lambda: picture("JPEG"), "image/jpeg"),
    "PNG": (lambda: picture("PNG"), "image/png"),
    "WebP": (lambda: picture("WEBP"), "image/webp"),
    "GIF": (lambda: picture("GIF"), "image/gif"),
    "HEIC": (heic, "image/heic"),
    "PDF": (lambda: b"%PDF-1.7\n1 0 obj\n<< /Type /Catalog >>\nendobj\n", "application/pdf"),
    "m4a": (lambda: ftyp(b"M4A ", b"M4A ", b"mp42", b"isom"), "audio/mp4"),
    "mp4 audio": (lambda: ftyp(b"mp42", b"isom"), "audio/mp4"),
    "mp3 with ID3": (lambda: b"ID3\x04\x00\x00\x00\x00\x00\x00" + b"\x00" * 60, "audio/mpeg"),
    "mp3 frames": (lambda: b"\xff\xfb\x90\x64" + b"\x00" * 60, "audio/mpeg"),
    "ogg/opus": (lambda: b"OggS\x00\x02" + b"\x00" * 22 + b"OpusHead" + b"\x00" * 30, "audio/ogg"),
    "wav": (wav, "audio/wav"),
    "webm": (lambda: WEBM, "audio/webm"),
}


@pytest.mark.parametrize("name", list(SAMPLES))
def test_each_format_is_known_by_its_bytes(name: str) -> None:
    make, media_type = SAMPLES[name]
    found = detect(make())
    assert found is not None and found.media_type == media_type


def test_what_each_kind_is_for() -> None:
    kinds = {name: detect(make()).kind for name, (make, _) in SAMPLES.items()}  # type: ignore[union-attr]
    assert {kinds[n] for n in ("JPEG", "PNG", "WebP", "GIF", "HEIC")} == {"image"}
    assert kinds["PDF"] == "document"
    assert {kinds[n] for n in ("m4a", "mp3 frames", "ogg/opus", "wav", "webm")} == {"audio"}


@pytest.mark.parametrize(
    "data",
    [
        b"MZ\x90\x00\x03\x00\x00\x00" + b"\x00" * 56,  # a Windows executable, named photo.png
        b"\x7fELF\x02\x01\x01" + b"\x00" * 57,  # a Linux one
        b"PK\x03\x04" + b"\x00" * 60,  # a zip (or .docx)
        b"<html><script>alert(1)</script></html>",
        ftyp(b"avif", b"avif", b"mif1"),  # AVIF: the HEIF box, not a type read here
        MKV,
        b"\xff\xf1\x50\x80",  # AAC in ADTS, not MPEG audio
        b"",
    ],
)
def test_other_bytes_are_not_read_whatever_their_name(data: bytes) -> None:
    assert detect(data) is None

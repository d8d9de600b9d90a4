"""Pictures made ready for a model: scaled to 2,048 px, upright, HEIC read, bombs refused unread."""

from __future__ import annotations

import io
import struct
import time
import tracemalloc
import zlib

import pillow_heif
import pytest
from PIL import Image

from truloop_assistant.channels.file_fetch import Refused
from truloop_assistant.channels.images import Picture, prepare


def encoded(image: Image.Image, fmt: str, **options: object) -> bytes:
    out = io.BytesIO()
    image.save(out, format=fmt, **options)
    return out.getvalue()


def photo(width: int, height: int) -> Image.Image:
    """A picture with detail in it (a gradient), not a flat colour."""
    return Image.linear_gradient("L").resize((width, height)).convert("RGB")


def opened(picture: Picture) -> Image.Image:
    return Image.open(io.BytesIO(picture.data))


def chunk(kind: bytes, body: bytes) -> bytes:
    return struct.pack(">I", len(body)) + kind + body + struct.pack(">I", zlib.crc32(kind + body))


def png_claiming(width: int, height: int) -> bytes:
    """A valid PNG header saying ``width`` x ``height``, with almost no pixel data behind it."""
    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return (
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", header)
        + chunk(b"IDAT", zlib.compress(b"\x00" * 1024))
        + chunk(b"IEND", b"")
    )


def test_a_large_photo_keeps_its_shape_at_2048() -> None:
    result = prepare(encoded(photo(3000, 2000), "JPEG"), "image/jpeg")
    assert isinstance(result, Picture)
    assert (result.width, result.height, result.media_type) == (2048, 1365, "image/jpeg")
    assert opened(result).size == (2048, 1365)


def test_a_phone_photo_is_decoded_at_half_scale_within_2048() -> None:
    result = prepare(encoded(photo(4032, 3024), "JPEG"), "image/jpeg")
    assert isinstance(result, Picture)
    assert (result.width, result.height) == (2016, 1512) == opened(result).size  # 4:3 kept, no resampling


def test_a_small_picture_of_a_model_type_passes_unchanged() -> None:
    data = encoded(photo(640, 480), "PNG")
    result = prepare(data, "image/png")
    assert isinstance(result, Picture)
    assert (result.data, result.media_type, result.width, result.height) == (data, "image/png", 640, 480)


def test_where_a_photo_was_taken_does_not_reach_the_model() -> None:
    exif = Image.Exif()
    exif[0x8825] = {2: (37.0, 30.0, 0.0), 4: (127.0, 2.0, 0.0)}  # GPSLatitude, GPSLongitude
    buffer = io.BytesIO()
    photo(640, 480).save(buffer, "JPEG", exif=exif)
    placed = buffer.getvalue()
    assert 0x8825 in Image.open(io.BytesIO(placed)).getexif()
    result = prepare(placed, "image/jpeg")
    assert isinstance(result, Picture) and (result.width, result.height) == (640, 480)
    assert 0x8825 not in opened(result).getexif()


def test_transparency_stays_in_a_png() -> None:
    clear = Image.new("RGBA", (2500, 1000), (0, 0, 0, 0))
    result = prepare(encoded(clear, "PNG"), "image/png")
    assert isinstance(result, Picture)
    assert (result.media_type, result.width, result.height) == ("image/png", 2048, 819)
    assert opened(result).getpixel((10, 10))[3] == 0  # type: ignore[index]


def test_a_sideways_photo_comes_out_upright() -> None:
    """A phone held upright stores the picture landscape with EXIF orientation 6 (turn 90° clockwise)."""
    exif = Image.Exif()
    exif[0x0112] = 6
    data = encoded(photo(400, 300), "JPEG", exif=exif.tobytes())
    result = prepare(data, "image/jpeg")
    assert isinstance(result, Picture)
    assert (result.width, result.height) == (300, 400)
    assert opened(result).getexif().get(0x0112, 1) == 1


def test_a_heic_photo_is_read_and_made_jpeg() -> None:
    heif = io.BytesIO()
    pillow_heif.from_pillow(photo(2500, 1500)).save(heif, quality=70)
    result = prepare(heif.getvalue(), "image/heic")
    assert isinstance(result, Picture)
    assert (result.media_type, result.width, result.height) == ("image/jpeg", 2048, 1229)
    assert opened(result).format == "JPEG"


@pytest.mark.parametrize(("width", "height"), [(100_000, 100_000), (8_000, 8_000)])
@pytest.mark.filterwarnings("ignore::PIL.Image.DecompressionBombWarning")  # Pillow's own, above 50 MP
def test_a_decompression_bomb_is_refused_without_decoding(width: int, height: int) -> None:
    bomb = png_claiming(width, height)
    assert len(bomb) < 200
    tracemalloc.start()
    started = time.perf_counter()
    try:
        result = prepare(bomb, "image/png")
        elapsed = time.perf_counter() - started
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert isinstance(result, Refused) and result.reason == "too_big"
    # Decoding 100000x100000 RGB would take 30 GB; the header alone takes almost nothing.
    assert elapsed < 1.0 and peak < 20 * 1024 * 1024


def test_broken_picture_bytes_are_refused_as_unreadable() -> None:
    result = prepare(b"\xff\xd8\xff\xe0" + b"\x00" * 100, "image/jpeg")
    assert isinstance(result, Refused) and result.reason == "unsupported_type"

"""Pictures made ready for a model: at most 2,048 px on the longest side, upright, in a type it reads.

Phone photos are large (4032x3024, several MB) and models scale them down anyway, so they are made
smaller here, before they cost upload time and tokens. The shape is kept, the EXIF orientation is
applied (a portrait photo stays upright) and the result is JPEG, or PNG when it has transparency.
HEIC (iPhones' default) is read through pillow-heif. A picture already small, upright and of a type
models read (JPEG, PNG, WebP, GIF) is passed on as it came.

A decompression bomb (a few KB claiming 100000x100000 pixels) is refused from its header, before any
pixel is decoded: ``Image.open`` reads only the header. Decoding is CPU work: run ``prepare`` off the
event loop (``asyncio.to_thread``).
"""

from __future__ import annotations

import io
import threading
from dataclasses import dataclass

from PIL import Image, ImageOps, UnidentifiedImageError

from ..protocol.file_types import MODEL_IMAGES
from .file_fetch import Refused

MAX_SIDE = 2048
"""The longest side (px) of a picture sent to a model."""
MAX_PIXELS = 50_000_000
"""The most pixels a picture may claim (a 50-megapixel camera's); more is refused undecoded."""
JPEG_QUALITY = 85
_FORMATS = ("JPEG", "PNG", "GIF", "WEBP", "HEIF")
"""The decoders ``Image.open`` may try: no other of Pillow's parsers sees a person's bytes."""
_ORIENTATION = 0x0112
_GPS_IFD = 0x8825
"""Where EXIF keeps where a photo was taken: a picture that says so is re-encoded, without it."""

_ready = threading.Event()
_ready_lock = threading.Lock()


@dataclass(frozen=True)
class Picture:
    """A picture as the model gets it."""

    data: bytes
    media_type: str
    width: int
    height: int


def _prepare_pillow() -> None:
    """Teach Pillow HEIC, and its own bomb limit to ours, once, when the first picture comes."""
    with _ready_lock:
        if _ready.is_set():
            return
        from pillow_heif import register_heif_opener

        register_heif_opener()
        # Pillow warns above this and refuses above twice it; ours refuses above it, from the header.
        Image.MAX_IMAGE_PIXELS = MAX_PIXELS
        _ready.set()


def _encode(image: Image.Image) -> tuple[bytes, str]:
    out = io.BytesIO()
    if image.has_transparency_data:
        image.convert("RGBA").save(out, format="PNG", optimize=True)
        return out.getvalue(), "image/png"
    image.convert("RGB").save(out, format="JPEG", quality=JPEG_QUALITY, optimize=True)
    return out.getvalue(), "image/jpeg"


def _scaled(image: Image.Image) -> Picture:
    if image.format == "JPEG":
        # Decode at 1/2, 1/4 or 1/8 scale when the result's longest side is between 3/4 of MAX_SIDE
        # and MAX_SIDE (a 4032x3024 photo: 2016x1512, a quarter of the work, no resampling after);
        # else at the least reduction still at least MAX_SIDE, scaled down after.
        longest = max(image.size)
        fits = [n for n in (8, 4, 2) if MAX_SIDE * 3 / 4 <= longest / n <= MAX_SIDE]
        if fits:
            image.draft("RGB", (-(-image.width // fits[0]), -(-image.height // fits[0])))
        else:
            image.draft("RGB", (MAX_SIDE, MAX_SIDE))
    upright = ImageOps.exif_transpose(image)
    upright.thumbnail((MAX_SIDE, MAX_SIDE), Image.Resampling.LANCZOS)
    data, media_type = _encode(upright)
    return Picture(data, media_type, upright.width, upright.height)


def prepare(data: bytes, media_type: str) -> Picture | Refused:
    """``data`` (of ``media_type``, read from its bytes) ready for a model, or why it cannot be."""
    _prepare_pillow()
    try:
        with Image.open(io.BytesIO(data), formats=_FORMATS) as image:
            width, height = image.size
            if width * height > MAX_PIXELS:
                return Refused("too_big", f"{width}x{height} pixels > {MAX_PIXELS}")
            exif = image.getexif()
            upright, placed = exif.get(_ORIENTATION, 1) == 1, _GPS_IFD in exif
            if media_type in MODEL_IMAGES and max(width, height) <= MAX_SIDE and upright and not placed:
                return Picture(data, media_type, width, height)
            return _scaled(image)
    except Image.DecompressionBombError:
        return Refused("too_big", "more pixels than a picture may have")
    except (UnidentifiedImageError, OSError, ValueError, SyntaxError) as exc:
        return Refused("unsupported_type", f"unreadable picture ({type(exc).__name__})")

"""Make the evaluation's bundled files, in ``src/truloop_assistant/data/eval_files/``:

    python scripts/eval_files.py

- ``poster.png``: an event poster (1000x1400) with its title, date and time, and place in large text,
  drawn with Pillow's own font, so the file is the same on any machine. The cases that send it expect
  what it says: change :data:`POSTER` and those cases together.
- ``design_review.ogg``: a voice note saying :data:`VOICE_NOTE`, spoken by espeak-ng and encoded as
  Ogg/Opus by opusenc (both from the distribution's packages: ``espeak-ng``, ``opus-tools``); skipped
  with a line saying so when they are not installed.
"""

from __future__ import annotations

import io
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from PIL import Image, ImageDraw, ImageFont

FOLDER = Path(__file__).resolve().parents[1] / "src" / "truloop_assistant" / "data" / "eval_files"
POSTER = (
    ("DESIGN", 150),
    ("REVIEW", 150),
    ("", 60),
    ("Thursday", 80),
    ("9 December 2027", 80),
    ("15:00 - 16:00", 80),
    ("", 60),
    ("Room 4B", 80),
    ("Gangnam Office", 80),
)
"""The poster's lines, top to bottom, each with its font size in pixels ("" is a gap)."""
VOICE_NOTE = "내일 오후 네 시에 디자인 리뷰 잡아줘"


def poster() -> bytes:
    """The poster as a PNG of few colours (small: a page of flat text compresses well)."""
    image = Image.new("RGB", (1000, 1400), "#f4efe6")
    draw = ImageDraw.Draw(image)
    draw.rectangle((0, 0, 1000, 40), fill="#1d3557")
    draw.rectangle((0, 1360, 1000, 1400), fill="#1d3557")
    y = 170
    for text, size in POSTER:
        if text:
            font = ImageFont.load_default(size)
            width = draw.textlength(text, font=font)
            bold = 4 if size >= 150 else 1
            draw.text(((1000 - width) / 2, y), text, font=font, fill="#1d3557", stroke_width=bold,
                      stroke_fill="#1d3557")  # fmt: skip
        y += int(size * 1.25)
    out = io.BytesIO()
    image.quantize(colors=16).save(out, format="PNG", optimize=True)
    return out.getvalue()


def voice_note() -> bytes | None:
    """The voice note as Ogg/Opus, or None when espeak-ng or opusenc is not installed."""
    if shutil.which("espeak-ng") is None or shutil.which("opusenc") is None:
        return None
    with tempfile.TemporaryDirectory() as folder:
        wav, ogg = Path(folder) / "voice.wav", Path(folder) / "voice.ogg"
        subprocess.run(["espeak-ng", "-v", "ko", "-s", "140", "-w", str(wav), VOICE_NOTE], check=True)
        subprocess.run(
            ["opusenc", "--quiet", "--discard-comments", "--bitrate", "24", str(wav), str(ogg)], check=True
        )
        return ogg.read_bytes()


def main() -> int:
    FOLDER.mkdir(parents=True, exist_ok=True)
    (FOLDER / "poster.png").write_bytes(picture := poster())
    print(f"{FOLDER / 'poster.png'}: {len(picture):,} bytes")
    if (spoken := voice_note()) is None:
        print("design_review.ogg: not made (install espeak-ng and opus-tools)", file=sys.stderr)
        return 1
    (FOLDER / "design_review.ogg").write_bytes(spoken)
    print(f"{FOLDER / 'design_review.ogg'}: {len(spoken):,} bytes")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

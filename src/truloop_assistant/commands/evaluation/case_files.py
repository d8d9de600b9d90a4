"""What the person sends in a case: their words, and the files of the same message.

A case may send a picture (``picture: poster.png``) and a voice note (``voice: design_review.ogg``),
each a file name or a list of them: a file beside the cases file, or else one of the bundled
``data/eval_files/``. Each is read when the cases file is loaded, and checked by its bytes as the
server checks a person's file: a picture must be one the server reads (JPEG, PNG, GIF, WebP, HEIC),
a voice note a recording it transcribes (m4a, mp3, ogg/opus, wav, webm). A voice note is a real
recording: the evaluation hears it with ``TRULOOP_TRANSCRIPTION_MODEL``, as the server would.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from ...backends.transcription import NAMES, audio_format
from ...protocol.file_types import detect

EVAL_FILES = Path(__file__).resolve().parents[2] / "data" / "eval_files"
"""The bundled files cases may send (a poster, a voice note)."""

FileKey = Literal["picture", "voice"]
FILE_KEYS: tuple[FileKey, ...] = ("picture", "voice")
"""The keys of a case that send a file, in the order the message carries them."""
_WHAT = {"picture": "a picture (JPEG, PNG, GIF, WebP or HEIC)", "voice": f"a recording ({NAMES})"}
_EXAMPLE = {"picture": "poster.png", "voice": "note.m4a"}


@dataclass(frozen=True)
class CaseFile:
    """A file the person sends: which key of the case named it, its name, and its bytes."""

    key: FileKey
    name: str
    data: bytes = field(repr=False)

    @property
    def shown(self) -> str:
        """How the report names it: ``[picture poster.png]``, ``[voice note design_review.ogg]``."""
        return f"[{'voice note' if self.key == 'voice' else self.key} {self.name}]"


@dataclass(frozen=True)
class Request:
    """One message of the person: what they write (may be empty beside a file), and its files."""

    text: str
    files: tuple[CaseFile, ...] = ()

    @property
    def shown(self) -> str:
        """The text, then each file as :attr:`CaseFile.shown` names it."""
        return " ".join(part for part in (self.text, *(f.shown for f in self.files)) if part)

    @property
    def voice_notes(self) -> bool:
        """Whether the message carries a voice note (played only with a transcriber)."""
        return any(f.key == "voice" for f in self.files)


def case_files(entry: Mapping[object, object], folder: Path) -> tuple[CaseFile, ...]:
    """The files an entry of the cases file sends, read and checked (``folder``: the cases file's)."""
    files: list[CaseFile] = []
    for key in FILE_KEYS:
        if key not in entry:
            continue
        given = entry[key]
        names: list[object] = given if isinstance(given, list) else [given]
        if not names or not all(isinstance(n, str) and n.strip() for n in names):
            raise ValueError(
                f"{key}: expected the name of {_WHAT[key]} beside the cases file or among the bundled "
                f"eval files, or a list of names (e.g. {key}: {_EXAMPLE[key]})"
            )
        files += [_read(key, str(name).strip(), folder) for name in names]
    return tuple(files)


def _read(key: FileKey, name: str, folder: Path) -> CaseFile:
    path = next((p for p in (folder / name, EVAL_FILES / name) if p.is_file()), None)
    if path is None:
        raise ValueError(f"{key}: no file {name!r} beside the cases file ({folder}) nor in {EVAL_FILES}")
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise ValueError(f"{key}: cannot read {path} ({exc.strerror or exc})") from None
    found = detect(data)
    if key == "picture" and (found is None or found.kind != "image"):
        raise ValueError(f"{key}: {path} is not {_WHAT[key]}: {_seen(found)}")
    if key == "voice" and audio_format(data) is None:
        raise ValueError(f"{key}: {path} is not {_WHAT[key]}: {_seen(found)}")
    return CaseFile(key, path.name, data)


def _seen(found: object) -> str:
    media_type = getattr(found, "media_type", None)
    return f"its bytes are {media_type}" if media_type else "its bytes are no type the server reads"

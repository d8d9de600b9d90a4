"""Users files: the JSON list of profiles ``truloop-assistant users import FILE`` loads."""

from __future__ import annotations

import json
from pathlib import Path

from pydantic import ValidationError

from ...errors import OperatorError, validation_problems
from .port import UserProfile

SAMPLE_USERS_FILE = Path(__file__).resolve().parents[2] / "data" / "sample_users.json"
"""The bundled sample users the dev server and the tests import."""


class UsersFileError(OperatorError, ValueError):
    """A users file is missing or invalid; the message names the file and the bad entry."""


def load_users_file(path: str | Path) -> list[UserProfile]:
    """Read a JSON list of user objects, naming the file and the entry on any problem."""
    path = Path(path)
    try:
        raw = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise UsersFileError(f"{path}: no such file") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise UsersFileError(f"{path}: cannot read it ({exc})") from None
    except json.JSONDecodeError as exc:
        raise UsersFileError(f"{path}: not valid JSON (line {exc.lineno}: {exc.msg})") from None
    if not isinstance(raw, list):
        raise UsersFileError(f"{path}: expected a JSON list of user objects, got {type(raw).__name__}")
    users: list[UserProfile] = []
    seen: set[str] = set()
    for index, entry in enumerate(raw):
        label = f"entry {index}"
        if isinstance(entry, dict) and isinstance(entry.get("user_id"), str):
            label += f" (user_id {entry['user_id']!r})"
        try:
            user = UserProfile.model_validate(entry)
        except ValidationError as exc:
            problems = "; ".join(validation_problems(exc.errors(), default_where="entry"))
            raise UsersFileError(f"{path}: {label}: {problems}") from None
        if user.user_id in seen:
            raise UsersFileError(f"{path}: {label}: user_id {user.user_id!r} appears twice")
        seen.add(user.user_id)
        users.append(user)
    return users

"""The user directory: who is in the app, how to reach them, and their external (employee) ids.

:class:`RedisUserDirectory` (:mod:`.redis`) is the default, filled from a users file (:mod:`.file`,
see ``data/sample_users.json``) with ``truloop-assistant users import FILE``;
:class:`HttpUserDirectory` (:mod:`.http`) is the production adapter for the app's own user API,
whose module documents the API's shape.
"""

from __future__ import annotations

from .file import SAMPLE_USERS_FILE, UsersFileError, load_users_file
from .http import HttpUserDirectory
from .matching import match_users
from .port import SearchField, UserDirectory, UserDirectoryError, UserProfile, unknown_user_ids
from .redis import RedisUserDirectory

__all__ = [
    "SAMPLE_USERS_FILE",
    "HttpUserDirectory",
    "RedisUserDirectory",
    "SearchField",
    "UserDirectory",
    "UserDirectoryError",
    "UserProfile",
    "UsersFileError",
    "load_users_file",
    "match_users",
    "unknown_user_ids",
]

"""The user directory: who is in the app, how to reach them, and their external (employee) ids.

:class:`RedisUserDirectory` (:mod:`.redis`) is the default, filled from a users file (:mod:`.file`,
see ``data/sample_users.json``) with ``truloop-assistant users import FILE``;
:class:`HttpUserDirectory` (:mod:`.http`) is the production adapter for the app's own user API,
whose module documents the API's shape. Who may see whose e-mail and phone is :mod:`.privacy`.
"""

from __future__ import annotations

from .file import SAMPLE_USERS_FILE, UsersFileError, load_users_file
from .http import HttpUserDirectory
from .matching import as_e164, found_only_by_fragment, match_users
from .port import (
    ContactField,
    DirectoryReads,
    DirectoryRole,
    SearchField,
    UserDirectory,
    UserDirectoryError,
    UserProfile,
    unknown_user_ids,
)
from .privacy import CONTACT_FIELDS, ContactVisibility, event_peers
from .redis import RedisUserDirectory

__all__ = [
    "CONTACT_FIELDS",
    "SAMPLE_USERS_FILE",
    "ContactField",
    "ContactVisibility",
    "DirectoryReads",
    "DirectoryRole",
    "HttpUserDirectory",
    "RedisUserDirectory",
    "SearchField",
    "UserDirectory",
    "UserDirectoryError",
    "UserProfile",
    "UsersFileError",
    "as_e164",
    "event_peers",
    "found_only_by_fragment",
    "load_users_file",
    "match_users",
    "unknown_user_ids",
]

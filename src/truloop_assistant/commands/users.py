"""``truloop-assistant users import FILE``: load user profiles into the default (Redis) directory."""

from __future__ import annotations

import argparse
import asyncio
import sys
from typing import Any

from redis.exceptions import RedisError

from ..backends.users import (
    RedisUserDirectory,
    UserDirectoryError,
    UserProfile,
    UsersFileError,
    load_users_file,
)
from ..config import Settings
from ..redis_client import connect
from ..store import keys


def add_parser(subparsers: Any) -> None:
    """Add the ``users`` command and its subcommands."""
    users = subparsers.add_parser("users", help="manage the built-in user directory")
    users_sub = users.add_subparsers(dest="users_command", required=True)
    imp = users_sub.add_parser(
        "import", help="insert or update users from a JSON file (a list of user objects)"
    )
    imp.add_argument("file", help="path of the JSON file, e.g. src/truloop_assistant/data/sample_users.json")


def run(args: argparse.Namespace, settings: Settings) -> int:
    """Run a ``users`` subcommand; 0 on success, 1 with a one-line reason on stderr otherwise."""
    try:
        users = load_users_file(args.file)
        keys.use_prefix(settings.key_prefix)
        count = asyncio.run(import_users(settings.redis_url, users))
    except (UsersFileError, UserDirectoryError) as exc:
        print(f"truloop-assistant: {exc}", file=sys.stderr)
        return 1
    except RedisError as exc:
        print(f"truloop-assistant: could not write to Redis: {exc}", file=sys.stderr)
        return 1
    print(f"imported {count} users")
    return 0


async def import_users(redis_url: str, users: list[UserProfile]) -> int:
    """Insert or replace ``users`` in the directory in that Redis; how many were written."""
    redis = connect(redis_url)
    try:
        return await RedisUserDirectory(redis).import_users(users)
    finally:
        await redis.aclose()

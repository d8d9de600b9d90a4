"""``truloop-assistant users import FILE``: load user profiles into the default (Redis) directory;
``truloop-assistant users revoke-tokens USER_ID``: refuse a person's device tokens issued until now."""

from __future__ import annotations

import argparse
import asyncio
import sys
import time
from datetime import UTC, datetime
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
from ..store.token_revocations import TokenRevocations


def add_parser(subparsers: Any) -> None:
    """Add the ``users`` command and its subcommands."""
    users = subparsers.add_parser("users", help="manage the built-in user directory")
    users_sub = users.add_subparsers(dest="users_command", required=True)
    imp = users_sub.add_parser(
        "import", help="insert or update users from a JSON file (a list of user objects)"
    )
    imp.add_argument("file", help="path of the JSON file, e.g. src/truloop_assistant/data/sample_users.json")
    revoke = users_sub.add_parser(
        "revoke-tokens",
        help="refuse every device token of a user issued until now (a lost phone, a leaked token)",
        description="Refuse every device token of USER_ID issued until now, on every device (401 "
        "token_revoked, tokens without iat too); tokens minted afterwards work.",
    )
    revoke.add_argument("user_id", metavar="USER_ID", help="the Sendbird user id (the tokens' sub)")


def run(args: argparse.Namespace, settings: Settings) -> int:
    """Run a ``users`` subcommand; 0 on success, 1 with a one-line reason on stderr otherwise."""
    if args.users_command == "revoke-tokens":
        return _revoke(args.user_id, settings)
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


def _revoke(user_id: str, settings: Settings) -> int:
    if not user_id.strip():
        print("truloop-assistant: USER_ID must not be empty", file=sys.stderr)
        return 1
    keys.use_prefix(settings.key_prefix)
    try:
        not_before = asyncio.run(revoke_tokens(settings, user_id))
    except RedisError as exc:
        print(f"truloop-assistant: could not write to Redis: {exc}", file=sys.stderr)
        return 1
    when = datetime.fromtimestamp(not_before, UTC).isoformat(timespec="seconds")
    print(f"revoked the device tokens of {user_id} issued before {when}")
    return 0


async def revoke_tokens(settings: Settings, user_id: str) -> float:
    """Refuse ``user_id``'s tokens issued until now; the moment before which they are refused."""
    redis = connect(settings.redis_url)
    try:
        revocations = TokenRevocations(redis, max_token_ttl_s=settings.jwt_max_ttl_s)
        return await revocations.revoke(user_id, at=time.time())
    finally:
        await redis.aclose()

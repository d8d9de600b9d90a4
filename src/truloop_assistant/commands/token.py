"""``truloop-assistant token USER_ID``: a device token for development and tests, signed with the secret.

In production the app's own backend mints device tokens (see docs/device-tokens.md); this command holds no key
that a JWKS URL publishes, so with only ``TRULOOP_JWT_JWKS_URL`` configured it refuses.
"""

from __future__ import annotations

import argparse
import sys

DEFAULT_TTL_S = 3600
"""How long a token is valid unless ``--ttl`` says otherwise."""


def add_parser(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add ``token USER_ID [--ttl SECONDS] [--admin]``."""
    command = subparsers.add_parser(
        "token",
        help="print a device JWT for a user, signed with TRULOOP_JWT_SECRET (for development and tests)",
        description="Print a device token (HS256 JWT) for USER_ID, signed with TRULOOP_JWT_SECRET, with "
        "the aud and iss claims of TRULOOP_JWT_AUDIENCE and TRULOOP_JWT_ISSUER when they are set.",
    )
    command.add_argument("user_id", metavar="USER_ID", help="the Sendbird user id (the token's sub)")
    command.add_argument(
        "--ttl",
        type=_seconds,
        default=DEFAULT_TTL_S,
        metavar="SECONDS",
        help=f"how long the token is valid (default {DEFAULT_TTL_S}; at most TRULOOP_JWT_MAX_TTL_S)",
    )
    command.add_argument(
        "--admin", action="store_true", help='add role: "admin" (the admin rate limit and admin endpoints)'
    )


def run(args: argparse.Namespace) -> int:
    """Print the token; 2 when this server cannot sign one (no HS256 secret), the settings are invalid or
    ``--ttl`` is longer than the server accepts."""
    from ..auth import issue_token
    from ..config import given_settings, load_settings

    given = given_settings()
    if not given.get("jwt_secret"):
        print(f"truloop-assistant token: {_no_secret(bool(given.get('jwt_jwks_url')))}", file=sys.stderr)
        return 2
    if not args.user_id.strip():
        print("truloop-assistant token: USER_ID must not be empty", file=sys.stderr)
        return 2
    # Checked as the server checks them (a too-short secret, a bad audience), without the model or channel.
    settings = load_settings(channel="local", model="offline")
    assert settings.jwt_secret is not None  # given above, and kept by load_settings
    if args.ttl > settings.jwt_max_ttl_s:
        print(
            f"truloop-assistant token: --ttl {args.ttl} is longer than TRULOOP_JWT_MAX_TTL_S "
            f"({settings.jwt_max_ttl_s} s) allows, and the server would refuse the token: use a shorter "
            "--ttl (or raise TRULOOP_JWT_MAX_TTL_S)",
            file=sys.stderr,
        )
        return 2
    token = issue_token(
        settings.jwt_secret,
        args.user_id,
        ttl_s=args.ttl,
        role="admin" if args.admin else None,
        audience=settings.jwt_audience,
        issuer=settings.jwt_issuer,
    )
    print(token)
    return 0


def _no_secret(jwks_configured: bool) -> str:
    if jwks_configured:
        return (
            "only TRULOOP_JWT_JWKS_URL is set, and the server cannot sign for a key it does not hold: "
            "mint device tokens in your app's backend with the private key behind that JWKS (see "
            "'Minting device tokens in your backend' in docs/device-tokens.md), or set TRULOOP_JWT_SECRET "
            "as well to accept HS256 tokens signed with it"
        )
    return (
        "TRULOOP_JWT_SECRET is not set: set it (in the environment or .env) to the HS256 secret the "
        "server verifies device tokens with (at least 32 bytes; make one with "
        "`python3 -c 'import secrets; print(secrets.token_urlsafe(32))'`)"
    )


def _seconds(value: str) -> int:
    try:
        seconds = int(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{value!r} is not a whole number of seconds") from None
    if seconds < 1:
        raise argparse.ArgumentTypeError("must be at least 1 second")
    return seconds

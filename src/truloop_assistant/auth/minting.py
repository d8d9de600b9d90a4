"""Minting device tokens: HS256 with the server's secret, always with ``iat`` (so that a revocation of
the person's tokens can tell them from the ones issued before it)."""

from __future__ import annotations

import time
from typing import Any

import jwt
from pydantic import SecretStr

from ..config import reveal


def issue_token(
    secret: str | SecretStr,
    user_id: str,
    *,
    ttl_s: int = 24 * 3600,
    role: str | None = None,
    audience: str | None = None,
    issuer: str | None = None,
) -> str:
    """A signed HS256 token (the dev server and the ``token`` command hand these out; tests use it too)."""
    now = int(time.time())
    claims: dict[str, Any] = {"sub": user_id, "exp": now + ttl_s, "iat": now}
    if role:
        claims["role"] = role
    if audience:
        claims["aud"] = audience
    if issuer:
        claims["iss"] = issuer
    return jwt.encode(claims, reveal(secret), algorithm="HS256")

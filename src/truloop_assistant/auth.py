"""Bearer-token authentication of device requests (JWT, HS256 or keys from a JWKS URL)."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import Any

import jwt

from .config import Settings
from .errors import Unauthorized

_ASYMMETRIC = ["RS256", "RS384", "RS512", "ES256", "ES384", "PS256"]


@dataclass(frozen=True)
class Principal:
    user_id: str
    role: str | None = None

    @property
    def is_admin(self) -> bool:
        return self.role == "admin"


class TokenVerifier:
    def __init__(self, settings: Settings) -> None:
        self.secret = settings.jwt_secret
        self.audience = settings.jwt_audience
        self.issuer = settings.jwt_issuer
        self._jwks = (
            jwt.PyJWKClient(settings.jwt_jwks_url, cache_keys=True) if settings.jwt_jwks_url else None
        )

    async def verify(self, authorization: str | None) -> Principal:
        if not authorization:
            raise Unauthorized("missing Authorization header; send 'Authorization: Bearer <JWT>'")
        scheme, _, token = authorization.partition(" ")
        if scheme.lower() != "bearer" or not token.strip():
            raise Unauthorized("the Authorization header must be 'Bearer <JWT>'")
        token = token.strip()
        try:
            claims = await self._decode(token)
        except jwt.ExpiredSignatureError:
            raise Unauthorized("the token has expired", code="token_expired") from None
        except jwt.PyJWTError as exc:
            raise Unauthorized(f"invalid token: {exc}", code="invalid_token") from None
        sub = claims.get("sub")
        if not isinstance(sub, str) or not sub:
            raise Unauthorized("the token has no 'sub' claim", code="invalid_token")
        role = claims.get("role")
        return Principal(user_id=sub, role=role if isinstance(role, str) else None)

    async def _decode(self, token: str) -> dict[str, Any]:
        options = {"require": ["exp", "sub"], "verify_aud": self.audience is not None}
        common: dict[str, Any] = {"audience": self.audience, "issuer": self.issuer, "options": options}
        header = jwt.get_unverified_header(token)
        if header.get("alg") == "HS256" and self.secret:
            return jwt.decode(token, self.secret, algorithms=["HS256"], **common)
        if self._jwks is not None and header.get("alg") in _ASYMMETRIC:
            key = await asyncio.to_thread(self._jwks.get_signing_key_from_jwt, token)
            return jwt.decode(token, key.key, algorithms=_ASYMMETRIC, **common)
        raise jwt.InvalidAlgorithmError(f"algorithm {header.get('alg')!r} is not accepted")


def issue_token(secret: str, user_id: str, *, ttl_s: int = 24 * 3600, role: str | None = None) -> str:
    """A signed HS256 token (the dev server hands these out; tests use it too)."""
    import time

    claims: dict[str, Any] = {"sub": user_id, "exp": int(time.time()) + ttl_s, "iat": int(time.time())}
    if role:
        claims["role"] = role
    return jwt.encode(claims, secret, algorithm="HS256")

"""Bearer-token authentication of device requests: HS256 with a secret, RS/ES/PS keys from a JWKS URL."""

from __future__ import annotations

import base64
import binascii
import json
import time
from dataclasses import dataclass
from typing import Any

import jwt
from jwt.exceptions import InvalidSubjectError

from ..config import Settings, reveal
from ..errors import Unauthorized
from ..store.token_revocations import TokenRevocations
from .jwks import KEY_TYPES, JwksKeys, SigningKey
from .minting import issue_token

__all__ = ["Authenticated", "Principal", "TokenVerifier", "issue_token"]

_MAX_TOKEN_CHARS = 8 * 1024
_LEEWAY_S = 30
_VERIFIED_MAX = 1024
"""Tokens remembered once verified: a device sends the same token with every request until it expires."""


@dataclass(frozen=True)
class Principal:
    """The authenticated device user: the token's ``sub``, and its ``role`` if it is a string."""

    user_id: str
    role: str | None = None

    @property
    def is_admin(self) -> bool:
        """True for tokens with the claim ``role: "admin"``."""
        return self.role == "admin"


def _invalid(message: str) -> Unauthorized:
    """A 401 ``invalid_token`` error."""
    return Unauthorized(message, code="invalid_token")


def _pick(keys: list[SigningKey], kid: str | None, alg: str) -> SigningKey | None:
    """The one key for this token, None when the kid is unknown; raises when the choice is ambiguous."""
    if kid is None:
        fitting = [key for key in keys if key.fits(alg)]
        if len(fitting) > 1:
            raise _invalid(f"the token header has no 'kid' and several JWKS keys fit {alg}; add the kid")
        return fitting[0] if fitting else None
    named = [key for key in keys if key.kid == kid]
    if named and not any(key.fits(alg) for key in named):
        raise _invalid(f"the JWKS key named by the token's 'kid' is not a {alg} key")
    return next((key for key in named if key.fits(alg)), None)


def _reason(exc: jwt.PyJWTError, audience: str | None, issuer: str | None) -> str:
    """A message for a rejected token that names the problem and never repeats the token."""
    if isinstance(exc, jwt.MissingRequiredClaimError):
        return f"the token has no '{exc.claim}' claim"
    if isinstance(exc, jwt.InvalidAudienceError):
        return f"the token's audience ('aud') is not {audience!r}"
    if isinstance(exc, jwt.InvalidIssuerError):
        return f"the token's issuer ('iss') is not {issuer!r}"
    if isinstance(exc, jwt.ImmatureSignatureError):
        return "the token is not valid yet ('nbf' or 'iat' is in the future)"
    if isinstance(exc, jwt.InvalidSignatureError):
        return "the token's signature does not verify"
    if isinstance(exc, InvalidSubjectError):
        return "the token's 'sub' claim must be a non-empty string"
    if isinstance(exc, (jwt.DecodeError, jwt.InvalidIssuedAtError)):
        return "the token is malformed (not a JWT, or 'exp', 'nbf' or 'iat' is not a number)"
    return "the token is not valid"


@dataclass(frozen=True)
class Authenticated:
    """A token whose signature and claims verified: who it names, and when it was issued (its ``iat``;
    None without one). Whether it was revoked since is :meth:`TokenVerifier.admit`'s to say."""

    principal: Principal
    issued_at: float | None


@dataclass(frozen=True)
class _Verified:
    """A token that verified: who it names, until when, and the JWKS keys it was checked against."""

    token: Authenticated
    exp: int
    keys: list[SigningKey] | None
    """The JWKS key list of the time (a refetch makes a new one); None for HS256."""


class TokenVerifier:
    """Verifies ``Authorization: Bearer <JWT>`` headers and returns the :class:`Principal`.

    A token that verified is remembered: the same token again is only checked for expiry (its
    signature, audience, issuer, ``nbf``/``iat`` and ``sub`` cannot have changed), as long as the
    JWKS keys it was checked against are still the ones in use. Whether its person's tokens were
    revoked since (``revocations``) is read on every request: one Redis read.
    """

    def __init__(
        self,
        settings: Settings,
        *,
        revocations: TokenRevocations | None = None,
        jwks_ttl_s: float = 600,
        jwks_min_refetch_s: float = 30,
    ) -> None:
        self.revocations = revocations
        """Where revocations are read; None: none are checked (a verifier without Redis)."""
        self.secret = settings.jwt_secret
        self.audience = settings.jwt_audience or None
        self.issuer = settings.jwt_issuer or None
        self.max_ttl_s = settings.jwt_max_ttl_s
        self.jwks = (
            JwksKeys(settings.jwt_jwks_url, ttl_s=jwks_ttl_s, min_refetch_s=jwks_min_refetch_s)
            if settings.jwt_jwks_url
            else None
        )
        self._verified: dict[str, _Verified] = {}

    async def verify(self, authorization: str | None) -> Principal:
        """The principal of a valid bearer token not revoked since; raises :class:`Unauthorized` otherwise."""
        return await self.admit(await self.authenticate(authorization))

    async def admit(self, token: Authenticated) -> Principal:
        """The token's principal, unless its person's tokens were revoked after it was issued (or it
        has no ``iat`` to show it was not): 401 ``token_revoked``. One Redis read."""
        if self.revocations is None:
            return token.principal
        not_before = await self.revocations.not_before(token.principal.user_id)
        if not_before is None:
            return token.principal
        if token.issued_at is None:
            raise Unauthorized(
                "the token has no 'iat' claim and this user's tokens were revoked: get a new token "
                "(minted with 'iat')",
                code="token_revoked",
            )
        if token.issued_at < not_before:
            raise Unauthorized(
                "the token was issued before this user's tokens were revoked: get a new token",
                code="token_revoked",
            )
        return token.principal

    async def authenticate(self, authorization: str | None) -> Authenticated:
        """The bearer token's principal and ``iat`` once its signature and claims verify (no Redis);
        raises :class:`Unauthorized` otherwise."""
        if not authorization:
            raise Unauthorized("missing Authorization header; send 'Authorization: Bearer <JWT>'")
        scheme, _, token = authorization.partition(" ")
        token = token.strip()
        if scheme.lower() != "bearer" or not token:
            raise Unauthorized("the Authorization header must be 'Bearer <JWT>'")
        if len(token) > _MAX_TOKEN_CHARS:
            raise _invalid("the token is larger than 8 KiB")
        if (known := await self._known(token)) is not None:
            return known
        try:
            claims, alg = await self._decode(token)
        except jwt.ExpiredSignatureError:
            raise Unauthorized("the token has expired", code="token_expired") from None
        except jwt.PyJWTError as exc:
            raise _invalid(_reason(exc, self.audience, self.issuer)) from None
        sub = claims.get("sub")
        if not isinstance(sub, str) or not sub.strip():
            raise _invalid("the token's 'sub' claim must be a non-empty string")
        if not _valid_unicode(sub):  # a lone surrogate ("\ud800") can neither key Redis nor be compared
            raise _invalid("the token's 'sub' claim is not valid Unicode")
        exp = int(claims["exp"])
        if exp - time.time() > self.max_ttl_s + _LEEWAY_S:
            raise _invalid(
                f"the token is valid for longer than TRULOOP_JWT_MAX_TTL_S allows ({self.max_ttl_s} s): "
                "mint device tokens that expire sooner"
            )
        role = claims.get("role")
        principal = Principal(user_id=sub, role=role if isinstance(role, str) else None)
        verified = Authenticated(principal, _issued_at(claims))
        # The JWKS keys the token was just checked against (no await since: still the current ones).
        keys = self.jwks.keys if alg != "HS256" and self.jwks is not None else None
        self._remember(token, _Verified(verified, exp, keys))
        return verified

    async def _known(self, token: str) -> Authenticated | None:
        """The principal of a token that verified before and has not expired since; None when it
        must be verified (again)."""
        known = self._verified.get(token)
        if known is None:
            return None
        if known.keys is not None and (self.jwks is None or await self.jwks.get() is not known.keys):
            self._verified.pop(token, None)  # the keys changed since: checked again, against the new ones
            return None
        if known.exp <= time.time() - _LEEWAY_S:  # as PyJWT decides it
            self._verified.pop(token, None)
            raise Unauthorized("the token has expired", code="token_expired")
        return known.token

    def _remember(self, token: str, verified: _Verified) -> None:
        if len(self._verified) >= _VERIFIED_MAX:
            del self._verified[next(iter(self._verified))]  # the oldest
        self._verified[token] = verified

    async def _decode(self, token: str) -> tuple[dict[str, Any], str]:
        """The token's claims and its algorithm, once its signature and claims are checked."""
        if _header_alg(token) == "HS256" and (secret := reveal(self.secret)):
            # The common case, parsed once: ``jwt.decode`` reads and checks the header as
            # ``get_unverified_header`` would, and fails the same way on a malformed token.
            return self._claims(token, secret, "HS256"), "HS256"
        header = jwt.get_unverified_header(token)
        alg, kid = header.get("alg"), header.get("kid")
        if alg == "HS256":
            if not (secret := reveal(self.secret)):
                raise _invalid("HS256 tokens are not accepted here (no secret is set)")
            return self._claims(token, secret, alg), alg
        if not isinstance(alg, str) or alg not in KEY_TYPES:
            raise _invalid(f"the token's algorithm is not accepted; use HS256 or {', '.join(KEY_TYPES)}")
        if self.jwks is None:
            raise _invalid(f"{alg} tokens are not accepted here (no JWKS URL is set)")
        if kid is not None and not isinstance(kid, str):
            raise _invalid("the token header's 'kid' must be a string")
        seen = self.jwks.fetches
        key = _pick(await self.jwks.get(), kid, alg)
        if key is None and self.jwks.fetches == seen:  # perhaps a rotated key: look again, rate-limited
            key = _pick(await self.jwks.get(refetch=True), kid, alg)
        if key is None:
            if self.jwks.unavailable:
                raise _invalid("the signing keys (JWKS) cannot be fetched right now; try again later")
            raise _invalid(f"no {alg} key in the JWKS matches the token")
        return self._claims(token, key.key, alg), alg

    def _claims(self, token: str, key: Any, alg: str) -> dict[str, Any]:
        require = ["exp", "sub"] + ["aud"] * (self.audience is not None) + ["iss"] * (self.issuer is not None)
        return jwt.decode(
            token,
            key,
            algorithms=[alg],
            audience=self.audience,
            issuer=self.issuer,
            leeway=_LEEWAY_S,
            options={"require": require, "verify_aud": self.audience is not None},
        )


def _issued_at(claims: dict[str, Any]) -> float | None:
    """The token's ``iat`` (PyJWT took it for a whole number), None without one."""
    try:
        return float(claims["iat"])
    except (KeyError, TypeError, ValueError):
        return None


def _header_alg(token: str) -> Any:
    """The ``alg`` of the token's header, read without checks; None when it cannot be read."""
    segment = token.partition(".")[0]
    try:
        header = json.loads(base64.urlsafe_b64decode(segment + "=" * (-len(segment) % 4)))
    except (ValueError, binascii.Error, RecursionError):
        return None
    return header.get("alg") if isinstance(header, dict) else None


def _valid_unicode(text: str) -> bool:
    try:
        text.encode()
    except UnicodeEncodeError:
        return False
    return True

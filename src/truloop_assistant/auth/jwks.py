"""The signing keys behind a JWKS URL (RS/ES/PS algorithms): fetched, cached, checked."""

from __future__ import annotations

import asyncio
import json
import logging
import time
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

import httpx
import jwt
from cryptography.hazmat.primitives.asymmetric import rsa
from jwt.algorithms import ECAlgorithm, RSAAlgorithm

from ..config import ConfigError

log = logging.getLogger(__name__)

# The key type each accepted asymmetric algorithm needs, and the curve for EC.
KEY_TYPES = {"RS256": "RSA", "RS384": "RSA", "RS512": "RSA", "PS256": "RSA", "ES256": "EC", "ES384": "EC"}
_CURVES = {"ES256": "P-256", "ES384": "P-384"}
_MAX_JWKS_BYTES = 1024 * 1024
_LOCAL_HOSTS = {"127.0.0.1", "localhost", "::1"}


@dataclass(frozen=True)
class SigningKey:
    kid: str | None
    kty: str
    alg: str | None
    crv: str | None
    key: Any

    def fits(self, alg: str) -> bool:
        """Whether this key may verify a token signed with ``alg`` (key type, curve, the JWK's own alg)."""
        if self.kty != KEY_TYPES[alg] or (self.alg is not None and self.alg != alg):
            return False
        return self.kty != "EC" or self.crv == _CURVES[alg]


def parse_key(jwk: Any) -> SigningKey | None:
    """A public signing key from one JWK, or None for anything else (private, encryption, weak, odd)."""
    if not isinstance(jwk, dict) or "d" in jwk or jwk.get("use", "sig") != "sig":
        return None
    kty, alg, kid = jwk.get("kty"), jwk.get("alg"), jwk.get("kid")
    if kty not in ("RSA", "EC") or (alg is not None and alg not in KEY_TYPES):
        return None
    try:
        key = RSAAlgorithm.from_jwk(jwk) if kty == "RSA" else ECAlgorithm.from_jwk(jwk)
    except (jwt.PyJWTError, ValueError, TypeError):
        return None
    if isinstance(key, rsa.RSAPublicKey) and key.key_size < 2048:
        return None
    return SigningKey(kid if isinstance(kid, str) else None, kty, alg, jwk.get("crv"), key)


def check_jwks_url(url: str) -> None:
    """Refuse JWKS URLs that are not https (plain http only for 127.0.0.1/localhost)."""
    parts = urlsplit(url)
    host = parts.hostname or ""
    if parts.scheme == "https" and host:
        return
    if parts.scheme == "http" and host in _LOCAL_HOSTS:
        return
    raise ConfigError(
        f"TRULOOP_JWT_JWKS_URL must be an https:// URL (plain http:// only for 127.0.0.1 or localhost); "
        f"got {parts.scheme or '(no scheme)'}://{host or '(no host)'}"
    )


class JwksKeys:
    """The signing keys behind a JWKS URL: cached, refetched on expiry or for an unknown kid, rate-limited."""

    def __init__(
        self, url: str, *, ttl_s: float = 600, min_refetch_s: float = 30, timeout_s: float = 5
    ) -> None:
        check_jwks_url(url)
        self.url, self.ttl_s, self.min_refetch_s, self.timeout_s = url, ttl_s, min_refetch_s, timeout_s
        self.keys: list[SigningKey] = []
        self.fetches = 0
        self._fetched_at: float | None = None
        self._refetched_at: float | None = None
        self._failed_at: float | None = None
        self._lock = asyncio.Lock()

    @property
    def unavailable(self) -> bool:
        """True when no JWKS has ever been fetched successfully."""
        return self._fetched_at is None

    async def get(self, *, refetch: bool = False) -> list[SigningKey]:
        """The cached keys, fetched first when stale (or, with ``refetch``, when no refetch was recent)."""
        if self._should_fetch(refetch):
            seen = self.fetches
            async with self._lock:  # concurrent callers share one in-flight fetch
                if self.fetches == seen and self._should_fetch(refetch):
                    await self._fetch(refetch)
        return self.keys

    def _should_fetch(self, refetch: bool) -> bool:
        now = time.monotonic()
        if self._failed_at is not None and now - self._failed_at < self.min_refetch_s:
            return False
        if refetch:
            return self._refetched_at is None or now - self._refetched_at >= self.min_refetch_s
        return self._fetched_at is None or now - self._fetched_at >= self.ttl_s

    async def _fetch(self, refetch: bool) -> None:
        self.fetches += 1
        now = time.monotonic()
        if refetch:
            self._refetched_at = now
        try:
            async with asyncio.timeout(self.timeout_s):
                document = await self._download()
            entries = document.get("keys") if isinstance(document, dict) else None
            if not isinstance(entries, list):
                raise ValueError("the document has no 'keys' list")
        except (httpx.HTTPError, ValueError, TimeoutError) as exc:
            self._failed_at = now
            reason = str(exc) or type(exc).__name__
            log.warning(
                "could not fetch the JWKS from %s (keeping %d cached keys): %s",
                self.url,
                len(self.keys),
                reason,
            )
            return
        self.keys = [key for key in map(parse_key, entries) if key is not None]
        self._fetched_at, self._failed_at = now, None
        log.info("fetched %d signing keys from %s", len(self.keys), self.url)

    async def _download(self) -> Any:
        async with (
            httpx.AsyncClient(timeout=self.timeout_s) as client,
            client.stream("GET", self.url, headers={"accept": "application/json"}) as response,
        ):
            response.raise_for_status()
            body = bytearray()
            async for chunk in response.aiter_bytes():
                body += chunk
                if len(body) > _MAX_JWKS_BYTES:
                    raise ValueError("the JWKS document is larger than 1 MiB")
        return json.loads(body)

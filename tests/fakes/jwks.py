"""A local JWKS endpoint with real RSA and EC keys: rotate the published keys, fail with 500, count fetches.

``SigningKey`` holds a private key and signs tokens; ``FakeJwks.publish(...)`` sets which public keys
``GET /jwks.json`` serves (``raw`` adds JWK entries as they are). ``fail`` makes it answer 500,
``delay_s`` slows each answer down.
"""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass, field
from typing import Any

import jwt
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec, rsa
from jwt.algorithms import ECAlgorithm, RSAAlgorithm
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

_CURVES = {"P-256": ec.SECP256R1, "P-384": ec.SECP384R1}


@dataclass
class SigningKey:
    """A private key with a kid; ``jwk()`` is its public half as the JWKS publishes it."""

    kid: str
    private: Any
    jwk_alg: str | None = None
    """The ``alg`` member of the published JWK (None: left out)."""

    @classmethod
    def rsa(cls, kid: str, *, jwk_alg: str | None = None, bits: int = 2048) -> SigningKey:
        return cls(kid, rsa.generate_private_key(public_exponent=65537, key_size=bits), jwk_alg)

    @classmethod
    def ec(cls, kid: str, *, curve: str = "P-256", jwk_alg: str | None = None) -> SigningKey:
        return cls(kid, ec.generate_private_key(_CURVES[curve]()), jwk_alg)

    def jwk(self) -> dict[str, Any]:
        public = self.private.public_key()
        algorithm = RSAAlgorithm if isinstance(public, rsa.RSAPublicKey) else ECAlgorithm
        data: dict[str, Any] = algorithm.to_jwk(public, as_dict=True)
        data.update(kid=self.kid, use="sig")
        if self.jwk_alg:
            data["alg"] = self.jwk_alg
        return data

    def public_pem(self) -> bytes:
        return self.private.public_key().public_bytes(
            serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
        )

    def sign(
        self,
        claims: dict[str, Any] | None = None,
        *,
        alg: str = "RS256",
        kid: str | None = "self",
        **extra: Any,
    ) -> str:
        """A token for ``jeff`` valid for a minute, with ``claims`` merged in (None values drop a claim)."""
        payload: dict[str, Any] = {"sub": "jeff", "exp": int(time.time()) + 60, "iat": int(time.time())}
        payload.update(claims or {})
        payload = {k: v for k, v in payload.items() if v is not None}
        headers = {"kid": self.kid if kid == "self" else kid, **extra}
        headers = {k: v for k, v in headers.items() if v is not None}
        return jwt.encode(payload, self.private, algorithm=alg, headers=headers)


@dataclass
class FakeJwks:
    keys: list[SigningKey] = field(default_factory=list)
    raw: list[Any] = field(default_factory=list)
    """Extra JWK entries served as they are (private, encryption or broken keys)."""
    fail: bool = False
    delay_s: float = 0.0
    requests: int = 0
    url: str = ""

    def publish(self, *keys: SigningKey) -> None:
        self.keys = list(keys)

    def app(self) -> Starlette:
        return Starlette(routes=[Route("/jwks.json", self._jwks)])

    async def _jwks(self, request: Request) -> JSONResponse:
        self.requests += 1
        if self.delay_s:
            await asyncio.sleep(self.delay_s)
        if self.fail:
            return JSONResponse({"error": "internal"}, status_code=500)
        return JSONResponse({"keys": [key.jwk() for key in self.keys] + self.raw})

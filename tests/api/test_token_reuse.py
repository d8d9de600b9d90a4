"""A device sends the same bearer token with every request until it expires: it is verified once, and
after that only its expiry is checked, while the keys it was verified with are still the ones in use."""

from __future__ import annotations

import time
from collections.abc import AsyncIterator, Callable
from typing import Any

import jwt
import pytest

from tests.fakes.jwks import FakeJwks, SigningKey
from tests.support import serve
from truloop_assistant import auth
from truloop_assistant.auth import Principal, TokenVerifier, issue_token
from truloop_assistant.config import load_settings
from truloop_assistant.errors import Unauthorized
from truloop_assistant.local.embedded_redis import free_port

SECRET = "token-reuse-secret-0123456789abcdef-01"
RSA = SigningKey.rsa("rsa-1", jwk_alg="RS256")
ROTATED = SigningKey.rsa("rsa-2", jwk_alg="RS256")


@pytest.fixture
async def jwks() -> AsyncIterator[FakeJwks]:
    fake = FakeJwks()
    fake.publish(RSA)
    port = free_port()
    async with serve(fake.app(), port):
        fake.url = f"http://127.0.0.1:{port}/jwks.json"
        yield fake


@pytest.fixture
def decodes(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The tokens PyJWT decoded (signature and claims checked), in order."""
    seen: list[str] = []
    real: Callable[..., Any] = jwt.decode

    def counting(token: str, *args: Any, **kwargs: Any) -> Any:
        seen.append(token)
        return real(token, *args, **kwargs)

    monkeypatch.setattr(auth.jwt, "decode", counting)
    return seen


def verifier(jwks: FakeJwks | None = None, **kw: Any) -> TokenVerifier:
    settings = load_settings(
        channel="local", jwt_secret=SECRET, jwt_jwks_url=jwks.url if jwks else None, jwt_any_audience=True
    )
    return TokenVerifier(settings, **kw)


async def test_a_token_sent_again_is_not_decoded_again(decodes: list[str]) -> None:
    v = verifier()
    token = issue_token(SECRET, "boss", role="admin")
    for _ in range(3):
        assert await v.verify(f"Bearer {token}") == Principal("boss", role="admin")
    assert decodes == [token]
    other = issue_token(SECRET, "jeff", ttl_s=120)
    assert await v.verify(f"Bearer {other}") == Principal("jeff")
    assert decodes == [token, other]


async def test_a_remembered_token_still_expires(decodes: list[str], monkeypatch: pytest.MonkeyPatch) -> None:
    v = verifier()
    token = issue_token(SECRET, "jeff", ttl_s=60)
    assert await v.verify(f"Bearer {token}") == Principal("jeff")
    exp = jwt.PyJWT().decode(token, options={"verify_signature": False})["exp"]
    monkeypatch.setattr(auth.time, "time", lambda: exp + 29)  # within the leeway: still good
    assert await v.verify(f"Bearer {token}") == Principal("jeff")
    monkeypatch.setattr(auth.time, "time", lambda: exp + 31)
    with pytest.raises(Unauthorized) as info:
        await v.verify(f"Bearer {token}")
    assert info.value.code == "token_expired" and info.value.message == "the token has expired"
    assert decodes == [token]


async def test_only_a_token_that_verified_is_remembered(decodes: list[str]) -> None:
    v = verifier()
    forged = jwt.encode({"sub": "jeff", "exp": int(time.time()) + 60}, "another-secret-0123456789abcdef-0123")
    for _ in range(2):
        with pytest.raises(Unauthorized) as info:
            await v.verify(f"Bearer {forged}")
        assert info.value.code == "invalid_token" and "signature" in info.value.message
    assert decodes == [forged, forged]


async def test_a_token_whose_key_left_the_jwks_is_verified_again(jwks: FakeJwks, decodes: list[str]) -> None:
    v = verifier(jwks, jwks_ttl_s=0, jwks_min_refetch_s=0)  # the keys are fetched anew on each use
    token = RSA.sign()
    assert await v.verify(f"Bearer {token}") == Principal("jeff")
    jwks.publish(RSA)
    assert await v.verify(f"Bearer {token}") == Principal("jeff")  # fetched again: checked again
    jwks.publish(ROTATED)
    with pytest.raises(Unauthorized) as info:
        await v.verify(f"Bearer {token}")
    assert "no RS256 key" in info.value.message
    assert decodes == [token, token]


async def test_a_jwks_token_is_remembered_while_the_keys_stay(jwks: FakeJwks, decodes: list[str]) -> None:
    v = verifier(jwks)
    token = RSA.sign()
    for _ in range(3):
        assert await v.verify(f"Bearer {token}") == Principal("jeff")
    assert decodes == [token] and jwks.requests == 1


async def test_at_most_so_many_tokens_are_remembered(
    decodes: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(auth, "_VERIFIED_MAX", 3)
    v = verifier()
    tokens = [issue_token(SECRET, f"user-{i}") for i in range(4)]
    for token in tokens:
        await v.verify(f"Bearer {token}")
    await v.verify(f"Bearer {tokens[3]}")  # still remembered
    await v.verify(f"Bearer {tokens[0]}")  # the oldest made room: decoded again
    assert decodes == [*tokens, tokens[0]]

"""Device-token verification with real keys against a local JWKS endpoint, including the usual attacks."""

from __future__ import annotations

import asyncio
import base64
import hashlib
import hmac
import json
import subprocess
import sys
import time
import uuid
from collections.abc import AsyncIterator
from typing import Any

import jwt
import pytest
from jwt.algorithms import RSAAlgorithm

from tests.fakes.jwks import FakeJwks, SigningKey
from tests.support import JWT_SECRET, calendar_model, serve
from truloop_assistant.auth import Principal, TokenVerifier, issue_token
from truloop_assistant.config import ConfigError, load_settings
from truloop_assistant.errors import Unauthorized
from truloop_assistant.local.embedded_redis import free_port

SECRET = "auth-test-secret-0123456789abcdef-0123"
RSA = SigningKey.rsa("rsa-1", jwk_alg="RS256")
RSA_ANY = SigningKey.rsa("rsa-any")  # no 'alg' in its JWK: any RS*/PS* algorithm
EC = SigningKey.ec("ec-1")
EC_384 = SigningKey.ec("ec-384", curve="P-384")
ROTATED = SigningKey.rsa("rsa-2", jwk_alg="RS256")
ATTACKER = SigningKey.rsa("rsa-1", jwk_alg="RS256")  # same kid as RSA, different private key


@pytest.fixture
async def jwks() -> AsyncIterator[FakeJwks]:
    fake = FakeJwks()
    fake.publish(RSA, RSA_ANY, EC, EC_384)
    port = free_port()
    async with serve(fake.app(), port):
        fake.url = f"http://127.0.0.1:{port}/jwks.json"
        yield fake


def verifier(
    jwks: FakeJwks | None = None, *, secret: str | None = SECRET, url: str | None = None, **kw: Any
) -> TokenVerifier:
    refetch = {k: kw.pop(k) for k in ("jwks_ttl_s", "jwks_min_refetch_s") if k in kw}
    kw.setdefault("jwt_any_audience", not kw.get("jwt_audience"))
    settings = load_settings(
        channel="local", jwt_secret=secret, jwt_jwks_url=url or (jwks.url if jwks else None), **kw
    )
    return TokenVerifier(settings, **refetch)


async def rejected(v: TokenVerifier, token: str, code: str = "invalid_token") -> str:
    """Assert the token is refused with ``code``; return the message (which never contains the token)."""
    with pytest.raises(Unauthorized) as info:
        await v.verify(f"Bearer {token}")
    assert info.value.status == 401 and info.value.code == code, info.value.message
    assert all(part not in info.value.message for part in token.split(".") if len(part) > 3)
    return info.value.message


def b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def forge_hs256(secret: bytes, *, kid: str | None = None) -> str:
    """An HS256 token keyed with arbitrary bytes (PyJWT itself refuses to use a PEM as an HMAC secret)."""
    header = {"alg": "HS256", "typ": "JWT", **({"kid": kid} if kid else {})}
    claims = {"sub": "jeff", "exp": int(time.time()) + 60, "role": "admin"}
    signing_input = f"{b64(json.dumps(header).encode())}.{b64(json.dumps(claims).encode())}"
    return f"{signing_input}.{b64(hmac.new(secret, signing_input.encode(), hashlib.sha256).digest())}"


def unsigned(alg: str = "none") -> str:
    header = b64(json.dumps({"alg": alg, "typ": "JWT", "kid": "rsa-1"}).encode())
    payload = b64(json.dumps({"sub": "jeff", "exp": int(time.time()) + 60}).encode())
    return f"{header}.{payload}."


# --- tokens that are accepted -------------------------------------------------------------------


async def test_hs256_token_with_the_secret(jwks: FakeJwks) -> None:
    principal = await verifier(jwks).verify(f"Bearer {issue_token(SECRET, 'jeff')}")
    assert principal == Principal("jeff") and not principal.is_admin
    assert jwks.requests == 0  # HS256 never touches the JWKS


@pytest.mark.parametrize(
    ("key", "alg"),
    [
        (RSA, "RS256"),
        (RSA_ANY, "RS384"),
        (RSA_ANY, "RS512"),
        (RSA_ANY, "PS256"),
        (EC, "ES256"),
        (EC_384, "ES384"),
    ],
)
async def test_asymmetric_tokens_from_the_jwks(jwks: FakeJwks, key: SigningKey, alg: str) -> None:
    v = verifier(jwks)
    assert await v.verify(f"Bearer {key.sign(alg=alg)}") == Principal("jeff")
    assert await v.verify(f"bearer  {key.sign({'sub': 'mina'}, alg=alg)} ") == Principal("mina")
    assert jwks.requests == 1  # cached


async def test_jwks_only_configuration(jwks: FakeJwks) -> None:
    v = verifier(jwks, secret=None)
    assert (await v.verify(f"Bearer {EC.sign(alg='ES256')}")).user_id == "jeff"
    assert "HS256" in await rejected(v, issue_token(SECRET, "jeff"))


async def test_admin_role_must_be_the_string_admin(jwks: FakeJwks) -> None:
    v = verifier(jwks)
    assert (await v.verify(f"Bearer {issue_token(SECRET, 'boss', role='admin')}")).is_admin
    assert (await v.verify(f"Bearer {RSA.sign({'role': 'admin'})}")).is_admin
    for role in (["admin"], {"admin": True}, 1, "user"):
        principal = await v.verify(f"Bearer {RSA.sign({'role': role})}")
        assert not principal.is_admin and principal.role == (role if isinstance(role, str) else None)


async def test_time_claims_have_a_small_leeway(jwks: FakeJwks) -> None:
    v, now = verifier(jwks), int(time.time())
    assert await v.verify(f"Bearer {RSA.sign({'exp': now - 5})}")
    assert await v.verify(f"Bearer {RSA.sign({'nbf': now + 5, 'iat': now + 5})}")
    assert "expired" in await rejected(v, RSA.sign({"exp": now - 120}), "token_expired")
    assert "not valid yet" in await rejected(v, RSA.sign({"nbf": now + 600}))
    assert "not valid yet" in await rejected(v, RSA.sign({"iat": now + 600}))


# --- claims -------------------------------------------------------------------------------------


async def test_expired_tokens(jwks: FakeJwks) -> None:
    v = verifier(jwks)
    await rejected(v, issue_token(SECRET, "jeff", ttl_s=-120), "token_expired")
    await rejected(v, EC.sign({"exp": int(time.time()) - 120}, alg="ES256"), "token_expired")


@pytest.mark.parametrize(
    ("claims", "says"),
    [
        ({"exp": None}, "'exp'"),
        ({"sub": None}, "'sub'"),
        ({"sub": ""}, "'sub'"),
        ({"sub": "  "}, "'sub'"),
        ({"sub": 42}, "'sub'"),
        ({"exp": "tomorrow"}, "malformed"),
        ({"iat": "now"}, "malformed"),
    ],
)
async def test_exp_and_sub_are_required(jwks: FakeJwks, claims: dict[str, Any], says: str) -> None:
    v = verifier(jwks)
    assert says in await rejected(v, RSA.sign(claims))
    hs = {"sub": "jeff", "exp": int(time.time()) + 60, **claims}
    assert says in await rejected(v, jwt.encode({k: x for k, x in hs.items() if x is not None}, SECRET))


async def test_audience_and_issuer_when_configured(jwks: FakeJwks) -> None:
    v = verifier(jwks, jwt_audience="truloop-devices", jwt_issuer="https://id.example.com")
    good = {"aud": "truloop-devices", "iss": "https://id.example.com"}
    assert await v.verify(f"Bearer {RSA.sign(good)}")
    assert await v.verify(f"Bearer {jwt.encode({'sub': 'jeff', 'exp': time.time() + 60, **good}, SECRET)}")
    assert "audience" in await rejected(v, RSA.sign({**good, "aud": "another-app"}))
    assert "issuer" in await rejected(v, RSA.sign({**good, "iss": "https://evil.example.com"}))
    assert "'aud'" in await rejected(v, RSA.sign({**good, "aud": None}))
    assert "'iss'" in await rejected(v, RSA.sign({**good, "iss": None}))
    # Unset = not checked.
    assert await verifier(jwks).verify(f"Bearer {RSA.sign({'aud': 'anything', 'iss': 'anyone'})}")


def test_a_jwks_url_without_an_audience_refuses_to_start() -> None:
    url = "https://id.example.com/.well-known/jwks.json"
    with pytest.raises(ConfigError) as info:
        load_settings(channel="local", jwt_jwks_url=url)
    assert "TRULOOP_JWT_AUDIENCE must be set when TRULOOP_JWT_JWKS_URL is" in str(info.value)
    assert "TRULOOP_JWT_ANY_AUDIENCE=true" in str(info.value)
    env = {"PATH": "/usr/bin:/bin", "TRULOOP_CHANNEL": "local", "TRULOOP_JWT_JWKS_URL": url}
    proc = subprocess.run(
        [sys.executable, "-m", "truloop_assistant.cli", "serve"],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 2 and "Traceback" not in proc.stderr
    assert "TRULOOP_JWT_AUDIENCE must be set when TRULOOP_JWT_JWKS_URL is" in proc.stderr
    # Said on purpose, or with an audience, it starts.
    assert load_settings(channel="local", jwt_jwks_url=url, jwt_any_audience=True).jwt_jwks_url == url
    assert load_settings(channel="local", jwt_jwks_url=url, jwt_audience="truloop").jwt_audience == "truloop"


async def test_with_an_audience_a_token_for_another_app_is_refused_even_as_admin(jwks: FakeJwks) -> None:
    v = verifier(jwks, secret=None, jwt_audience="truloop-devices")
    assert (await v.verify(f"Bearer {RSA.sign({'aud': 'truloop-devices', 'role': 'admin'})}")).is_admin
    for other in ({"aud": "another-app"}, {"aud": ["another-app"]}, {"aud": None}):
        assert "'aud'" in await rejected(v, RSA.sign({"role": "admin", **other}))


async def test_a_token_valid_for_longer_than_the_maximum_is_refused(jwks: FakeJwks) -> None:
    v, now = verifier(jwks, jwt_max_ttl_s=3600), int(time.time())
    assert await v.verify(f"Bearer {RSA.sign({'exp': now + 3600})}")
    assert await v.verify(f"Bearer {issue_token(SECRET, 'jeff', ttl_s=3600)}")
    for token in (RSA.sign({"exp": now + 3600 + 120}), issue_token(SECRET, "jeff", ttl_s=7200)):
        message = await rejected(v, token)
        assert "TRULOOP_JWT_MAX_TTL_S" in message and "3600" in message
    # The default is 30 days: an 'exp' of 10^12 (the year 33658) is no device token.
    message = await rejected(verifier(jwks), RSA.sign({"exp": 10**12}))
    assert "valid for longer than" in message


# --- attacks ------------------------------------------------------------------------------------


@pytest.mark.parametrize("alg", ["none", "None", "NONE", "HS384", "HS512", "ES512", "EdDSA", "RSA-OAEP"])
async def test_alg_none_and_other_algorithms_are_refused(jwks: FakeJwks, alg: str) -> None:
    assert "algorithm" in await rejected(verifier(jwks), unsigned(alg))
    assert jwks.requests == 0


async def test_pyjwt_alg_none_token(jwks: FakeJwks) -> None:
    token = jwt.encode({"sub": "jeff", "exp": int(time.time()) + 60}, None, algorithm="none")  # type: ignore[arg-type]
    await rejected(verifier(jwks), token)


@pytest.mark.parametrize("secret", [SECRET, None])
async def test_hs256_signed_with_the_public_key_is_refused(jwks: FakeJwks, secret: str | None) -> None:
    """Algorithm confusion: the RSA public key (PEM or JWK) used as an HMAC secret."""
    v = verifier(jwks, secret=secret)
    for forged_secret in (RSA.public_pem(), json.dumps(RSA.jwk()).encode(), RSA.jwk()["n"].encode()):
        for kid in (None, "rsa-1"):
            await rejected(v, forge_hs256(forged_secret, kid=kid))


async def test_key_type_must_fit_the_algorithm(jwks: FakeJwks) -> None:
    v = verifier(jwks)
    # kid of the EC key on an RS256 token, and of the RSA key on an ES256 token.
    assert "not a RS256 key" in await rejected(v, RSA.sign(alg="RS256", kid="ec-1"))
    assert "not a ES256 key" in await rejected(v, EC.sign(alg="ES256", kid="rsa-any"))
    # the P-384 key for ES256, and a PS256 token for a JWK published as alg RS256.
    assert "not a ES256 key" in await rejected(v, EC.sign(alg="ES256", kid="ec-384"))
    assert "not a PS256 key" in await rejected(v, RSA.sign(alg="PS256"))


async def test_token_signed_by_an_unknown_key(jwks: FakeJwks) -> None:
    v = verifier(jwks)
    assert "signature" in await rejected(v, ATTACKER.sign())  # a published kid, the wrong key
    assert "no RS256 key" in await rejected(v, ATTACKER.sign(kid="rsa-evil"))
    assert "signature" in await rejected(v, ATTACKER.sign(kid=None, alg="PS256", jwk="ignored"))
    forged_jwk = ATTACKER.sign(jwk=ATTACKER.jwk(), jku="http://127.0.0.1:1/evil.json")
    assert "signature" in await rejected(v, forged_jwk)  # keys named by the token itself are ignored


async def test_kid_less_token_needs_exactly_one_fitting_key(jwks: FakeJwks) -> None:
    v = verifier(jwks)
    assert await v.verify(f"Bearer {EC_384.sign(alg='ES384', kid=None)}")  # only one P-384 key
    assert "several JWKS keys" in await rejected(v, RSA.sign(kid=None))  # rsa-1 and rsa-any fit RS256
    jwks.publish(RSA)
    assert await verifier(jwks).verify(f"Bearer {RSA.sign(kid=None)}")


async def test_oversized_token_is_refused_before_any_work(jwks: FakeJwks) -> None:
    v = verifier(jwks)
    assert "8 KiB" in await rejected(v, RSA.sign({"pad": "x" * 9000}))
    assert jwks.requests == 0


@pytest.mark.parametrize(
    "token", ["not-a-jwt", "a.b.c", "e30.e30.", "!!!.???.***", "eyJhbGciOiJSUzI1NiIsImtpZCI6WzFdfQ.e30.x"]
)
async def test_garbage_is_invalid_token_not_a_crash(jwks: FakeJwks, token: str) -> None:
    await rejected(verifier(jwks), token)


async def test_missing_or_malformed_header(jwks: FakeJwks) -> None:
    v = verifier(jwks)
    for header in (None, "", "Bearer", "Bearer   ", f"Basic {issue_token(SECRET, 'jeff')}"):
        with pytest.raises(Unauthorized) as info:
            await v.verify(header)
        assert info.value.code == "unauthorized"


# --- the JWKS: caching, rotation, outages --------------------------------------------------------


async def test_key_rotation_costs_exactly_one_refetch(jwks: FakeJwks) -> None:
    v = verifier(jwks)
    assert await v.verify(f"Bearer {RSA.sign()}")
    assert jwks.requests == 1
    jwks.publish(ROTATED, EC)
    assert await v.verify(f"Bearer {ROTATED.sign()}")
    assert jwks.requests == 2
    assert await v.verify(f"Bearer {ROTATED.sign()}")
    # The retired key is gone from the cache, and asking again for it does not refetch.
    assert "no RS256 key" in await rejected(v, RSA.sign())
    assert jwks.requests == 2


async def test_random_unknown_kids_cause_at_most_one_refetch(jwks: FakeJwks) -> None:
    v = verifier(jwks)
    await rejected(v, ATTACKER.sign(kid=uuid.uuid4().hex))  # a cold cache: the first fetch is enough
    assert jwks.requests == 1
    assert await v.verify(f"Bearer {RSA.sign()}")
    for _ in range(30):
        await rejected(v, ATTACKER.sign(kid=uuid.uuid4().hex))
    await asyncio.gather(*(rejected(v, ATTACKER.sign(kid=uuid.uuid4().hex)) for _ in range(30)))
    assert jwks.requests == 2


async def test_concurrent_verifications_share_one_fetch(jwks: FakeJwks) -> None:
    jwks.delay_s = 0.3
    v = verifier(jwks)
    tokens = [RSA.sign(), EC.sign(alg="ES256"), RSA_ANY.sign(alg="PS256")] * 10
    principals = await asyncio.gather(*(v.verify(f"Bearer {t}") for t in tokens))
    assert {p.user_id for p in principals} == {"jeff"}
    assert jwks.requests == 1


async def test_jwks_down_keeps_the_cached_keys(jwks: FakeJwks) -> None:
    v = verifier(jwks, jwks_ttl_s=0)  # every verification finds the cache stale
    assert await v.verify(f"Bearer {RSA.sign()}")
    jwks.fail = True
    for _ in range(5):
        assert await v.verify(f"Bearer {EC.sign(alg='ES256')}")
    assert jwks.requests == 2  # one failed refresh, then a pause before the next attempt


async def test_jwks_down_and_nothing_cached_is_401(jwks: FakeJwks) -> None:
    jwks.fail = True
    v = verifier(jwks)
    for _ in range(3):
        assert "JWKS" in await rejected(v, RSA.sign())
    assert jwks.requests == 1  # a failing endpoint is not hammered
    # Once it is back (and the pause is over) keys are fetched again.
    recovering = verifier(jwks, jwks_min_refetch_s=0)
    await rejected(recovering, RSA.sign())
    jwks.fail = False
    assert await recovering.verify(f"Bearer {RSA.sign()}")


async def test_unreachable_jwks_is_401() -> None:
    v = verifier(url=f"http://127.0.0.1:{free_port()}/jwks.json")
    assert "JWKS" in await rejected(v, EC.sign(alg="ES256"))
    assert await v.verify(f"Bearer {issue_token(SECRET, 'jeff')}")  # HS256 still works


@pytest.mark.filterwarnings("ignore::jwt.warnings.InsecureKeyLengthWarning")
async def test_unusable_jwks_entries_are_skipped(jwks: FakeJwks) -> None:
    private, enc, hs_alg = (SigningKey.rsa(kid) for kid in ("private", "enc", "hs-alg"))
    weak = SigningKey.rsa("weak", bits=1024)
    oct_secret = b"a symmetric key published in the JWKS, 32+ bytes long"
    jwks.publish(RSA, weak)
    jwks.raw = [
        {**RSAAlgorithm.to_jwk(private.private, as_dict=True), "kid": "private"},
        {**enc.jwk(), "use": "enc"},
        {**hs_alg.jwk(), "alg": "HS256"},
        {"kty": "oct", "kid": "oct", "k": b64(oct_secret)},
        {"kty": "RSA", "kid": "broken", "n": "???", "e": "AQAB"},
        "not a key",
    ]
    v = verifier(jwks)
    assert await v.verify(f"Bearer {RSA.sign()}")
    for key in (weak, private, enc, hs_alg):
        await rejected(v, key.sign())
    await rejected(v, forge_hs256(oct_secret, kid="oct"))  # a JWKS never supplies HMAC secrets


@pytest.mark.parametrize(
    "url", ["http://example.com/jwks.json", "ftp://127.0.0.1/jwks.json", "jwks.json", "https:///jwks.json"]
)
def test_non_https_jwks_url_is_refused(url: str) -> None:
    with pytest.raises(ConfigError, match="TRULOOP_JWT_JWKS_URL must be an https://"):
        verifier(url=url)


@pytest.mark.parametrize(
    "url", ["https://id.example.com/.well-known/jwks.json", "http://localhost:9/jwks", "http://127.0.0.1:9/j"]
)
def test_https_and_local_jwks_urls_are_fine(url: str) -> None:
    assert verifier(url=url).jwks is not None


# --- through the HTTP API ------------------------------------------------------------------------


async def test_tool_message_accepts_a_jwks_token_and_refuses_the_confused_one(
    start_server: Any, jwks: FakeJwks
) -> None:
    async with start_server(model=calendar_model(), jwt_jwks_url=jwks.url, jwt_any_audience=True) as h:
        await h.user_says("calendar")
        [rpc] = await h.rpc_requests(1)
        body = json.dumps({"jsonrpc": "2.0", "id": rpc["id"], "result": {"events": []}}).encode()

        r = await h.post_tool_message(body, token=forge_hs256(RSA.public_pem(), kid="rsa-1"))
        assert r.status_code == 401 and r.json()["error"]["code"] == "invalid_token", r.text
        r = await h.post_tool_message(body, token=unsigned())
        assert r.status_code == 401, r.text
        r = await h.post_tool_message(body, token=RSA.sign({"sub": "mallory"}))
        assert r.status_code == 403, r.text

        r = await h.post_tool_message(body, token=RSA.sign())
        assert r.status_code == 202 and r.json() == {"status": "resuming"}, r.text
        await h.replies(1)


async def test_an_overlong_token_is_401_on_an_authenticated_endpoint(start_server: Any) -> None:
    async with start_server(jwt_max_ttl_s=24 * 3600) as h:
        calls = "/api/v1/agent/calls"
        day = issue_token(JWT_SECRET, "jeff", ttl_s=24 * 3600)
        assert (await h.http.get(calls, headers={"authorization": f"Bearer {day}"})).status_code == 200
        forever = jwt.encode({"sub": "jeff", "exp": 10**12, "role": "admin"}, JWT_SECRET)
        r = await h.http.get(calls, headers={"authorization": f"Bearer {forever}"})
        assert r.status_code == 401 and r.json()["error"]["code"] == "invalid_token"
        assert "TRULOOP_JWT_MAX_TTL_S" in r.json()["error"]["message"]

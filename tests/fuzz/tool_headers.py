"""What surrounds a tool-message body: the Authorization header, the Content-Type, chunking.

Each Authorization header comes with what the server must make of it, ``Auth.kind``: "jeff" (the
caller whose calls are pending), "other" (a valid token of someone else), "bad" (must be 401) or
"unknown" (anything from 401 to accepted).
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import string
import time
from typing import Any, NamedTuple

import jwt
from hypothesis import strategies as st

from tests.fuzz.strategies import header_bytes, json_text, texts, weighted
from tests.support import JWT_SECRET
from truloop_assistant.auth import issue_token


class Auth(NamedTuple):
    kind: str  # "jeff" | "other" (a valid token of someone else) | "bad" (must be 401) | "unknown"
    header: bytes | None


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def hs256(header: dict[str, Any], payload: bytes) -> str:
    """A token signed with the server's secret, whatever its payload (jwt.encode refuses odd claims)."""
    signing_input = _b64(json.dumps(header).encode()) + "." + _b64(payload)
    mac = hmac.new(JWT_SECRET.encode(), signing_input.encode(), hashlib.sha256).digest()
    return signing_input + "." + _b64(mac)


token_chars = st.text(string.ascii_letters + string.digits + "-_.=+/ ", max_size=300)
claim_values = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(),
    st.floats(),
    texts,
    st.lists(st.integers(), max_size=3),
    st.dictionaries(texts, st.integers(), max_size=2),
    st.integers(-7200, 7200).map(lambda d: int(time.time()) + d),
)
claims = st.fixed_dictionaries(
    {},
    optional={
        "sub": st.one_of(st.sampled_from(["jeff", "mallory", ""]), texts, claim_values),
        "exp": claim_values,
        "iat": claim_values,
        "nbf": claim_values,
        "aud": claim_values,
        "iss": claim_values,
        "role": st.one_of(st.just("admin"), claim_values),
        "jti": claim_values,
    },
)


@st.composite
def auths(draw: st.DrawFn) -> Auth:
    kind = draw(
        st.sampled_from(
            [
                *["jeff"] * 20, "other", "other", "admin", "none", "expired", "wrong_key",
                "alg_none", "no_exp", "truncated", "scheme", "random_bearer", "random_header",
                "fake_jwt", "signed_claims", "signed_claims", "odd_sub", "odd_sub",
            ]
        )
    )  # fmt: skip
    now = int(time.time())
    if kind == "none":
        return Auth("bad", None)
    if kind == "jeff":
        scheme = draw(st.sampled_from([b"Bearer ", b"bearer ", b"BEARER ", b"Bearer   "]))
        return Auth("jeff", scheme + issue_token(JWT_SECRET, "jeff").encode())
    if kind == "other":
        user = draw(st.sampled_from(["mallory", "jeff ", "Jeff", "boss"]))
        return Auth("other", b"Bearer " + issue_token(JWT_SECRET, user).encode())
    if kind == "admin":
        return Auth("other", b"Bearer " + issue_token(JWT_SECRET, "boss", role="admin").encode())
    if kind == "expired":
        token = jwt.encode({"sub": "jeff", "exp": now - 3600}, JWT_SECRET, algorithm="HS256")
        return Auth("bad", b"Bearer " + token.encode())
    if kind == "wrong_key":
        token = jwt.encode({"sub": "jeff", "exp": now + 600}, "k" * 40, algorithm="HS256")
        return Auth("bad", b"Bearer " + token.encode())
    if kind == "alg_none":
        token = jwt.encode({"sub": "jeff", "exp": now + 600}, None, algorithm="none")  # type: ignore[arg-type]
        return Auth("bad", b"Bearer " + token.encode())
    if kind == "no_exp":
        return Auth("bad", b"Bearer " + jwt.encode({"sub": "jeff"}, JWT_SECRET, algorithm="HS256").encode())
    if kind == "truncated":
        token = issue_token(JWT_SECRET, "jeff")
        cut = draw(st.integers(0, len(token) - 1))
        return Auth("bad", b"Bearer " + token[:cut].encode())
    if kind == "scheme":  # a valid token behind a wrong or missing scheme
        scheme = draw(st.sampled_from([b"", b"Basic ", b"Token ", b"Bearer", b"Bearer:", b"JWT "]))
        return Auth("bad", scheme + issue_token(JWT_SECRET, "jeff").encode())
    if kind == "random_bearer":
        return Auth("unknown", b"Bearer " + draw(token_chars).encode())
    if kind == "random_header":
        return Auth("unknown", draw(header_bytes))
    if kind == "odd_sub":  # a valid token whose subject is any string at all (the issuer is trusted)
        sub = draw(texts) + draw(st.sampled_from(["", "x"]) | st.characters(categories=["Cs"]))
        claims_json = json.dumps({"sub": sub or "x", "exp": now + 600})
        return Auth(
            "unknown", b"Bearer " + hs256({"alg": "HS256", "typ": "JWT"}, claims_json.encode()).encode()
        )
    if kind == "fake_jwt":  # well-formed segments with random JSON inside, random or no signature
        head = draw(st.one_of(json_text, st.sampled_from(['{"alg":"HS256"}', '{"alg":"RS256","kid":"x"}'])))
        body = draw(st.one_of(json_text, st.just('{"sub":"jeff","exp":99999999999}')))
        sig = _b64(draw(st.binary(max_size=64)))
        token = ".".join(
            [_b64(head.encode("utf-8", "surrogatepass")), _b64(body.encode("utf-8", "surrogatepass")), sig]
        )
        return Auth("unknown", b"Bearer " + token.encode())
    # signed with the real secret, random claims: valid or not, it must never be a 500
    payload = json.dumps(draw(claims)).encode()  # NaN, Infinity and escaped surrogates included
    return Auth("unknown", b"Bearer " + hs256({"alg": "HS256", "typ": "JWT"}, payload).encode())


content_types = st.one_of(
    st.sampled_from(
        [
            b"application/json", b"application/json", b"application/json; charset=utf-8", b"text/plain",
            b"application/x-www-form-urlencoded", b"multipart/form-data; boundary=x", b"application/xml",
            b"application/json; charset=latin-1", b"*/*", b"",
        ]
    ),
    st.none(),
    header_bytes,
)  # fmt: skip

# Everything about a tool-message request but its body: (Auth, Content-Type, chunk size or None).
tool_requests = st.tuples(
    auths(),
    content_types,
    weighted((3, st.none()), (1, st.integers(1, 4096))),
)

"""``truloop-assistant token USER_ID``: the token it prints is one the real API accepts."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import jwt
import pytest

from tests.support import JWT_SECRET
from truloop_assistant.cli import main

MADE_UP_CALL = "call_" + "0" * 32


@pytest.fixture(autouse=True)
def clean_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """No TRULOOP_ setting from the machine, and no .env: each test sets what it means."""
    for name in [name for name in os.environ if name.startswith("TRULOOP_")]:
        monkeypatch.delenv(name)
    monkeypatch.chdir(tmp_path)


def mint(capsys: pytest.CaptureFixture[str], *argv: str) -> str:
    """Run ``token`` as the console script does and return what it printed (only the token)."""
    assert main(["token", *argv]) == 0
    out = capsys.readouterr().out
    assert out.count("\n") == 1 and out.count(".") == 2
    return out.strip()


def claims(token: str, **options: Any) -> dict[str, Any]:
    return jwt.decode(token, JWT_SECRET, algorithms=["HS256"], options={"verify_aud": False}, **options)


def bearer(token: str) -> dict[str, str]:
    return {"authorization": f"Bearer {token}"}


async def test_the_token_is_accepted_by_the_api(
    start_server: Any, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("TRULOOP_JWT_SECRET", JWT_SECRET)
    jeff, ops = mint(capsys, "jeff"), mint(capsys, "ops", "--admin")
    async with start_server() as h:
        body = {"jsonrpc": "2.0", "id": MADE_UP_CALL, "result": {"confirmed": True}}
        r = await h.http.post("/api/v1/agent/tool-message", json=body, headers=bearer(jeff))
        assert r.status_code == 404 and r.json()["error"]["code"] == "unknown_call"  # past auth
        r = await h.http.get("/api/v1/admin/conversations/nobody-here", headers=bearer(ops))
        assert r.status_code == 404 and r.json()["error"]["code"] == "unknown_conversation"
        r = await h.http.get("/api/v1/admin/conversations/nobody-here", headers=bearer(jeff))
        assert r.status_code == 403


async def test_audience_and_issuer_come_from_the_settings(
    start_server: Any, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("TRULOOP_JWT_SECRET", JWT_SECRET)
    plain = mint(capsys, "jeff")
    monkeypatch.setenv("TRULOOP_JWT_AUDIENCE", "truloop-app")
    monkeypatch.setenv("TRULOOP_JWT_ISSUER", "https://backend.example.com")
    token = mint(capsys, "jeff")
    assert claims(token)["aud"] == "truloop-app" and claims(token)["iss"] == "https://backend.example.com"
    assert "aud" not in claims(plain) and "iss" not in claims(plain)
    async with start_server(jwt_audience="truloop-app", jwt_issuer="https://backend.example.com") as h:
        body = {"jsonrpc": "2.0", "id": MADE_UP_CALL, "result": {"confirmed": True}}
        r = await h.http.post("/api/v1/agent/tool-message", json=body, headers=bearer(token))
        assert r.status_code == 404
        r = await h.http.post("/api/v1/agent/tool-message", json=body, headers=bearer(plain))
        assert r.status_code == 401 and "'aud'" in r.json()["error"]["message"]


def test_claims_and_ttl(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("TRULOOP_JWT_SECRET", JWT_SECRET)
    default = claims(mint(capsys, "jeff"))
    assert default["sub"] == "jeff" and default["exp"] - default["iat"] == 3600 and "role" not in default
    short = claims(mint(capsys, "mina", "--ttl", "90", "--admin"))
    assert short["sub"] == "mina" and short["exp"] - short["iat"] == 90 and short["role"] == "admin"
    header = jwt.get_unverified_header(mint(capsys, "jeff"))
    assert header["alg"] == "HS256"


@pytest.mark.parametrize(("ttl", "problem"), [("0", "at least 1"), ("-60", "at least 1"), ("1h", "whole")])
def test_a_ttl_that_is_not_a_positive_number_of_seconds_is_refused(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], ttl: str, problem: str
) -> None:
    monkeypatch.setenv("TRULOOP_JWT_SECRET", JWT_SECRET)
    with pytest.raises(SystemExit) as exited:
        main(["token", "jeff", f"--ttl={ttl}"])
    assert exited.value.code == 2
    captured = capsys.readouterr()
    assert captured.out == "" and "--ttl" in captured.err and problem in captured.err


def test_with_only_a_jwks_url_it_refuses_and_points_to_the_backend(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("TRULOOP_JWT_JWKS_URL", "https://auth.example.com/.well-known/jwks.json")
    assert main(["token", "jeff"]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err.startswith("truloop-assistant token: only TRULOOP_JWT_JWKS_URL is set")
    assert "app's backend" in captured.err and "Minting device tokens in your backend" in captured.err


def test_without_a_secret_it_refuses_and_says_what_to_set(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["token", "jeff"]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err.startswith("truloop-assistant token: TRULOOP_JWT_SECRET is not set: set it")


def test_the_secret_may_come_from_dot_env_and_a_short_one_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / ".env").write_text(f"TRULOOP_JWT_SECRET={JWT_SECRET}\n")
    assert claims(mint(capsys, "jeff"))["sub"] == "jeff"
    monkeypatch.setenv("TRULOOP_JWT_SECRET", "too-short")
    assert main(["token", "jeff"]) == 2
    captured = capsys.readouterr()
    assert captured.out == "" and "TRULOOP_JWT_SECRET is too short" in captured.err


def test_a_ttl_beyond_the_maximum_is_refused(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("TRULOOP_JWT_SECRET", JWT_SECRET)
    month = claims(mint(capsys, "jeff", "--ttl", str(30 * 24 * 3600)))  # the default maximum: 30 days
    assert month["exp"] - month["iat"] == 30 * 24 * 3600
    assert main(["token", "jeff", "--ttl", str(10**12)]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err.startswith("truloop-assistant token: --ttl 1000000000000 is longer than")
    assert "TRULOOP_JWT_MAX_TTL_S (2592000 s)" in captured.err
    monkeypatch.setenv("TRULOOP_JWT_MAX_TTL_S", "600")
    assert main(["token", "jeff", "--ttl", "601"]) == 2
    assert "TRULOOP_JWT_MAX_TTL_S (600 s)" in capsys.readouterr().err
    assert claims(mint(capsys, "jeff", "--ttl", "600"))["sub"] == "jeff"

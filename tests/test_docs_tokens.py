"""The docs' Python examples of minting device tokens, run as written: the server accepts their tokens."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import rsa

from tests.fakes.jwks import FakeJwks
from tests.support import JWT_SECRET, serve
from truloop_assistant.local.embedded_redis import free_port

PAGE = Path(__file__).resolve().parents[1] / "docs" / "device-tokens.md"
TITLE = "# Minting device tokens in your backend"
MADE_UP_CALL = "call_" + "0" * 32


def python_blocks() -> list[str]:
    """The ```python blocks of the docs' page on minting device tokens."""
    text = PAGE.read_text(encoding="utf-8")
    assert text.startswith(TITLE), f"{PAGE} is not the page {TITLE!r}"
    return re.findall(r"^```python\n(.*?)^```$", text, re.MULTILINE | re.DOTALL)


def block(signed_with: str) -> str:
    [code] = [code for code in python_blocks() if f'algorithm="{signed_with}"' in code]
    return code


def run_script(path: Path, *argv: str, **env: str) -> str:
    """Run the example as the page says, with only the given settings in its environment."""
    proc = subprocess.run(
        [sys.executable, str(path), *argv],
        env={"PATH": "/usr/bin:/bin", **env},
        cwd=path.parent,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 0, proc.stderr
    return proc.stdout.strip()


async def tool_message(h: Any, token: str) -> Any:
    body = {"jsonrpc": "2.0", "id": MADE_UP_CALL, "result": {"confirmed": True}}
    return await h.http.post(
        "/api/v1/agent/tool-message", json=body, headers={"authorization": f"Bearer {token}"}
    )


async def test_the_hs256_example_mints_tokens_the_server_accepts(start_server: Any, tmp_path: Path) -> None:
    script = tmp_path / "mint_token.py"
    script.write_text(block("HS256"), encoding="utf-8")
    jeff = run_script(script, "jeff", TRULOOP_JWT_SECRET=JWT_SECRET)
    ops = run_script(script, "ops", "--admin", TRULOOP_JWT_SECRET=JWT_SECRET)
    scoped = {"TRULOOP_JWT_AUDIENCE": "truloop-app", "TRULOOP_JWT_ISSUER": "https://backend.example.com"}
    scoped_jeff = run_script(script, "jeff", TRULOOP_JWT_SECRET=JWT_SECRET, **scoped)
    async with start_server() as h:
        r = await tool_message(h, jeff)
        assert r.status_code == 404 and r.json()["error"]["code"] == "unknown_call"  # past auth
        admin = {"authorization": f"Bearer {ops}"}
        r = await h.http.get("/api/v1/admin/conversations/nobody-here", headers=admin)
        assert r.status_code == 404 and r.json()["error"]["code"] == "unknown_conversation"
    async with start_server(jwt_audience="truloop-app", jwt_issuer="https://backend.example.com") as h:
        assert (await tool_message(h, scoped_jeff)).status_code == 404
        assert (await tool_message(h, jeff)).status_code == 401  # no aud: refused where one is required


async def test_the_rs256_example_and_its_jwks_are_accepted(
    start_server: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    (tmp_path / "device-token-key.pem").write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
        )
    )
    monkeypatch.chdir(tmp_path)  # the example reads its key from the working directory
    example: dict[str, Any] = {}
    exec(compile(block("RS256"), "docs/device-tokens.md (RS256 example)", "exec"), example)
    jwks = FakeJwks()
    jwks.raw = example["jwks"]()["keys"]
    assert all("d" not in jwk for jwk in jwks.raw)  # only the public half is published
    port = free_port()
    async with serve(jwks.app(), port):
        url = f"http://127.0.0.1:{port}/jwks.json"
        async with start_server(jwt_secret=None, jwt_jwks_url=url, jwt_audience=example["AUDIENCE"]) as h:
            r = await tool_message(h, example["device_token"]("jeff"))
            assert r.status_code == 404 and r.json()["error"]["code"] == "unknown_call"
            admin = {"authorization": f"Bearer {example['device_token']('ops', admin=True)}"}
            r = await h.http.get("/api/v1/admin/conversations/nobody-here", headers=admin)
            assert r.status_code == 404

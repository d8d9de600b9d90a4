"""Revoking a person's device tokens: ``DELETE /api/v1/agent/me``, the admin API and
``truloop-assistant users revoke-tokens`` each refuse every token issued before (401 ``token_revoked``),
tokens without ``iat`` too; tokens issued afterwards, and other people's, work as before."""

from __future__ import annotations

import asyncio
import time
from datetime import datetime
from typing import Any

import httpx
import jwt
import pytest

from tests.commands.test_users import parse
from tests.support import JWT_SECRET, ON_STANDALONE_AND_CLUSTER, Harness, signed_in_again
from truloop_assistant.auth import issue_token
from truloop_assistant.commands import users as users_command

pytestmark = ON_STANDALONE_AND_CLUSTER

CALL = "call_" + "0" * 32


def bearer(token: str) -> dict[str, str]:
    return {"authorization": f"Bearer {token}"}


def without_iat(user: str) -> str:
    return jwt.encode({"sub": user, "exp": int(time.time()) + 600}, JWT_SECRET, algorithm="HS256")


async def calls(h: Harness, token: str) -> httpx.Response:
    return await h.http.get("/api/v1/agent/calls", headers=bearer(token))


async def answer(h: Harness, token: str, body: bytes | None = None) -> httpx.Response:
    body = body or f'{{"jsonrpc": "2.0", "id": "{CALL}", "result": {{"events": []}}}}'.encode()
    return await h.post_tool_message(body, token=token)


def assert_revoked(r: httpx.Response) -> None:
    assert r.status_code == 401, r.text
    assert r.json()["error"]["code"] == "token_revoked"


async def test_erasing_me_revokes_my_tokens_issued_before(start_server: Any) -> None:
    async with start_server() as h:
        mine, old_style, minas = (
            issue_token(JWT_SECRET, "jeff"),
            without_iat("jeff"),
            issue_token(JWT_SECRET, "mina"),
        )
        for token in (mine, old_style, minas):
            assert (await calls(h, token)).status_code == 200  # verified, and remembered as such
        erasing = time.time()
        assert (await h.http.delete("/api/v1/agent/me", headers=bearer(mine))).status_code == 204

        assert_revoked(await calls(h, mine))
        assert_revoked(await answer(h, mine))
        assert_revoked(await answer(h, mine, b"not json"))  # the token is checked before the body
        assert_revoked(await h.http.delete("/api/v1/agent/me", headers=bearer(mine)))
        assert_revoked(await calls(h, old_style))  # no iat: it cannot show it came after
        assert (await calls(h, minas)).status_code == 200
        assert (await answer(h, minas)).status_code == 404

        fresh = await signed_in_again("jeff", since=erasing)
        assert (await calls(h, fresh)).status_code == 200
        assert (await answer(h, fresh)).status_code == 404
        assert (await h.http.delete("/api/v1/agent/me", headers=bearer(fresh))).status_code == 204


async def test_an_operator_revokes_someones_tokens_with_the_admin_api(start_server: Any) -> None:
    async with start_server() as h:
        ops, jeff = issue_token(JWT_SECRET, "ops", role="admin"), issue_token(JWT_SECRET, "jeff")
        assert (await calls(h, jeff)).status_code == 200
        refused = await h.http.post("/api/v1/admin/users/jeff/revoke-tokens", headers=bearer(jeff))
        assert refused.status_code == 403 and refused.json()["error"]["code"] == "not_admin"
        assert (await calls(h, jeff)).status_code == 200  # nothing was revoked by it

        before = time.time()
        r = await h.http.post("/api/v1/admin/users/jeff/revoke-tokens", headers=bearer(ops))
        assert r.status_code == 200, r.text
        assert r.json()["user_id"] == "jeff"
        assert before <= datetime.fromisoformat(r.json()["not_before"]).timestamp() <= time.time()
        assert_revoked(await calls(h, jeff))
        assert (await calls(h, ops)).status_code == 200  # the operator's own tokens still work

        assert (await calls(h, await signed_in_again("jeff", since=before))).status_code == 200


async def test_an_operator_revokes_someones_tokens_from_the_command_line(
    start_server: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    async with start_server() as h:
        jeff, mina = issue_token(JWT_SECRET, "jeff"), issue_token(JWT_SECRET, "mina")
        assert (await calls(h, jeff)).status_code == 200
        before = time.time()
        args = parse(["users", "revoke-tokens", "jeff"])
        assert await asyncio.to_thread(users_command.run, args, h.settings) == 0
        out = capsys.readouterr().out
        assert out.startswith("revoked the device tokens of jeff issued before ") and out.endswith("\n")
        assert_revoked(await calls(h, jeff))
        assert (await calls(h, mina)).status_code == 200

        assert (await calls(h, await signed_in_again("jeff", since=before))).status_code == 200

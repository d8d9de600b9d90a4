"""``truloop-assistant doctor`` against the test Redis and the fake Sendbird: one line per check."""

from __future__ import annotations

import asyncio
import json
import os
import sys
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from tests.fakes.mcp_server import CrmServer
from tests.fakes.notion import NOTION_TOKEN, FakeNotion
from tests.fakes.sendbird import FakeSendbird
from tests.fakes.twilio import ACCOUNT_SID, AUTH_TOKEN, FROM_NUMBER, FakeTwilio
from tests.support import API_TOKEN, BOT, served
from truloop_assistant.commands.doctor import RedisUnreachable, ping_redis
from truloop_assistant.commands.sendbird import WEBHOOK_CATEGORIES
from truloop_assistant.local.embedded_redis import free_port

SECRET = "s" * 32


@pytest.fixture(autouse=True)
def only_the_users_made(sendbird: FakeSendbird) -> None:
    """Sendbird knows only the users a test makes (the bot is missing until it is created)."""
    sendbird.application.known_users = set()


async def doctor(cwd: Path, **env: str) -> tuple[int, list[str]]:
    """Run the command in a subprocess (the fake Sendbird keeps answering on this event loop)."""
    clean = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith("TRULOOP_") and not k.endswith("_API_KEY") and not k.startswith("OPENAI_")
    }
    proc = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "truloop_assistant.cli",
        "doctor",
        env={**clean, **env},
        cwd=cwd,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    out, err = await asyncio.wait_for(proc.communicate(), timeout=120)
    assert not err, err.decode()
    return proc.returncode or 0, out.decode().splitlines()


@pytest.fixture
async def notion() -> AsyncIterator[FakeNotion]:
    async with served(FakeNotion()) as fake:
        yield fake


def notion_env(notion: FakeNotion, token: str = NOTION_TOKEN) -> dict[str, str]:
    return {"TRULOOP_NOTION_TOKEN": token, "TRULOOP_NOTION_API_URL": notion.url}


def sendbird_env(redis_url: str, sendbird: FakeSendbird, **overrides: str) -> dict[str, str]:
    return {
        "TRULOOP_REDIS_URL": redis_url,
        "TRULOOP_CHANNEL": "sendbird",
        "TRULOOP_SENDBIRD_APP_ID": "test-app",
        "TRULOOP_SENDBIRD_API_TOKEN": API_TOKEN,
        "TRULOOP_SENDBIRD_API_URL": sendbird.url,  # type: ignore[attr-defined]
        "TRULOOP_JWT_SECRET": SECRET,
        **overrides,
    }


async def test_all_checks_pass(
    tmp_path: Path, redis_url: str, sendbird: FakeSendbird, notion: FakeNotion
) -> None:
    sendbird.users[BOT] = {"user_id": BOT, "nickname": "Truloop"}
    sendbird.application.webhook["enabled_events"] = list(WEBHOOK_CATEGORIES)
    env = sendbird_env(redis_url, sendbird, **notion_env(notion))

    code, lines = await doctor(tmp_path, **env)

    assert code == 0, lines
    assert [line.split()[:2] for line in lines] == [
        ["ok", "settings:"],
        ["ok", "redis:"],
        ["ok", "model:"],
        ["ok", "notion:"],
        ["ok", "sendbird:"],
        ["ok", "sendbird"],  # sendbird token:
        ["ok", "sendbird"],  # sendbird messages:
        ["ok", "sendbird"],  # sendbird webhook:
        ["ok", "sendbird"],  # sendbird channels:
    ]
    assert lines[1].startswith(f"ok    redis: {redis_url} answers (Redis ")
    assert "offline" in lines[2]
    assert lines[3] == (
        "ok    notion: the token is accepted: 'Truloop knowledge' in workspace 'Acme' "
        "(kb sync-notion can run)"
    )
    assert f"bot user {BOT!r} exists" in lines[4]
    assert (
        lines[5] == "ok    sendbird token: the master API token (it verifies Sendbird's webhook signatures)"
    )
    assert lines[6] == "ok    sendbird messages: the application's max_message_length is 5000 characters"
    assert lines[7] == (
        "ok    sendbird webhook: the webhook sends group_channel:message_send, "
        "group_channel:message_update, group_channel:message_delete"
    )
    assert lines[8] == (
        f"ok    sendbird channels: bot user {BOT!r} has joined 0 of the 2,000 group channels Sendbird "
        "lets it join (0 %)"
    )


async def test_a_secondary_token_is_named_with_what_breaks(
    tmp_path: Path, redis_url: str, sendbird: FakeSendbird
) -> None:
    sendbird.users[BOT] = {"user_id": BOT, "nickname": "Truloop"}
    sendbird.application.secondary_tokens.add("a-secondary-token")
    sendbird.application.settings["max_message_length"] = 1000
    env = sendbird_env(redis_url, sendbird, TRULOOP_SENDBIRD_API_TOKEN="a-secondary-token")

    code, lines = await doctor(tmp_path, **env)

    assert code == 1
    by_name = {line[6:].split(":", 1)[0]: line for line in lines}
    assert by_name["sendbird"].startswith("ok    sendbird: the token is accepted")
    assert by_name["sendbird token"] == (
        "FAIL  sendbird token: TRULOOP_SENDBIRD_API_TOKEN is a secondary API token, but Sendbird signs "
        "webhooks with the master API token: every webhook would be refused with 401. Set it to the master "
        "API token (dashboard: Settings > Application > General > API tokens)"
    )
    assert by_name["sendbird messages"] == (
        "FAIL  sendbird messages: TRULOOP_SENDBIRD_MAX_MESSAGE_CHARS=5000 is larger than the application's "
        "max_message_length 1000: Sendbird would refuse the longer messages. Set it to 1000 or less, or "
        "raise the application's max_message_length"
    )
    assert "a-secondary-token" not in "\n".join(lines)


async def test_a_message_length_within_the_applications_passes(
    tmp_path: Path, redis_url: str, sendbird: FakeSendbird
) -> None:
    sendbird.users[BOT] = {"user_id": BOT, "nickname": "Truloop"}
    sendbird.application.settings["max_message_length"] = 1000
    env = sendbird_env(redis_url, sendbird, TRULOOP_SENDBIRD_MAX_MESSAGE_CHARS="1000")

    _, lines = await doctor(tmp_path, **env)

    assert "ok    sendbird messages: the application's max_message_length is 1000 characters" in lines


async def test_a_webhook_without_edits_and_deletions_is_a_warning(
    tmp_path: Path, redis_url: str, sendbird: FakeSendbird
) -> None:
    sendbird.users[BOT] = {"user_id": BOT, "nickname": "Truloop"}
    sendbird.application.webhook["enabled_events"] = ["group_channel:message_send"]
    env = sendbird_env(redis_url, sendbird)

    _, lines = await doctor(tmp_path, **env)
    assert (
        "WARN  sendbird webhook: the webhook does not send group_channel:message_update, "
        "group_channel:message_delete: run truloop-assistant sendbird setup, or enable them in the "
        "dashboard (Settings > Chat > Webhooks)"
    ) in lines

    sendbird.application.webhook["enabled_events"] = [
        "group_channel:message_send",
        "group_channel:message_update",
        "group_channel:message_delete",
    ]
    _, lines = await doctor(tmp_path, **env)
    assert any(line.startswith("ok    sendbird webhook: the webhook sends ") for line in lines)


async def test_each_failure_says_what_to_fix(tmp_path: Path, sendbird: FakeSendbird) -> None:
    dead = f"redis://:hunter2@127.0.0.1:{free_port()}/0"
    env = sendbird_env(dead, sendbird, TRULOOP_MODEL="openai-chat:gpt-4o-mini")
    del env["TRULOOP_JWT_SECRET"]
    (tmp_path / ".env").write_text(f"TRULOOP_SENDBIRD_API_TOKEN=not-{API_TOKEN}\n")
    del env["TRULOOP_SENDBIRD_API_TOKEN"]  # the refused token comes from .env

    code, lines = await doctor(tmp_path, **env)

    assert code == 1
    settings, redis, model, notion, token = lines
    assert settings.startswith("FAIL  settings: invalid settings: TRULOOP_JWT_SECRET (HS256) or")
    assert redis.startswith(f"FAIL  redis: cannot reach {dead.replace('hunter2', '***')} (")
    assert redis.endswith("start Redis or fix TRULOOP_REDIS_URL") and "hunter2" not in redis
    assert model.startswith(
        "FAIL  model: TRULOOP_MODEL='openai-chat:gpt-4o-mini': "
        "set OPENAI_API_KEY for the openai-chat: provider"
    )
    assert notion == "skip  notion: TRULOOP_NOTION_TOKEN is not set: optional, only kb sync-notion uses it"
    assert token.startswith("FAIL  sendbird: the token is refused (401): set TRULOOP_SENDBIRD_API_TOKEN")


async def test_a_missing_bot_and_an_unreachable_sendbird(
    tmp_path: Path, redis_url: str, sendbird: FakeSendbird
) -> None:
    sendbird.application.webhook["enabled_events"] = list(WEBHOOK_CATEGORIES)
    code, lines = await doctor(tmp_path, **sendbird_env(redis_url, sendbird))

    assert code == 1
    assert lines[-4] == f"FAIL  sendbird: bot user {BOT!r} missing: run truloop-assistant sendbird setup"
    assert all(line.startswith(("ok", "skip  notion:")) for line in lines[:-4] + lines[-3:]), lines

    nowhere = f"http://127.0.0.1:{free_port()}"
    code, lines = await doctor(
        tmp_path, **sendbird_env(redis_url, sendbird, TRULOOP_SENDBIRD_API_URL=nowhere)
    )

    assert code == 1
    assert lines[-1].startswith(f"FAIL  sendbird: cannot reach Sendbird at {nowhere} (")
    assert lines[-1].endswith("check TRULOOP_SENDBIRD_APP_ID and TRULOOP_SENDBIRD_API_URL and the network")


async def test_local_channel_skips_sendbird(tmp_path: Path, redis_url: str) -> None:
    env = {"TRULOOP_REDIS_URL": redis_url, "TRULOOP_CHANNEL": "local", "TRULOOP_JWT_SECRET": SECRET}

    code, lines = await doctor(tmp_path, **env)

    assert code == 0, lines
    assert lines[-1] == "skip  sendbird: TRULOOP_CHANNEL=local: Sendbird is not used"


async def test_a_bad_log_level_is_reported_not_raised(tmp_path: Path, redis_url: str) -> None:
    env = {"TRULOOP_REDIS_URL": redis_url, "TRULOOP_CHANNEL": "local", "TRULOOP_JWT_SECRET": SECRET}

    code, lines = await doctor(tmp_path, TRULOOP_LOG_LEVEL="chatty", **env)

    assert code == 1
    assert lines[0] == (
        "FAIL  settings: invalid settings: TRULOOP_LOG_LEVEL: 'chatty' is not a log level: "
        "use DEBUG, INFO, WARNING, ERROR, CRITICAL"
    )
    assert lines[1].startswith("ok    redis:")


def test_a_cluster_url_is_pinged_through_its_seeds(redis_url: str) -> None:
    live = redis_url.removeprefix("redis://").split("/")[0]
    dead = f"127.0.0.1:{free_port()}"

    assert ping_redis(f"redis+cluster://{dead},{live}")
    with pytest.raises(RedisUnreachable):
        ping_redis(f"redis+cluster://{dead}")


async def test_each_mcp_server_is_checked(tmp_path: Path, redis_url: str, crm: CrmServer) -> None:
    crm.start()
    nowhere = f"http://127.0.0.1:{free_port()}/mcp"
    servers = [{"url": crm.url, "prefix": "crm"}, {"url": nowhere, "prefix": "erp"}]
    env = {
        "TRULOOP_REDIS_URL": redis_url,
        "TRULOOP_CHANNEL": "local",
        "TRULOOP_JWT_SECRET": SECRET,
        "TRULOOP_MCP_SERVERS": json.dumps(servers),
    }

    code, lines = await doctor(tmp_path, **env)

    assert code == 1
    assert lines[-2] == (
        f"ok    mcp crm: {crm.url} answers with 2 tools: crm_lookup_customer, crm_delete_customer"
    )
    assert lines[-1].startswith(f"FAIL  mcp erp: cannot list the tools of {nowhere} (")
    assert lines[-1].endswith("until then the assistant works without its tools")


async def test_mcp_urls_are_shown_without_their_secrets(
    tmp_path: Path, redis_url: str, crm: CrmServer
) -> None:
    crm.start()
    port = free_port()
    secret = "?token=t0p-s3cret&x=1"
    servers = [
        {"url": crm.url.replace("http://", "http://bob:pa55word@") + secret, "prefix": "crm"},
        {"url": f"http://carol:pa55word@127.0.0.1:{port}/mcp{secret}", "prefix": "erp"},
    ]
    env = {
        "TRULOOP_REDIS_URL": redis_url,
        "TRULOOP_CHANNEL": "local",
        "TRULOOP_JWT_SECRET": SECRET,
        "TRULOOP_MCP_SERVERS": json.dumps(servers),
    }

    code, lines = await doctor(tmp_path, **env)

    assert code == 1
    assert lines[-2].startswith(f"ok    mcp crm: {crm.url} answers with 2 tools")
    assert lines[-1].startswith(f"FAIL  mcp erp: cannot list the tools of http://127.0.0.1:{port}/mcp (")
    output = "\n".join(lines)
    assert not any(word in output for word in ("pa55word", "t0p-s3cret", "bob", "carol")), output


async def test_a_refused_or_unreachable_notion_token(
    tmp_path: Path, redis_url: str, notion: FakeNotion
) -> None:
    env = {"TRULOOP_REDIS_URL": redis_url, "TRULOOP_CHANNEL": "local", "TRULOOP_JWT_SECRET": SECRET}

    code, lines = await doctor(tmp_path, **env, **notion_env(notion, token="secret_revoked"))

    assert code == 1
    assert lines[3] == (
        "FAIL  notion: the token is refused (401): set TRULOOP_NOTION_TOKEN to the integration's Internal "
        "Integration Secret (https://www.notion.so/my-integrations)"
    )
    assert notion.requests == [("GET", "/v1/users/me")]

    nowhere = f"http://127.0.0.1:{free_port()}"
    code, lines = await doctor(
        tmp_path, **env, TRULOOP_NOTION_TOKEN=NOTION_TOKEN, TRULOOP_NOTION_API_URL=nowhere
    )

    assert code == 1
    assert lines[3].startswith(f"FAIL  notion: cannot reach Notion at {nowhere} (")
    assert lines[3].endswith("check TRULOOP_NOTION_API_URL and the network")


async def test_secrets_from_files(tmp_path: Path, redis_url: str, sendbird: FakeSendbird) -> None:
    sendbird.users[BOT] = {"user_id": BOT, "nickname": "Truloop"}
    token_file, secret_file = tmp_path / "sendbird-token", tmp_path / "jwt-secret"
    token_file.write_text(API_TOKEN + "\n")
    secret_file.write_text(SECRET + "\n")
    env = sendbird_env(
        redis_url,
        sendbird,
        TRULOOP_SENDBIRD_API_TOKEN_FILE=str(token_file),
        TRULOOP_JWT_SECRET_FILE=str(secret_file),
    )
    del env["TRULOOP_SENDBIRD_API_TOKEN"], env["TRULOOP_JWT_SECRET"]

    code, lines = await doctor(tmp_path, **env)

    assert code == 0, lines
    assert f"bot user {BOT!r} exists" in lines[-5]

    missing = tmp_path / "no-such-file"
    code, lines = await doctor(tmp_path, **{**env, "TRULOOP_SENDBIRD_API_TOKEN_FILE": str(missing)})

    assert code == 1
    unreadable = (
        f"TRULOOP_SENDBIRD_API_TOKEN_FILE={str(missing)!r} cannot be read (No such file or directory)"
    )
    assert lines[0] == f"FAIL  settings: invalid settings: {unreadable}"
    assert lines[1].startswith("ok    redis:")
    assert lines[-1] == f"FAIL  sendbird: {unreadable}"
    assert all(API_TOKEN not in line and SECRET not in line for line in lines)


async def test_twilio_is_checked_when_sms_is_on(tmp_path: Path, redis_url: str) -> None:
    async with served(FakeTwilio()) as twilio:
        sms = {
            "TRULOOP_REDIS_URL": redis_url,
            "TRULOOP_CHANNEL": "local",
            "TRULOOP_JWT_SECRET": SECRET,
            "TRULOOP_SMS": "twilio",
            "TRULOOP_TWILIO_ACCOUNT_SID": ACCOUNT_SID,
            "TRULOOP_TWILIO_FROM": FROM_NUMBER,
            "TRULOOP_TWILIO_API_URL": twilio.url,
            "TRULOOP_PUBLIC_URL": "https://assistant.example.com",
        }
        code, lines = await doctor(tmp_path, **sms, TRULOOP_TWILIO_AUTH_TOKEN=AUTH_TOKEN)
        [line] = [x for x in lines if " twilio:" in x]
        assert code == 0 and line == (
            "ok    twilio: the account 'Truloop guests' is active; set its number's incoming-message "
            "webhook to https://assistant.example.com/api/v1/webhooks/twilio"
        )
        code, lines = await doctor(tmp_path, **sms, TRULOOP_TWILIO_AUTH_TOKEN="another-token-0123456789")
        [line] = [x for x in lines if " twilio:" in x]
        assert code == 1 and line.startswith("FAIL  twilio: the account SID and auth token are refused (401)")
        twilio.account_status = "suspended"
        code, lines = await doctor(tmp_path, **sms, TRULOOP_TWILIO_AUTH_TOKEN=AUTH_TOKEN)
        [line] = [x for x in lines if " twilio:" in x]
        suspended = "FAIL  twilio: the account 'Truloop guests' is suspended: Twilio sends no texts for it"
        assert code == 1 and line == suspended

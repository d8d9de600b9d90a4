"""``truloop-assistant sendbird setup`` against the fake Sendbird: bot created or updated, clear errors."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from tests.fakes.sendbird import FakeSendbird
from tests.support import API_TOKEN
from truloop_assistant.cli import main
from truloop_assistant.commands.sendbird import SetupError, load_admin_settings, setup_sendbird, webhook_url
from truloop_assistant.local.embedded_redis import free_port

BOT = "truloop-assistant"
PUBLIC = "https://assistant.example.com"
ENV = (
    "TRULOOP_SENDBIRD_APP_ID",
    "TRULOOP_SENDBIRD_API_TOKEN",
    "TRULOOP_SENDBIRD_API_URL",
    "TRULOOP_SENDBIRD_BOT_USER_ID",
    "TRULOOP_JWT_SECRET",
    "TRULOOP_JWT_JWKS_URL",
)


@pytest.fixture(autouse=True)
def only_the_users_made(sendbird: FakeSendbird) -> None:
    """Sendbird knows only the users a test makes (the bot is missing until it is created)."""
    sendbird.application.known_users = set()


@pytest.fixture
def env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> pytest.MonkeyPatch:
    """A clean environment (no .env file, no TRULOOP_ variables); note that no JWT secret is set."""
    monkeypatch.chdir(tmp_path)
    for name in ENV:
        monkeypatch.delenv(name, raising=False)
    return monkeypatch


def point_at(env: pytest.MonkeyPatch, url: str, *, token: str = API_TOKEN) -> None:
    env.setenv("TRULOOP_SENDBIRD_APP_ID", "test-app")
    env.setenv("TRULOOP_SENDBIRD_API_TOKEN", token)
    env.setenv("TRULOOP_SENDBIRD_API_URL", url)


async def run_cli(*args: str) -> int:
    """Run the command in a thread: the SDK is synchronous and the fake serves on this event loop."""
    return await asyncio.to_thread(main, ["sendbird", "setup", *args])


async def test_creates_the_bot_when_missing(
    env: pytest.MonkeyPatch, sendbird: FakeSendbird, capsys: pytest.CaptureFixture[str]
) -> None:
    point_at(env, sendbird.url)  # type: ignore[attr-defined]

    assert await run_cli("--public-url", PUBLIC + "/") == 0

    out = capsys.readouterr().out
    assert "created" in out
    assert f"{PUBLIC}/api/v1/webhooks/sendbird" in out
    assert "group_channel:message_send" in out
    assert "group_channel:message_update" in out and "group_channel:message_delete" in out
    assert "master API token" in out
    assert sendbird.users[BOT]["nickname"] == "Truloop"
    assert sendbird.users[BOT]["profile_url"] == ""
    assert sendbird.users_created == 1


async def test_turns_on_the_webhook_with_members_and_keeps_other_events(
    env: pytest.MonkeyPatch, sendbird: FakeSendbird, capsys: pytest.CaptureFixture[str]
) -> None:
    point_at(env, sendbird.url)  # type: ignore[attr-defined]
    sendbird.application.webhook["enabled_events"] = ["group_channel:join"]

    assert await run_cli("--public-url", PUBLIC) == 0

    assert sendbird.application.webhook == {
        "enabled": True,
        "url": f"{PUBLIC}/api/v1/webhooks/sendbird",
        "include_members": True,
        "enabled_events": [
            "group_channel:join",
            "group_channel:message_send",
            "group_channel:message_update",
            "group_channel:message_delete",
        ],
    }
    out = capsys.readouterr().out
    assert "include members: on" in out

    assert await run_cli("--public-url", PUBLIC) == 0  # again: the same settings, nothing doubled
    assert sendbird.application.webhook["enabled_events"] == [
        "group_channel:join",
        "group_channel:message_send",
        "group_channel:message_update",
        "group_channel:message_delete",
    ]


async def test_updates_the_bot_when_present(
    env: pytest.MonkeyPatch, sendbird: FakeSendbird, capsys: pytest.CaptureFixture[str]
) -> None:
    point_at(env, sendbird.url)  # type: ignore[attr-defined]
    assert await run_cli("--public-url", PUBLIC) == 0
    assert "created" in capsys.readouterr().out

    code = await run_cli(
        "--public-url", PUBLIC, "--nickname", "Truloop Bot", "--profile-url", "https://cdn.example.com/b.png"
    )

    assert code == 0
    out = capsys.readouterr().out
    assert "updated" in out and "created" not in out
    assert list(sendbird.users) == [BOT]
    assert sendbird.users_created == 1
    assert sendbird.users[BOT]["nickname"] == "Truloop Bot"
    assert sendbird.users[BOT]["profile_url"] == "https://cdn.example.com/b.png"


async def test_update_without_profile_url_keeps_the_image(
    env: pytest.MonkeyPatch, sendbird: FakeSendbird
) -> None:
    point_at(env, sendbird.url)  # type: ignore[attr-defined]
    assert await run_cli("--public-url", PUBLIC, "--profile-url", "https://cdn.example.com/a.png") == 0
    assert await run_cli("--public-url", PUBLIC, "--nickname", "Renamed") == 0
    assert sendbird.users[BOT]["nickname"] == "Renamed"
    assert sendbird.users[BOT]["profile_url"] == "https://cdn.example.com/a.png"


async def test_custom_bot_user_id(env: pytest.MonkeyPatch, sendbird: FakeSendbird) -> None:
    point_at(env, sendbird.url)  # type: ignore[attr-defined]
    env.setenv("TRULOOP_SENDBIRD_BOT_USER_ID", "helper-bot")
    settings = load_admin_settings()
    report = await asyncio.to_thread(setup_sendbird, settings, public_url=PUBLIC)
    assert (report.action, report.bot_user_id) == ("created", "helper-bot")
    assert list(sendbird.users) == ["helper-bot"]


async def test_wrong_token_is_a_readable_error(
    env: pytest.MonkeyPatch, sendbird: FakeSendbird, capsys: pytest.CaptureFixture[str]
) -> None:
    point_at(env, sendbird.url, token="not-the-token")  # type: ignore[attr-defined]

    assert await run_cli("--public-url", PUBLIC) == 1

    captured = capsys.readouterr()
    assert "Sendbird rejected the API token (401)" in captured.err
    assert "TRULOOP_SENDBIRD_API_TOKEN" in captured.err
    assert "Traceback" not in captured.err + captured.out
    assert sendbird.users == {}


async def test_unreachable_host_is_a_readable_error(
    env: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    point_at(env, f"http://127.0.0.1:{free_port()}")  # nothing listens there

    assert await run_cli("--public-url", PUBLIC) == 1

    captured = capsys.readouterr()
    assert "could not reach Sendbird at http://127.0.0.1:" in captured.err
    assert "Traceback" not in captured.err + captured.out


def test_missing_token_names_the_variable(
    env: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    env.setenv("TRULOOP_SENDBIRD_APP_ID", "test-app")

    assert main(["sendbird", "setup", "--public-url", PUBLIC]) == 2

    err = capsys.readouterr().err
    assert "TRULOOP_SENDBIRD_API_TOKEN must be set" in err
    assert "TRULOOP_SENDBIRD_APP_ID" not in err
    assert "JWT" not in err
    assert "Traceback" not in err


def test_bad_public_url_is_refused_before_any_request(
    env: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    point_at(env, f"http://127.0.0.1:{free_port()}")
    assert main(["sendbird", "setup", "--public-url", "assistant.example.com"]) == 1
    assert "--public-url must be an absolute http(s) URL" in capsys.readouterr().err


def test_webhook_url() -> None:
    assert webhook_url("https://a.example.com") == "https://a.example.com/api/v1/webhooks/sendbird"
    assert webhook_url("https://a.example.com/base/") == "https://a.example.com/base/api/v1/webhooks/sendbird"
    with pytest.raises(SetupError):
        webhook_url("ftp://a.example.com")

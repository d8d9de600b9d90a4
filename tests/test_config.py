"""Settings: safe defaults, and start-up errors that name the variable."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest
from pydantic import ValidationError

from truloop_assistant.config import ConfigError, Settings, load_settings
from truloop_assistant.config.secret_files import secret_fields

SECRET = "s" * 32


def test_sendbird_channel_needs_app_id_and_token(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("TRULOOP_SENDBIRD_API_TOKEN", raising=False)
    monkeypatch.delenv("TRULOOP_SENDBIRD_APP_ID", raising=False)
    with pytest.raises(ConfigError, match="TRULOOP_SENDBIRD_APP_ID and TRULOOP_SENDBIRD_API_TOKEN"):
        load_settings(jwt_secret=SECRET)


def test_jwt_secret_is_required_and_long_enough() -> None:
    with pytest.raises(ConfigError, match="TRULOOP_JWT_SECRET"):
        load_settings(channel="local")
    with pytest.raises(ConfigError, match="at least 32 bytes"):
        load_settings(channel="local", jwt_secret="short")


def test_defaults(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TRULOOP_CHANNEL", "local")
    monkeypatch.setenv("TRULOOP_JWT_SECRET", SECRET)
    s = load_settings()
    assert s.model == "offline"
    assert s.redis_url == "redis://127.0.0.1:6379/0"
    assert s.pending_call_ttl_s == 3600
    assert (s.rate_limit_user, s.rate_limit_admin) == ("20/minute", "100/minute")
    assert s.sendbird_bot_user_id == "truloop-assistant"


def test_sendbird_url_defaults_to_the_app(monkeypatch: pytest.MonkeyPatch) -> None:
    s = load_settings(sendbird_app_id="ABC", sendbird_api_token="t", jwt_secret=SECRET)
    assert s.sendbird_base_url == "https://api-ABC.sendbird.com"


def test_invalid_number_names_the_variable() -> None:
    with pytest.raises(ConfigError, match="TRULOOP_PENDING_CALL_TTL_S"):
        load_settings(channel="local", jwt_secret=SECRET, pending_call_ttl_s=0)


def test_serve_refuses_to_start_with_a_clear_message() -> None:
    env = {"PATH": "/usr/bin:/bin", "TRULOOP_CHANNEL": "sendbird"}
    proc = subprocess.run(
        [sys.executable, "-m", "truloop_assistant.cli", "serve"],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 2
    assert "TRULOOP_SENDBIRD_API_TOKEN" in proc.stderr and "Traceback" not in proc.stderr


@pytest.mark.parametrize(
    ("value", "problem"),
    [
        ("[{", "TRULOOP_MCP_SERVERS: not JSON"),
        ('{"url": "http://crm.internal/mcp"}', "TRULOOP_MCP_SERVERS: must be a JSON list"),
        ('[{"url": "ftp://crm.internal/mcp", "prefix": "crm"}]', "TRULOOP_MCP_SERVERS[0].url: URL scheme"),
        (
            '[{"url": "http://a/mcp", "prefix": "crm"}, {"url": "http://b/mcp", "prefix": "crm"}]',
            "more than once: crm",
        ),
        ('[{"url": "http://a/mcp", "prefix": "CRM_"}]', "TRULOOP_MCP_SERVERS[0].prefix"),
        (
            '[{"url": "http://a/mcp", "prefix": "crm", "confirm": "delete_*"}]',
            "TRULOOP_MCP_SERVERS[0].confirm",
        ),
        (
            '[{"url": "http://a/mcp", "prefix": "crm", "no_confirm": "get_*"}]',
            "TRULOOP_MCP_SERVERS[0].no_confirm",
        ),
        (
            '[{"url": "http://a/mcp", "prefix": "crm", "no_confirm": ["get_*", ""]}]',
            "TRULOOP_MCP_SERVERS[0].no_confirm",
        ),
    ],
)
def test_mcp_servers_are_checked_at_start(monkeypatch: pytest.MonkeyPatch, value: str, problem: str) -> None:
    monkeypatch.setenv("TRULOOP_MCP_SERVERS", value)
    with pytest.raises(ConfigError, match=re.escape(problem)):
        load_settings(channel="local", jwt_secret=SECRET)


def test_mcp_servers_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(
        "TRULOOP_MCP_SERVERS",
        '[{"url": "http://127.0.0.1:9000/mcp", "prefix": "crm", "headers": {"Authorization": "Bearer k"},'
        ' "confirm": ["delete_*", "send_*"]}]',
    )
    [server] = load_settings(channel="local", jwt_secret=SECRET).mcp_servers
    assert (str(server.url), server.prefix, server.confirm) == (
        "http://127.0.0.1:9000/mcp",
        "crm",
        ["delete_*", "send_*"],
    )
    assert server.headers == {"Authorization": "Bearer k"} and server.refresh_s == 60
    assert server.no_confirm is None  # no allow-list: every tool the server does not mark read-only asks
    assert "Bearer k" not in repr(server)


def test_an_mcp_allow_list_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(
        "TRULOOP_MCP_SERVERS",
        '[{"url": "http://127.0.0.1:9000/mcp", "prefix": "crm", "no_confirm": ["get_*", "list_*"]}]',
    )
    [server] = load_settings(channel="local", jwt_secret=SECRET).mcp_servers
    assert server.no_confirm == ["get_*", "list_*"] and server.confirm == []


SECRET_SETTINGS = (
    "jwt_secret",
    "sendbird_api_token",
    "users_api_token",
    "supermemory_api_key",
    "google_places_api_key",
    "notion_token",
    "twilio_auth_token",
)


def secret_values() -> dict[str, str]:
    return {name: f"{name}-{'q' * 32}" for name in SECRET_SETTINGS}


def test_secrets_are_kept_out_of_repr_and_dumps() -> None:
    values = secret_values()
    settings = load_settings(sendbird_app_id="app", **values)

    shown = (repr(settings), str(settings), settings.model_dump_json(), str(settings.model_dump()))
    for name, value in values.items():
        assert all(value not in text for text in shown), name
        assert getattr(settings, name).get_secret_value() == value


def test_a_failing_validation_does_not_show_secrets(monkeypatch: pytest.MonkeyPatch) -> None:
    values = secret_values()
    for name, value in values.items():
        monkeypatch.setenv(f"TRULOOP_{name.upper()}", value)
    monkeypatch.setenv("TRULOOP_SENDBIRD_APP_ID", "app")
    monkeypatch.setenv("TRULOOP_PENDING_CALL_TTL_S", "0")
    short = "short-secret-value"

    with pytest.raises(ConfigError) as caught:
        load_settings()
    with pytest.raises(ConfigError, match="too short") as too_short:
        load_settings(jwt_secret=short, pending_call_ttl_s=1)
    with pytest.raises(ValidationError) as raw:
        Settings(jwt_secret=short)

    for text in (str(caught.value), str(too_short.value), str(raw.value)):
        assert all(value not in text for value in (*values.values(), short)), text


def secret_file(tmp_path: Path, text: str, name: str = "secret") -> Path:
    path = tmp_path / name
    path.write_text(text, newline="")
    return path


@pytest.mark.parametrize("name", SECRET_SETTINGS)
def test_each_secret_from_a_file(monkeypatch: pytest.MonkeyPatch, tmp_path: Path, name: str) -> None:
    value = f"{name}-from-a-file-{'f' * 32}"
    path = secret_file(tmp_path, value + "\n")
    monkeypatch.setenv(f"TRULOOP_{name.upper()}_FILE", str(path))
    monkeypatch.delenv(f"TRULOOP_{name.upper()}", raising=False)
    given = {} if name == "jwt_secret" else {"jwt_secret": SECRET}

    settings = load_settings(channel="local", **given)

    assert getattr(settings, name).get_secret_value() == value


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("s3cret-value\n", "s3cret-value"),
        ("s3cret-value", "s3cret-value"),
        ("s3cret-value\r\n", "s3cret-value"),
        ("s3cret-value\n\n", "s3cret-value\n"),
        ("  s3cret-value \n", "  s3cret-value "),
    ],
)
def test_one_trailing_newline_is_stripped(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, text: str, value: str
) -> None:
    monkeypatch.setenv("TRULOOP_NOTION_TOKEN_FILE", str(secret_file(tmp_path, text)))

    settings = load_settings(channel="local", jwt_secret=SECRET)

    assert settings.notion_token is not None and settings.notion_token.get_secret_value() == value


def test_a_secret_file_named_in_dotenv(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    path = secret_file(tmp_path, SECRET + "\n", "jwt")
    (tmp_path / ".env").write_text(f"TRULOOP_JWT_SECRET_FILE={path}\nTRULOOP_JWT_SECRET=\n")
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("TRULOOP_JWT_SECRET", raising=False)

    settings = load_settings(channel="local")

    assert settings.jwt_secret is not None and settings.jwt_secret.get_secret_value() == SECRET


def test_a_secret_and_its_file_both_set(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("TRULOOP_SENDBIRD_API_TOKEN", "token-in-the-environment")
    monkeypatch.setenv("TRULOOP_SENDBIRD_API_TOKEN_FILE", str(secret_file(tmp_path, "token-in-a-file\n")))

    with pytest.raises(ConfigError) as caught:
        load_settings(sendbird_app_id="app", jwt_secret=SECRET)

    message = str(caught.value)
    assert "TRULOOP_SENDBIRD_API_TOKEN and TRULOOP_SENDBIRD_API_TOKEN_FILE are both set" in message
    assert "token-in-the-environment" not in message and "token-in-a-file" not in message


def test_a_missing_secret_file(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    missing = tmp_path / "no-such-file"
    monkeypatch.setenv("TRULOOP_JWT_SECRET_FILE", str(missing))

    with pytest.raises(ConfigError) as caught:
        load_settings(channel="local")

    assert str(caught.value) == (
        f"invalid settings: TRULOOP_JWT_SECRET_FILE={str(missing)!r} cannot be read "
        "(No such file or directory)"
    )


@pytest.mark.parametrize("text", ["", "\n"])
def test_an_empty_secret_file(monkeypatch: pytest.MonkeyPatch, tmp_path: Path, text: str) -> None:
    path = secret_file(tmp_path, text)
    monkeypatch.setenv("TRULOOP_SUPERMEMORY_API_KEY_FILE", str(path))

    with pytest.raises(ConfigError) as caught:
        load_settings(channel="local", jwt_secret=SECRET)

    assert str(caught.value) == f"invalid settings: TRULOOP_SUPERMEMORY_API_KEY_FILE={str(path)!r} is empty"


def test_a_secret_passed_in_code_leaves_its_file_unread(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("TRULOOP_JWT_SECRET_FILE", str(tmp_path / "no-such-file"))

    settings = load_settings(channel="local", jwt_secret=SECRET)

    assert settings.jwt_secret is not None and settings.jwt_secret.get_secret_value() == SECRET


def test_every_secret_and_its_file_are_documented() -> None:
    assert tuple(sorted(secret_fields(Settings))) == tuple(sorted(SECRET_SETTINGS))
    root = Path(__file__).parent.parent
    page, example = (root / "docs" / "settings.md").read_text(), (root / ".env.example").read_text()
    for name in SECRET_SETTINGS:
        variable = f"TRULOOP_{name.upper()}_FILE"
        assert f"`{variable}`" in page and f"# {variable}=" in example, variable


def test_the_sendbird_budgets_come_from_the_plan_or_are_set_outright(monkeypatch: pytest.MonkeyPatch) -> None:
    assert load_settings(channel="local", jwt_secret=SECRET).sendbird_budgets == {
        "GET": 10,
        "POST": 5,
        "PUT": 5,
        "DELETE": 5,
    }  # the free trial's, by default
    monkeypatch.setenv("TRULOOP_SENDBIRD_PLAN", "100k")
    monkeypatch.setenv("TRULOOP_SENDBIRD_RATES", "post=300, PUT=250")
    s = load_settings(channel="local", jwt_secret=SECRET)
    assert s.sendbird_budgets == {"GET": 600, "POST": 300, "PUT": 250, "DELETE": 200}


@pytest.mark.parametrize(("name", "value", "problem"), [
    ("TRULOOP_SENDBIRD_PLAN", "enterprise", "TRULOOP_SENDBIRD_PLAN"),
    ("TRULOOP_SENDBIRD_RATES", "PATCH=5", "'PATCH=5' is not METHOD=CALLS"),
    ("TRULOOP_SENDBIRD_RATES", "POST=fast", "'fast' is not a number"),
    ("TRULOOP_SENDBIRD_RATES", "POST=0", "must be a positive number"),
    ("TRULOOP_SENDBIRD_RATES", "POST=5,POST=6", "POST is given twice"),
])  # fmt: skip
def test_a_bad_sendbird_budget_stops_the_start_naming_it(
    monkeypatch: pytest.MonkeyPatch, name: str, value: str, problem: str
) -> None:
    monkeypatch.setenv(name, value)
    with pytest.raises(ConfigError, match=re.escape(problem)):
        load_settings(channel="local", jwt_secret=SECRET)


@pytest.mark.parametrize("name", ["TRULOOP_SENDBIRD_RATE", "TRULOOP_SENDBIRD_WRITE_RATE"])
def test_the_rates_of_earlier_releases_stop_the_start_naming_what_replaced_them(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, name: str
) -> None:
    monkeypatch.setenv(name, "20")
    with pytest.raises(
        ConfigError, match=f"{name} no longer exist.*TRULOOP_SENDBIRD_PLAN.*TRULOOP_SENDBIRD_RATES"
    ):
        load_settings(channel="local", jwt_secret=SECRET)
    monkeypatch.delenv(name)
    monkeypatch.chdir(tmp_path)  # and where a .env file sets it
    (tmp_path / ".env").write_text(f"{name}=5\n")
    with pytest.raises(ConfigError, match=f"{name} no longer exist"):
        load_settings(channel="local", jwt_secret=SECRET)


def test_supermemory_legacy_tags_are_read_only_by_a_deployment_of_the_default_prefix() -> None:
    base = {"channel": "local", "jwt_secret": SECRET, "supermemory_legacy_tags": True}
    assert load_settings(**base).supermemory_legacy_tags is True
    with pytest.raises(ConfigError, match="TRULOOP_SUPERMEMORY_LEGACY_TAGS=true needs the default") as caught:
        load_settings(**base, key_prefix="blue")
    assert "TRULOOP_KEY_PREFIX ('ta', not 'blue')" in str(caught.value)
    assert load_settings(channel="local", jwt_secret=SECRET).supermemory_legacy_tags is False

"""Model strings: the documented ones work, and a wrong one stops the server with one clear line."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path
from zoneinfo import ZoneInfo

import pytest
from pydantic_ai.models import Model

from truloop_assistant.agent.models import resolve_model
from truloop_assistant.cli import main
from truloop_assistant.config import load_settings

ROOT = Path(__file__).resolve().parents[2]
# The README, every page of the docs site, and the deployment files.
DOCS = (
    "README.md",
    *sorted(str(page.relative_to(ROOT)) for page in (ROOT / "docs").glob("*.md")),
    ".env.example",
    "docker-compose.yml",
)
MODEL_SETTING = re.compile(r"TRULOOP_(?:FALLBACK_)?MODELS?\s*[=:]\s*[\"']?([^\s\"'`|#()]+)")
PROVIDER_KEYS = ("OPENAI_API_KEY", "ANTHROPIC_API_KEY", "GOOGLE_API_KEY")
SECRET = "s" * 32


def documented_models() -> list[str]:
    """Every model string given to TRULOOP_MODEL or TRULOOP_FALLBACK_MODELS in the docs."""
    found: list[str] = []
    for doc in DOCS:
        for value in MODEL_SETTING.findall((ROOT / doc).read_text()):
            found += [name for name in value.split(",") if name and name not in found]
    return found


def test_the_docs_show_a_model_of_each_main_provider() -> None:
    prefixes = {name.split(":")[0] for name in documented_models()}
    assert {"offline", "openai-chat", "anthropic", "google"} <= prefixes


@pytest.mark.parametrize("name", documented_models())
def test_every_documented_model_string_starts_the_server(name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    for key in PROVIDER_KEYS:
        monkeypatch.setenv(key, "dummy")
    settings = load_settings(channel="local", jwt_secret=SECRET, model=name)
    assert isinstance(resolve_model(settings.model, timezone=ZoneInfo("Asia/Seoul")), Model)


def serve_fails(monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> str:
    """Run ``truloop-assistant serve``, which must refuse to start; what the operator reads."""
    monkeypatch.chdir(tmp_path)  # no stray .env
    monkeypatch.setenv("TRULOOP_CHANNEL", "local")
    monkeypatch.setenv("TRULOOP_JWT_SECRET", SECRET)
    assert main(["serve"]) == 2
    err = capsys.readouterr().err.strip()
    assert "\n" not in err, err
    assert "Traceback" not in err and "Agent('test')" not in err
    return err


def without_provider_keys(monkeypatch: pytest.MonkeyPatch) -> None:
    for key in (*PROVIDER_KEYS, "GEMINI_API_KEY", "OPENAI_BASE_URL"):
        monkeypatch.delenv(key, raising=False)


def test_an_unknown_model_prefix_stops_the_server_with_the_valid_prefixes(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("TRULOOP_MODEL", "google-gla:gemini-2.5-flash")
    err = serve_fails(monkeypatch, tmp_path, capsys)
    assert "TRULOOP_MODEL='google-gla:gemini-2.5-flash'" in err
    assert all(prefix in err for prefix in ("offline", "openai-chat:", "anthropic:", "google:"))


def test_a_model_string_without_a_provider_stops_the_server(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("TRULOOP_MODEL", "gpt-4o")
    err = serve_fails(monkeypatch, tmp_path, capsys)
    assert "TRULOOP_MODEL='gpt-4o'" in err and "openai-chat:" in err


def test_a_missing_provider_key_stops_the_server_naming_the_key(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    without_provider_keys(monkeypatch)
    monkeypatch.setenv("TRULOOP_MODEL", "anthropic:claude-sonnet-4-5")
    err = serve_fails(monkeypatch, tmp_path, capsys)
    assert "TRULOOP_MODEL='anthropic:claude-sonnet-4-5'" in err and "ANTHROPIC_API_KEY" in err
    assert "openai-chat:" in err and "google:" in err


def test_a_broken_fallback_model_stops_the_server_naming_the_fallback_setting(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    without_provider_keys(monkeypatch)
    monkeypatch.setenv("TRULOOP_FALLBACK_MODELS", "offline, openai-chat:gpt-4o-mini")
    err = serve_fails(monkeypatch, tmp_path, capsys)
    assert "TRULOOP_FALLBACK_MODELS='openai-chat:gpt-4o-mini'" in err and "OPENAI_API_KEY" in err


def test_fallback_models_are_read_as_a_comma_separated_list(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "dummy")
    monkeypatch.setenv("TRULOOP_FALLBACK_MODELS", "anthropic:claude-sonnet-4-5, offline")
    settings = load_settings(channel="local", jwt_secret=SECRET)
    assert settings.fallback_models == ["anthropic:claude-sonnet-4-5", "offline"]


def test_the_offline_model_starts_without_loading_any_model_provider() -> None:
    code = (
        "import sys; from truloop_assistant.config import load_settings; "
        f"load_settings(channel='local', jwt_secret='{SECRET}', model='offline', fallback_models='offline'); "
        "print([m for m in ('pydantic_ai', 'openai', 'anthropic', 'google.genai') if m in sys.modules])"
    )
    env = {"PATH": "/usr/bin:/bin"}
    proc = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "[]"

"""Model strings: the documented ones work, and a wrong one stops the server with one clear line."""

from __future__ import annotations

import inspect
import re
import subprocess
import sys
from pathlib import Path
from zoneinfo import ZoneInfo

import pytest
from pydantic_ai.models import Model
from pydantic_ai.providers import infer_provider_class
from pydantic_ai.providers.gateway import _GATEWAY_PROVIDER_ALIASES

from truloop_assistant.agent.models import resolve_model
from truloop_assistant.cli import main
from truloop_assistant.config import load_settings
from truloop_assistant.config.model_strings import GATEWAY_ALIASES, PROVIDER_PREFIXES, model_form_problem

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


def start_fails(
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    command: str = "serve",
) -> str:
    """Run ``truloop-assistant COMMAND``, which must refuse to start; what the operator reads."""
    monkeypatch.chdir(tmp_path)  # no stray .env
    monkeypatch.setenv("TRULOOP_CHANNEL", "local")
    monkeypatch.setenv("TRULOOP_JWT_SECRET", SECRET)
    assert main([command]) == 2
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
    err = start_fails(monkeypatch, tmp_path, capsys)
    assert "TRULOOP_MODEL='google-gla:gemini-2.5-flash'" in err
    assert all(prefix in err for prefix in ("offline", "openai-chat:", "anthropic:", "google:"))


def test_a_model_string_without_a_provider_stops_the_server(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("TRULOOP_MODEL", "gpt-4o")
    err = start_fails(monkeypatch, tmp_path, capsys)
    assert "TRULOOP_MODEL='gpt-4o'" in err and "openai-chat:" in err


def test_a_missing_provider_key_stops_the_worker_naming_the_key(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The worker builds the model (``serve``, which runs none, only reads the string)."""
    without_provider_keys(monkeypatch)
    monkeypatch.setenv("TRULOOP_MODEL", "anthropic:claude-sonnet-4-5")
    err = start_fails(monkeypatch, tmp_path, capsys, "worker")
    assert "TRULOOP_MODEL='anthropic:claude-sonnet-4-5'" in err and "ANTHROPIC_API_KEY" in err
    assert "openai-chat:" in err and "google:" in err


def test_a_broken_fallback_model_stops_the_worker_naming_the_fallback_setting(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    without_provider_keys(monkeypatch)
    monkeypatch.setenv("TRULOOP_FALLBACK_MODELS", "offline, openai-chat:gpt-4o-mini")
    err = start_fails(monkeypatch, tmp_path, capsys, "worker")
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


def test_the_start_up_check_knows_the_providers_pydantic_ai_knows() -> None:
    """``serve`` checks a model string's provider without importing pydantic-ai, from its own list: the
    list must be the one of the installed pydantic-ai (read from its provider lookup, and its Gateway's
    aliases), or a valid provider would stop ``serve`` (or an unknown one pass it)."""
    lookup = inspect.getsource(infer_provider_class)
    known = {name for case in re.findall(r"case (.+):", lookup) for name in re.findall(r"'([^']+)'", case)}
    assert known == PROVIDER_PREFIXES, "update PROVIDER_PREFIXES in config/model_strings.py"
    assert GATEWAY_ALIASES == _GATEWAY_PROVIDER_ALIASES, "update GATEWAY_ALIASES in config/model_strings.py"


@pytest.mark.parametrize(
    "name",
    [
        "openai:gpt-4o-mini",
        "gateway/chat:gpt-4o-mini",
        "gateway/anthropic:claude-sonnet-4-5",
        "gpt-4o-mini",
        "google-gla:gemini-2.5-flash",
        "gateway/nowhere:x",
        "voyageai:voyage-3",
    ],
)
def test_reading_a_model_string_refuses_what_pydantic_ai_cannot_place(name: str) -> None:
    """What the read refuses, pydantic-ai would not find a provider for (the build may refuse more:
    a missing key, or a provider with no chat models)."""
    assert (model_form_problem(name) is None) == (":" in name and has_provider(name.partition(":")[0]))


def has_provider(prefix: str) -> bool:
    """Whether pydantic-ai finds a provider for ``prefix`` (its package installed or not)."""
    try:
        infer_provider_class(prefix)
    except ValueError:
        return False
    except ImportError:
        pass
    return True

"""Whether a model string can become a model: checked at start, without sending a request.

Two depths: :func:`model_form_problem` reads the string alone (``provider:model``, a provider
pydantic-ai knows) and imports nothing, which is all ``serve`` checks (it runs no model);
:func:`model_problem` also builds the model as the worker will, which imports the provider's client.
"""

from __future__ import annotations

import re
import threading

VALID_MODELS = (
    "use offline or a pydantic-ai model string provider:model, e.g. openai-chat:gpt-4o-mini, "
    "anthropic:claude-sonnet-4-5, google:gemini-2.5-flash "
    "(other prefixes: openai:, google-cloud:, groq:, mistral:, ollama:, vllm:, ...)"
)
RENAMED_PREFIXES = {"google-gla": "google", "google-vertex": "google-cloud"}
"""Prefixes of older pydantic-ai releases, and what they are called now."""
MODEL_CHECK_S = 5.0
"""How long building a model for the start-up check may take before it is let through unchecked."""
PROVIDER_PREFIXES = frozenset(
    {
        *("openai", "openai-chat", "openai-responses", "openai-decisions", "openai-codex", "openai-chatgpt"),
        *("anthropic", "google", "google-decisions", "google-cloud", "azure", "azure-responses"),
        *("bedrock", "bedrock-mantle", "groq", "mistral", "cohere", "cerebras", "deepseek", "openrouter"),
        *("vercel", "system-one", "crusoe", "elevenlabs", "xai", "moonshotai", "meta", "fireworks"),
        *("together", "heroku", "huggingface", "ollama", "github", "github-copilot", "litellm", "vllm"),
        *("nebius", "ovhcloud", "alibaba", "sambanova", "sentence-transformers", "snowflake"),
        *("typesafe", "voyageai", "zai"),
    }
)
"""The providers pydantic-ai's ``infer_provider_class`` knows, in the release the lock file pins:
known here so that a prefix is checked without importing pydantic-ai (a test fails when they differ)."""
GATEWAY_ALIASES = {
    "chat": "openai-chat",
    "responses": "openai-responses",
    "converse": "bedrock",
    "google": "google-cloud",
}
"""``gateway/<name>`` names that are not a provider's own (pydantic-ai's Gateway aliases)."""


def model_form_problem(name: str) -> str | None:
    """Why ``name`` is not a model string (no ``provider:model`` form, an unknown provider), or None.

    Reads the string alone: nothing is imported, no key looked for (:func:`model_problem` does that).
    """
    if name == "offline":
        return None
    prefix, colon, model = name.partition(":")
    if not colon:
        return "no provider prefix"
    if not model.strip():
        return f"no model name after {prefix}:"
    if prefix.startswith("gateway/"):
        upstream = prefix.removeprefix("gateway/")
        known = GATEWAY_ALIASES.get(upstream, upstream) in PROVIDER_PREFIXES
    else:
        known = prefix in PROVIDER_PREFIXES
    if not known:
        renamed = RENAMED_PREFIXES.get(prefix)
        return f"unknown model provider {prefix!r}" + (f" (now called {renamed}:)" if renamed else "")
    return None


def model_problem(name: str) -> str | None:
    """Why ``name`` cannot become a model (unknown prefix, missing key or package), or None when it can.

    The model is built as the worker will build it, without sending a request; ``offline`` imports nothing.
    """
    if name == "offline":
        return None
    if (problem := model_form_problem(name)) is not None:
        return problem
    from pydantic_ai.providers import infer_provider_class

    prefix = name.partition(":")[0]
    try:
        infer_provider_class(prefix)  # imports the provider's package: slow once, but no I/O
    except ValueError:
        return f"unknown model provider {prefix!r}"
    except ImportError as exc:
        return f"this provider's package is not installed ({_first_sentence(str(exc))})"
    # Building the provider reads keys and files; cloud credential discovery may also ask the network,
    # so that part gets a time limit (past it the value is let through; the worker reports it then).
    found: list[str | None] = []
    check = threading.Thread(target=lambda: found.append(_build_problem(name, prefix)), daemon=True)
    check.start()
    check.join(MODEL_CHECK_S)
    return found[0] if found else None


def _build_problem(name: str, prefix: str) -> str | None:
    from pydantic_ai.exceptions import UserError
    from pydantic_ai.models import infer_model

    try:
        infer_model(name)
    except UserError as exc:
        message = str(exc)
        if key := re.search(r"`([A-Z][A-Z0-9_]*)` environment variable", message):
            return f"set {key.group(1)} for the {prefix}: provider"
        return _first_sentence(message)
    except ImportError as exc:
        return f"this provider's package is not installed ({_first_sentence(str(exc))})"
    except Exception as exc:  # a provider's own credential lookup, e.g. Google Cloud's
        return _first_sentence(str(exc)) or type(exc).__name__
    return None


def _first_sentence(text: str) -> str:
    first = text.strip().splitlines()[0] if text.strip() else ""
    return first.split(". ")[0].rstrip(".")

"""Whether a model string can become a model: checked at start, without sending a request."""

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


def model_problem(name: str) -> str | None:
    """Why ``name`` cannot become a model (unknown prefix, missing key or package), or None when it can.

    The model is built as the worker will build it, without sending a request; ``offline`` imports nothing.
    """
    if name == "offline":
        return None
    from pydantic_ai.models import parse_model_id
    from pydantic_ai.providers import infer_provider_class

    prefix, _ = parse_model_id(name)
    if prefix is None:
        return "no provider prefix"
    try:
        infer_provider_class(prefix)  # imports the provider's package: slow once, but no I/O
    except ValueError:
        renamed = RENAMED_PREFIXES.get(prefix)
        return f"unknown model provider {prefix!r}" + (f" (now called {renamed}:)" if renamed else "")
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

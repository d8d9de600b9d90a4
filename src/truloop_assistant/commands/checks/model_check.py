"""Can the model strings be built, and does the embedding model answer?"""

from __future__ import annotations

from .outcome import Check

EMBEDDING_TIMEOUT_S = 10.0


def check_models(model: str, fallbacks: list[str]) -> Check:
    """Every model string can be built: known provider, its package installed, its key set."""
    from ...config import VALID_MODELS, model_problem

    named = [("TRULOOP_MODEL", model), *(("TRULOOP_FALLBACK_MODELS", name) for name in fallbacks)]
    found = [(variable, name, problem) for variable, name in named if (problem := model_problem(name))]
    if found:
        detail = "; ".join(f"{variable}={name!r}: {problem}" for variable, name, problem in found)
        if any("prefix" in problem or "provider '" in problem for _, _, problem in found):
            detail += f" ({VALID_MODELS})"
        return Check("model", "FAIL", detail)
    if model == "offline":
        detail = "offline (the built-in rule-based model: no key needed)"
    else:
        detail = f"{model} (provider package and key found; no request sent)"
    if fallbacks:
        detail += f", then {', '.join(fallbacks)}"
    return Check("model", "ok", detail)


def check_embedding(model: str) -> Check:
    """With ``TRULOOP_EMBEDDING_MODEL`` set: does the model embed a question (one small request)?"""
    import asyncio

    from ...backends.knowledge.embedding import EmbeddingError, PassageEmbedder

    async def dimensions() -> int:
        async with asyncio.timeout(EMBEDDING_TIMEOUT_S):
            return int((await PassageEmbedder(model).query("Where do visitors park?")).shape[0])

    try:
        found = asyncio.run(dimensions())
    except (EmbeddingError, TimeoutError) as exc:
        reason = str(exc).removeprefix(f"{model}: ") or f"no answer within {EMBEDDING_TIMEOUT_S:g} s"
        return Check(
            "embedding",
            "FAIL",
            f"{model} does not answer ({reason}): fix TRULOOP_EMBEDDING_MODEL or the provider's key "
            "(e.g. OPENAI_API_KEY, OPENAI_BASE_URL); until then knowledge search goes by words only",
        )
    return Check(
        "embedding", "ok", f"{model} answers ({found} dimensions): knowledge search by words and meaning"
    )

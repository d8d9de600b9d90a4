"""The knowledge base tool, driven by a FunctionModel through a small agent."""

from __future__ import annotations

import json
from typing import Any
from zoneinfo import ZoneInfo

import pytest
from pydantic_ai import Agent, models
from pydantic_ai.messages import (
    ModelMessage,
    ModelRequest,
    ModelResponse,
    TextPart,
    ToolCallPart,
    ToolReturnPart,
)
from pydantic_ai.models.function import AgentInfo, FunctionModel
from redis.asyncio import Redis

from tests.fakes.embeddings import FakeEmbeddings
from tests.support import served
from truloop_assistant.agent.prompts import MEMBER_INSTRUCTIONS
from truloop_assistant.backends import Backends
from truloop_assistant.backends.knowledge import Bm25KnowledgeBase, KnowledgeHit, load_knowledge_base
from truloop_assistant.backends.knowledge.embedding import PassageEmbedder
from truloop_assistant.backends.knowledge.live import LiveKnowledgeBase
from truloop_assistant.backends.knowledge.store import KnowledgeStore
from truloop_assistant.tools.agent_deps import AgentDeps
from truloop_assistant.tools.knowledge_tools import (
    NOTHING_FOUND,
    KnowledgeSearchResult,
    knowledge_toolset,
)

SEOUL = ZoneInfo("Asia/Seoul")

models.ALLOW_MODEL_REQUESTS = False


@pytest.fixture(scope="module")
def kb() -> Bm25KnowledgeBase:
    return load_knowledge_base(None)


def _deps(knowledge: Any) -> AgentDeps:
    backends = Backends(users=None, events=None, knowledge=knowledge, memory=None, places=None)  # type: ignore[arg-type]
    return AgentDeps(user_id="u", channel_url="c", backends=backends, timezone=SEOUL)


def _returns(messages: list[ModelMessage]) -> list[ToolReturnPart]:
    return [
        p for m in messages if isinstance(m, ModelRequest) for p in m.parts if isinstance(p, ToolReturnPart)
    ]


def _searching_model(args: dict[str, Any]) -> FunctionModel:
    """Calls search_knowledge_base with ``args``, then answers from what the tool returned."""

    def respond(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        assert "search_knowledge_base" in [t.name for t in info.function_tools]
        returns = _returns(messages)
        if not returns:
            return ModelResponse(parts=[ToolCallPart("search_knowledge_base", args)])
        last = returns[-1]
        if last.outcome != "success":
            return ModelResponse(parts=[TextPart(f"[{last.outcome}] {last.model_response_str()}")])
        result = json.loads(last.model_response_str())
        if not result["results"]:
            return ModelResponse(parts=[TextPart(f"nothing found; note: {result['note']}")])
        top = result["results"][0]
        return ModelResponse(
            parts=[TextPart(f"According to '{top['title']}' ({top['path']}): {top['snippet']}")]
        )

    return FunctionModel(respond)


def _agent(args: dict[str, Any]) -> Agent[AgentDeps, str]:
    return Agent(_searching_model(args), deps_type=AgentDeps, toolsets=[knowledge_toolset])


@pytest.mark.parametrize(
    ("query", "title", "path"),
    [
        ("연차는 며칠이야?", "휴가 정책 (Vacation policy)", "vacation-policy.md"),
        (
            "how do I claim a taxi home after working late",
            "Expense reimbursement (경비 정산)",
            "expense-reimbursement.md",
        ),
        ("회의실 예약 방법", "회의실 예약 안내 (Meeting rooms)", "meeting-rooms.md"),
    ],
)
async def test_answer_cites_the_right_document(
    kb: Bm25KnowledgeBase, query: str, title: str, path: str
) -> None:
    result = await _agent({"query": query}).run(query, deps=_deps(kb))
    assert result.output.startswith(f"According to '{title}' ({path}): ")
    [tool_return] = _returns(result.all_messages())
    assert isinstance(tool_return.content, KnowledgeSearchResult)
    assert 1 <= len(tool_return.content.results) <= 3
    assert tool_return.content.note is None


async def test_limit_is_passed_on(kb: Bm25KnowledgeBase) -> None:
    result = await _agent({"query": "Flex 신청", "limit": 1}).run("Flex", deps=_deps(kb))
    [tool_return] = _returns(result.all_messages())
    assert isinstance(tool_return.content, KnowledgeSearchResult)
    assert len(tool_return.content.results) == 1


async def test_nothing_found_comes_with_a_note(kb: Bm25KnowledgeBase) -> None:
    result = await _agent({"query": "quantum chromodynamics"}).run("physics?", deps=_deps(kb))
    assert result.output == f"nothing found; note: {NOTHING_FOUND}"
    assert "do not guess" in NOTHING_FOUND


def _problems(tool_return: ToolReturnPart) -> dict[str, str]:
    """What a retried call told the model, per argument."""
    assert tool_return.outcome == "retried"
    errors = json.loads(tool_return.model_response_str(wrap_if_error=False))
    return {".".join(str(p) for p in error["loc"]): error["msg"] for error in errors}


@pytest.mark.parametrize(
    ("args", "field", "message"),
    [
        ({"query": "   "}, "query", "String should have at least 1 character"),
        ({"query": "연차 " * 400}, "query", "String should have at most 1000 characters"),
        ({}, "query", "Field required"),
        ({"query": "연차", "limit": 50}, "limit", "Input should be less than or equal to 10"),
        ({"query": "연차", "limit": 0}, "limit", "Input should be greater than or equal to 1"),
    ],
)
async def test_bad_arguments_get_a_retry_prompt(
    kb: Bm25KnowledgeBase, args: dict[str, Any], field: str, message: str
) -> None:
    result = await _agent(args).run("?", deps=_deps(kb))
    [tool_return] = _returns(result.all_messages())
    problems = _problems(tool_return)
    assert list(problems) == [field] and message in problems[field]
    assert result.output.startswith("[retried] ")


async def test_without_backends_the_tool_fails_clearly() -> None:
    agent = Agent(_searching_model({"query": "연차"}), deps_type=AgentDeps, toolsets=[knowledge_toolset])
    result = await agent.run("연차", deps=AgentDeps(user_id="u", channel_url="c", timezone=SEOUL))
    assert result.output.startswith("[failed] ")
    assert "no backends are configured" in result.output


async def test_the_query_is_trimmed_and_passed_to_the_backend() -> None:
    class Recording:
        def __init__(self) -> None:
            self.calls: list[tuple[str, int]] = []

        async def search(self, query: str, *, limit: int = 5) -> list[KnowledgeHit]:
            self.calls.append((query, limit))
            return [KnowledgeHit(title="T", path="t.md", snippet="s", score=1.0)]

    backend = Recording()
    result = await _agent({"query": "  주차 등록  ", "limit": 2}).run("주차", deps=_deps(backend))
    assert backend.calls == [("주차 등록", 2)]
    assert result.output == "According to 'T' (t.md): s"


def test_tool_schema_is_written_for_the_model() -> None:
    tool = knowledge_toolset.tools["search_knowledge_base"]
    schema = tool.function_schema.json_schema
    assert schema["required"] == ["query"]
    assert schema["properties"]["limit"] == {"default": 3, "maximum": 10, "minimum": 1, "type": "integer"}
    # (what the model is sent of it is pinned in tests/tools/tool_schemas.json)
    assert "naming their documents" in MEMBER_INSTRUCTIONS  # how to answer from it: said once, there


async def test_the_tool_searches_by_meaning_and_never_fails_when_the_model_does(
    redis: Redis, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(models, "ALLOW_MODEL_REQUESTS", True)  # to the local fake only
    async with served(FakeEmbeddings()) as fake:
        store = KnowledgeStore(redis, embedder=PassageEmbedder(fake.model()))
        knowledge = LiveKnowledgeBase(store, fallback=lambda: load_knowledge_base(None), check_every_s=0)
        result = await _agent({"query": "when is payday"}).run("payday?", deps=_deps(knowledge))
        assert result.output.startswith(
            "According to '급여와 증명서 (Payroll and certificates)' (payroll.md): "
        )

        fake.fail_with = 503
        result = await _agent({"query": "when is payday"}).run("payday?", deps=_deps(knowledge))
        [tool_return] = _returns(result.all_messages())
        assert tool_return.outcome == "success"  # words find nothing for "payday": the tool says so
        assert result.output == f"nothing found; note: {NOTHING_FOUND}"

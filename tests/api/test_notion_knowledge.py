"""Notion pages synced while the server runs are found in the next turn: no restart, the page cited."""

from __future__ import annotations

import asyncio
import json
import os
import sys
import time
from typing import Any

from pydantic_ai.messages import ModelMessage, ModelResponse, TextPart, ToolCallPart, ToolReturnPart
from pydantic_ai.models.function import AgentInfo, FunctionModel

from tests.fakes.notion import NOTION_TOKEN, FakeNotion, bullet, heading, paragraph
from tests.support import served
from truloop_assistant.backends.knowledge.live import CHECK_EVERY_S

APPROVER = "Production deploys need a second approver from the platform team."


def answers_from_the_knowledge_base() -> FunctionModel:
    """Search the knowledge base for what the user asked; answer with the best passage and its link."""

    def fn(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        returns = [p for p in messages[-1].parts if isinstance(p, ToolReturnPart)]
        if not returns:
            prompt = next(p.content for p in messages[-1].parts if p.part_kind == "user-prompt")
            return ModelResponse(parts=[ToolCallPart("search_knowledge_base", {"query": str(prompt)})])
        results = json.loads(returns[0].model_response_str())["results"]
        if not results:
            return ModelResponse(parts=[TextPart("I could not find that in the company documents.")])
        top = results[0]
        return ModelResponse(parts=[TextPart(f"{top['snippet']} (see {top['title']}: {top['url']})")])

    return FunctionModel(fn)


async def sync_notion(redis_url: str, notion: FakeNotion) -> str:
    """``truloop-assistant kb sync-notion`` as an operator runs it (cron), with only its settings."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("TRULOOP_")}
    env |= {
        "TRULOOP_REDIS_URL": redis_url,
        "TRULOOP_NOTION_TOKEN": NOTION_TOKEN,
        "TRULOOP_NOTION_API_URL": notion.url,
    }
    proc = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "truloop_assistant.cli",
        "kb",
        "sync-notion",
        env=env,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    out, err = await asyncio.wait_for(proc.communicate(), timeout=120)
    assert proc.returncode == 0, err.decode()
    return out.decode()


async def test_the_running_assistant_finds_a_synced_page(start_server: Any, redis_url: str) -> None:
    question = "who approves production deploys?"
    async with served(FakeNotion()) as notion, start_server(model=answers_from_the_knowledge_base()) as h:
        engineering = notion.add_page("Engineering", paragraph("How the engineering team works."))
        deploy = notion.add_page(
            "Deploy guide",
            heading(1, "Approvals"),
            paragraph(APPROVER),
            bullet("Ask in #deploys."),
            parent=engineering,
        )
        await h.user_says(question)
        [before] = await h.replies(1)
        searched = time.monotonic()
        assert APPROVER not in before.text

        output = await sync_notion(redis_url, notion)

        assert (
            "synced Notion into the knowledge base: 2 pages read, 0 unchanged (not read), 0 removed" in output
        )
        # A process looks at the knowledge base's version at most once a second.
        await asyncio.sleep(max(0.0, CHECK_EVERY_S - (time.monotonic() - searched)))
        await h.user_says(question)
        [_, after] = await h.replies(2)
        url = notion.pages[deploy].url
        assert after.text == f"Approvals: {APPROVER} - Ask in #deploys. (see Deploy guide: {url})"

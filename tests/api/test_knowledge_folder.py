"""The server searches ``TRULOOP_KB_DIR`` (while Redis holds no documents): only what is inside it."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from pydantic_ai.messages import ModelMessage, ModelResponse, TextPart, ToolCallPart, ToolReturnPart
from pydantic_ai.models.function import AgentInfo, FunctionModel


def searches_and_shows_the_results() -> FunctionModel:
    """Search the knowledge base for what the user asked; answer with every snippet found."""

    def fn(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        returns = [p for p in messages[-1].parts if isinstance(p, ToolReturnPart)]
        if not returns:
            prompt = next(p.content for p in messages[-1].parts if p.part_kind == "user-prompt")
            return ModelResponse(parts=[ToolCallPart("search_knowledge_base", {"query": str(prompt)})])
        results = json.loads(returns[0].model_response_str())["results"]
        return ModelResponse(
            parts=[TextPart(" | ".join(f"{r['path']}: {r['snippet']}" for r in results) or "-")]
        )

    return FunctionModel(fn)


async def test_a_link_out_of_the_knowledge_folder_is_not_served(start_server: Any, tmp_path: Path) -> None:
    secrets = tmp_path / "secrets.env"
    secrets.write_text("TRULOOP_JWT_SECRET=hunter2 parking\n")
    private = tmp_path / "private"
    private.mkdir()
    (private / "notes.md").write_text("# Notes\n\nhunter2 parking\n")
    folder = tmp_path / "kb"
    folder.mkdir()
    (folder / "garage.md").write_text("# Garage\n\nparking garage rules\n")
    (folder / "environ.md").symlink_to(secrets)  # as a link to /proc/self/environ would be
    (folder / "private").symlink_to(private, target_is_directory=True)

    async with start_server(model=searches_and_shows_the_results(), kb_dir=str(folder)) as h:
        await h.user_says("parking hunter2")
        [reply] = await h.replies(1)
        assert reply.text.startswith("garage.md: ")
        assert "hunter2" not in reply.text and "environ" not in reply.text and "private" not in reply.text

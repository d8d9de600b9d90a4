"""A local Anthropic Messages API (``POST /v1/messages``) that validates like the real one.

Besides the fields and their types, it holds a history to the API's turn rules: the first message
is the user's and roles alternate; every ``tool_use`` block of an assistant turn is answered by a
``tool_result`` block with its id at the start of the very next (user) message; a ``tool_result``
answers a ``tool_use`` of the message right before it; ``tool_use`` ids are unique; no message but
a final assistant one is empty, and no text block is blank.
"""

from __future__ import annotations

import json
import re
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any, ClassVar

from pydantic_ai.models.anthropic import AnthropicModel
from pydantic_ai.providers.anthropic import AnthropicProvider

from .scripted import InvalidRequest, Prompt, Reply, ScriptedProvider, ToolResult, text_of

ROLES = ("user", "assistant")
USER_BLOCKS = ("text", "image", "document", "tool_result")
ASSISTANT_BLOCKS = ("text", "tool_use", "thinking", "redacted_thinking")
RESULT_BLOCKS = ("text", "image", "document")
ID = re.compile(r"^[a-zA-Z0-9_-]+$")
TOOL_NAME = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")


@dataclass
class FakeAnthropic(ScriptedProvider):
    path: ClassVar[str] = "/v1/messages"
    model_name: ClassVar[str] = "claude-sonnet-4-6"

    def model(self) -> AnthropicModel:
        return AnthropicModel(
            self.model_name, provider=AnthropicProvider(base_url=self.url, api_key="sk-ant-test")
        )

    def error(self, problem: InvalidRequest) -> dict[str, Any]:
        kind = "authentication_error" if problem.status == 401 else "invalid_request_error"
        return {
            "type": "error",
            "error": {"type": kind, "message": problem.message},
            "request_id": f"req_{uuid.uuid4().hex[:24]}",
        }

    def check(self, headers: dict[str, str], body: dict[str, Any]) -> None:
        if not headers.get("x-api-key") and not headers.get("authorization", "").startswith("Bearer "):
            raise InvalidRequest("x-api-key header is required", status=401)
        if not headers.get("anthropic-version"):
            raise InvalidRequest("anthropic-version: header is required")
        _field(body, "model", str, "model")
        max_tokens = _field(body, "max_tokens", int, "max_tokens")
        if max_tokens < 1:
            raise InvalidRequest("max_tokens: Input should be greater than or equal to 1")
        _check_system(body.get("system"))
        messages = _field(body, "messages", list, "messages")
        if not messages:
            raise InvalidRequest("messages: at least one message is required")
        for i, message in enumerate(messages):
            _check_message(message, i, last=i == len(messages) - 1)
        _check_turns(messages)
        _check_tools(body)

    def prompt(self, body: dict[str, Any]) -> Prompt:
        messages = body["messages"]
        names = {
            block["id"]: block["name"]
            for m in messages
            if m["role"] == "assistant"
            for block in _blocks(m)
            if block["type"] == "tool_use"
        }
        last = messages[-1] if messages and messages[-1]["role"] == "user" else {"content": []}
        results = tuple(
            ToolResult(names[b["tool_use_id"]], text_of(b.get("content", "")), bool(b.get("is_error", False)))
            for b in _blocks(last)
            if b["type"] == "tool_result"
        )
        user_texts = [
            b["text"] for m in messages if m["role"] == "user" for b in _blocks(m) if b["type"] == "text"
        ]
        tools = tuple(t["name"] for t in body.get("tools") or [])
        return Prompt(user_text=user_texts[-1] if user_texts else "", results=results, tools=tools)

    def render(self, body: dict[str, Any], reply: Reply) -> dict[str, Any]:
        content: list[dict[str, Any]]
        if isinstance(reply, str):
            content = [{"type": "text", "text": reply}]
        else:
            content = [
                {
                    "type": "tool_use",
                    "id": f"toolu_{uuid.uuid4().hex[:24]}",
                    "name": call.name,
                    "input": call.args,
                }
                for call in reply
            ]
        return {
            "id": f"msg_{uuid.uuid4().hex[:24]}",
            "type": "message",
            "role": "assistant",
            "model": body["model"],
            "content": content,
            "stop_reason": "end_turn" if isinstance(reply, str) else "tool_use",
            "stop_sequence": None,
            "usage": {
                "input_tokens": 20,
                "output_tokens": 5,
                "cache_creation_input_tokens": 0,
                "cache_read_input_tokens": 0,
            },
        }

    def events(self, response: dict[str, Any]) -> Iterator[tuple[str | None, Any]]:
        def event(kind: str, **data: Any) -> tuple[str, dict[str, Any]]:
            return kind, {"type": kind, **data}

        usage = response["usage"]
        started = response | {"content": [], "stop_reason": None, "usage": usage | {"output_tokens": 1}}
        yield event("message_start", message=started)
        for index, block in enumerate(response["content"]):
            if block["type"] == "text":
                yield event("content_block_start", index=index, content_block=block | {"text": ""})
                yield event(
                    "content_block_delta", index=index, delta={"type": "text_delta", "text": block["text"]}
                )
            else:
                yield event("content_block_start", index=index, content_block=block | {"input": {}})
                delta = {"type": "input_json_delta", "partial_json": json.dumps(block["input"])}
                yield event("content_block_delta", index=index, delta=delta)
            yield event("content_block_stop", index=index)
        stop = {"stop_reason": response["stop_reason"], "stop_sequence": None}
        yield event("message_delta", delta=stop, usage={"output_tokens": usage["output_tokens"]})
        yield event("message_stop")


def _blocks(message: dict[str, Any]) -> list[dict[str, Any]]:
    """A message's content as blocks (a string is one text block)."""
    content = message["content"]
    return [{"type": "text", "text": content}] if isinstance(content, str) else content


def _field(obj: dict[str, Any], key: str, kind: type, where: str) -> Any:
    if key not in obj:
        raise InvalidRequest(f"{where}: Field required")
    value = obj[key]
    if not isinstance(value, kind) or (isinstance(value, bool) and kind is not bool):
        expected = {
            str: "a valid string",
            int: "a valid integer",
            list: "a valid list",
            dict: "a valid dictionary",
        }
        raise InvalidRequest(f"{where}: Input should be {expected.get(kind, kind.__name__)}")
    return value


def _check_system(system: Any) -> None:
    if system is None or isinstance(system, str):
        return
    if not isinstance(system, list):
        raise InvalidRequest("system: Input should be a valid string or a valid list")
    for k, block in enumerate(system):
        if not isinstance(block, dict) or block.get("type") != "text":
            raise InvalidRequest(f"system.{k}.type: Input should be 'text'")
        _check_text(_field(block, "text", str, f"system.{k}.text"), f"system.{k}")


def _check_text(text: str, where: str) -> None:
    if not text:
        raise InvalidRequest(f"{where}: text content blocks must be non-empty")
    if not text.strip():
        raise InvalidRequest(f"{where}: text content blocks must contain non-whitespace text")


def _check_message(message: Any, i: int, *, last: bool) -> None:
    where = f"messages.{i}"
    if not isinstance(message, dict):
        raise InvalidRequest(f"{where}: Input should be a valid dictionary")
    role = _field(message, "role", str, f"{where}.role")
    if role not in ROLES:
        raise InvalidRequest(f"{where}.role: Input should be 'user' or 'assistant'")
    content = message.get("content")
    if not isinstance(content, str | list):
        raise InvalidRequest(f"{where}.content: Input should be a valid string or a valid list")
    if not content and not (last and role == "assistant"):
        raise InvalidRequest(
            f"{where}: all messages must have non-empty content except for the optional final "
            "assistant message"
        )
    if isinstance(content, str):
        if content and not content.strip() and not (last and role == "assistant"):
            raise InvalidRequest(f"{where}: text content blocks must contain non-whitespace text")
        return
    allowed = USER_BLOCKS if role == "user" else ASSISTANT_BLOCKS
    for k, block in enumerate(content):
        _check_block(block, f"{where}.content.{k}", allowed)


def _check_block(block: Any, where: str, allowed: tuple[str, ...]) -> None:
    if not isinstance(block, dict):
        raise InvalidRequest(f"{where}: Input should be a valid dictionary")
    kind = _field(block, "type", str, f"{where}.type")
    if kind not in allowed:
        tags = ", ".join(f"'{t}'" for t in allowed)
        raise InvalidRequest(
            f"{where}: Input tag '{kind}' found using 'type' does not match any of the expected tags: {tags}"
        )
    if kind == "text":
        _check_text(_field(block, "text", str, f"{where}.text"), where)
    elif kind == "tool_use":
        if not ID.match(_field(block, "id", str, f"{where}.id")):
            raise InvalidRequest(f"{where}.id: String should match pattern '^[a-zA-Z0-9_-]+$'")
        _field(block, "name", str, f"{where}.name")
        _field(block, "input", dict, f"{where}.input")
    elif kind == "tool_result":
        _field(block, "tool_use_id", str, f"{where}.tool_use_id")
        if "is_error" in block and not isinstance(block["is_error"], bool):
            raise InvalidRequest(f"{where}.is_error: Input should be a valid boolean")
        content = block.get("content", "")
        if isinstance(content, list):
            for n, part in enumerate(content):
                _check_block(part, f"{where}.content.{n}", RESULT_BLOCKS)
        elif not isinstance(content, str):
            raise InvalidRequest(f"{where}.content: Input should be a valid string or a valid list")


def _check_turns(messages: list[dict[str, Any]]) -> None:
    """Who speaks when, and which tool results answer which calls."""
    if messages and messages[0]["role"] != "user":
        raise InvalidRequest('messages: first message must use the "user" role')
    seen_ids: set[str] = set()
    for i, message in enumerate(messages):
        if i and message["role"] == messages[i - 1]["role"]:
            raise InvalidRequest(
                f'messages: roles must alternate between "user" and "assistant", but found multiple '
                f'"{message["role"]}" roles in a row'
            )
        blocks = _blocks(message)
        if message["role"] == "assistant":
            calls = [b["id"] for b in blocks if b["type"] == "tool_use"]
            for k, block in enumerate(blocks):
                if block["type"] == "tool_use":
                    if block["id"] in seen_ids:
                        raise InvalidRequest(f"messages.{i}.content.{k}: `tool_use` ids must be unique")
                    seen_ids.add(block["id"])
            following = _blocks(messages[i + 1]) if i + 1 < len(messages) else []
            leading_results: list[str] = []
            for block in following:
                if block["type"] != "tool_result":
                    break
                leading_results.append(block["tool_use_id"])
            if unanswered := [c for c in calls if c not in leading_results]:
                raise InvalidRequest(
                    f"messages.{i}: `tool_use` ids were found without `tool_result` blocks immediately "
                    f"after: {', '.join(unanswered)}. Each `tool_use` block must have a corresponding "
                    "`tool_result` block in the next message."
                )
        else:
            previous = _blocks(messages[i - 1]) if i else []
            calls = [b["id"] for b in previous if b["type"] == "tool_use"]
            leading = True
            for k, block in enumerate(blocks):
                if block["type"] != "tool_result":
                    leading = False
                    continue
                if block["tool_use_id"] not in calls:
                    raise InvalidRequest(
                        f"messages.{i}.content.{k}: unexpected `tool_use_id` found in `tool_result` "
                        f"blocks: {block['tool_use_id']}. Each `tool_result` block must have a "
                        "corresponding `tool_use` block in the previous message."
                    )
                if not leading:
                    raise InvalidRequest(
                        f"messages.{i}.content.{k}: `tool_result` blocks must come before any other content "
                        "in a user message"
                    )


def _check_tools(body: dict[str, Any]) -> None:
    tools = body.get("tools")
    if tools is None:
        return
    if not isinstance(tools, list):
        raise InvalidRequest("tools: Input should be a valid list")
    for j, tool in enumerate(tools):
        where = f"tools.{j}"
        if not isinstance(tool, dict):
            raise InvalidRequest(f"{where}: Input should be a valid dictionary")
        if "type" in tool and tool["type"] not in ("custom", None):
            continue  # a server tool (web search and the like) has its own shape
        name = _field(tool, "name", str, f"{where}.custom.name")
        if not TOOL_NAME.match(name):
            raise InvalidRequest(
                f"{where}.custom.name: String should match pattern '^[a-zA-Z0-9_-]{{1,64}}$'"
            )
        schema = _field(tool, "input_schema", dict, f"{where}.custom.input_schema")
        if schema.get("type") != "object":
            raise InvalidRequest(f"{where}.custom.input_schema.type: Input should be 'object'")
    choice = body.get("tool_choice")
    if choice is not None:
        if not isinstance(choice, dict) or choice.get("type") not in ("auto", "any", "tool", "none"):
            raise InvalidRequest(
                "tool_choice: Input tag found using 'type' does not match any of the expected tags: "
                "'auto', 'any', 'tool', 'none'"
            )
        if choice["type"] == "tool" and choice.get("name") not in {t.get("name") for t in tools or []}:
            raise InvalidRequest(f"tool_choice.tool.name: Tool '{choice.get('name')}' not found in tools")

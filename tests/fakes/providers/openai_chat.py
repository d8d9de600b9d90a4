"""A local OpenAI Chat Completions API (``POST /v1/chat/completions``) that validates like the real one.

Besides the fields and their types, it holds a history to the API's tool-call rule: an assistant
message with ``tool_calls`` must be followed by one ``tool`` message per call id before any other
message, and a ``tool`` message must answer a call of the assistant message it follows.
"""

from __future__ import annotations

import json
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any, ClassVar

from pydantic_ai.models.openai import OpenAIChatModel
from pydantic_ai.providers.openai import OpenAIProvider

from .openai_rules import check_function, check_key, error_body, invalid_type, invalid_value, missing, require
from .scripted import InvalidRequest, Prompt, Reply, ScriptedProvider, ToolResult, text_of

ROLES = ("system", "developer", "user", "assistant", "tool", "function")
TOOL_CHOICES = ("none", "auto", "required")


@dataclass
class FakeChatCompletions(ScriptedProvider):
    path: ClassVar[str] = "/v1/chat/completions"
    model_name: ClassVar[str] = "gpt-4o-mini"

    def model(self) -> OpenAIChatModel:
        return OpenAIChatModel(
            self.model_name, provider=OpenAIProvider(base_url=f"{self.url}/v1", api_key="sk-test")
        )

    def error(self, problem: InvalidRequest) -> dict[str, Any]:
        return error_body(problem)

    def check(self, headers: dict[str, str], body: dict[str, Any]) -> None:
        check_key(headers)
        require(body, "model", str, "")
        messages = require(body, "messages", list, "")
        if not messages:
            raise InvalidRequest(
                "Invalid 'messages': empty array. Expected an array with minimum length 1, but got an empty "
                "array instead.",
                param="messages",
                code="empty_array",
            )
        for i, message in enumerate(messages):
            _check_message(message, f"messages[{i}]")
        _check_tool_sequence(messages)
        _check_tools(body)

    def prompt(self, body: dict[str, Any]) -> Prompt:
        messages = body["messages"]
        names = {
            call["id"]: call["function"]["name"]
            for m in messages
            if m["role"] == "assistant"
            for call in m.get("tool_calls") or []
        }
        last_assistant = max((i for i, m in enumerate(messages) if m["role"] == "assistant"), default=-1)
        results = tuple(
            ToolResult(names[m["tool_call_id"]], text_of(m["content"]))
            for m in messages[last_assistant + 1 :]
            if m["role"] == "tool"
        )
        user_texts = [text_of(m["content"]) for m in messages if m["role"] == "user"]
        tools = tuple(t["function"]["name"] for t in body.get("tools") or [])
        return Prompt(user_text=user_texts[-1] if user_texts else "", results=results, tools=tools)

    def render(self, body: dict[str, Any], reply: Reply) -> dict[str, Any]:
        message: dict[str, Any] = {"role": "assistant", "content": None, "refusal": None}
        if isinstance(reply, str):
            message["content"] = reply
        else:
            message["tool_calls"] = [
                {
                    "id": f"call_{uuid.uuid4().hex[:24]}",
                    "type": "function",
                    "function": {"name": call.name, "arguments": json.dumps(call.args)},
                }
                for call in reply
            ]
        return {
            "id": f"chatcmpl-{uuid.uuid4().hex[:24]}",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": body["model"],
            "choices": [
                {
                    "index": 0,
                    "message": message,
                    "logprobs": None,
                    "finish_reason": "stop" if isinstance(reply, str) else "tool_calls",
                }
            ],
            "usage": {"prompt_tokens": 20, "completion_tokens": 5, "total_tokens": 25},
        }

    def events(self, response: dict[str, Any]) -> Iterator[tuple[str | None, Any]]:
        chunk = {k: response[k] for k in ("id", "created", "model")} | {"object": "chat.completion.chunk"}
        [choice] = response["choices"]
        message = choice["message"]
        delta: dict[str, Any] = {"role": "assistant"}
        if message["content"] is not None:
            delta["content"] = message["content"]
        yield None, chunk | {"choices": [{"index": 0, "delta": delta, "finish_reason": None}]}
        for i, call in enumerate(message.get("tool_calls") or []):
            delta = {"tool_calls": [{"index": i, **call}]}
            yield None, chunk | {"choices": [{"index": 0, "delta": delta, "finish_reason": None}]}
        finish = {"index": 0, "delta": {}, "finish_reason": choice["finish_reason"]}
        yield None, chunk | {"choices": [finish]}
        yield None, chunk | {"choices": [], "usage": response["usage"]}
        yield None, "[DONE]"


def _check_message(message: Any, param: str) -> None:
    if not isinstance(message, dict):
        raise invalid_type(param, "an object", message)
    role = require(message, "role", str, param)
    if role not in ROLES:
        raise invalid_value(f"{param}.role", role, ROLES)
    if role == "assistant":
        calls = message.get("tool_calls")
        if calls is None and message.get("function_call") is None:
            require(message, "content", (str, list), param)
        elif message.get("content") is not None:
            require(message, "content", (str, list), param)
        if calls is not None:
            if not isinstance(calls, list):
                raise invalid_type(f"{param}.tool_calls", "an array", calls)
            if not calls:
                raise InvalidRequest(
                    f"Invalid '{param}.tool_calls': empty array. Expected an array with minimum length 1, "
                    "but got an empty array instead.",
                    param=f"{param}.tool_calls",
                    code="empty_array",
                )
            for j, call in enumerate(calls):
                _check_tool_call(call, f"{param}.tool_calls[{j}]")
        return
    require(message, "content", (str, list), param)
    if role == "tool":
        require(message, "tool_call_id", str, param)


def _check_tool_call(call: Any, param: str) -> None:
    if not isinstance(call, dict):
        raise invalid_type(param, "an object", call)
    require(call, "id", str, param)
    if require(call, "type", str, param) != "function":
        raise invalid_value(f"{param}.type", call["type"], ("function",))
    function = require(call, "function", dict, param)
    require(function, "name", str, f"{param}.function")
    require(function, "arguments", str, f"{param}.function")


def _check_tool_sequence(messages: list[dict[str, Any]]) -> None:
    """An assistant ``tool_calls`` message is answered, id by id, by the ``tool`` messages right after it."""
    answerable: set[str] = set()  # ids the next tool message may answer
    unanswered: list[str] = []
    opened_at = 0
    for i, message in enumerate(messages):
        role = message["role"]
        if unanswered and role != "tool":
            raise _unanswered(opened_at, unanswered)
        if role == "tool":
            if message["tool_call_id"] not in answerable:
                raise InvalidRequest(
                    "Invalid parameter: messages with role 'tool' must be a response to a preceeding "
                    "message with 'tool_calls'.",
                    param=f"messages.[{i}].role",
                )
            if message["tool_call_id"] in unanswered:
                unanswered.remove(message["tool_call_id"])
        elif role == "assistant" and message.get("tool_calls"):
            answerable = {call["id"] for call in message["tool_calls"]}
            unanswered = [call["id"] for call in message["tool_calls"]]
            opened_at = i
        else:
            answerable = set()
    if unanswered:
        raise _unanswered(opened_at, unanswered)


def _unanswered(index: int, ids: list[str]) -> InvalidRequest:
    return InvalidRequest(
        "An assistant message with 'tool_calls' must be followed by tool messages responding to each "
        f"'tool_call_id'. The following tool_call_ids did not have response messages: {', '.join(ids)}",
        param=f"messages.[{index}].role",
    )


def _check_tools(body: dict[str, Any]) -> None:
    tools = body.get("tools")
    if tools is not None:
        if not isinstance(tools, list):
            raise invalid_type("tools", "an array", tools)
        for j, tool in enumerate(tools):
            param = f"tools[{j}]"
            if not isinstance(tool, dict):
                raise invalid_type(param, "an object", tool)
            if require(tool, "type", str, param) != "function":
                raise invalid_value(f"{param}.type", tool["type"], ("function",))
            function = require(tool, "function", dict, param)
            if "name" not in function:
                raise missing(f"{param}.function.name")
            check_function(
                function["name"], function.get("parameters"), function.get("strict"), f"{param}.function"
            )
    choice = body.get("tool_choice")
    if choice is not None:
        if not tools:
            raise InvalidRequest(
                "Invalid value for 'tool_choice': 'tool_choice' is only allowed when 'tools' are specified.",
                param="tool_choice",
            )
        if isinstance(choice, str) and choice not in TOOL_CHOICES:
            raise invalid_value("tool_choice", choice, TOOL_CHOICES)

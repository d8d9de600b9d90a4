"""A local OpenAI Responses API (``POST /v1/responses``) that validates like the real one.

Besides the fields and their types, it holds the input to the API's tool-call rule: every
``function_call`` item needs a ``function_call_output`` with the same ``call_id`` after it, and every
output answers a call made before it. A ``previous_response_id`` continues a response it stored.
"""

from __future__ import annotations

import itertools
import json
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any, ClassVar

from pydantic_ai.models.openai import OpenAIResponsesModel
from pydantic_ai.providers.openai import OpenAIProvider

from .openai_rules import check_function, check_key, error_body, invalid_type, invalid_value, missing, require
from .scripted import InvalidRequest, Prompt, Reply, ScriptedProvider, ToolResult, text_of

ROLES = ("user", "assistant", "system", "developer")
ITEM_TYPES = ("message", "function_call", "function_call_output", "reasoning")
INPUT_PARTS = ("input_text", "input_image", "input_file")
OUTPUT_PARTS = ("output_text", "refusal")
ID_PREFIXES = {"message": "msg", "function_call": "fc", "reasoning": "rs"}


@dataclass
class FakeResponses(ScriptedProvider):
    path: ClassVar[str] = "/v1/responses"
    model_name: ClassVar[str] = "gpt-4o-mini"
    stored: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    """Each response's whole conversation (input and output items), for ``previous_response_id``."""

    def model(self) -> OpenAIResponsesModel:
        return OpenAIResponsesModel(
            self.model_name, provider=OpenAIProvider(base_url=f"{self.url}/v1", api_key="sk-test")
        )

    def error(self, problem: InvalidRequest) -> dict[str, Any]:
        return error_body(problem)

    def check(self, headers: dict[str, str], body: dict[str, Any]) -> None:
        check_key(headers)
        require(body, "model", str, "")
        previous = body.get("previous_response_id")
        if previous is not None and previous not in self.stored:
            raise InvalidRequest(
                f"Previous response with id '{previous}' not found.",
                param="previous_response_id",
                code="previous_response_not_found",
            )
        raw = require(body, "input", (str, list), "")
        if isinstance(raw, list):
            for j, item in enumerate(raw):
                _check_item(item, f"input[{j}]")
        _check_pairs(self.conversation(body))
        _check_tools(body)

    def conversation(self, body: dict[str, Any]) -> list[dict[str, Any]]:
        """The whole input: what ``previous_response_id`` continues, then this request's items."""
        raw = body["input"]
        items = [{"type": "message", "role": "user", "content": raw}] if isinstance(raw, str) else raw
        return [*self.stored.get(body.get("previous_response_id") or "", []), *items]

    def prompt(self, body: dict[str, Any]) -> Prompt:
        items = self.conversation(body)
        names = {item["call_id"]: item["name"] for item in items if _type(item) == "function_call"}
        last_output = max(
            (
                i
                for i, item in enumerate(items)
                if _type(item) == "function_call" or item.get("role") == "assistant"
            ),
            default=-1,
        )
        results = tuple(
            ToolResult(names[item["call_id"]], text_of(item["output"]))
            for item in items[last_output + 1 :]
            if _type(item) == "function_call_output"
        )
        user_texts = [text_of(item["content"]) for item in items if item.get("role") == "user"]
        tools = tuple(t["name"] for t in body.get("tools") or [] if t.get("type") == "function")
        return Prompt(user_text=user_texts[-1] if user_texts else "", results=results, tools=tools)

    def render(self, body: dict[str, Any], reply: Reply) -> dict[str, Any]:
        output: list[dict[str, Any]]
        if isinstance(reply, str):
            output = [
                {
                    "type": "message",
                    "id": f"msg_{uuid.uuid4().hex}",
                    "role": "assistant",
                    "status": "completed",
                    "content": [{"type": "output_text", "text": reply, "annotations": [], "logprobs": []}],
                }
            ]
        else:
            output = [
                {
                    "type": "function_call",
                    "id": f"fc_{uuid.uuid4().hex}",
                    "call_id": f"call_{uuid.uuid4().hex[:24]}",
                    "name": call.name,
                    "arguments": json.dumps(call.args),
                    "status": "completed",
                }
                for call in reply
            ]
        response_id = f"resp_{uuid.uuid4().hex}"
        if body.get("store", True):
            self.stored[response_id] = [*self.conversation(body), *output]
        return {
            "id": response_id,
            "object": "response",
            "created_at": int(time.time()),
            "status": "completed",
            "error": None,
            "incomplete_details": None,
            "instructions": body.get("instructions"),
            "model": body["model"],
            "output": output,
            "parallel_tool_calls": True,
            "previous_response_id": body.get("previous_response_id"),
            "store": body.get("store", True),
            "temperature": 1.0,
            "tool_choice": body.get("tool_choice", "auto"),
            "tools": body.get("tools", []),
            "top_p": 1.0,
            "truncation": "disabled",
            "usage": {
                "input_tokens": 20,
                "input_tokens_details": {"cached_tokens": 0},
                "output_tokens": 5,
                "output_tokens_details": {"reasoning_tokens": 0},
                "total_tokens": 25,
            },
        }

    def events(self, response: dict[str, Any]) -> Iterator[tuple[str | None, Any]]:
        numbers = itertools.count()

        def event(kind: str, **data: Any) -> tuple[str, dict[str, Any]]:
            return kind, {"type": kind, "sequence_number": next(numbers), **data}

        started = response | {"status": "in_progress", "output": [], "usage": None}
        yield event("response.created", response=started)
        for n, item in enumerate(response["output"]):
            at = {"output_index": n, "item_id": item["id"]}
            if item["type"] == "message":
                yield event("response.output_item.added", output_index=n, item=item | {"content": []})
                for k, part in enumerate(item["content"]):
                    yield event(
                        "response.content_part.added", **at, content_index=k, part=part | {"text": ""}
                    )
                    yield event(
                        "response.output_text.delta", **at, content_index=k, delta=part["text"], logprobs=[]
                    )
                    yield event(
                        "response.output_text.done", **at, content_index=k, text=part["text"], logprobs=[]
                    )
                    yield event("response.content_part.done", **at, content_index=k, part=part)
            else:
                yield event("response.output_item.added", output_index=n, item=item | {"arguments": ""})
                yield event("response.function_call_arguments.delta", **at, delta=item["arguments"])
                yield event("response.function_call_arguments.done", **at, arguments=item["arguments"])
            yield event("response.output_item.done", output_index=n, item=item)
        yield event("response.completed", response=response)


def _type(item: dict[str, Any]) -> str | None:
    """An item's type; a bare ``{"role", "content"}`` is a message."""
    return item.get("type", "message" if "role" in item else None)


def _check_item(item: Any, param: str) -> None:
    if not isinstance(item, dict):
        raise invalid_type(param, "an object", item)
    kind = _type(item)
    if kind is None:
        raise missing(f"{param}.type")
    if kind not in ITEM_TYPES:
        raise invalid_value(f"{param}.type", kind, ITEM_TYPES)
    if "id" in item and kind in ID_PREFIXES:
        item_id = require(item, "id", str, param)
        if not item_id.startswith(ID_PREFIXES[kind]):
            raise InvalidRequest(
                f"Invalid '{param}.id': '{item_id}'. Expected an ID that begins with '{ID_PREFIXES[kind]}'.",
                param=f"{param}.id",
                code="invalid_value",
            )
    if kind == "message":
        role = require(item, "role", str, param)
        if role not in ROLES:
            raise invalid_value(f"{param}.role", role, ROLES)
        content = require(item, "content", (str, list), param)
        if isinstance(content, list):
            allowed = OUTPUT_PARTS if role == "assistant" else INPUT_PARTS
            for k, part in enumerate(content):
                part_param = f"{param}.content[{k}]"
                if not isinstance(part, dict):
                    raise invalid_type(part_param, "an object", part)
                if require(part, "type", str, part_param) not in allowed:
                    raise invalid_value(f"{part_param}.type", part["type"], allowed)
                if part["type"] in ("input_text", "output_text"):
                    require(part, "text", str, part_param)
    elif kind == "function_call":
        require(item, "call_id", str, param)
        require(item, "name", str, param)
        require(item, "arguments", str, param)
    elif kind == "function_call_output":
        require(item, "call_id", str, param)
        require(item, "output", (str, list), param)


def _check_pairs(items: list[dict[str, Any]]) -> None:
    """Each ``function_call`` has a ``function_call_output`` after it, and each output a call before it."""
    calls: list[str] = []
    answered: set[str] = set()
    for item in items:
        if _type(item) == "function_call":
            calls.append(item["call_id"])
        elif _type(item) == "function_call_output":
            if item["call_id"] not in calls:
                raise InvalidRequest(
                    f"No tool call found for function call output with call_id {item['call_id']}.",
                    param="input",
                )
            answered.add(item["call_id"])
    for call_id in calls:
        if call_id not in answered:
            raise InvalidRequest(f"No tool output found for function call {call_id}.", param="input")


def _check_tools(body: dict[str, Any]) -> None:
    tools = body.get("tools")
    if tools is None:
        return
    if not isinstance(tools, list):
        raise invalid_type("tools", "an array", tools)
    for j, tool in enumerate(tools):
        param = f"tools[{j}]"
        if not isinstance(tool, dict):
            raise invalid_type(param, "an object", tool)
        if require(tool, "type", str, param) == "function":
            if "name" not in tool:
                raise missing(f"{param}.name")
            # Unlike Chat Completions, a function tool here is strict unless it says otherwise.
            check_function(tool["name"], tool.get("parameters"), tool.get("strict", True), param)

"""What a declared schema's ``pattern`` may cost: its compilation when declared, and its matching on
each answer and each call's arguments, with neither blocking the API nor the worker."""

from __future__ import annotations

import asyncio
import json
import random
import time
from collections.abc import Awaitable
from typing import Any, TypeVar

import pytest
from pydantic_ai.messages import (
    ModelMessage,
    ModelResponse,
    RetryPromptPart,
    TextPart,
    ToolCallPart,
    ToolReturnPart,
)
from pydantic_ai.models.function import AgentInfo, FunctionModel

from tests.api.test_client_tools import LOCATION, declare, declared, tool
from tests.support import JWT_SECRET, Harness
from truloop_assistant.auth import issue_token
from truloop_assistant.protocol.declarations import Declaration, DeclaredTool
from truloop_assistant.store.device_declarations import ClientTools

T = TypeVar("T")

COSTLY = r"\p{L}{150}\p{N}{150}z"
"""Two Unicode classes in counted repetitions: tens of milliseconds to compile, seconds to match."""
SLOW = r"a.{100}c"
"""Small and within every bound, yet slow on a long string that keeps it guessing (many a's)."""
GENEROUS_S = 5.0
"""What a request may take on a loaded machine: far under the seconds each stall took."""


def costly_schema(count: int = 357, *, salt: int = 0) -> dict[str, Any]:
    """A result schema of ``count`` different costly patterns (one each would be compiled once); each
    ``salt`` (up to 849) gives others, as large."""
    costly = COSTLY.replace("{N}{150}", f"{{N}}{{{150 + salt}}}")
    fields = {f"{i:x}": {"pattern": f"{costly}{i:x}"} for i in range(count)}
    return {"type": "object", "properties": fields}


def reading(**changes: Any) -> dict[str, Any]:
    """A read-only declared tool (no confirmation dialog) whose result is a ``code`` or ``codes``."""
    code = {"type": "string", "pattern": SLOW}
    result = {"type": "object", "properties": {"code": code, "codes": {"type": "array", "items": code}}}
    return tool(name="read_code", method="code.read", parameters={"type": "object"}, result=result) | changes


def guessing(chars: int) -> str:
    """``chars`` of a's and b's: every a might start a match of ``SLOW``, none does."""
    rng = random.Random(7)
    return "".join(rng.choice("ab") for _ in range(chars))


def unicode_answer(call_id: str, result: Any) -> bytes:
    """A tool-message body with ``result``, its text as UTF-8 (not ``\\u`` escapes)."""
    return json.dumps({"jsonrpc": "2.0", "id": call_id, "result": result}, ensure_ascii=False).encode()


async def timed(request: Awaitable[T]) -> tuple[T, float]:
    began = time.perf_counter()
    response = await request
    return response, time.perf_counter() - began


def calls_once(name: str, args: dict[str, Any] | None = None) -> FunctionModel:
    """Calls ``name`` once when asked to "go" (``args`` beside the notification); says "hi" otherwise,
    and what the call's retry said once there is one."""

    def fn(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        last = messages[-1].parts
        if retry := next((p for p in last if isinstance(p, RetryPromptPart)), None):
            return ModelResponse(parts=[TextPart(f"retry: {retry.model_response()}")])
        if returned := next((p for p in last if isinstance(p, ToolReturnPart)), None):
            said = f"retry: {returned.content}" if returned.outcome == "retried" else "done"
            return ModelResponse(parts=[TextPart(said)])
        said = next((p.content for m in messages for p in m.parts if p.part_kind == "user-prompt"), "")
        if "go" in str(said):
            call = {"notification_message": "Working…", **(args or {})}
            return ModelResponse(parts=[ToolCallPart(name, call)])
        return ModelResponse(parts=[TextPart("hi")])

    return FunctionModel(fn)


async def keep_before_the_bounds(h: Harness, declared_tool: dict[str, Any]) -> None:
    """A declaration as the store keeps it, made before patterns were bounded."""
    await ClientTools(h.redis).put("jeff", Declaration(tools=[DeclaredTool.model_validate(declared_tool)]))


async def test_costly_patterns_are_refused_when_declared_while_health_answers(start_server: Any) -> None:
    schema = costly_schema()
    assert len(json.dumps(schema, separators=(",", ":"))) <= 16 * 1024
    async with start_server() as h:
        assert (await declare(h, {"tools": [LOCATION]})).status_code == 200
        (r, _), (health, health_in) = await asyncio.gather(
            timed(declare(h, {"tools": [tool(result=schema)]})), timed(h.http.get("/healthz"))
        )
        assert r.status_code == 422, r.text
        error = r.json()["error"]
        assert error["code"] == "invalid_schema", error
        assert "tools[0].result" in error["message"] and COSTLY in error["message"], error
        assert "{150}" in error["message"] and "100" in error["message"], error
        assert health.status_code == 200 and health_in < GENEROUS_S, health_in

        # Eight different ones at once are all refused, each at once.
        bodies = [{"tools": [tool(result=costly_schema(salt=salt))]} for salt in range(1, 9)]
        eight = await asyncio.gather(*(timed(declare(h, body)) for body in bodies))
        assert all(r.status_code in (422, 429) for r, _ in eight), [r.text for r, _ in eight]
        assert max(took for _, took in eight) < GENEROUS_S, [took for _, took in eight]
        assert await declared(h) == {"tools": [LOCATION]}


def with_patterns(*patterns: str) -> dict[str, Any]:
    return {
        "type": "object",
        "properties": {f"f{i}": {"type": "string", "pattern": p} for i, p in enumerate(patterns)},
    }


REFUSED: list[tuple[str, dict[str, Any], str]] = [
    ("a counted repetition over 100", with_patterns(r"^\d{101}$"), "{101}"),
    (
        "a long pattern",
        with_patterns("^(" + "|".join(f"w{i:03}" for i in range(70)) + ")$"),
        "256 characters",
    ),
    ("nested repetitions", with_patterns(r"^((ab){50}){50}$"), "costs"),
    ("a Unicode class counted", with_patterns(r"^[\p{L}\p{N}]{1,64}$"), "costs"),
    ("many patterns", with_patterns(*(f"^x{i}$" for i in range(33))), "32 patterns"),
    (
        "a costly patternProperties key",
        {"type": "object", "patternProperties": {r"\p{L}{150}": {}}},
        "{150}",
    ),
    (
        "costly through $ref",
        {
            "type": "object",
            "$defs": {"name": {"type": "string", "pattern": r"^\p{L}\p{L}+[\p{L}\p{N} ]+$"}},
            "properties": {f"f{i}": {"$ref": "#/$defs/name"} for i in range(30)},
        },
        "with every $ref expanded",
    ),
]


async def test_each_costly_pattern_is_refused_with_what_to_change(start_server: Any) -> None:
    async with start_server() as h:
        assert (await declare(h, {"tools": [LOCATION]})).status_code == 200
        for case, schema, said in REFUSED:
            r = await declare(h, {"tools": [tool(result=schema)]})
            assert r.status_code == 422, (case, r.text)
            error = r.json()["error"]
            assert error["code"] == "invalid_schema" and said in error["message"], (case, error)
            assert "tools[0].result (get_current_location)" in error["message"], (case, error)

        # Patterns over several tools add up: each schema is within its bound, the declaration is not.
        many = [tool(name=f"tool_{i}", result=with_patterns(r"^\p{L}+ \p{L}+ \p{L}+$")) for i in range(32)]
        r = await declare(h, {"tools": many})
        assert r.status_code == 422 and r.json()["error"]["code"] == "invalid_schema", r.text
        assert "the declaration's patterns" in r.json()["error"]["message"], r.text
        assert await declared(h) == {"tools": [LOCATION]}

        # The patterns apps use are taken.
        usual = with_patterns(
            r"^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$",
            r"^[^@\s]+@[^@\s]+\.[^@\s]+$",
            r"^\d{4}-\d{2}-\d{2}$",
            r"^\+?[0-9]{7,15}$",
            r"^[\p{L} .'-]+$",
            r"^https?://",
            SLOW,
        )
        assert (await declare(h, {"tools": [tool(result=usual, parameters=usual)]})).status_code == 200


@pytest.mark.parametrize("draft", [None, "http://json-schema.org/draft-04/schema#"])
async def test_a_long_answer_against_a_pattern_is_refused_at_once_and_the_call_stays_pending(
    start_server: Any, draft: str | None
) -> None:
    declared_tool = reading()
    if draft is not None:  # a draft without if/then
        declared_tool["result"] = {"$schema": draft, **declared_tool["result"]}
    async with start_server(model=calls_once("read_code")) as h:
        assert (await declare(h, {"tools": [declared_tool]})).status_code == 200
        await h.user_says("go")
        [rpc] = await h.rpc_requests(1)

        # 249 KiB that the pattern would take a second to reject: not matched, refused at once.
        long = guessing(249 * 1024)
        (r, answered_in), (health, health_in) = await asyncio.gather(
            timed(h.answer(rpc["id"], result={"code": long})), timed(h.http.get("/healthz"))
        )
        assert r.status_code == 422 and r.json()["error"]["code"] == "invalid_result", r.text
        message = r.json()["error"]["message"]
        assert "code" in message and "at most 1000 characters" in message, message
        assert len(message) < 1000  # the answer is not repeated back
        assert health.status_code == 200
        assert answered_in < GENEROUS_S and health_in < GENEROUS_S, (answered_in, health_in)

        # Many strings each short enough add up: past the work a check may take, refused unchecked.
        r, answered_in = await timed(h.answer(rpc["id"], result={"codes": [guessing(999)] * 250}))
        assert r.status_code == 422 and "too large to check" in r.text, r.text
        assert answered_in < GENEROUS_S

        # Still pending: a fitting answer is taken.
        assert (await h.answer(rpc["id"], result={"code": "a" + "b" * 100 + "c"})).status_code == 202
        [reply] = await h.replies(1)
        assert reply.text == "done"


async def test_an_answer_against_a_costly_pattern_kept_from_before_is_refused_without_matching(
    start_server: Any,
) -> None:
    async with start_server(model=calls_once("read_code")) as h:
        result = {"type": "object", "properties": {"code": {"type": "string", "pattern": COSTLY}}}
        await keep_before_the_bounds(h, reading(result=result))
        await h.user_says("go")
        [rpc] = await h.rpc_requests(1)
        hangul = unicode_answer(rpc["id"], {"code": "가" * 85_000})  # 249 KiB as UTF-8
        (r, answered_in), (health, health_in) = await asyncio.gather(
            timed(h.post_tool_message(hangul, token=issue_token(JWT_SECRET, "jeff"))),
            timed(h.http.get("/healthz")),
        )
        assert r.status_code == 422, r.text
        message = r.json()["error"]["message"]
        assert "cannot be used" in message and "{150}" in message, message
        assert health.status_code == 200
        assert answered_in < GENEROUS_S and health_in < GENEROUS_S, (answered_in, health_in)
        # Every answer gets the same refusal, as quickly: the call waits until it expires.
        for _ in range(3):
            r, answered_in = await timed(h.post_tool_message(hangul, token=issue_token(JWT_SECRET, "jeff")))
            assert r.status_code == 422 and answered_in < GENEROUS_S, (r.text, answered_in)


async def test_a_call_to_a_declared_tool_with_costly_parameters_leaves_other_turns_answered(
    start_server: Any,
) -> None:
    parameters = costly_schema()
    async with start_server(model=calls_once("read_code")) as h:
        await keep_before_the_bounds(h, reading(parameters=parameters))
        await h.user_says("go")
        _, mina_in = await timed(answered(h, "hello", user="mina", channel="ch-2"))
        assert mina_in < GENEROUS_S, mina_in
        [reply] = await h.replies(1)
        assert reply.text.startswith("retry: ") and "cannot be used" in reply.text, reply.text
        assert "{150}" in reply.text, reply.text


async def test_a_long_argument_against_a_declared_pattern_goes_back_to_the_model_at_once(
    start_server: Any,
) -> None:
    parameters = {"type": "object", "properties": {"code": {"type": "string", "pattern": SLOW}}}
    model = calls_once("read_code", {"code": guessing(249 * 1024)})
    async with start_server(model=model) as h:
        assert (await declare(h, {"tools": [reading(parameters=parameters)]})).status_code == 200
        await h.user_says("go")
        _, mina_in = await timed(answered(h, "hello", user="mina", channel="ch-2"))
        assert mina_in < GENEROUS_S, mina_in
        [reply] = await h.replies(1)
        assert reply.text.startswith("retry: ") and "at most 1000 characters" in reply.text, reply.text
        assert len(reply.text) < 2000, len(reply.text)  # the argument is not repeated back to the model


async def answered(h: Harness, text: str, *, user: str, channel: str) -> None:
    """``user`` says ``text`` and gets an answer."""
    await h.user_says(text, user=user, channel=channel)
    [reply] = await h.replies(1, channel=channel, timeout=60)
    assert reply.text == "hi"

"""What app-declared device tools may cost: the work a schema asks per answer, and what a person's
devices add to every model request of their turns."""

from __future__ import annotations

import asyncio
import json
import time
from typing import Any

import httpx
from pydantic_ai.messages import ModelMessage, ModelResponse, TextPart, ToolCallPart
from pydantic_ai.models.function import AgentInfo, FunctionModel

from tests.api.test_client_tools import LOCATION, auth, declare, declared, tool
from tests.support import Harness
from truloop_assistant.protocol.check_work import MAX_CHECK_WORK
from truloop_assistant.protocol.declarations import DeclaredTool
from truloop_assistant.protocol.schema_limits import schema_cost
from truloop_assistant.store import keys
from truloop_assistant.tools import tool_names

PATH = "/api/v1/agent/client-tools"


def multiplying(levels: int, keyword: str = "oneOf") -> dict[str, Any]:
    """Each level offers two branches that both lead to the next: 2**levels checks of one value."""
    defs = {
        f"d{i}": {keyword: [{"$ref": f"#/$defs/d{i + 1}"}, {"$ref": f"#/$defs/d{i + 1}", "minimum": i}]}
        for i in range(levels)
    }
    defs[f"d{levels}"] = {"type": "number"}
    return {"type": "object", "$defs": defs, "properties": {"x": {"$ref": "#/$defs/d0"}}}


async def test_a_schema_that_multiplies_work_is_refused_when_declared(start_server: Any) -> None:
    bomb = multiplying(17)
    assert len(json.dumps(bomb)) < 2500  # small: far under the size limit
    recursive = {
        "type": "object",
        "$defs": {"node": {"type": "object", "properties": {"next": {"$ref": "#/$defs/node"}}}},
        "properties": {"head": {"$ref": "#/$defs/node"}},
    }
    combinators = {"type": "object", "properties": {f"p{i}": {"anyOf": [{}, {}]} for i in range(100)}}
    # Shallow as JSON, 40 levels of data once its $refs are followed.
    chain = {
        f"d{i}": {"type": "object", "properties": {"a": {"$ref": f"#/$defs/d{i + 1}"}}} for i in range(40)
    }
    deep = {"type": "object", "$defs": {**chain, "d40": {"type": "string"}}, "$ref": "#/$defs/d0"}
    refused = [
        ("result bomb", tool(result=bomb), "tools[0].result"),
        ("parameters bomb", tool(parameters=bomb), "tools[0].parameters"),
        ("anyOf bomb", tool(result=multiplying(17, "anyOf")), "tools[0].result"),
        ("recursive", tool(result=recursive), "recursive"),
        ("remote", tool(result={"$ref": "https://example.com/s.json"}), "#/"),
        ("many combinators", tool(result=combinators), "oneOf/anyOf/allOf/not/if"),
        ("deep", tool(result=deep), "deep"),
    ]
    async with start_server() as h:
        assert (await declare(h, {"tools": [LOCATION]})).status_code == 200
        for case, declared_tool, said in refused:
            r = await declare(h, {"tools": [declared_tool]})
            assert r.status_code == 422, (case, r.text)
            error = r.json()["error"]
            assert error["code"] == "invalid_schema" and said in error["message"], (case, error)
        assert await declared(h) == {"tools": [LOCATION]}

        # A schema that uses $ref and combinators within the bounds is still taken.
        fine = {
            "type": "object",
            "$defs": {"point": {"type": "object", "properties": {"lat": {"type": "number"}}}},
            "properties": {
                "from": {"$ref": "#/$defs/point"},
                "to": {"oneOf": [{"$ref": "#/$defs/point"}, {"type": "null"}]},
            },
        }
        assert (await declare(h, {"tools": [tool(parameters=fine, result=fine)]})).status_code == 200


def calls_once(name: str) -> FunctionModel:
    """Calls ``name`` once, then says how the call ended."""

    def fn(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        if any(p.part_kind == "tool-return" for p in messages[-1].parts):
            return ModelResponse(parts=[TextPart("done")])
        return ModelResponse(parts=[ToolCallPart(name, {"notification_message": "Working…"})])

    return FunctionModel(fn)


def costliest_accepted() -> dict[str, Any]:
    """A result schema near the cost bound, of the keyword slowest per step (``const`` under ``anyOf``)."""
    return {"type": "array", "items": {"anyOf": [{"const": i} for i in range(1000)]}}


async def test_the_costliest_accepted_schema_checks_an_answer_quickly_while_health_answers(
    start_server: Any,
) -> None:
    schema = costliest_accepted()
    heavy = {
        "name": "get_readings",
        "description": "The sensor readings",
        "method": "sensor.read",
        "read_only": True,
    }
    heavy |= {"parameters": {"type": "object"}, "result": schema}
    async with start_server(model=calls_once("get_readings")) as h:
        r = await declare(h, {"tools": [heavy]})
        assert r.status_code == 200, r.text
        await h.user_says("read the sensors")
        [rpc] = await h.rpc_requests(1)

        async def timed(request: Any) -> tuple[httpx.Response, float]:
            began = time.perf_counter()
            response = await request
            return response, time.perf_counter() - began

        # As many values as the schema's cost allows, each fitting only its last branch, and the
        # last one fitting none: every step of the check is taken before it fails.
        most = MAX_CHECK_WORK // schema_cost(schema) - 2
        answer: list[Any] = [999] * (most - 1) + ["x"]
        (refused, answered_in), (health, health_in) = await asyncio.gather(
            timed(h.answer(rpc["id"], result=answer)), timed(h.http.get("/healthz"))
        )
        assert refused.status_code == 422 and "anyOf" in refused.text, refused.text
        assert health.status_code == 200
        # Bounded work: 0.5-0.8 s on a quiet 2-core machine (check_work.MAX_CHECK_WORK); the bounds
        # here are generous for a shared machine running the suite in parallel.
        assert answered_in < 3.0 and health_in < 3.0, (answered_in, health_in)

        # A larger answer is refused without being checked: 256 KiB of values.
        r, answered_in = await timed(h.answer(rpc["id"], result=[1] * 60_000))
        assert r.status_code == 422 and "too large to check" in r.text, r.text
        assert answered_in < 1.0

        # Still pending: a fitting answer is taken.
        assert (await h.answer(rpc["id"], result=[1, 2])).status_code == 202
        await h.replies(1)


def sized(name: str, chars: int) -> dict[str, Any]:
    """A declared tool whose definition takes about ``chars`` characters of each model request."""
    return tool(name=name, description="d" * 500, parameters={"type": "object", "description": "x" * chars})


async def test_a_persons_devices_together_add_a_bounded_amount_to_each_model_request(
    start_server: Any,
) -> None:
    async with start_server() as h:
        phone = {"device_id": "phone", "tools": [sized(f"phone_{i}", 800) for i in range(32)]}
        assert (await declare(h, phone)).status_code == 200
        # The same tools from another device count once.
        assert (await declare(h, {**phone, "device_id": "tablet"})).status_code == 200
        # Another 32 tools of that size would pass the total size.
        tablet = {"device_id": "tablet", "tools": [sized(f"tablet_{i}", 800) for i in range(32)]}
        r = await declare(h, tablet)
        assert r.status_code == 422, r.text
        error = r.json()["error"]
        assert error["code"] == "too_many_declared_tools" and "65536" in error["message"], error
        # Small ones fit until the count is reached.
        small = {"device_id": "tablet", "tools": [tool(name=f"tablet_{i}") for i in range(32)]}
        assert (await declare(h, small)).status_code == 200
        one_more = {"device_id": "watch", "tools": [tool(name="watch_0")]}
        r = await declare(h, one_more)
        assert r.status_code == 422 and "64 tools" in r.json()["error"]["message"], r.text
        # The refused declarations left the ones before them in place.
        r = await h.http.get(PATH, params={"device_id": "tablet"}, headers=auth("jeff"))
        assert r.json() == small
        r = await h.http.get(PATH, params={"device_id": "watch"}, headers=auth("jeff"))
        assert r.json() == {"tools": []}


async def test_stored_declarations_over_the_bound_are_offered_only_up_to_it(start_server: Any) -> None:
    seen: list[AgentInfo] = []

    def fn(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        seen.append(info)
        return ModelResponse(parts=[TextPart("ok")])

    async with start_server(model=FunctionModel(fn)) as h:
        # Kept before the bound existed: three devices with 32 large tools each.
        for device in ("a", "b", "c"):
            tools = [sized(f"{device}_{i}", 3000) for i in range(32)]
            body = {"device_id": device, "tools": tools}
            await write_stored(h, device, json.dumps(body))
        await h.user_says("hello")
        await h.replies(1)
        offered = [t for t in seen[-1].function_tools if t.name not in tool_names()]
        assert 0 < len(offered) <= 64
        size = sum(len(json.dumps(definition(t), separators=(",", ":"))) for t in offered)
        assert size <= 64 * 1024, size
        # The newest device's tools come first.
        assert {t.name for t in offered} >= {f"c_{i}" for i in range(10)}
        assert not any(t.name.startswith("a_") for t in offered)


def definition(t: Any) -> dict[str, Any]:
    return {"name": t.name, "description": t.description, "parameters": t.parameters_json_schema}


async def write_stored(h: Harness, device: str, body: str) -> None:
    """A device's declaration as the store keeps it, written as it was before any total was checked."""
    DeclaredTool.model_validate(json.loads(body)["tools"][0])  # a real declaration
    await h.redis.hset(keys.client_tools("jeff"), device, f"{time.time()!r}|{body}")

"""App-declared device tools: ``PUT/GET/DELETE /api/v1/agent/client-tools`` and turns that use them."""

from __future__ import annotations

import json
import time
from typing import Any

import httpx
from pydantic_ai.messages import (
    ModelMessage,
    ModelResponse,
    RetryPromptPart,
    TextPart,
    ToolCallPart,
    ToolReturnPart,
)
from pydantic_ai.models.function import AgentInfo, FunctionModel

from tests.support import JWT_SECRET, LOCATION_TOOL, ON_STANDALONE_AND_CLUSTER, Harness, signed_in_again
from truloop_assistant.auth import issue_token
from truloop_assistant.protocol.declarations import Declaration, DeclaredTool
from truloop_assistant.store.device_declarations import ClientTools

PATH = "/api/v1/agent/client-tools"

LOCATION = LOCATION_TOOL
CITY_HALL = {"latitude": 37.5663, "longitude": 126.9779, "label": "Seoul City Hall"}


def auth(user: str) -> dict[str, str]:
    return {"authorization": f"Bearer {issue_token(JWT_SECRET, user)}"}


async def declare(h: Harness, body: Any, *, user: str = "jeff") -> httpx.Response:
    content = body if isinstance(body, bytes) else json.dumps(body).encode()
    return await h.http.put(PATH, content=content, headers={**auth(user), "content-type": "application/json"})


async def declared(h: Harness, user: str = "jeff") -> Any:
    r = await h.http.get(PATH, headers=auth(user))
    assert r.status_code == 200, r.text
    return r.json()


def tool(**changes: Any) -> dict[str, Any]:
    return {**LOCATION, **changes}


async def test_declare_read_replace_and_remove(start_server: Any) -> None:
    async with start_server() as h:
        assert await declared(h) == {"tools": []}
        r = await declare(h, {"tools": [LOCATION], "builtin": ["calendar.getEvents"]})
        assert r.status_code == 200 and r.json() == {"status": "ok", "tools": 1}
        assert int(r.headers["x-ratelimit-remaining"]) >= 0
        assert await declared(h) == {"tools": [LOCATION], "builtin": ["calendar.getEvents"]}

        second = tool(name="scan_qr_code", method="camera.scanQr", parameters={"type": "object"})
        del second["result"]
        assert (await declare(h, {"tools": [second]})).json() == {"status": "ok", "tools": 1}
        assert await declared(h) == {"tools": [second]}  # replaced; builtin absent: all of them

        assert (await h.http.delete(PATH, headers=auth("jeff"))).status_code == 204
        assert await declared(h) == {"tools": []}
        assert (await h.http.get(PATH)).status_code == 401


BAD: list[tuple[str, Any, int, str, str]] = [
    ("not JSON", b"{tools", 400, "invalid_json", "JSON"),
    ("no tools", {"builtin": []}, 400, "invalid_declaration", "tools"),
    ("too many", {"tools": [tool(name=f"tool_{i}") for i in range(33)]}, 400, "invalid_declaration", "32"),
    ("bad name", {"tools": [tool(name="GetLocation")]}, 400, "invalid_declaration", "tools.0.name"),
    ("bad method", {"tools": [tool(method="locate")]}, 400, "invalid_declaration", "tools.0.method"),
    ("twice", {"tools": [LOCATION, LOCATION]}, 400, "invalid_declaration", "get_current_location"),
    (
        "schema over 16 KiB",
        {"tools": [tool(parameters={"type": "object", "description": "x" * 17000})]},
        400,
        "invalid_declaration",
        "16384",
    ),
    ("server tool", {"tools": [tool(name="create_event")]}, 409, "tool_name_taken", "create_event"),
    ("device tool", {"tools": [tool(name="get_calendar_events")]}, 409, "tool_name_taken", "get_calendar"),
    ("built-in method", {"tools": [tool(method="interaction.confirm")]}, 409, "method_taken", "builtin"),
    (
        "not JSON Schema",
        {"tools": [tool(parameters={"type": "object", "properties": {"a": {"type": "integr"}}})]},
        422,
        "invalid_schema",
        "tools[0].parameters",
    ),
    (
        "bad regex",
        {"tools": [tool(result={"pattern": "(unclosed"})]},
        422,
        "invalid_schema",
        "tools[0].result",
    ),
    ("not an object", {"tools": [tool(parameters={"type": "array"})]}, 422, "invalid_schema", '"object"'),
    (
        "notification declared",
        {"tools": [tool(parameters={"type": "object", "properties": {"notification_message": {}}})]},
        422,
        "invalid_schema",
        "notification_message",
    ),
    ("over 1 MiB", b'{"tools": [], "x": "' + b"y" * (1024 * 1024) + b'"}', 413, "payload_too_large", "bytes"),
]


async def test_bad_declarations_get_precise_errors_and_keep_the_previous_one(start_server: Any) -> None:
    async with start_server() as h:
        assert (await declare(h, {"tools": [LOCATION]})).status_code == 200
        for case, body, status, code, where in BAD:
            r = await declare(h, body)
            assert r.status_code == status, (case, r.text)
            error = r.json()["error"]
            assert error["code"] == code and where in error["message"], (case, error)
        assert await declared(h) == {"tools": [LOCATION]}  # no rejected PUT touched it
        r = await h.http.put(PATH, content=json.dumps({"tools": []}))
        assert r.status_code == 401
        # Another person's mistakes never reach this user's declaration, nor give them one.
        assert (await declare(h, {"tools": [tool(name="X")]}, user="mina")).status_code == 400
        assert await declared(h, "mina") == {"tools": []}
        assert await declared(h) == {"tools": [LOCATION]}


def location_model(seen: list[AgentInfo]) -> FunctionModel:
    """Calls the declared tool (first with arguments that do not fit it), then says what came back."""

    def fn(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        seen.append(info)
        last = messages[-1].parts
        returns = [p for p in last if isinstance(p, ToolReturnPart)]
        if returns and returns[0].outcome != "retried":
            return ModelResponse(parts=[TextPart(f"{returns[0].outcome}: {json.dumps(returns[0].content)}")])
        if "location" not in {t.name.split("_")[-1] for t in info.function_tools}:
            return ModelResponse(parts=[TextPart("I cannot see where you are")])
        retried = any(isinstance(p, RetryPromptPart) or getattr(p, "outcome", "") == "retried" for p in last)
        args = {"notification_message": "Finding you…", "accuracy": "fine" if retried else "exact"}
        return ModelResponse(parts=[ToolCallPart("get_current_location", args)])

    return FunctionModel(fn)


@ON_STANDALONE_AND_CLUSTER
async def test_a_turn_calls_a_declared_tool_on_the_phone(start_server: Any) -> None:
    seen: list[AgentInfo] = []
    async with start_server(model=location_model(seen)) as h:
        assert (await declare(h, {"tools": [LOCATION]})).status_code == 200
        await h.user_says("where am I?")
        [rpc] = await h.rpc_requests(1)
        assert rpc["method"] == "location.getCurrent"
        assert rpc["params"] == {"accuracy": "fine"}  # as called once fixed; notification_message is no param
        offered = next(t for t in seen[0].function_tools if t.name == "get_current_location")
        assert offered.description == LOCATION["description"]
        assert offered.parameters_json_schema["required"] == ["notification_message"]

        r = await h.answer(rpc["id"], result={"latitude": "north", "longitude": 126.9})
        assert r.status_code == 422 and "latitude" in r.json()["error"]["message"]
        r = await h.answer(rpc["id"], result=CITY_HALL)  # still pending: the fixed answer is taken
        assert r.status_code == 202 and r.json() == {"status": "resuming"}
        [reply] = await h.replies(1)
        assert reply.text == f"success: {json.dumps(CITY_HALL)}"

        admin = {"authorization": f"Bearer {issue_token(JWT_SECRET, 'ops', role='admin')}"}
        ledger = (await h.http.get("/api/v1/admin/conversations/ch-1", headers=admin)).json()
        [device] = [c for c in ledger["turns"][0]["calls"] if c["kind"] == "device"]
        assert device["tool"] == "get_current_location" and device["status"] == "success"
        assert device["call_id"] == rpc["id"]

        # Declared for jeff only: mina's turn is not offered the tool.
        seen.clear()
        await h.user_says("where am I?", user="mina", channel="ch-2")
        [mina] = await h.replies(1, channel="ch-2")
        assert mina.text == "I cannot see where you are"


async def test_an_old_app_is_never_offered_a_method_it_lacks(start_server: Any) -> None:
    seen: list[AgentInfo] = []

    def fn(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        seen.append(info)
        return ModelResponse(parts=[TextPart("ok")])

    async with start_server(model=FunctionModel(fn)) as h:
        await h.user_says("hello")
        await h.replies(1)
        everything = {t.name for t in seen[-1].function_tools}
        assert {"get_calendar_events", "confirm_interaction", "create_event"} <= everything

        assert (await declare(h, {"tools": [], "builtin": ["permissions.getStatus"]})).status_code == 200
        await h.user_says("hello again")
        await h.replies(2)
        offered = {t.name for t in seen[-1].function_tools}
        assert "get_permission_status" in offered and "get_current_datetime" in offered
        # No calendar method, and no confirmation dialog: nothing that needs one either.
        assert not offered & {"get_calendar_events", "confirm_interaction", "create_event", "delete_event"}


async def test_a_declaration_older_than_a_server_tool_of_its_name_breaks_nothing(start_server: Any) -> None:
    seen: list[AgentInfo] = []

    def fn(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        seen.append(info)
        return ModelResponse(parts=[TextPart("ok")])

    async with start_server(model=FunctionModel(fn)) as h:
        # Declared when the server had no tool of that name (written as the store writes it).
        clash = Declaration(
            tools=[DeclaredTool.model_validate(tool(name="create_event")), DeclaredTool(**LOCATION)]
        )
        await ClientTools(h.redis).put("jeff", clash)
        await h.user_says("hello")
        [reply] = await h.replies(1)
        assert reply.text == "ok"
        create = [t for t in seen[0].function_tools if t.name == "create_event"]
        assert len(create) == 1 and create[0].description != LOCATION["description"]  # the server's own
        assert "get_current_location" in {t.name for t in seen[0].function_tools}


async def test_erasing_me_drops_the_declaration(start_server: Any) -> None:
    async with start_server() as h:
        assert (await declare(h, {"tools": [LOCATION]})).status_code == 200
        erasing = time.time()
        assert (await h.http.delete("/api/v1/agent/me", headers=auth("jeff"))).status_code == 204
        again = await signed_in_again("jeff", since=erasing)
        r = await h.http.get(PATH, headers={"authorization": f"Bearer {again}"})
        assert r.status_code == 200 and r.json() == {"tools": []}


async def test_the_offline_model_uses_a_declared_tool(start_server: Any) -> None:
    async with start_server() as h:  # the offline model
        assert (await declare(h, {"tools": [LOCATION]})).status_code == 200
        await h.user_says("what is my current location?")
        [rpc] = await h.rpc_requests(1)
        assert rpc["method"] == "location.getCurrent" and rpc["params"] == {}
        assert (await h.answer(rpc["id"], result=CITY_HALL)).status_code == 202
        [reply] = await h.replies(1)
        assert '"label": "Seoul City Hall"' in reply.text  # the result as the app sent it, as JSON


async def test_a_declared_call_is_cut_by_a_newer_message_like_any_device_call(start_server: Any) -> None:
    async with start_server() as h:  # the offline model
        assert (await declare(h, {"tools": [LOCATION]})).status_code == 200
        await h.user_says("what is my current location?")
        [rpc] = await h.rpc_requests(1)
        await h.user_says("never mind")
        await h.replies(1)
        late = await h.answer(rpc["id"], result=CITY_HALL)
        assert late.status_code == 410 and late.json()["error"]["code"] == "call_superseded"


SCAN = {
    "name": "scan_qr_code",
    "description": "Scan a QR code with the camera and return its text.",
    "method": "camera.scanQr",
    "read_only": True,
    "parameters": {"type": "object", "properties": {}},
}


@ON_STANDALONE_AND_CLUSTER
async def test_each_device_keeps_its_own_declaration_and_turns_are_offered_them_all(
    start_server: Any,
) -> None:
    seen: list[AgentInfo] = []

    def fn(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        seen.append(info)
        return ModelResponse(parts=[TextPart("ok")])

    async def offered() -> set[str]:
        await h.user_says("what can you do?")
        await h.idle()
        return {t.name for t in seen[-1].function_tools}

    async with start_server(model=FunctionModel(fn)) as h:
        phone = {"device_id": "phone-1", "tools": [LOCATION], "builtin": ["calendar.getEvents"]}
        tablet = {"device_id": "tablet-1", "tools": [SCAN], "builtin": ["interaction.confirm"]}
        assert (await declare(h, phone)).json() == {"status": "ok", "tools": 1}
        assert (await declare(h, tablet)).json() == {"status": "ok", "tools": 1}

        # The phone's PUT did not replace the tablet's: each reads back its own.
        r = await h.http.get(PATH, params={"device_id": "phone-1"}, headers=auth("jeff"))
        assert r.json() == phone
        r = await h.http.get(PATH, params={"device_id": "tablet-1"}, headers=auth("jeff"))
        assert r.json() == tablet
        assert await declared(h) == {"tools": []}  # no declaration without a device id

        # A turn is offered what any device declared, and the built-in methods any supports.
        tools = await offered()
        assert {"get_current_location", "scan_qr_code", "get_calendar_events", "create_event"} <= tools
        assert "get_permission_status" not in tools  # neither device listed it

        # One device's DELETE removes only its own.
        r = await h.http.delete(PATH, params={"device_id": "tablet-1"}, headers=auth("jeff"))
        assert r.status_code == 204
        tools = await offered()
        assert "get_current_location" in tools and "scan_qr_code" not in tools
        assert "create_event" not in tools  # the phone alone cannot show the confirmation dialog

        too_long = await h.http.get(PATH, params={"device_id": "x" * 129}, headers=auth("jeff"))
        assert too_long.status_code == 400
        bad = await declare(h, {"device_id": "", "tools": []})
        assert bad.status_code == 400 and "device_id" in bad.json()["error"]["message"]

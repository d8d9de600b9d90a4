"""Tools of a real MCP server (the ``mcp`` package's, over Streamable HTTP) in turns through the API."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from typing import Any

import pytest
from pydantic_ai.messages import ModelMessage, ModelResponse, TextPart, ToolCallPart, ToolReturnPart
from pydantic_ai.models.function import AgentInfo, FunctionModel

from tests.api.test_tools_gate import q
from tests.fakes.mcp_server import CrmServer
from tests.support import JWT_SECRET
from truloop_assistant.auth import issue_token
from truloop_assistant.tools import mcp as mcp_tools

ADMIN = {"authorization": f"Bearer {issue_token(JWT_SECRET, 'ops', role='admin')}"}


def replies_with_results(
    plan: Callable[[str, set[str]], list[tuple[str, dict[str, Any]]]], seen: list[set[str]]
) -> FunctionModel:
    """Make the calls ``plan(prompt, offered tools)`` asks for, then answer with their results."""

    def fn(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        tools = {t.name for t in info.function_tools}
        seen.append(tools)
        returns = [p for p in messages[-1].parts if isinstance(p, ToolReturnPart)]
        if returns:
            said = " | ".join(f"{p.tool_name} {p.outcome}: {p.model_response_str()}" for p in returns)
            return ModelResponse(parts=[TextPart(said)])
        prompt = next(p.content for p in messages[-1].parts if p.part_kind == "user-prompt")
        calls = plan(str(prompt), tools)
        if not calls:
            return ModelResponse(parts=[TextPart("no tools for that")])
        return ModelResponse(parts=[ToolCallPart(name, args) for name, args in calls])

    return FunctionModel(fn)


def crm_plan(prompt: str, tools: set[str]) -> list[tuple[str, dict[str, Any]]]:
    if prompt.startswith("find"):
        calls = [("get_current_datetime", {})]
        if "crm_lookup_customer" in tools:
            calls.append(("crm_lookup_customer", {"name": prompt.removeprefix("find ")}))
        return calls
    if prompt.startswith("delete") and "crm_delete_customer" in tools:
        return [("crm_delete_customer", {"customer_id": prompt.removeprefix("delete ")})]
    return []


async def test_an_mcp_tool_runs_and_a_destructive_one_waits_for_the_users_yes(
    start_server: Any, crm: CrmServer
) -> None:
    crm.start()
    seen: list[set[str]] = []
    async with start_server(model=replies_with_results(crm_plan, seen), **crm.settings()) as h:
        await h.user_says("find mina")
        [found] = await h.replies(1)
        assert "crm_lookup_customer success" in found.text and "Mina Park" in found.text
        assert {"crm_lookup_customer", "crm_delete_customer", "create_event"} <= seen[0]
        assert crm.calls() == [{"tool": "lookup_customer", "args": {"name": "mina"}}]

        # Declined in the dialog: the MCP server never sees the call.
        await h.user_says("delete c-17")
        [ask] = await h.rpc_requests(1)
        assert ask["method"] == "interaction.confirm"
        assert "crm delete customer" in ask["params"]["title"]
        message = ask["params"]["message"]
        assert f"customer_id: {q('c-17')}" in message and "Delete a customer and all their data" in message
        assert (await h.answer(ask["id"], result={"confirmed": False})).status_code == 202
        await h.replies(2)
        assert "denied" in h.texts("ch-1")[-1]
        assert [c["tool"] for c in crm.calls()] == ["lookup_customer"]

        # Confirmed: it runs, once.
        await h.user_says("delete c-17")
        [_, ask] = await h.rpc_requests(2)
        assert (await h.answer(ask["id"], result={"confirmed": True})).status_code == 202
        await h.replies(3)
        assert "deleted c-17" in h.texts("ch-1")[-1]
        await h.idle()
        assert [c["tool"] for c in crm.calls()] == ["lookup_customer", "delete_customer"]

        metrics = (await h.http.get("/metrics")).text
        assert (
            'truloop_tool_calls_total{kind="server",status="success",tool="crm_delete_customer"}' in metrics
        )
        ledger = (await h.http.get("/api/v1/admin/conversations/ch-1", headers=ADMIN)).json()
        newest = ledger["turns"][0]["calls"]
        assert {(c["tool"], c["kind"], c["status"]) for c in newest} == {
            ("crm_delete_customer", "approval", "success"),
            ("crm_delete_customer", "server", "success"),
        }


def orders_plan(prompt: str, tools: set[str]) -> list[tuple[str, dict[str, Any]]]:
    if prompt.startswith("orders") and "crm_list_orders" in tools:
        return [("crm_list_orders", {"customer_id": prompt.removeprefix("orders ")})]
    return crm_plan(prompt, tools)


async def test_with_an_allow_list_every_tool_outside_it_waits_for_the_users_yes(
    start_server: Any, crm: CrmServer
) -> None:
    crm.start(orders=True)
    seen: list[set[str]] = []
    settings = crm.settings(confirm=[], no_confirm=["lookup_*"])
    async with start_server(model=replies_with_results(orders_plan, seen), **settings) as h:
        # On the allow-list: it runs at once.
        await h.user_says("find mina")
        [found] = await h.replies(1)
        assert "crm_lookup_customer success" in found.text
        assert not await h.rpc_requests(0)

        # Matched by no pattern at all, and not on the allow-list: it asks, and a no stops it.
        await h.user_says("orders c-17")
        [ask] = await h.rpc_requests(1)
        assert ask["method"] == "interaction.confirm" and "crm list orders" in ask["params"]["title"]
        assert (await h.answer(ask["id"], result={"confirmed": False})).status_code == 202
        await h.replies(2)
        assert "denied" in h.texts("ch-1")[-1]

        await h.user_says("delete c-17")
        [_, ask] = await h.rpc_requests(2)
        assert ask["method"] == "interaction.confirm" and "crm delete customer" in ask["params"]["title"]
        assert (await h.answer(ask["id"], result={"confirmed": True})).status_code == 202
        await h.replies(3)
        assert "deleted c-17" in h.texts("ch-1")[-1]
        await h.idle()
        assert [c["tool"] for c in crm.calls()] == ["lookup_customer", "delete_customer"]


async def test_confirm_patterns_still_apply_beside_an_allow_list(start_server: Any, crm: CrmServer) -> None:
    crm.start()
    seen: list[set[str]] = []
    settings = crm.settings(confirm=["delete_*"], no_confirm=["*_customer"])
    async with start_server(model=replies_with_results(crm_plan, seen), **settings) as h:
        await h.user_says("delete c-17")
        [ask] = await h.rpc_requests(1)
        assert ask["method"] == "interaction.confirm" and "crm delete customer" in ask["params"]["title"]
        assert (await h.answer(ask["id"], result={"confirmed": False})).status_code == 202
        await h.replies(1)
        await h.idle()
        assert crm.calls() == []


def shop_plan(prompt: str, tools: set[str]) -> list[tuple[str, dict[str, Any]]]:
    if prompt.startswith("remove order") and "shop_Delete_order" in tools:
        return [("shop_Delete_order", {"order_id": prompt.removeprefix("remove order ")})]
    if prompt.startswith("orders") and "shop_list_orders" in tools:
        return [("shop_list_orders", {"customer_id": prompt.removeprefix("orders ")})]
    return []


async def test_patterns_match_tool_names_whatever_their_case(start_server: Any, crm: CrmServer) -> None:
    crm.start(orders=True, shop=True)
    seen: list[set[str]] = []
    shop = {"url": crm.url, "prefix": "shop", "confirm": ["delete_*"], "no_confirm": ["LIST_*"]}
    async with start_server(model=replies_with_results(shop_plan, seen), mcp_servers=[shop]) as h:
        await h.user_says("remove order o-1")
        [ask] = await h.rpc_requests(1)
        assert ask["method"] == "interaction.confirm" and f"order_id: {q('o-1')}" in ask["params"]["message"]
        assert (await h.answer(ask["id"], result={"confirmed": False})).status_code == 202
        await h.replies(1)

        await h.user_says("orders c-17")  # on the allow-list, in other letters: it runs at once
        [_, listed] = await h.replies(2)
        assert "shop_list_orders success" in listed.text
        await h.idle()
        assert len(await h.rpc_requests(1)) == 1
        assert [c["tool"] for c in crm.calls()] == ["list_orders"]


async def test_with_no_lists_every_tool_but_a_read_only_one_waits_for_the_users_yes(
    start_server: Any, crm: CrmServer
) -> None:
    crm.start(orders=True)
    seen: list[set[str]] = []
    servers = {"mcp_servers": [{"url": crm.url, "prefix": "crm"}]}
    async with start_server(model=replies_with_results(orders_plan, seen), **servers) as h:
        # The server marks lookup_customer read-only (readOnlyHint): it runs at once.
        await h.user_says("find mina")
        [found] = await h.replies(1)
        assert "crm_lookup_customer success" in found.text

        for n, (said, title) in enumerate(
            [("delete c-17", "crm delete customer"), ("orders c-17", "crm list orders")], start=1
        ):
            await h.user_says(said)
            asks = await h.rpc_requests(n)
            assert asks[-1]["method"] == "interaction.confirm" and title in asks[-1]["params"]["title"]
            assert (await h.answer(asks[-1]["id"], result={"confirmed": False})).status_code == 202
            await h.replies(n + 1)
        await h.idle()
        assert [c["tool"] for c in crm.calls()] == ["lookup_customer"]


async def test_a_confirm_pattern_asks_even_for_a_tool_marked_read_only(
    start_server: Any, crm: CrmServer
) -> None:
    crm.start()
    settings = crm.settings(confirm=["Lookup_*"])
    async with start_server(model=replies_with_results(crm_plan, []), **settings) as h:
        await h.user_says("find mina")
        [ask] = await h.rpc_requests(1)
        assert ask["method"] == "interaction.confirm" and "crm lookup customer" in ask["params"]["title"]
        assert (await h.answer(ask["id"], result={"confirmed": False})).status_code == 202
        await h.replies(1)
        await h.idle()
        assert crm.calls() == []


async def test_a_server_that_is_down_costs_only_its_own_tools_and_comes_back(
    start_server: Any, crm: CrmServer, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    monkeypatch.setattr(mcp_tools, "RETRY_DOWN_S", 0.0)  # ask a down server again at every turn
    caplog.set_level(logging.INFO, logger="truloop_assistant.tools.mcp")
    seen: list[set[str]] = []
    async with start_server(model=replies_with_results(crm_plan, seen), **crm.settings()) as h:
        # Down at start: the turn goes on without the server's tools.
        await h.user_says("find mina")
        [first] = await h.replies(1)
        assert "get_current_datetime success" in first.text and "crm_" not in first.text
        assert "get_current_datetime" in seen[0] and not any(t.startswith("crm_") for t in seen[0])

        # Back: the next turn has them.
        crm.start()
        await h.user_says("find mina")
        [_, second] = await h.replies(2)
        assert "crm_lookup_customer success" in second.text

        # Gone in the middle of a turn: its call fails as a result, the other tool still runs.
        crm.kill()
        await h.user_says("find mina")
        [*_, third] = await h.replies(3)
        assert "get_current_datetime success" in third.text
        assert "crm_lookup_customer failed" in third.text and "did not answer" in third.text

        crm.start()
        await h.user_says("find mina")
        [*_, fourth] = await h.replies(4)
        assert "crm_lookup_customer success" in fourth.text

    outages = [r.getMessage() for r in caplog.records if "unreachable" in r.getMessage()]
    assert len(outages) == 2, outages  # one line per outage, not one per turn
    assert all("MCP server 'crm'" in line for line in outages)


async def test_the_server_url_is_logged_without_its_secrets(
    start_server: Any, crm: CrmServer, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    monkeypatch.setattr(mcp_tools, "RETRY_DOWN_S", 0.0)
    caplog.set_level(logging.INFO, logger="truloop_assistant")
    url = crm.url.replace("http://", "http://bob:pa55word@") + "?token=t0p-s3cret"
    servers = {"mcp_servers": [{"url": url, "prefix": "crm"}]}
    async with start_server(model=replies_with_results(crm_plan, []), **servers) as h:
        await h.user_says("find mina")  # down: one line says so
        await h.replies(1)
        crm.start()
        await h.user_says("find mina")  # back: one line lists its tools
        [_, found] = await h.replies(2)
        assert "crm_lookup_customer success" in found.text
    lines = [r.getMessage() for r in caplog.records if "MCP server 'crm'" in r.getMessage()]
    assert any("unreachable" in line for line in lines) and any("tools:" in line for line in lines), lines
    assert all(f"({crm.url})" in line for line in lines), lines
    logged = "\n".join(r.getMessage() for r in caplog.records)
    assert not any(word in logged for word in ("pa55word", "t0p-s3cret", "bob")), logged


async def test_the_tool_list_is_asked_for_again_after_refresh_s(start_server: Any, crm: CrmServer) -> None:
    crm.start()
    seen: list[set[str]] = []
    async with start_server(model=replies_with_results(crm_plan, seen), **crm.settings(refresh_s=0.2)) as h:
        await h.user_says("hello")
        await h.replies(1)
        assert "crm_lookup_customer" in seen[-1] and "crm_list_orders" not in seen[-1]
        crm.kill()
        crm.start(orders=True)  # the server gets a new tool
        await asyncio.sleep(0.3)  # refresh_s passes
        await h.user_says("hello again")
        await h.replies(2)
        assert "crm_list_orders" in seen[-1]


async def test_an_app_may_not_declare_a_tool_under_an_mcp_prefix(start_server: Any, crm: CrmServer) -> None:
    async with start_server(**crm.settings()) as h:
        tool = {
            "name": "crm_notes",
            "description": "notes",
            "method": "notes.get",
            "parameters": {"type": "object"},
        }
        headers = {"authorization": f"Bearer {issue_token(JWT_SECRET, 'jeff')}"}
        r = await h.http.put("/api/v1/agent/client-tools", json={"tools": [tool]}, headers=headers)
        assert r.status_code == 409 and r.json()["error"]["code"] == "tool_name_taken"
        assert "crm_" in r.json()["error"]["message"]


async def test_the_offline_model_uses_mcp_tools_behind_the_gate(start_server: Any, crm: CrmServer) -> None:
    crm.start()
    async with start_server(**crm.settings()) as h:  # the offline model
        await h.user_says("look up customer mina")
        [found] = await h.replies(1)
        assert "Mina Park" in found.text
        await h.user_says("delete customer c-17")
        [ask] = await h.rpc_requests(1)
        assert ask["method"] == "interaction.confirm"
        assert f"customer_id: {q('c-17')}" in ask["params"]["message"]
        assert (await h.answer(ask["id"], result={"confirmed": True})).status_code == 202
        [_, deleted] = await h.replies(2)
        assert "deleted c-17" in deleted.text
        assert [c["tool"] for c in crm.calls()] == ["lookup_customer", "delete_customer"]


async def test_a_server_that_hangs_holds_up_one_turn_not_every_turn(
    start_server: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(mcp_tools, "LIST_TIMEOUT_S", 0.5)
    connections = 0

    async def never_answer(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        nonlocal connections
        connections += 1
        while await reader.read(65536):  # reads the request, answers nothing, until the client gives up
            pass
        writer.close()

    hanging = await asyncio.start_server(never_answer, "127.0.0.1", 0)
    port = hanging.sockets[0].getsockname()[1]
    seen: list[set[str]] = []
    servers = {"mcp_servers": [{"url": f"http://127.0.0.1:{port}/mcp", "prefix": "crm"}]}
    async with hanging, start_server(model=replies_with_results(crm_plan, seen), **servers) as h:
        await h.user_says("find mina")
        [first] = await h.replies(1)
        assert "get_current_datetime success" in first.text  # the turn went on without the server
        tried = connections
        assert tried >= 1
        for n in (2, 3):
            await h.user_says("find mina")
            await h.replies(n)
        assert connections == tried  # not asked again at every turn: it is waited for once
        assert not any(t.startswith("crm_") for t in seen[-1])

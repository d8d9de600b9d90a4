"""/openapi.json tells an app team everything about the two endpoints they call: bodies, headers, statuses."""

from __future__ import annotations

from typing import Any

ERROR = {"$ref": "#/components/schemas/ErrorBody"}


async def test_the_tool_message_endpoint_is_described_in_full(start_server: Any) -> None:
    async with start_server() as h:
        document = (await h.http.get("/openapi.json")).json()
    post = document["paths"]["/api/v1/agent/tool-message"]["post"]
    body = post["requestBody"]["content"]["application/json"]["schema"]
    assert [set(option["required"]) for option in body["oneOf"]] == [
        {"jsonrpc", "id", "result"},
        {"jsonrpc", "id", "error"},
    ]
    assert body["oneOf"][1]["properties"]["error"]["required"] == ["code", "message"]  # written out, no $defs
    assert [p["name"] for p in post["parameters"] if p["required"]] == ["authorization"]
    statuses = post["responses"]
    assert set(statuses) == {
        "200",
        "202",
        "400",
        "401",
        "403",
        "404",
        "409",
        "410",
        "413",
        "422",
        "429",
        "503",
    }
    for status, response in statuses.items():
        if status.startswith(("4", "5")):
            assert response["content"]["application/json"]["schema"] == ERROR, status
    assert {"Retry-After", "X-RateLimit-Reset"} <= set(statuses["429"]["headers"])
    accepted = document["components"]["schemas"]["Accepted"]["properties"]["status"]
    assert set(accepted["enum"]) == {"accepted", "resuming"}


async def test_the_webhook_is_described_with_its_signature_header(start_server: Any) -> None:
    async with start_server() as h:
        document = (await h.http.get("/openapi.json")).json()
    post = document["paths"]["/api/v1/webhooks/sendbird"]["post"]
    assert [p["name"] for p in post["parameters"] if p["required"]] == ["x-sendbird-signature"]
    body = post["requestBody"]["content"]["application/json"]["schema"]
    assert {"sender", "payload", "channel"} <= set(body["required"])
    assert set(post["responses"]) == {"200", "400", "401", "413", "503"}
    assert post["responses"]["401"]["content"]["application/json"]["schema"] == ERROR


async def test_the_api_reference_is_served_without_any_outside_host(start_server: Any) -> None:
    async with start_server() as h:
        page = await h.http.get("/docs")
        assert page.status_code == 200 and "text/html" in page.headers["content-type"]
        assert "cdn" not in page.text and "https://" not in page.text  # nothing fetched from elsewhere
        for asset in ("/docs/static/swagger-ui-bundle.js", "/docs/static/swagger-ui.css"):
            assert asset in page.text
            served = await h.http.get(asset)
            assert served.status_code == 200 and len(served.content) > 10_000, asset
        bundle = (await h.http.get("/docs/static/swagger-ui-bundle.js")).text
        assert "isOAS31" in bundle  # a Swagger UI that reads the OpenAPI 3.1 FastAPI writes
        assert (await h.http.get("/openapi.json")).json()["openapi"].startswith("3.1")


async def test_the_client_tools_endpoint_is_described_in_full(start_server: Any) -> None:
    async with start_server() as h:
        document = (await h.http.get("/openapi.json")).json()
    put = document["paths"]["/api/v1/agent/client-tools"]["put"]
    body = put["requestBody"]["content"]["application/json"]["schema"]
    tool = body["properties"]["tools"]["items"]
    assert set(tool["required"]) == {"name", "description", "method", "parameters"}
    assert tool["properties"]["name"]["pattern"] == "^[a-z][a-z0-9_]{0,63}$"
    assert body["properties"]["tools"]["maxItems"] == 32
    assert set(put["responses"]) == {"200", "400", "401", "409", "413", "422", "429", "503"}
    assert put["responses"]["409"]["content"]["application/json"]["schema"] == ERROR
    assert set(document["paths"]["/api/v1/agent/client-tools"]) == {"put", "get", "delete"}


async def test_the_api_reference_and_its_files_are_gone_when_turned_off(start_server: Any) -> None:
    async with start_server(api_docs=False) as h:
        for path in ("/docs", "/docs/static/swagger-ui-bundle.js", "/openapi.json"):
            r = await h.http.get(path)
            assert r.status_code == 404 and r.json()["error"]["code"] == "not_found", path
        assert (await h.http.get("/healthz")).status_code == 200  # the API itself is still there


async def test_the_standing_approvals_endpoints_are_described(start_server: Any) -> None:
    async with start_server() as h:
        document = (await h.http.get("/openapi.json")).json()
    listed = document["paths"]["/api/v1/agent/approvals"]["get"]
    assert set(listed["responses"]) >= {"200", "401", "429"}
    ended = document["paths"]["/api/v1/agent/approvals/{tool}"]["delete"]
    assert set(ended["responses"]) >= {"204", "401", "429"}
    assert listed["responses"]["401"]["content"]["application/json"]["schema"] == ERROR

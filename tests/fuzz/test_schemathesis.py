"""schemathesis against ``/openapi.json``, and the methods the two endpoints do not take.

The live schema declares no request body, header or error response for the two endpoints (they
read the raw body themselves), so it is fuzzed twice: as served, and with the docs' contract
filled in (``contract_schema``). See the package docstring.
"""

from __future__ import annotations

import asyncio
import copy
import json
from typing import Any

import httpx
import pytest
from hypothesis import strategies as st

from tests.fuzz.harness import SCALE, Fuzz, fuzz_server, run_property
from tests.fuzz.oracle import TOOL_CODES, TOOL_PATH, WEBHOOK_CODES, WEBHOOK_PATH, check_contract
from tests.support import JWT_SECRET, sign
from truloop_assistant.auth import issue_token

ERROR_SCHEMA = {
    "type": "object",
    "additionalProperties": False,
    "required": ["error"],
    "properties": {
        "error": {
            "type": "object",
            "additionalProperties": False,
            "required": ["code", "message"],
            "properties": {
                "code": {"type": "string", "pattern": "^[a-z][a-z0-9]*(_[a-z0-9]+)*$"},
                "message": {"type": "string", "minLength": 1},
            },
        }
    },
}


def _error_responses(statuses: list[int]) -> dict[str, Any]:
    return {
        str(s): {"description": "error", "content": {"application/json": {"schema": ERROR_SCHEMA}}}
        for s in statuses
    }


def contract_schema(live: dict[str, Any], call_ids: list[str]) -> dict[str, Any]:
    """The live schema with the docs' contract for the two endpoints filled in."""
    from pydantic import TypeAdapter

    from truloop_assistant.protocol.jsonrpc import RESPONSE
    from truloop_assistant.protocol.webhook_payload import UserMessageEvent

    schema = copy.deepcopy(live)
    components = schema.setdefault("components", {}).setdefault("schemas", {})
    template = "#/components/schemas/{model}"
    refs = {}
    for name, adapter in (("JsonRpcResponse", RESPONSE), ("WebhookEvent", TypeAdapter(UserMessageEvent))):
        model_schema = adapter.json_schema(ref_template=template)
        components.update(model_schema.pop("$defs", {}))
        components[name] = model_schema
        refs[name] = {"$ref": template.format(model=name)}
    # Real call ids (random ones are fuzzed above); "jsonrpc" and one-of-result/error are in the schema.
    for outcome in ("JsonRpcSuccess", "JsonRpcFailure"):
        ids = {"anyOf": [{"enum": [*call_ids, "call_unknown", ""]}, {"type": "integer"}]}
        components[outcome]["properties"]["id"] = ids

    tool = schema["paths"][TOOL_PATH]["post"]
    tool["requestBody"] = {
        "required": True,
        "content": {"application/json": {"schema": refs["JsonRpcResponse"]}},
    }
    tool["parameters"] = [
        {"name": "authorization", "in": "header", "required": False, "schema": {"type": "string"}}
    ]
    tool["responses"] = {
        "200": {
            "description": "duplicate",
            "content": {
                "application/json": {
                    "schema": {
                        "type": "object",
                        "required": ["status"],
                        "properties": {"status": {"const": "duplicate"}},
                    }
                }
            },
        },
        "202": {
            "description": "accepted",
            "content": {
                "application/json": {
                    "schema": {
                        "type": "object",
                        "required": ["status"],
                        "properties": {
                            "status": {"enum": ["accepted", "resuming"]},
                            "remaining": {"type": "integer", "minimum": 1},
                        },
                    }
                }
            },
        },
        **_error_responses([400, 401, 403, 404, 409, 410, 413, 422]),
    }
    hook = schema["paths"][WEBHOOK_PATH]["post"]
    hook["requestBody"] = {
        "required": True,
        "content": {"application/json": {"schema": refs["WebhookEvent"]}},
    }
    hook["responses"] = {
        "200": {
            "description": "ok",
            "content": {
                "application/json": {
                    "schema": {
                        "type": "object",
                        "required": ["status"],
                        "properties": {"status": {"enum": ["queued", "duplicate", "revised", "ignored"]}},
                    }
                }
            },
        },
        **_error_responses([400, 401, 413]),
    }
    return schema


def run_schemathesis(fz: Fuzz, base_url: str) -> tuple[int, int]:
    import schemathesis
    from schemathesis import GenerationMode
    from schemathesis.checks import not_a_server_error
    from schemathesis.specs.openapi.checks import response_schema_conformance, status_code_conformance

    live = schemathesis.openapi.from_url(f"{base_url}/openapi.json")
    live_ops = [live[TOOL_PATH]["POST"], live[WEBHOOK_PATH]["POST"]]
    contract = schemathesis.openapi.from_dict(contract_schema(live.raw_schema, sorted(fz.known_ids)))
    contract_ops = [contract[TOOL_PATH]["POST"], contract[WEBHOOK_PATH]["POST"]]
    token = issue_token(JWT_SECRET, "jeff")
    mostly_true = st.sampled_from([True, True, True, False])
    examples = 0

    # 1. The live schema as served: no body or header is declared, so this is the empty POST.
    for op in live_ops:  # (nothing is declared, so there is nothing to negate: positive mode only)
        for mode in (GenerationMode.POSITIVE,):

            def as_served(case: Any) -> None:
                response = case.call(base_url=base_url, timeout=30)
                fz.requests += 1
                fz.statuses[(case.path.rsplit("/", 1)[-1], response.status_code)] += 1
                case.validate_response(response, checks=[not_a_server_error])
                assert response.status_code in (400, 401), response.text
                headers = {k: v[0] if isinstance(v, list) else v for k, v in response.headers.items()}
                check_contract(
                    httpx.Response(response.status_code, headers=headers, content=response.content)
                )

            examples += run_property(as_served, 5, op.as_strategy(generation_mode=mode))

    # 2. The contract schema: bodies and headers from the protocol models, valid and not.
    def with_contract(case: Any, valid_token: bool, valid_signature: bool) -> None:
        kwargs = case.as_transport_kwargs(base_url=base_url)
        if "json" in kwargs:
            body = json.dumps(kwargs["json"]).encode()
        else:
            body = kwargs.get("data") or kwargs.get("content") or b""
            body = body.encode() if isinstance(body, str) else body
        headers = {k.lower(): str(v) for k, v in (kwargs.get("headers") or {}).items()}
        headers["content-type"] = "application/json"
        if case.path == TOOL_PATH and valid_token:
            headers["authorization"] = f"Bearer {token}"
        if case.path == WEBHOOK_PATH and valid_signature:
            headers["x-sendbird-signature"] = sign(body)
        pairs = [(k.encode(), v.encode("utf-8", "surrogateescape")) for k, v in headers.items()]
        r = fz.post(case.path, body, pairs, TOOL_CODES if case.path == TOOL_PATH else WEBHOOK_CODES)
        case.validate_response(
            r, checks=[not_a_server_error, status_code_conformance, response_schema_conformance]
        )

    for op in contract_ops:
        for mode in (GenerationMode.POSITIVE, GenerationMode.NEGATIVE):
            examples += run_property(
                with_contract, 60, op.as_strategy(generation_mode=mode), mostly_true, mostly_true
            )
    return examples, len(live_ops) + len(contract_ops)


@pytest.mark.timeout(30 * SCALE)
async def test_schemathesis_openapi(start_server: Any) -> None:
    """schemathesis against /openapi.json: as served, and with the docs' contract filled in."""
    async with fuzz_server(start_server, calls=True) as fz:
        base_url = str(fz.h.http.base_url).rstrip("/")
        ran, _ = await asyncio.to_thread(run_schemathesis, fz, base_url)
        print(fz.summary("schemathesis", ran))


@pytest.mark.timeout(5)
async def test_other_methods_are_shaped_errors(start_server: Any) -> None:
    """GET/PUT/PATCH/DELETE on the two endpoints are 405 with the same error shape."""
    async with fuzz_server(start_server) as fz:
        for path in (TOOL_PATH, WEBHOOK_PATH):
            for method in ("GET", "PUT", "PATCH", "DELETE"):
                r = await fz.h.http.request(method, path, content=b"{}")
                assert r.status_code == 405, (method, path, r.status_code)
                check_contract(r)

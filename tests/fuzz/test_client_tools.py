"""Fuzzing ``PUT /api/v1/agent/client-tools`` with declarations of any shape and JSON Schemas of any kind.

Whatever an app declares gets 200 or a precise 4xx in the one error shape, never a 500; a
declaration that was taken reads back exactly as it was sent.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest
from hypothesis import strategies as st

from tests.fuzz.harness import SCALE, fuzz_server, run_property
from tests.fuzz.oracle import check_contract
from tests.support import JWT_SECRET
from truloop_assistant.auth import issue_token

PATH = "/api/v1/agent/client-tools"
CODES = {
    400: {"invalid_json", "invalid_declaration", "json_too_deep"},
    409: {"tool_name_taken", "method_taken"},
    413: {"payload_too_large"},
    422: {"invalid_schema", "too_many_declared_tools"},
}
KEYWORDS = [
    "type", "properties", "required", "items", "enum", "const", "pattern", "patternProperties",
    "$ref", "$defs", "$id", "$schema", "$anchor", "$dynamicRef", "minimum", "maxLength", "format",
    "additionalProperties", "anyOf", "oneOf", "allOf", "not", "if", "then", "else", "dependentSchemas",
]  # fmt: skip
SCHEMA_STRINGS = st.sampled_from(
    [
        "object", "string", "integer", "nubmer", "#", "#/$defs/a", "#/nowhere", "http://127.0.0.1:9/x.json",
        "https://json-schema.org/draft/2020-12/schema", "http://json-schema.org/draft-04/schema#",
        "urn:x", "(unclosed", "^[a-z]+$", "\\p{L}", "(?<=a)b", "date-time", "", "a" * 300,
    ]
)  # fmt: skip
LEAVES = st.one_of(
    st.none(), st.booleans(), st.integers(), st.floats(allow_nan=False, allow_infinity=False),
    SCHEMA_STRINGS, st.text(max_size=12),
)  # fmt: skip
SCHEMAS = st.recursive(
    LEAVES,
    lambda inner: st.one_of(
        st.lists(inner, max_size=3),
        st.dictionaries(st.one_of(st.sampled_from(KEYWORDS), st.text(max_size=6)), inner, max_size=4),
    ),
    max_leaves=20,
)
OBJECT_SCHEMAS = st.dictionaries(st.sampled_from(KEYWORDS), SCHEMAS, max_size=4).map(
    lambda d: {"type": "object", **d}
)
NAMES = st.one_of(
    st.sampled_from(
        ["get_location", "scan_qr", "create_event", "crm_x", "get_calendar_events", "A", "", "_x"]
    ),
    st.from_regex(r"[a-z][a-z0-9_]{0,8}", fullmatch=True),
    st.text(max_size=10),
)
METHODS = st.one_of(
    st.sampled_from(
        ["location.get", "camera.scan", "interaction.confirm", "calendar.getEvents", "nodot", ""]
    ),
    st.from_regex(r"[a-z]{1,5}\.[a-zA-Z]{1,6}", fullmatch=True),
)
TOOLS = st.fixed_dictionaries(
    {
        "name": NAMES,
        "description": st.text(max_size=20),
        "method": METHODS,
        "parameters": OBJECT_SCHEMAS | SCHEMAS,
    },
    optional={"result": SCHEMAS, "extra": st.integers()},
)
DECLARATIONS = st.one_of(
    st.fixed_dictionaries(
        {"tools": st.lists(TOOLS, max_size=3)},
        optional={"builtin": st.one_of(st.lists(st.text(max_size=20), max_size=3), st.text(max_size=5))},
    ),
    SCHEMAS,
)


def as_read_back(declaration: dict[str, Any]) -> dict[str, Any]:
    """What GET gives for a declaration that was taken: the same, but a null result is no result."""
    tools = [
        {k: v for k, v in tool.items() if not (k == "result" and v is None)} for tool in declaration["tools"]
    ]
    return {**declaration, "tools": tools}


@pytest.mark.timeout(20 * SCALE)
async def test_any_declaration_gets_a_precise_answer_never_a_500(start_server: Any) -> None:
    headers = {
        "authorization": f"Bearer {issue_token(JWT_SECRET, 'jeff')}",
        "content-type": "application/json",
    }
    taken = 0
    async with fuzz_server(start_server) as fz:

        def prop(declaration: Any) -> None:
            nonlocal taken
            body = json.dumps(declaration).encode()
            r = fz.client.put(PATH, content=body, headers=headers)
            check_contract(r, CODES)
            assert r.status_code in (200, *CODES), (r.status_code, r.text[:300])
            if r.status_code == 200:
                taken += 1
                assert r.json() == {"status": "ok", "tools": len(declaration["tools"])}
                assert fz.client.get(PATH, headers=headers).json() == as_read_back(declaration)

        ran = await asyncio.to_thread(run_property, prop, 300, DECLARATIONS)
    print(f"client-tools: {ran} declarations, {taken} taken")
    assert taken > 0  # the strategy reaches valid declarations too

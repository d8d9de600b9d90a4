"""JSON-RPC 2.0 wire types exchanged with the device, validated once at the edge."""

from __future__ import annotations

import json
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, StrictInt, StrictStr, ValidationError, model_validator

from ..errors import BadRequest

# Error codes the mobile client sends back (DESIGN section 6).
PERMISSION_REQUIRED = -32010
PERMISSION_DENIED = -32001
USER_CANCELED = -32002


class JsonRpcRequest(BaseModel):
    """A request from the server to the device, carried in an ``agent-rpc`` channel message."""

    jsonrpc: str = "2.0"
    id: str
    method: str
    params: dict[str, Any]


class JsonRpcError(BaseModel):
    model_config = ConfigDict(extra="allow")

    code: StrictInt
    message: StrictStr = Field(max_length=1000)
    data: Any = None


class JsonRpcResponse(BaseModel):
    """The device's answer: exactly one of ``result`` or ``error``."""

    model_config = ConfigDict(extra="forbid")

    jsonrpc: str
    id: StrictStr | StrictInt
    result: Any = None
    error: JsonRpcError | None = None

    @model_validator(mode="before")
    @classmethod
    def _one_of(cls, data: Any) -> Any:
        if isinstance(data, dict):
            if data.get("jsonrpc") != "2.0":
                raise ValueError('"jsonrpc" must be "2.0"')
            if ("result" in data) == ("error" in data):
                raise ValueError('a response carries exactly one of "result" or "error"')
        return data

    @property
    def call_id(self) -> str:
        return str(self.id)

    @property
    def payload(self) -> dict[str, Any]:
        """What identifies this answer: a re-sent identical answer has the same payload."""
        if self.error is not None:
            return {"error": self.error.model_dump(mode="json")}
        return {"result": self.result}

    def fingerprint(self) -> str:
        return json.dumps(self.payload, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


MAX_JSON_DEPTH = 32


def load_json(body: bytes, *, max_depth: int = MAX_JSON_DEPTH) -> Any:
    """Parse JSON from a request body; too deep, invalid or non-UTF-8 input is a 400."""
    try:
        data = json.loads(body)
    except (ValueError, UnicodeDecodeError, RecursionError):
        raise BadRequest("the body is not valid JSON", code="invalid_json") from None
    if _depth(data) > max_depth:
        raise BadRequest(f"the JSON is nested deeper than {max_depth} levels", code="json_too_deep")
    try:  # "\ud800" escapes (or UTF-16/surrogatepass bodies) give strings that cannot be stored or sent
        json.dumps(data, ensure_ascii=False).encode()
    except UnicodeEncodeError:
        raise BadRequest("the JSON has a string with a lone surrogate", code="invalid_json") from None
    return data


def _depth(value: Any) -> int:
    deepest, stack = 0, [(value, 1)]
    while stack:
        item, depth = stack.pop()
        deepest = max(deepest, depth)
        if isinstance(item, dict):
            stack.extend((v, depth + 1) for v in item.values())
        elif isinstance(item, list):
            stack.extend((v, depth + 1) for v in item)
    return deepest


def parse_response(body: bytes) -> JsonRpcResponse:
    """Parse a request body into a :class:`JsonRpcResponse` or raise :class:`BadRequest`."""
    data = load_json(body)
    if not isinstance(data, dict):
        raise BadRequest("the body must be a JSON-RPC 2.0 response object", code="invalid_jsonrpc")
    try:
        return JsonRpcResponse.model_validate(data)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"]) or "body"
        msg = first["msg"].removeprefix("Value error, ")
        raise BadRequest(f"not a JSON-RPC 2.0 response: {where}: {msg}", code="invalid_jsonrpc") from None

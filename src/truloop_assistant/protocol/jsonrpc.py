"""JSON-RPC 2.0 wire types exchanged with the device, validated once at the edge."""

from __future__ import annotations

import hashlib
import json
from enum import IntEnum
from typing import Annotated, Any, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Discriminator,
    Field,
    StrictInt,
    StrictStr,
    Tag,
    TypeAdapter,
    ValidationError,
)

from ..errors import BadRequest, first_problem


class ErrorCode(IntEnum):
    """Error codes the mobile client sends back (docs/protocol.md, "Errors the app sends"); any other integer
    is allowed too."""

    PERMISSION_REQUIRED = -32010
    PERMISSION_DENIED = -32001
    USER_CANCELED = -32002
    METHOD_NOT_FOUND = -32601
    """JSON-RPC's own: this device cannot run the method (another of the user's devices may)."""


class JsonRpcRequest(BaseModel):
    """A request from the server to the device, carried in an ``agent-rpc`` channel message."""

    jsonrpc: Literal["2.0"] = "2.0"
    id: str
    method: str
    params: dict[str, Any]


class JsonRpcError(BaseModel):
    model_config = ConfigDict(extra="allow")

    code: StrictInt
    message: StrictStr = Field(max_length=1000)
    data: Any = None


class _Response(BaseModel):
    model_config = ConfigDict(extra="forbid")

    jsonrpc: Literal["2.0"]
    id: StrictStr | StrictInt

    @property
    def call_id(self) -> str:
        return str(self.id)

    @property
    def payload(self) -> dict[str, Any]:
        """What identifies this answer: a re-sent identical answer has the same payload."""
        raise NotImplementedError

    def fingerprint(self) -> str:
        """A digest of the payload: kept for a day per settled call to tell a re-send from a change."""
        canonical = json.dumps(self.payload, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
        return hashlib.sha256(canonical.encode()).hexdigest()


class JsonRpcSuccess(_Response):
    """The device did it: ``result`` is checked against the method's result schema later."""

    result: Any

    @property
    def payload(self) -> dict[str, Any]:
        return {"result": self.result}


class JsonRpcFailure(_Response):
    """The device could not do it (no permission, the user canceled, ...)."""

    error: JsonRpcError

    @property
    def payload(self) -> dict[str, Any]:
        return {"error": self.error.model_dump(mode="json")}


def _outcome(data: Any) -> str | None:
    if isinstance(data, dict):
        if ("result" in data) == ("error" in data):
            return None
        return "result" if "result" in data else "error"
    return (
        "result"
        if isinstance(data, JsonRpcSuccess)
        else "error"
        if isinstance(data, JsonRpcFailure)
        else None
    )


JsonRpcResponse = Annotated[
    Annotated[JsonRpcSuccess, Tag("result")] | Annotated[JsonRpcFailure, Tag("error")],
    Discriminator(
        _outcome,
        custom_error_type="one_outcome",
        custom_error_message='a response carries exactly one of "result" or "error"',
    ),
]
"""The device's answer: exactly one of ``result`` or ``error``."""

RESPONSE: TypeAdapter[JsonRpcSuccess | JsonRpcFailure] = TypeAdapter(JsonRpcResponse)

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


def parse_response(body: bytes) -> JsonRpcSuccess | JsonRpcFailure:
    """Parse a request body into a JSON-RPC response or raise :class:`BadRequest`."""
    data = load_json(body)
    if not isinstance(data, dict):
        raise BadRequest("the body must be a JSON-RPC 2.0 response object", code="invalid_jsonrpc")
    try:
        return RESPONSE.validate_python(data)
    except ValidationError as exc:
        # Leave out the union's tag ('result'/'error') that pydantic puts first in each location.
        errors = [
            {**e, "loc": e["loc"][1:] if e["loc"][:1] in (("result",), ("error",)) else e["loc"]}
            for e in exc.errors()
        ]
        problem = first_problem(errors, default_where="body")
        raise BadRequest(f"not a JSON-RPC 2.0 response: {problem}", code="invalid_jsonrpc") from None

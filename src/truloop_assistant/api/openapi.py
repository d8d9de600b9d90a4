"""What ``/openapi.json`` says of the request bodies and errors FastAPI cannot infer.

The endpoints the outside world calls read their raw body themselves (the webhook's signature is
over the exact bytes; a device's answer and an app's declaration are size-checked before they are
parsed), so their request bodies are described here, and every error status with the one error
shape. The bodies they answer with come from their routes' response models.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, Field

from ..protocol.declarations import Declaration
from ..protocol.jsonrpc import JsonRpcError
from ..protocol.versions import BASELINE, HEADER
from ..protocol.webhook_payload import UserMessageEvent


class ErrorDetail(BaseModel):
    code: str = Field(description="snake_case, stable: what a client switches on")
    message: str = Field(description="for people")


class ErrorBody(BaseModel):
    """Every error of both endpoints."""

    error: ErrorDetail


class DeviceResult(BaseModel):
    """The device did it: ``result`` fits the method's result schema (``GET /api/v1/agent/protocol``)."""

    jsonrpc: Literal["2.0"]
    id: str = Field(description="the id of the agent-rpc request this answers")
    result: Any


class DeviceError(BaseModel):
    """The device could not: e.g. -32010 PermissionRequired, -32001 PermissionDenied, -32002 UserCanceled."""

    jsonrpc: Literal["2.0"]
    id: str
    error: JsonRpcError


class WebhookAck(BaseModel):
    status: Literal["queued", "duplicate", "revised", "ignored"]


RATE_HEADERS: dict[str, Any] = {
    "X-RateLimit-Limit": {"description": "requests allowed per window", "schema": {"type": "integer"}},
    "X-RateLimit-Remaining": {"description": "left in this window", "schema": {"type": "integer"}},
    "X-RateLimit-Reset": {"description": "Unix time (s) the window frees up", "schema": {"type": "integer"}},
}
RETRY_AFTER: dict[str, Any] = {
    "Retry-After": {"description": "seconds to wait", "schema": {"type": "integer"}}
}


def _error(description: str, headers: dict[str, Any] | None = None) -> dict[str, Any]:
    return {"model": ErrorBody, "description": description, **({"headers": headers} if headers else {})}


def _inline(schema: Any, defs: dict[str, Any] | None = None) -> Any:
    """The schema with its ``$defs`` references written out (in OpenAPI ``#`` is the whole document)."""
    if defs is None and isinstance(schema, dict):
        defs = schema.get("$defs", {})
    if isinstance(schema, dict):
        ref = schema.get("$ref")
        if isinstance(ref, str) and ref.startswith("#/$defs/") and defs is not None:
            return _inline(defs[ref.removeprefix("#/$defs/")], defs)
        return {k: _inline(v, defs) for k, v in schema.items() if k != "$defs"}
    if isinstance(schema, list):
        return [_inline(item, defs) for item in schema]
    return schema


def _body(*models: type[BaseModel], description: str) -> dict[str, Any]:
    schemas = [_inline(m.model_json_schema()) for m in models]
    schema = schemas[0] if len(schemas) == 1 else {"oneOf": schemas}
    return {
        "requestBody": {
            "required": True,
            "description": description,
            "content": {"application/json": {"schema": schema}},
        }
    }


TOOL_MESSAGE_REQUEST: dict[str, Any] = {
    **_body(DeviceResult, DeviceError, description="the device's JSON-RPC 2.0 response (at most 256 KiB)"),
    "parameters": [
        {
            "name": "authorization",
            "in": "header",
            "required": True,
            "description": "Bearer <JWT>: its sub is the user whose call this answers",
            "schema": {"type": "string"},
        }
    ],
}
TOOL_MESSAGE_ERRORS: dict[int | str, Any] = {
    400: _error("not JSON, or not a JSON-RPC 2.0 response (fix the app)"),
    401: _error("no token, or a token that is not valid or was revoked (get a new one)"),
    403: _error("the call belongs to another user (whatever became of it)"),
    404: _error("no such call, or it left the pending state over 24 h ago (drop the request)"),
    409: _error("the call was answered already, differently (drop the request)"),
    410: _error("the call expired or was superseded by a newer message (drop the request)"),
    413: _error("over 256 KiB"),
    422: _error(
        "the result does not fit the method's result schema; the call stays pending (fix and resend)"
    ),
    429: _error("over the user's rate limit (retry after Retry-After)", {**RATE_HEADERS, **RETRY_AFTER}),
    503: _error("Redis did not answer in time (retry with backoff)"),
}

WEBHOOK: dict[str, Any] = {
    "openapi_extra": {
        **_body(
            UserMessageEvent,
            description="a Sendbird webhook event (group_channel:message_send, message_update, "
            "message_delete), at most 1 MiB",
        ),
        "parameters": [
            {
                "name": "x-sendbird-signature",
                "in": "header",
                "required": True,
                "description": "HMAC-SHA256 of the raw body with the master API token, hex",
                "schema": {"type": "string"},
            }
        ],
    },
    "responses": {
        200: {
            "model": WebhookAck,
            "description": "taken: queued, a re-send (duplicate), a person's edit or deletion applied "
            "(revised), or not a turn (ignored)",
        },
        400: _error("not a Sendbird webhook event"),
        401: _error("missing or wrong signature"),
        413: _error("over 1 MiB"),
        503: _error("Redis did not answer in time (Sendbird re-sends; it is queued then)"),
    },
}


BEARER: dict[str, Any] = {
    "parameters": [
        {
            "name": "authorization",
            "in": "header",
            "required": True,
            "description": "Bearer <JWT>: its sub is the user whose app this is",
            "schema": {"type": "string"},
        }
    ]
}
"""The header of the client-tools endpoints (their routes read it themselves)."""
AUTH_ERRORS: dict[int | str, Any] = {
    401: _error("no token, or a token that is not valid or was revoked (get a new one)"),
    429: _error("over the user's rate limit (retry after Retry-After)", {**RATE_HEADERS, **RETRY_AFTER}),
    503: _error("Redis did not answer in time (retry with backoff)"),
}

CLIENT_TOOLS_REQUEST: dict[str, Any] = {
    **_body(
        Declaration,
        description=(
            "the app's device tools for its user on this device (replaces this device's previous "
            "declaration; kept 30 days). device_id: each device keeps its own, and the user's turns "
            "are offered what any of their devices declared. protocol: the device protocol version the "
            f"app speaks, YYYY-MM-DD (or the {HEADER} header; absent: the baseline, {BASELINE}; "
            "one newer than the server's is taken as the server's); builtin: the built-in methods this "
            "app version supports (absent: those of its protocol version); the assistant is never "
            "offered a tool whose method none of the user's devices can serve"
        ),
    ),
    **BEARER,
}
CLIENT_TOOLS_PUT_ERRORS: dict[int | str, Any] = {
    400: _error(
        "not JSON, or a declaration of the wrong shape: over 32 tools, a schema over 16 KiB, a name "
        "not matching ^[a-z][a-z0-9_]{0,63}$, a method not like ns.method, a name twice "
        f"(invalid_declaration); a protocol (or {HEADER}) that is not a date YYYY-MM-DD "
        "(invalid_protocol); fix the app"
    ),
    409: _error("a tool name or method is the server's own (rename it)"),
    413: _error("over 1 MiB"),
    422: _error(
        "a schema is not valid JSON Schema, parameters is not type object, or a schema is too costly to "
        "check (a $ref outside it or back into itself, too many branches or levels, a pattern too long, "
        "with a counted repetition past 100 or too costly, too many or too costly patterns in a schema "
        "or the declaration): invalid_schema; "
        "the user's devices together would declare over 64 tools or 64 KiB: too_many_declared_tools"
    ),
    **AUTH_ERRORS,
}

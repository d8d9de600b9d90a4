"""The device protocol as data: each built-in method's JSON Schemas and the error codes.

The schemas are generated from the very models the server checks a device's answer with
(:mod:`truloop_assistant.protocol.methods`, through the declarations of
:data:`~truloop_assistant.protocol.device_methods.DEVICE_METHODS`), so what the app
team reads at ``GET /api/v1/agent/protocol`` cannot drift from what the server accepts.
"""

from __future__ import annotations

from typing import Any

from ..protocol import versions
from ..protocol.device_methods import DEVICE_METHODS
from ..protocol.jsonrpc import ErrorCode
from ..protocol.methods import PermissionRequiredData
from .handlers import DEVICE_ERRORS

CUSTOM_TYPE = "agent-rpc"
"""The ``custom_type`` of the Sendbird messages that carry a request to the device."""


def protocol_document() -> dict[str, Any]:
    """The protocol's version; every built-in method with its tool, the version it appeared in, its
    ``params`` and ``result`` schemas; the error codes."""
    methods = {
        tool.method: {
            "tool": tool.name,
            "since": tool.since,
            "answered_by": tool.answered_by,
            "params": tool.params_model.model_json_schema(),
            "result": tool.result_model.model_json_schema(),
            "example": dict(tool.example),
        }
        for tool in DEVICE_METHODS.values()
    }
    errors = {
        str(int(code)): {
            "message": name,
            "meaning": meaning,
            **(
                {"data": PermissionRequiredData.model_json_schema()}
                if code == ErrorCode.PERMISSION_REQUIRED
                else {}
            ),
        }
        for code, (name, meaning) in DEVICE_ERRORS.items()
    }
    return {
        "protocol_version": versions.PROTOCOL_VERSION,
        "jsonrpc": "2.0",
        "custom_type": CUSTOM_TYPE,
        "methods": methods,
        "errors": errors,
        "notes": (
            "A request arrives as a Sendbird message with custom_type 'agent-rpc' and the JSON-RPC "
            "request in its data. Answer it with POST /api/v1/agent/tool-message: {'jsonrpc': '2.0', "
            "'id': <the request's id>, 'result': <fits the method's result schema>} or {'jsonrpc': "
            "'2.0', 'id': ..., 'error': {'code': <int>, 'message': <text>, 'data': <optional>}}. "
            "Results may carry more fields than the schema names. An app may declare its own device "
            "tools, the built-in methods it supports and the protocol version it speaks (a method goes "
            "only to apps whose version is at least its since, or whose builtin names it) with PUT "
            "/api/v1/agent/client-tools."
        ),
    }

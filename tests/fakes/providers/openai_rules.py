"""Rules both OpenAI APIs (Chat Completions and Responses) apply: key, error body, tool definitions."""

from __future__ import annotations

import re
from typing import Any

from .scripted import InvalidRequest

TOOL_NAME = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")
INVALID_REQUEST = "invalid_request_error"


def error_body(problem: InvalidRequest) -> dict[str, Any]:
    return {
        "error": {
            "message": problem.message,
            "type": INVALID_REQUEST,
            "param": problem.param,
            "code": problem.code,
        }
    }


def check_key(headers: dict[str, str]) -> None:
    if not headers.get("authorization", "").startswith("Bearer "):
        raise InvalidRequest(
            "You didn't provide an API key. You need to provide your API key in an Authorization header "
            "using Bearer auth (i.e. Authorization: Bearer YOUR_KEY).",
            status=401,
        )


def missing(param: str) -> InvalidRequest:
    return InvalidRequest(
        f"Missing required parameter: '{param}'.", param=param, code="missing_required_parameter"
    )


def invalid_type(param: str, expected: str, value: Any) -> InvalidRequest:
    return InvalidRequest(
        f"Invalid type for '{param}': expected {expected}, but got {_json_type(value)} instead.",
        param=param,
        code="invalid_type",
    )


def invalid_value(param: str, value: Any, supported: tuple[str, ...]) -> InvalidRequest:
    listed = ", ".join(f"'{s}'" for s in supported)
    return InvalidRequest(
        f"Invalid value: '{value}'. Supported values are: {listed}.", param=param, code="invalid_value"
    )


def require(obj: dict[str, Any], key: str, kind: type | tuple[type, ...], param: str) -> Any:
    """``obj[key]``, which must be there and of ``kind``."""
    if key not in obj or obj[key] is None:
        raise missing(f"{param}.{key}" if param else key)
    value = obj[key]
    if not isinstance(value, kind) or (isinstance(value, bool) and bool not in _kinds(kind)):
        raise invalid_type(f"{param}.{key}" if param else key, _expected(kind), value)
    return value


def check_function(name: Any, parameters: Any, strict: Any, param: str) -> None:
    """One function tool: its name, its parameters schema, and the strict-mode schema rules."""
    if not isinstance(name, str) or not TOOL_NAME.match(name):
        raise InvalidRequest(
            f"Invalid '{param}.name': string does not match pattern. Expected a string that matches the "
            "pattern '^[a-zA-Z0-9_-]+$'.",
            param=f"{param}.name",
            code="invalid_value",
        )
    if parameters is None:
        return
    if not isinstance(parameters, dict) or parameters.get("type") != "object":
        raise InvalidRequest(
            f"Invalid schema for function '{name}': schema must be a JSON Schema of 'type: \"object\"', "
            f"got 'type: \"{parameters.get('type') if isinstance(parameters, dict) else None}\"'.",
            param=f"{param}.parameters",
            code="invalid_function_parameters",
        )
    if strict is True:
        _check_strict(name, parameters, (), param)


def _check_strict(name: str, schema: Any, where: tuple[str, ...], param: str) -> None:
    """Strict mode: every object lists all its properties as required and allows nothing else."""
    if isinstance(schema, list):
        for i, item in enumerate(schema):
            _check_strict(name, item, (*where, str(i)), param)
        return
    if not isinstance(schema, dict):
        return
    if schema.get("type") == "object" or "properties" in schema:
        context = f"In context=({', '.join(repr(w) for w in where)}{',' if len(where) == 1 else ''})"
        properties = schema.get("properties", {})
        if schema.get("additionalProperties") is not False:
            raise InvalidRequest(
                f"Invalid schema for function '{name}': {context}, 'additionalProperties' is required to "
                "be supplied and to be false.",
                param=f"{param}.parameters",
                code="invalid_function_parameters",
            )
        absent = [key for key in properties if key not in schema.get("required", [])]
        if absent:
            raise InvalidRequest(
                f"Invalid schema for function '{name}': {context}, 'required' is required to be supplied "
                f"and to be an array including every key in properties. Missing '{absent[0]}'.",
                param=f"{param}.parameters",
                code="invalid_function_parameters",
            )
    for key in ("properties", "$defs", "definitions"):
        for sub, value in (schema.get(key) or {}).items():
            _check_strict(name, value, (*where, key, sub), param)
    for key in ("items", "anyOf", "oneOf", "allOf"):
        if key in schema:
            _check_strict(name, schema[key], (*where, key), param)


def _kinds(kind: type | tuple[type, ...]) -> tuple[type, ...]:
    return kind if isinstance(kind, tuple) else (kind,)


def _expected(kind: type | tuple[type, ...]) -> str:
    names = {str: "a string", dict: "an object", list: "an array", int: "an integer", bool: "a boolean"}
    return " or ".join(names.get(k, k.__name__) for k in _kinds(kind))


def _json_type(value: Any) -> str:
    match value:
        case None:
            return "null"
        case bool():
            return "a boolean"
        case int() | float():
            return "a number"
        case str():
            return "a string"
        case list():
            return "an array"
        case _:
            return "an object"

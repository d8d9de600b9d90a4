"""A tool's parameters schema as the model is sent it: what the arguments are, in few characters.

pydantic writes an optional argument (``x: T | None = None``) as ``anyOf [T, null]`` with
``"default": null``, and closes every object with ``additionalProperties: false``. To a model the
first says no more than leaving the argument out of ``required`` does (and an empty value is taken
as not given: :mod:`.empty_arguments`); the second only binds in strict mode, whose transformers
add it themselves. Bounds on sizes (a title's 200 characters, a list's 100 ids) and numbers (a
limit's 1 to 50) are far from what a request needs, and a call past one comes back to the model
naming it. A ``pattern`` (an event id's ``evt_`` and 12 hex digits) describes a value the model
copies from a tool's result, and a default says no more than leaving the argument out of
``required`` does. All of these go from what is sent;
the arguments are still validated by the full schema.
"""

from __future__ import annotations

from typing import Any

JsonSchema = dict[str, Any]
_NULL = {"type": "null"}
_LEFT_OUT = frozenset(
    {"minLength", "maxLength", "minItems", "maxItems", "minimum", "maximum", "pattern", "default"}
)


def sent_schema(schema: JsonSchema) -> JsonSchema:
    """``schema`` without ``null`` alternatives, defaults, ``additionalProperties: false``, patterns and
    bounds on sizes (a new schema; the one given is not changed)."""
    return _node(schema)


def _node(node: Any) -> Any:
    if isinstance(node, list):
        return [_node(item) for item in node]
    if not isinstance(node, dict):
        return node
    out: JsonSchema = {}
    for key, value in node.items():
        if key in ("properties", "$defs", "definitions") and isinstance(value, dict):
            out[key] = {name: _node(schema) for name, schema in value.items()}  # names, not keywords
        elif (key == "additionalProperties" and value is False) or key in _LEFT_OUT:
            continue
        else:
            out[key] = _node(value)
    choices = out.get("anyOf")
    if isinstance(choices, list) and _NULL in choices:
        rest = [choice for choice in choices if choice != _NULL]
        del out["anyOf"]
        if len(rest) == 1 and isinstance(rest[0], dict):
            out = {**rest[0], **out}
        elif rest:
            out["anyOf"] = rest
    return out

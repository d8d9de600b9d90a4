"""The method table of docs/protocol.md, drawn from the device methods' declarations.

Each row names the method, the version it appeared in, its ``params`` fields and the shape of its
``result``, both from the very models the server checks with (so a field added, renamed or removed
changes the table), followed by the declaration's hand-written notes.
"""

from __future__ import annotations

import types
from typing import Any, Literal, Union, get_args, get_origin

from annotated_types import MaxLen
from pydantic import BaseModel
from pydantic.fields import FieldInfo

from ..protocol.device_methods import DEVICE_METHODS, DeviceMethod

ANSWERERS = {"phone": "the app, at once", "person": "the user, in a dialog"}


def method_table() -> str:
    """The method table, one row per built-in device method, in the order they are declared."""
    rows = [_row(method) for method in DEVICE_METHODS.values()]
    head = ["| method | since | params | result | answered by |", "|---|---|---|---|---|"]
    return "\n".join([*head, *rows])


def params_cell(model: type[BaseModel]) -> str:
    """The ``params`` fields by name: the required ones, then the optional ones."""
    required, optional = _split(model)
    names = [f"`{name}`" for name, _ in required]
    if optional:
        names.append("optional " + ", ".join(f"`{name}`" for name, _ in optional))
    return ", ".join(names) if names else "none"


def result_cell(model: type[BaseModel]) -> str:
    """The ``result``'s shape: its required fields as JSON (nested objects too), then the optional ones."""
    required, optional = _split(model)
    bounds = [f"`{name}`: at most {bound}" for name, field in required if (bound := _max_len(field))]
    cell = f"`{_object(model)}`"
    if optional:
        cell += ", optional " + ", ".join(f"`{name}`" for name, _ in optional)
    return cell + (f" ({'; '.join(bounds)})" if bounds else "")


def _row(method: DeviceMethod) -> str:
    cells = [
        f"`{method.method}`",
        method.since,
        params_cell(method.params_model) + method.params_note,
        result_cell(method.result_model) + method.result_note,
        ANSWERERS[method.answered_by],
    ]
    return "| " + " | ".join(cell.replace("|", "\\|") for cell in cells) + " |"


def _split(model: type[BaseModel]) -> tuple[list[tuple[str, FieldInfo]], list[tuple[str, FieldInfo]]]:
    """The model's fields by their wire names: the required ones, and the optional ones."""
    fields = [(field.alias or name, field) for name, field in model.model_fields.items()]
    return [f for f in fields if f[1].is_required()], [f for f in fields if not f[1].is_required()]


def _object(model: type[BaseModel]) -> str:
    """``{"a", "b": bool, "c": {"d"}}``: the required fields, each with its type unless a string."""
    parts = []
    for name, field in _split(model)[0]:
        shape = _shape(field.annotation)
        parts.append(f'"{name}"' if shape is None else f'"{name}": {shape}')
    return "{" + ", ".join(parts) + "}"


def _shape(annotation: Any) -> str | None:
    """How a value of ``annotation`` is written in a result cell; None for a plain string."""
    origin = get_origin(annotation)
    if annotation is str:
        return None
    if annotation is bool:
        return "bool"
    if annotation in (int, float):
        return "number"
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return _object(annotation)
    if origin is Literal:
        values = get_args(annotation)
        return " | ".join(f'"{value}"' if isinstance(value, str) else str(value) for value in values)
    if origin is list:
        return f"[{_shape(get_args(annotation)[0]) or 'string'}]"
    if origin is dict:
        return "{…}"
    if origin in (Union, types.UnionType):
        shapes = [_shape(arg) or "string" for arg in get_args(annotation) if arg is not type(None)]
        return " | ".join(shapes)
    raise ValueError(f"the method table cannot write {annotation!r}: teach method_table._shape")


def _max_len(field: FieldInfo) -> int | None:
    return next((m.max_length for m in field.metadata if isinstance(m, MaxLen)), None)

"""Device tools an app declares for its user (``PUT /api/v1/agent/client-tools``).

A declaration is JSON Schemas written by another team: it is checked here once, when it arrives
(shape and limits -> 400, a schema that is not valid JSON Schema or too costly to check, see
:mod:`.schema_limits` -> 422), and its schemas are compiled once per process (:mod:`.schema_checks`).
Its patterns are bounded together too (``MAX_DECLARATION_PATTERN_COST``): all of them are compiled
when it arrives, before the answer.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Sequence
from functools import cached_property, lru_cache
from typing import Annotated, Any

import jsonschema_rs
from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    StrictBool,
    StringConstraints,
    ValidationError,
    field_validator,
)

from ..errors import BadRequest, Unprocessable, first_problem, repeated
from .device_methods import DEVICE_METHODS, device_method_for
from .jsonrpc import load_json
from .schema_checks import compiled
from .schema_limits import SchemaBounds, SchemaTooCostly, schema_bounds
from .versions import ProtocolVersion, speaks

MAX_TOOLS = 32
MAX_SCHEMA_BYTES = 16 * 1024
MAX_BUILTIN = 64
MAX_OFFERED_TOOLS = 64
"""Declared tools a person's turns are offered at most, all their devices' declarations together."""
MAX_OFFERED_BYTES = 64 * 1024
"""What those tools add to each model request at most: names, descriptions and parameters, as compact JSON."""
MAX_DEPTH = 64
"""How deeply a declaration's JSON may nest (schemas nest twice per level of the data they describe)."""
MAX_DECLARATION_PATTERN_COST = 4096
"""What the patterns of a declaration's schemas may cost to compile together (each schema's different
patterns, see :mod:`.patterns`): about 50 ms at worst."""
TOOL_NAME_PATTERN = r"^[a-z][a-z0-9_]{0,63}$"
METHOD_PATTERN = r"^[A-Za-z][A-Za-z0-9_]*(\.[A-Za-z][A-Za-z0-9_]*)+$"
NOTIFICATION = "notification_message"
"""The argument every device tool takes: what the phone shows while it works (never sent as a param)."""

NOTIFICATION_DESCRIPTION = "Shown on the phone meanwhile (user's language)"
"""What every device tool's ``notification_message`` is, as the model is told (built-in and declared)."""
NOTIFICATION_SCHEMA: dict[str, Any] = {
    "type": "string",
    "maxLength": 200,
    "description": NOTIFICATION_DESCRIPTION,
}

Method = Annotated[str, StringConstraints(pattern=METHOD_PATTERN, max_length=128)]
DeviceId = Annotated[str, StringConstraints(min_length=1, max_length=128)]


class DeclaredTool(BaseModel):
    """One app-declared device tool: what the model is told, and what the phone is sent and answers."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: Annotated[str, StringConstraints(pattern=TOOL_NAME_PATTERN)]
    description: Annotated[str, StringConstraints(min_length=1, max_length=1024)]
    method: Method
    parameters: dict[str, Any]
    """JSON Schema (``type: object``) of the call's ``params``."""
    result: dict[str, Any] | None = None
    """JSON Schema the phone's ``result`` must fit; any result is taken when absent."""
    read_only: StrictBool | None = None
    """True: the tool only reads on the phone (then it is not confirmed unless ``confirm`` says so)."""
    confirm: StrictBool | None = None
    """Whether each call first asks the user's yes in an ``interaction.confirm`` dialog; absent: unless
    ``read_only``."""

    @field_validator("description")
    @classmethod
    def _said(cls, description: str) -> str:
        if not description.strip():
            raise ValueError("the description is blank: tell the model what the tool does")
        return description

    @field_validator("parameters", "result")
    @classmethod
    def _bounded(cls, schema: dict[str, Any] | None) -> dict[str, Any] | None:
        if schema is not None and len(_compact(schema).encode()) > MAX_SCHEMA_BYTES:
            raise ValueError(f"a schema may take at most {MAX_SCHEMA_BYTES} bytes as compact JSON")
        return schema

    @property
    def needs_confirmation(self) -> bool:
        """Whether a call waits for the user's yes before it is sent to the phone."""
        return self.confirm if self.confirm is not None else not self.read_only

    def model_parameters(self) -> dict[str, Any]:
        """The schema the model is given: the declared parameters plus ``notification_message``."""
        schema = dict(self.parameters)
        schema["properties"] = {**schema.get("properties", {}), NOTIFICATION: NOTIFICATION_SCHEMA}
        schema["required"] = [NOTIFICATION, *schema.get("required", [])]
        return schema

    @cached_property
    def offered_bytes(self) -> int:
        """What the tool adds to each model request of the person's turns (its definition as JSON)."""
        offered = {"name": self.name, "description": self.description, "parameters": self.model_parameters()}
        return len(_compact(offered).encode())

    def result_schema(self) -> str | None:
        """The result schema as compact JSON (kept with each call sent), or None."""
        return None if self.result is None else _compact(self.result)


class Declaration(BaseModel):
    """A user's declaration: their app's extra tools, and which built-in methods it supports."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    tools: list[DeclaredTool] = Field(max_length=MAX_TOOLS)
    builtin: list[Annotated[str, StringConstraints(max_length=128)]] | None = Field(
        default=None, max_length=MAX_BUILTIN
    )
    """The built-in methods this app version supports; None: those of its protocol version."""
    protocol: ProtocolVersion | None = Field(
        default=None, description="the protocol version the app speaks, YYYY-MM-DD; absent: the baseline"
    )
    """The protocol version the app speaks (a date); None: the baseline."""
    device_id: DeviceId | None = None
    """The device that declared it: each of a user's devices keeps its own declaration."""

    @field_validator("tools")
    @classmethod
    def _unique(cls, tools: list[DeclaredTool]) -> list[DeclaredTool]:
        if dupes := repeated(t.name for t in tools):
            raise ValueError(f"tool names must be unique; declared more than once: {', '.join(dupes)}")
        return tools

    def supports(self, method: str) -> bool:
        """Whether the app can run this built-in method: one its ``builtin`` names, or when it lists
        none, one of its protocol version (an app that names no version speaks the baseline)."""
        if self.builtin is not None:
            return method in self.builtin
        declared = device_method_for(method)
        return declared is None or speaks(self.protocol, declared.since)

    def spoken_methods(self) -> list[str]:
        """The built-in methods the app can run, as :meth:`supports` says."""
        return [d.method for d in DEVICE_METHODS.values() if self.supports(d.method)]

    def by_name(self) -> dict[str, DeclaredTool]:
        return {t.name: t for t in self.tools}

    def public(self) -> dict[str, Any]:
        """What ``GET`` answers: the declaration as the app sent it (``builtin`` only when it was given)."""
        public: dict[str, Any] = {"tools": [t.model_dump(mode="json", exclude_none=True) for t in self.tools]}
        if self.builtin is not None:
            public["builtin"] = list(self.builtin)
        if self.protocol is not None:
            public["protocol"] = self.protocol
        if self.device_id is not None:
            public["device_id"] = self.device_id
        return public


def merged(declarations: Sequence[Declaration]) -> Declaration | None:
    """What a user's turns are offered: every tool any of their devices declared (on a name two
    devices declared, the later declaration's), and every built-in method any of them supports
    (through its ``builtin`` or its protocol version: a device that cannot run a call answers -32601,
    and the call waits for another of the user's devices).

    ``declarations`` oldest first; None when there are none. Tools past ``MAX_OFFERED_TOOLS`` or
    ``MAX_OFFERED_BYTES`` (kept before those bounds were checked) are left out, older devices' first.
    """
    if not declarations:
        return None
    latest = _latest_tools(declarations)
    if len(declarations) == 1 and _within_bounds(latest.values()):
        return declarations[0]
    tools: list[DeclaredTool] = []
    size = 0
    for tool in latest.values():
        if len(tools) < MAX_OFFERED_TOOLS and size + tool.offered_bytes <= MAX_OFFERED_BYTES:
            tools.append(tool)
            size += tool.offered_bytes
    protocol = max((d.protocol for d in declarations if d.protocol is not None), default=None)
    builtin = None
    if any(d.builtin is not None for d in declarations):  # each device's methods, named
        named = (m for d in declarations for m in (d.spoken_methods() if d.builtin is None else d.builtin))
        builtin = list(dict.fromkeys(named))
    return Declaration.model_construct(tools=tools, builtin=builtin, protocol=protocol, device_id=None)


def check_offered(declarations: Sequence[Declaration]) -> None:
    """422 when a person's devices' declarations together (oldest first) would pass the bounds of
    what their turns are offered."""
    tools = _latest_tools(declarations)
    fix = "declare fewer or shorter tools, or remove another device's declaration (DELETE with its device_id)"
    if len(tools) > MAX_OFFERED_TOOLS:
        raise Unprocessable(
            f"with this declaration the user's devices would declare {len(tools)} tools together; "
            f"their turns are offered at most {MAX_OFFERED_TOOLS} tools: {fix}",
            code="too_many_declared_tools",
        )
    size = sum(tool.offered_bytes for tool in tools.values())
    if size > MAX_OFFERED_BYTES:
        raise Unprocessable(
            f"with this declaration the user's devices' tools would add {size} bytes to each model "
            f"request (names, descriptions and parameters); at most {MAX_OFFERED_BYTES} bytes: {fix}",
            code="too_many_declared_tools",
        )


def _latest_tools(declarations: Sequence[Declaration]) -> dict[str, DeclaredTool]:
    """Each declared name once, as the newest declaration that has it declares it; newest first."""
    tools: dict[str, DeclaredTool] = {}
    for declaration in reversed(declarations):
        for tool in declaration.tools:
            tools.setdefault(tool.name, tool)
    return tools


def _within_bounds(tools: Iterable[DeclaredTool]) -> bool:
    count = size = 0
    for tool in tools:
        count, size = count + 1, size + tool.offered_bytes
    return count <= MAX_OFFERED_TOOLS and size <= MAX_OFFERED_BYTES


def parse_declaration(body: bytes) -> Declaration:
    """A declaration from a request body: 400 when its shape or limits are wrong, 422 for a bad schema.

    Every schema is checked within its bounds, and all of them within the declaration's, before any
    is compiled.
    """
    data = load_json(body, max_depth=MAX_DEPTH)
    try:
        declaration = Declaration.model_validate(data)
    except ValidationError as exc:
        problems = exc.errors()
        code = "invalid_protocol" if problems[0]["loc"][:1] == ("protocol",) else "invalid_declaration"
        raise BadRequest(f"the declaration is not valid: {first_problem(problems)}", code=code) from None
    schemas: list[tuple[dict[str, Any], str]] = []
    patterns = 0
    for i, tool in enumerate(declaration.tools):
        where = f"tools[{i}].parameters ({tool.name})"
        patterns += _checked(tool.parameters, where).pattern_cost
        if tool.parameters.get("type") != "object":
            raise Unprocessable(
                f'{where}: must be a JSON Schema with "type": "object"', code="invalid_schema"
            )
        if NOTIFICATION in (tool.parameters.get("properties") or {}):
            raise Unprocessable(
                f"{where}: {NOTIFICATION!r} is added by the server to every device tool; do not declare it",
                code="invalid_schema",
            )
        schemas.append((tool.parameters, where))
        if tool.result is not None:
            where = f"tools[{i}].result ({tool.name})"
            patterns += _checked(tool.result, where).pattern_cost
            schemas.append((tool.result, where))
    if patterns > MAX_DECLARATION_PATTERN_COST:
        raise Unprocessable(
            f"the declaration's patterns cost {patterns} to compile together, at most "
            f"{MAX_DECLARATION_PATTERN_COST}: use fewer or simpler patterns (see each schema's message "
            "for what a pattern costs), or declare fewer tools",
            code="invalid_schema",
        )
    for schema, where in schemas:
        _compiles(schema, where)
    return declaration


def _checked(schema: dict[str, Any], where: str) -> SchemaBounds:
    """The schema's bounds, once it is known to be JSON Schema within them (not compiled yet)."""
    try:
        bounds = schema_bounds(schema)
    except SchemaTooCostly as exc:
        raise Unprocessable(f"{where}: {exc}", code="invalid_schema") from None
    _invalid_when(lambda: jsonschema_rs.meta.validate(schema), where)
    return bounds


def _compiles(schema: dict[str, Any], where: str) -> None:
    _invalid_when(lambda: compiled(_compact(schema)), where)


def _invalid_when(check: Callable[[], object], where: str) -> None:
    try:
        check()
    except (jsonschema_rs.ValidationError, jsonschema_rs.ReferencingError, ValueError) as exc:
        reason = str(exc).split("\n", 1)[0]
        raise Unprocessable(f"{where}: not a valid JSON Schema: {reason}", code="invalid_schema") from None


@lru_cache(maxsize=256)
def load_declaration(raw: bytes) -> Declaration:
    """A stored declaration (checked when it was declared), parsed once per process."""
    return Declaration.model_validate_json(raw)


def _compact(schema: dict[str, Any]) -> str:
    return json.dumps(schema, separators=(",", ":"), sort_keys=True, ensure_ascii=False)

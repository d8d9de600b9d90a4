"""How much work an app-declared JSON Schema may ask of the server each time it checks a value.

Checking a value walks the schema with every ``$ref`` replaced by what it points at, and every
branch of a combinator checks the same value again: 17 levels of a two-branch ``oneOf`` over a
``$ref`` are 2**17 checks of one value from a 2 KB schema, seconds of a process's only thread. So a
declared schema's ``$ref`` must point inside it (``#/...``) and never back at a schema that contains
it, and the schema as expanded is bounded: its :func:`schema_cost` (each subschema and each value a
keyword lists, such as ``enum``'s), how many combinators it has and how deeply it nests.

A check then costs at most about the schema's cost times the number of values checked, which
:func:`check_work` bounds too (``MAX_CHECK_WORK``: about a third of a second at worst, measured
on an ``anyOf`` of ``const`` branches, the slowest keyword per step).
"""

from __future__ import annotations

from typing import Any
from urllib.parse import unquote

from ..errors import TruloopError

MAX_SCHEMA_COST = 2048
"""Subschemas and listed values a schema may have once every ``$ref`` is expanded."""
MAX_COMBINATORS = 64
"""``oneOf``, ``anyOf``, ``allOf``, ``not`` and ``if`` keywords a schema may have, expanded."""
MAX_SCHEMA_DEPTH = 32
"""How deeply subschemas may nest, expanded (a level of data is one level, or a few with combinators)."""
MAX_CHECK_WORK = 2_000_000
"""A schema's cost times the values one check covers (a 2,048-cost schema checks up to ~1,000 values)."""

COMBINATORS = ("oneOf", "anyOf", "allOf", "not", "if")
_ONE = (
    "additionalProperties", "additionalItems", "items", "contains", "propertyNames", "not", "if",
    "then", "else", "unevaluatedItems", "unevaluatedProperties", "contentSchema",
)  # fmt: skip
_MANY = ("allOf", "anyOf", "oneOf", "prefixItems", "items")
_NAMED = ("properties", "patternProperties", "dependentSchemas", "dependencies")
_NOT_APPLIED = ("$defs", "definitions")
"""Reached through a ``$ref`` only."""
_TOO_DEEP = f"nests too deep: with every $ref expanded, subschemas nest more than {MAX_SCHEMA_DEPTH} levels"
_DYNAMIC = ("$anchor", "$dynamicRef", "$dynamicAnchor", "$recursiveRef", "$recursiveAnchor")


class SchemaTooCostly(TruloopError, ValueError):
    """A declared schema could make checking a value take too long; the message says why and the fix."""


def schema_cost(schema: dict[str, Any]) -> int:
    """The schema's cost (see the module), or :class:`SchemaTooCostly` when it is over a bound."""
    return _Walk(schema).cost()


def check_work(cost: int, instance: Any) -> str | None:
    """Why checking ``instance`` against a schema of ``cost`` would be too much work, or None."""
    budget = MAX_CHECK_WORK // max(cost, 1)
    if _values(instance, budget) > budget:
        return (
            f"too large to check against the declared schema: a schema of its size takes at most "
            f"{budget} values (numbers, strings, items and fields)"
        )
    return None


def _values(instance: Any, limit: int) -> int:
    """How many JSON values ``instance`` holds, counting stopped once past ``limit``."""
    count, stack = 0, [instance]
    while stack and count <= limit:
        value = stack.pop()
        count += 1
        if isinstance(value, dict):
            stack.extend(value.values())
        elif isinstance(value, list):
            stack.extend(value)
    return count


class _Walk:
    """One walk of a schema, each ``$ref`` expanded; each target's cost is counted once."""

    def __init__(self, root: dict[str, Any]) -> None:
        self.root = root
        self.known: dict[int, tuple[int, int, int]] = {}
        """``id`` of a subschema -> its cost, combinators and height, once walked."""
        self.open: set[int] = set()

    def cost(self) -> int:
        cost, combinators, _ = self._node(self.root, depth=1, top=True)
        if cost > MAX_SCHEMA_COST:
            raise SchemaTooCostly(
                f"too costly to check: with every $ref expanded it has more than {MAX_SCHEMA_COST} "
                "subschemas and listed values; use fewer branches or $refs"
            )
        if combinators > MAX_COMBINATORS:
            raise SchemaTooCostly(
                f"too costly to check: with every $ref expanded it has more than {MAX_COMBINATORS} "
                "oneOf/anyOf/allOf/not/if keywords"
            )
        return cost

    def _node(self, schema: Any, *, depth: int, top: bool = False) -> tuple[int, int, int]:
        if not isinstance(schema, dict):
            return 1, 0, 1  # true / false, or what the meta-schema refuses anyway
        key = id(schema)
        if key in self.open:
            raise SchemaTooCostly(
                "a $ref leads back to a schema that contains it: recursive schemas are not accepted"
            )
        if (known := self.known.get(key)) is None:
            self.open.add(key)
            known = self._walk(schema, depth=depth, top=top)
            self.open.discard(key)
            self.known[key] = known
        if depth + known[2] - 1 > MAX_SCHEMA_DEPTH:
            raise SchemaTooCostly(_TOO_DEEP)
        return known

    def _walk(self, schema: dict[str, Any], *, depth: int, top: bool) -> tuple[int, int, int]:
        if depth > MAX_SCHEMA_DEPTH:
            raise SchemaTooCostly(_TOO_DEEP)
        for keyword in _DYNAMIC:
            if keyword in schema:
                raise SchemaTooCostly(f'{keyword} is not supported: refer to subschemas with "$ref": "#/..."')
        if not top and ("$id" in schema or isinstance(schema.get("id"), str)):
            raise SchemaTooCostly("$id is only accepted at the top of a declared schema")
        cost, combinators, height = 1, sum(k in schema for k in COMBINATORS), 0
        children = list(self._children(schema))
        if "$ref" in schema:
            children.append(self._target(schema["$ref"]))
        for child in children:
            c_cost, c_combinators, c_height = self._node(child, depth=depth + 1)
            cost += c_cost
            combinators += c_combinators
            height = max(height, c_height)
            if cost > MAX_SCHEMA_COST or combinators > MAX_COMBINATORS:
                break  # already over: the caller says so
        return cost, combinators, height + 1

    def _children(self, schema: dict[str, Any]) -> list[Any]:
        children: list[Any] = []
        for keyword, value in schema.items():
            if keyword in _NOT_APPLIED or keyword == "$ref":
                continue
            if keyword in _ONE and isinstance(value, dict | bool):
                children.append(value)
            elif keyword in _MANY and isinstance(value, list):
                children.extend(value)
            elif keyword in _NAMED and isinstance(value, dict):
                children.extend(v for v in value.values() if isinstance(v, dict | bool))
            elif isinstance(value, list | dict):  # enum, required, dependentRequired, ...: listed values
                children.extend([None] * len(value))
        return children

    def _target(self, ref: Any) -> Any:
        """What a local ``$ref`` (``#`` or ``#/a/b``) points at."""
        if not isinstance(ref, str) or not (ref == "#" or ref.startswith("#/")):
            raise SchemaTooCostly(
                f'$ref {ref!r}: only references within the schema are accepted ("#" or "#/$defs/name")'
            )
        target: Any = self.root
        for token in ref[2:].split("/") if ref != "#" else ():
            name = unquote(token).replace("~1", "/").replace("~0", "~")
            if isinstance(target, dict) and name in target:
                target = target[name]
            elif isinstance(target, list) and name.isdigit() and int(name) < len(target):
                target = target[int(name)]
            else:
                raise SchemaTooCostly(f"$ref {ref!r} points at nothing in the schema")
        return target

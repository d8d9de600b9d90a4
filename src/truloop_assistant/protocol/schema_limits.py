"""How much work an app-declared JSON Schema may ask of the server each time it checks a value.

Checking a value walks the schema with every ``$ref`` replaced by what it points at, and every
branch of a combinator checks the same value again: 17 levels of a two-branch ``oneOf`` over a
``$ref`` are 2**17 checks of one value from a 2 KB schema, seconds of a process's only thread. So a
declared schema's ``$ref`` must point inside it (``#/...``) and never back at a schema that contains
it, and the schema as expanded is bounded: its :func:`schema_cost` (each subschema and each value a
keyword lists, such as ``enum``'s), how many combinators it has and how deeply it nests.

A check then costs at most about the schema's cost times the number of values checked, which
:mod:`.check_work` bounds too.

Patterns (``pattern``, ``patternProperties``' names) cost by their text (:mod:`.patterns`): a schema
has at most ``MAX_PATTERNS`` different ones, their costs with every ``$ref`` expanded stay within
``MAX_SCHEMA_PATTERN_WORK``, and what they cost to compile is bounded per declaration too. A pattern
is matched only against strings of at most ``MAX_PATTERN_INPUT`` characters: in the schema compiled
for checks each ``pattern`` stands behind that ``maxLength`` (:func:`bounded_inputs`), so a longer
string fails without being matched, and a field name longer than that is refused where
``patternProperties`` would match it. The strings a check may match are bounded as well
(:mod:`.check_work`).
"""

from __future__ import annotations

import copy
from dataclasses import dataclass
from typing import Any
from urllib.parse import unquote

from ..errors import TruloopError
from .patterns import pattern_cost

MAX_SCHEMA_COST = 2048
"""Subschemas and listed values a schema may have once every ``$ref`` is expanded."""
MAX_COMBINATORS = 64
"""``oneOf``, ``anyOf``, ``allOf``, ``not`` and ``if`` keywords a schema may have, expanded."""
MAX_SCHEMA_DEPTH = 32
"""How deeply subschemas may nest, expanded (a level of data is one level, or a few with combinators)."""
MAX_PATTERNS = 32
"""Different patterns a schema may have (``pattern`` values and ``patternProperties`` names)."""
MAX_SCHEMA_PATTERN_WORK = 4096
"""What a schema's patterns may cost together with every ``$ref`` expanded: what each character of a
checked string may cost at most."""
MAX_PATTERN_INPUT = 1000
"""The longest string (or field name) a pattern is matched against, in characters."""

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


@dataclass(frozen=True)
class SchemaBounds:
    """What checks against a schema may cost (see the module)."""

    cost: int
    """Subschemas and listed values, every ``$ref`` expanded."""
    pattern_cost: int = 0
    """What its different patterns cost to compile."""
    pattern_work: int = 0
    """What its patterns cost per character checked, every ``$ref`` expanded."""
    names_matched: bool = False
    """Whether it has ``patternProperties``, whose patterns are matched against field names."""


def schema_bounds(schema: dict[str, Any]) -> SchemaBounds:
    """The schema's bounds (see the module), or :class:`SchemaTooCostly` when it is over one."""
    return _Walk(schema).bounds()


def schema_cost(schema: dict[str, Any]) -> int:
    """The schema's cost (see the module), or :class:`SchemaTooCostly` when it is over a bound."""
    return schema_bounds(schema).cost


def bounded_inputs(schema: dict[str, Any]) -> dict[str, Any]:
    """A copy of the schema to compile for checks, in which each ``pattern`` is matched only against
    strings of at most ``MAX_PATTERN_INPUT`` characters: a longer one does not fit.

    The pattern moves into an ``if``/``then`` behind that ``maxLength`` (drafts 4 and 6, which have
    no ``if``: an ``anyOf`` whose first branch takes the longer strings). Every way the engine checks
    a subschema (passes or fails, every error, the annotations ``unevaluated*`` reads) evaluates
    ``if`` first and the ``then`` only for strings it takes, and an ``anyOf`` stops at its first
    branch that fits; a ``maxLength`` beside the pattern would be passed by the engine's collecting
    every error of a failed ``anyOf`` branch, pattern included.
    """
    bounded = copy.deepcopy(schema)
    walk = _Walk(bounded)
    walk.bounds()
    short = {"maxLength": MAX_PATTERN_INPUT}
    old_draft = any(f"draft-0{n}/" in str(bounded.get("$schema", "")) for n in (4, 6))
    for node in walk.patterned:
        pattern = {"pattern": node.pop("pattern")}
        if old_draft:
            guards = [dict(short), {"anyOf": [{"not": dict(short)}, pattern]}]
        else:
            guards = [{"if": dict(short), "then": pattern, "else": dict(short)}]
        node["allOf"] = [*node["allOf"], *guards] if isinstance(node.get("allOf"), list) else guards
    return bounded


class _Walk:
    """One walk of a schema, each ``$ref`` expanded; each target's cost is counted once."""

    def __init__(self, root: dict[str, Any]) -> None:
        self.root = root
        self.known: dict[int, tuple[int, int, int, int]] = {}
        """``id`` of a subschema -> its cost, combinators, height and pattern work, once walked."""
        self.open: set[int] = set()
        self.patterns: dict[str, int] = {}
        """Each different pattern -> its cost."""
        self.patterned: list[dict[str, Any]] = []
        """The subschemas that have a ``pattern``."""
        self.names_matched = False

    def bounds(self) -> SchemaBounds:
        cost, combinators, _, work = self._node(self.root, depth=1, top=True)
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
        if len(self.patterns) > MAX_PATTERNS:
            raise SchemaTooCostly(
                f"too costly to check: it has {len(self.patterns)} different patterns, at most "
                f"{MAX_PATTERNS} patterns per schema"
            )
        if work > MAX_SCHEMA_PATTERN_WORK:
            raise SchemaTooCostly(
                f"too costly to check: its patterns cost {work} with every $ref expanded, at most "
                f"{MAX_SCHEMA_PATTERN_WORK}; use fewer or simpler patterns, or fewer $refs to them"
            )
        return SchemaBounds(cost, sum(self.patterns.values()), work, self.names_matched)

    def _node(self, schema: Any, *, depth: int, top: bool = False) -> tuple[int, int, int, int]:
        if not isinstance(schema, dict):
            return 1, 0, 1, 0  # true / false, or what the meta-schema refuses anyway
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

    def _walk(self, schema: dict[str, Any], *, depth: int, top: bool) -> tuple[int, int, int, int]:
        if depth > MAX_SCHEMA_DEPTH:
            raise SchemaTooCostly(_TOO_DEEP)
        for keyword in _DYNAMIC:
            if keyword in schema:
                raise SchemaTooCostly(f'{keyword} is not supported: refer to subschemas with "$ref": "#/..."')
        if not top and ("$id" in schema or isinstance(schema.get("id"), str)):
            raise SchemaTooCostly("$id is only accepted at the top of a declared schema")
        cost, combinators, height, work = 1, sum(k in schema for k in COMBINATORS), 0, self._patterns(schema)
        children = list(self._children(schema))
        if "$ref" in schema:
            children.append(self._target(schema["$ref"]))
        for child in children:
            c_cost, c_combinators, c_height, c_work = self._node(child, depth=depth + 1)
            cost += c_cost
            combinators += c_combinators
            height = max(height, c_height)
            work += c_work
            if cost > MAX_SCHEMA_COST or combinators > MAX_COMBINATORS or work > MAX_SCHEMA_PATTERN_WORK:
                break  # already over: the caller says so
        return cost, combinators, height + 1, work

    def _patterns(self, schema: dict[str, Any]) -> int:
        """What the subschema's own patterns cost; :class:`SchemaTooCostly` for one refused."""
        patterns: list[str] = []
        if isinstance(pattern := schema.get("pattern"), str):
            patterns.append(pattern)
            self.patterned.append(schema)
        if isinstance(named := schema.get("patternProperties"), dict):
            patterns.extend(named)
            self.names_matched = True
        work = 0
        for text in patterns:
            cost = pattern_cost(text)
            if isinstance(cost, str):
                raise SchemaTooCostly(cost)
            self.patterns[text] = cost
            work += cost
        return work

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

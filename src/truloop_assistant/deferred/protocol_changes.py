"""What in a protocol document would break an app written against an earlier one of the same version.

Within a protocol version the published document may only grow: an optional field, a description,
an error code. Anything an app of that version could trip on needs a new version instead: a method,
error or field removed or renamed, a type changed, a field newly required, a ``params`` field no
longer always sent, a value an app may answer with refused, or one it may be sent added; a method
new to the version (its apps would be sent a request they do not know).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

Schema = Mapping[str, Any]

SAME = ("protocol_version", "jsonrpc", "custom_type")
"""Top-level keys an app relies on as they are."""
METHOD_FACTS = ("tool", "since", "answered_by")
"""A method's facts besides its schemas, each kept as it is within a version."""
UPPER = ("maxItems", "maxLength", "maximum", "exclusiveMaximum", "maxProperties")
LOWER = ("minItems", "minLength", "minimum", "exclusiveMinimum", "minProperties")
"""Bounds a value the app answers with must keep: neither may tighten within a version."""


def breaking_changes(published: Schema, current: Schema) -> list[str]:
    """Each change from ``published`` to ``current`` that an app written against ``published`` could
    trip on, as ``where: what`` (none when ``current`` only adds to it)."""
    found: list[str] = []
    for key in SAME:
        if published.get(key) != current.get(key):
            found.append(f"{key}: {published.get(key)!r} became {current.get(key)!r}")
    methods, now = published.get("methods", {}), current.get("methods", {})
    for name, method in methods.items():
        where = f"methods.{name}"
        if name not in now:
            found.append(f"{where}: removed (or renamed)")
            continue
        found += [
            f"{where}.{fact}: {method.get(fact)!r} became {now[name].get(fact)!r}"
            for fact in METHOD_FACTS
            if method.get(fact) != now[name].get(fact)
        ]
        found += _schema(method["params"], now[name]["params"], f"{where}.params", sent=True)
        found += _schema(method["result"], now[name]["result"], f"{where}.result", sent=False)
    version = published.get("protocol_version")
    found += [
        f"methods.{name}: new in version {version}, whose apps do not know it: publish it in a new version"
        for name in now
        if name not in methods
    ]
    errors, errors_now = published.get("errors", {}), current.get("errors", {})
    for code, error in errors.items():
        where = f"errors.{code}"
        if code not in errors_now:
            found.append(f"{where}: removed")
        elif (message := error.get("message")) != errors_now[code].get("message"):
            found.append(f"{where}.message: {message!r} became {errors_now[code].get('message')!r}")
        elif "data" in error:
            found += _schema(error["data"], errors_now[code].get("data", {}), f"{where}.data", sent=False)
    return found


def _schema(old: Schema, new: Schema, where: str, *, sent: bool) -> list[str]:
    """``sent``: the server sends what fits it (``params``); otherwise the app answers with it."""
    return _Walk(old, new, sent=sent).compare(old, new, where)


class _Walk:
    def __init__(self, old_root: Schema, new_root: Schema, *, sent: bool) -> None:
        self.roots = (old_root, new_root)
        self.sent = sent
        self.found: list[str] = []

    def compare(self, old: Any, new: Any, where: str) -> list[str]:
        old, new = self._resolved(old, 0), self._resolved(new, 1)
        if not isinstance(old, Mapping) or not isinstance(new, Mapping):
            if old != new:
                self.found.append(f"{where}: {old!r} became {new!r}")
            return self.found
        if _kind(old) != _kind(new):
            self.found.append(f"{where}: the type {_kind(old)} became {_kind(new)}")
            return self.found
        if "const" in old and old["const"] != new.get("const"):
            self.found.append(f"{where}: the value {old['const']!r} became {new.get('const')!r}")
        if "enum" in old or "enum" in new:
            self._enum(old.get("enum"), new.get("enum"), where)
        if not self.sent:
            self._bounds(old, new, where)
        self._object(old, new, where)
        if isinstance(old.get("items"), Mapping):
            self.compare(old["items"], new.get("items", {}), f"{where}[]")
        for key in ("anyOf", "oneOf", "allOf"):
            for i, (a, b) in enumerate(zip(old.get(key, ()), new.get(key, ()), strict=False)):
                self.compare(a, b, f"{where}.{key}[{i}]")
        return self.found

    def _object(self, old: Schema, new: Schema, where: str) -> None:
        properties, now = old.get("properties", {}), new.get("properties", {})
        required, required_now = set(old.get("required", ())), set(new.get("required", ()))
        for name, schema in properties.items():
            if name not in now:
                self.found.append(f"{where}.{name}: removed (or renamed)")
                continue
            if self.sent and name in required and name not in required_now:
                self.found.append(f"{where}.{name}: no longer always sent (it was required)")
            self.compare(schema, now[name], f"{where}.{name}")
        for name in sorted(required_now - required):
            self.found.append(f"{where}.{name}: newly required (add it as optional, or in a new version)")
        if not self.sent and old.get("additionalProperties", True) is not False:
            if new.get("additionalProperties", True) is False:
                self.found.append(f"{where}: no longer takes fields it does not name")

    def _enum(self, old: list[Any] | None, new: list[Any] | None, where: str) -> None:
        """A value list (None: any value) may shrink where the server sends, grow where the app answers."""
        before, after = set(map(repr, old or ())), set(map(repr, new or ()))
        if self.sent and old is not None and (new is None or after - before):
            added = ", ".join(sorted(after - before)) if new is not None else "any value"
            self.found.append(f"{where}: may now be sent {added}, which its apps do not know")
        if not self.sent and new is not None and (old is None or before - after):
            gone = ", ".join(sorted(before - after)) if old is not None else "values it does not list"
            self.found.append(f"{where}: no longer takes {gone}")

    def _bounds(self, old: Schema, new: Schema, where: str) -> None:
        for key in (*UPPER, *LOWER):
            if key in new and (
                key not in old or (new[key] < old[key] if key in UPPER else new[key] > old[key])
            ):
                self.found.append(f"{where}: {key} {old.get(key, 'none')} became {new[key]}")

    def _resolved(self, schema: Any, side: int) -> Any:
        """``schema`` with a ``$ref`` into its document's ``$defs`` followed."""
        seen = 0
        while isinstance(schema, Mapping) and isinstance(ref := schema.get("$ref"), str) and seen < 32:
            name = ref.removeprefix("#/$defs/")
            schema = self.roots[side].get("$defs", {}).get(name, {})
            seen += 1
        return schema


def _kind(schema: Schema) -> str:
    """What sort of value a schema takes: its type, or how its alternatives combine."""
    if "type" in schema:
        kind = schema["type"]
        return "/".join(kind) if isinstance(kind, list) else str(kind)
    for key in ("anyOf", "oneOf", "allOf"):
        if key in schema:
            return f"{key} of {len(schema[key])}"
    if "enum" in schema or "const" in schema:
        return "a listed value"
    return "anything"

"""Checking a value against a declared JSON Schema: a phone's result, or the model's arguments.

A schema is compiled once per process (the same declaration is read on every step of the user's
turns), as :func:`.schema_limits.bounded_inputs` bounds it, and only after its bounds were checked:
a schema kept from before a bound existed is never compiled. Each check then runs on the event loop
within :func:`.check_work.check_work` (see that module for why no thread or time limit is used).
"""

from __future__ import annotations

import json
from functools import lru_cache
from typing import Any

import jsonschema_rs

from .check_work import check_work
from .schema_limits import MAX_PATTERN_INPUT, SchemaBounds, SchemaTooCostly, bounded_inputs, schema_bounds

MAX_REGEX_BYTES = 2 * 1024 * 1024
"""What the engine may compile one pattern to: twice what the costliest pattern accepted needs, so
that an estimate too low (:mod:`.patterns`) still cannot make a compilation long."""
MAX_MESSAGE_CHARS = 400
"""A problem's description at most; a value it quotes is shortened to fit."""
_QUOTED_CHARS = 60


@lru_cache(maxsize=512)
def compiled(schema_json: str) -> jsonschema_rs.Validator:
    """A validator for a schema given as JSON (within its bounds); references to other documents are
    never fetched, and patterns are matched in linear time (no look-around or back-references)."""
    return jsonschema_rs.validator_for(
        bounded_inputs(json.loads(schema_json)),
        offline=True,
        pattern_options=jsonschema_rs.RegexOptions(size_limit=MAX_REGEX_BYTES),
    )


@lru_cache(maxsize=512)
def _checker(schema_json: str) -> tuple[jsonschema_rs.Validator, SchemaBounds] | str:
    """The schema's validator and bounds, or why it cannot be used (one kept before today's bounds)."""
    try:
        bounds = schema_bounds(json.loads(schema_json))
        return compiled(schema_json), bounds
    except (
        SchemaTooCostly,
        jsonschema_rs.ValidationError,
        jsonschema_rs.ReferencingError,
        ValueError,
    ) as exc:
        return str(exc).split("\n", 1)[0]


def schema_problem(schema_json: str, instance: Any) -> str | None:
    """The first way ``instance`` does not fit the schema (``where: what``), or None when it fits.

    The work is bounded (:mod:`.schema_limits`): a value too large for the schema is refused unchecked.
    """
    checker = _checker(schema_json)
    if isinstance(checker, str):
        return f"the declared schema cannot be used: {checker}"
    validator, bounds = checker
    if too_much := check_work(bounds, instance):
        return too_much
    try:
        validator.validate(instance)  # stops at the first error (iter_errors finds them all)
    except jsonschema_rs.ValidationError as error:
        where = "/".join(str(p) for p in error.instance_path)
        return _shortened(f"{where or 'result'}: {_described(error)}")
    return None


def _described(error: jsonschema_rs.ValidationError) -> str:
    """The error's message, the value it starts with shortened, and why a long string fails a pattern."""
    message = error.message
    quoted = json.dumps(error.instance, ensure_ascii=False, separators=(",", ":"))
    if len(quoted) > _QUOTED_CHARS and message.startswith(quoted):
        message = f"{quoted[: _QUOTED_CHARS - 2]}…{quoted[-1]}{message[len(quoted) :]}"
    kind = error.kind
    if isinstance(kind, jsonschema_rs.ValidationErrorKind.MaxLength) and kind.limit == MAX_PATTERN_INPUT:
        message += f" (patterns are matched against strings of at most {MAX_PATTERN_INPUT} characters)"
    return message


def _shortened(text: str) -> str:
    if len(text) <= MAX_MESSAGE_CHARS:
        return text
    half = MAX_MESSAGE_CHARS // 2 - 1
    return f"{text[:half]}…{text[-half:]}"

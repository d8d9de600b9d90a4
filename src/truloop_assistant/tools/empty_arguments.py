"""An optional argument a model sends empty (null, a blank text, an empty list) is taken as not given.

Models often fill every argument they see, with ``null``, ``""`` or ``[]`` for those they have no
value for. Each means "nothing to say here", so it must change nothing: the argument is dropped
before validation and takes its default, whatever its type (a ``limit`` sent as null is the usual
limit; a blank ``location`` keeps the event's place). Required arguments are validated as sent.
"""

from __future__ import annotations

from collections.abc import Collection
from typing import Any

from pydantic_ai.toolsets.abstract import SchemaValidatorProt
from pydantic_core import SchemaValidator, from_json, to_json


def is_empty(value: Any) -> bool:
    """Whether a value says nothing: None, a blank text or an empty list."""
    return value is None or value == [] or (isinstance(value, str) and not value.strip())


class EmptyOptionalsDropped:
    """A tool's argument validator that first drops the ``optional`` arguments sent empty."""

    def __init__(self, validator: SchemaValidator | SchemaValidatorProt, optional: Collection[str]) -> None:
        self.validator = validator
        self.optional = frozenset(optional)

    def _without_empty(self, args: Any) -> dict[str, Any] | None:
        """``args`` without its empty optional arguments; None when there are none to drop."""
        if not isinstance(args, dict) or not any(k in self.optional and is_empty(v) for k, v in args.items()):
            return None
        return {k: v for k, v in args.items() if not (k in self.optional and is_empty(v))}

    def validate_json(
        self, input: str | bytes | bytearray, *, allow_partial: Any = False, **kwargs: Any
    ) -> Any:
        try:
            kept = self._without_empty(from_json(input, allow_partial=allow_partial))
        except ValueError:  # not JSON: the validator says so, as it would have
            kept = None
        if kept is not None:
            input = to_json(kept)
        return self.validator.validate_json(input, allow_partial=allow_partial, **kwargs)

    def validate_python(self, input: Any, *, allow_partial: Any = False, **kwargs: Any) -> Any:
        kept = self._without_empty(input)
        return self.validator.validate_python(
            input if kept is None else kept, allow_partial=allow_partial, **kwargs
        )

"""Every error the package defines joins the one tree that ``errors.py`` draws, and the drawing names it."""

from __future__ import annotations

import importlib
import inspect
import pkgutil

from pydantic_ai import ToolFailed

import truloop_assistant
from truloop_assistant import errors


def defined_errors() -> dict[str, type[BaseException]]:
    found: dict[str, type[BaseException]] = {}
    for info in pkgutil.walk_packages(truloop_assistant.__path__, "truloop_assistant."):
        if info.name.endswith("__main__"):
            continue
        module = importlib.import_module(info.name)
        for name, value in vars(module).items():
            if (
                inspect.isclass(value)
                and issubclass(value, BaseException)
                and value.__module__ == info.name
                and not name.startswith("_")
            ):
                found[f"{info.name}.{name}"] = value
    return found


def control_flow(cls: type[BaseException]) -> bool:
    """A signal rather than an error: a stop (a ``BaseException``, like ``KeyboardInterrupt``), or a
    failed tool result the model reads (pydantic-ai's ``ToolFailed``)."""
    return not issubclass(cls, Exception) or issubclass(cls, ToolFailed)


def test_every_error_of_the_package_is_rooted_and_drawn() -> None:
    found = {where: cls for where, cls in defined_errors().items() if not control_flow(cls)}
    assert len(found) > 20
    loose = sorted(where for where, cls in found.items() if not issubclass(cls, errors.TruloopError))
    assert loose == []
    drawing = errors.__doc__ or ""
    undrawn = sorted(where for where, cls in found.items() if f" {cls.__name__} " not in drawing)
    assert undrawn == []
    names = [cls.__name__ for cls in found.values()]
    assert len(names) == len(set(names)), "two errors share a name"

"""``truloop-assistant``: serve the API, run a worker, or run everything locally with ``dev``.

This module holds the parser and the dispatch; each command is a module of ``commands/``, imported
only when it runs, so ``--help`` and ``--version`` answer at once.
"""

from __future__ import annotations

import argparse
import importlib
import secrets
import sys
from collections.abc import Sequence
from types import ModuleType
from typing import TYPE_CHECKING, Any

from .commands.startup import PACKAGE

if TYPE_CHECKING:
    from .config import Settings

COMMANDS = {
    "serve": "run the HTTP API",
    "worker": "consume queued turns and resumes",
    "dev": "API + worker in one process, local channel, offline model",
    "doctor": "check the settings, Redis, the model's key and the Sendbird token, and say what to fix",
    "inspect": "why a conversation got no answer: its drain, inbox and undelivered messages, recent "
    "admission decisions, turns, tool calls and failures",
    "dead-letters": "list, replay or purge the events conversations gave up after their retries",
    "sendbird": "Sendbird administration",
    "users": "manage the built-in user directory",
    "guests": "guests reached by phone: erase one by number",
    "kb": "knowledge base administration",
    "eval": "measure how well a model picks the assistant's tools (accuracy per group of requests)",
    "token": "print a device JWT for a user, signed with TRULOOP_JWT_SECRET (for development and tests)",
}
"""Commands defined in ``commands/<name>.py`` (``-`` in a name is ``_`` in its module's), with their line
in ``--help`` (the module is imported only when its command runs)."""


def main(argv: Sequence[str] | None = None) -> int:
    arguments = list(sys.argv[1:] if argv is None else argv)
    command = next((arg for arg in arguments if not arg.startswith("-")), None)
    args = build_parser(command).parse_args(arguments)

    from .config import ConfigError

    try:
        _configure_logging(doctor=args.command == "doctor")
        module = _command_module(args.command)
        if args.command in ("users", "guests", "inspect", "dead-letters", "kb"):
            return int(module.run(args, _offline_settings(model="offline")))
        if args.command == "eval":
            return int(module.run(args, _offline_settings()))
        return int(module.run(args))
    except ConfigError as exc:
        print(f"{PACKAGE}: {exc}", file=sys.stderr)
        return 2


def build_parser(command: str | None = None) -> argparse.ArgumentParser:
    """The command line; of the ``commands/`` modules only ``command``'s is imported (for its options)."""
    parser = argparse.ArgumentParser(
        prog=PACKAGE, description="Serve the API, run a worker, or run everything locally with dev."
    )
    parser.add_argument("--version", action=_Version, help="print the version and exit")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    for name, help_line in COMMANDS.items():
        if name == command:
            _command_module(name).add_parser(sub)
        else:
            sub.add_parser(name, help=help_line)
    return parser


class _Version(argparse.Action):
    """``--version``: the installed package's version (read only when asked for)."""

    def __init__(self, option_strings: Sequence[str], dest: str, **kwargs: Any) -> None:
        super().__init__(option_strings, dest, nargs=0, default=argparse.SUPPRESS, **kwargs)

    def __call__(self, parser: argparse.ArgumentParser, *_: Any) -> None:
        from importlib.metadata import version

        print(f"{parser.prog} {version(PACKAGE)}")
        parser.exit()


def _command_module(name: str) -> ModuleType:
    return importlib.import_module(f"{__package__}.commands.{name.replace('-', '_')}")


def _configure_logging(*, doctor: bool) -> None:
    """Log as ``TRULOOP_LOG_LEVEL`` / ``TRULOOP_LOG_FORMAT`` say; ``doctor`` reports a bad value instead."""
    from .config import ConfigError, load_log_settings
    from .logs import configure_logging

    try:
        settings = load_log_settings()
    except ConfigError:
        if not doctor:
            raise
        configure_logging()
        return
    configure_logging(settings.log_level, settings.log_format)


def _offline_settings(**overrides: Any) -> Settings:
    """Settings for commands that only touch Redis: no channel or token checks apply to them.

    ``model="offline"`` for commands that never ask a model, so a broken ``TRULOOP_MODEL`` does not stop them.
    """
    from .config import load_settings

    return load_settings(channel="local", jwt_secret=secrets.token_urlsafe(32), **overrides)


if __name__ == "__main__":
    raise SystemExit(main())

"""Argument parsing, the command table and one-line error reporting."""

from __future__ import annotations

import argparse
import importlib
import os
import sys
from collections.abc import Sequence
from types import ModuleType

from haversack.cli._common import add_common

__all__ = ["COMMANDS", "main"]

#: Sub-command name -> module (in this package) implementing it, in ``--help`` order.
COMMANDS: dict[str, str] = {
    "packs": "haversack.cli.packs",
    "render": "haversack.cli.render",
    "tools": "haversack.cli.tools",
    "call": "haversack.cli.call",
    "check": "haversack.cli.check",
    "serve": "haversack.cli.serve",
    "demo": "haversack.cli.demo",
    "new-pack": "haversack.cli.new_pack",
}

#: Exit status for usage and composition errors (1 means "ran, but the answer is no").
EXIT_ERROR = 2


def build_parser() -> argparse.ArgumentParser:
    """The parser with one sub-parser per entry of :data:`COMMANDS`."""
    parser = argparse.ArgumentParser(
        prog="haversack",
        description="Inspect and use the tool packs installed in this environment.",
        epilog="Set HAVERSACK_DEBUG=1 for tracebacks and HAVERSACK_TRACE=1 to trace hook calls.",
    )
    subs = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    for name, module_name in COMMANDS.items():
        module: ModuleType = importlib.import_module(module_name)
        sub = subs.add_parser(name, help=module.HELP, description=module.HELP)
        add_common(sub)
        module.add_arguments(sub)
        sub.set_defaults(_run=module.run)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; returns the exit status (0 ok, 1 check/call failed, 2 error)."""
    from haversack.errors import HaversackError

    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        status: int = args._run(args)
    except HaversackError as exc:
        if os.environ.get("HAVERSACK_DEBUG", "").strip() not in ("", "0"):
            raise
        print(f"haversack: error: {exc}", file=sys.stderr)
        print(f"hint: {_hint(exc)}", file=sys.stderr)
        return EXIT_ERROR
    except BrokenPipeError:  # `haversack tools | head`
        return 0
    return status


def _hint(exc: Exception) -> str:
    from haversack.errors import NameConflictError, PackConfigError, PackLoadError

    if isinstance(exc, NameConflictError):
        return "`haversack check` lists every conflict; see docs/configuration.md (prefix, rename)."
    if isinstance(exc, PackConfigError):
        return "check the [tool.haversack] options; see docs/configuration.md."
    if isinstance(exc, PackLoadError):
        return "`haversack packs` shows every pack's status; drop --strict to leave it out."
    return "set HAVERSACK_DEBUG=1 for the traceback."

"""Argument parsing, the command table and one-line error reporting."""

from __future__ import annotations

import argparse
import importlib
import os
import sys
from collections.abc import Sequence
from types import ModuleType

from haversack.cli._common import add_common
from haversack.cli._terminal import printable

__all__ = ["COMMANDS", "main"]

#: Sub-command name -> module (in this package) implementing it, in ``--help`` order.
COMMANDS: dict[str, str] = {
    "packs": "haversack.cli.packs",
    "render": "haversack.cli.render",
    "tools": "haversack.cli.tools",
    "call": "haversack.cli.call",
    "check": "haversack.cli.check",
    "serve": "haversack.cli.serve",
    "new-pack": "haversack.cli.new_pack",
    "client-config": "haversack.cli.client_config",
    "run": "haversack.cli.run",
}

#: Exit status for usage and composition errors (1 means "ran, but the answer is no").
EXIT_ERROR = 2


class _Formatter(argparse.HelpFormatter):
    """argparse's formatter, as wide as ``shutil.get_terminal_size()`` says, without shutil.

    argparse makes one per added argument, and its default imports shutil (with bz2 and
    lzma) to ask for the width.
    """

    def __init__(
        self,
        prog: str,
        indent_increment: int = 2,
        max_help_position: int = 24,
        width: int | None = None,
    ) -> None:
        super().__init__(
            prog, indent_increment, max_help_position, _columns() - 2 if width is None else width
        )


def _columns() -> int:
    """``shutil.get_terminal_size().columns``: ``$COLUMNS``, else the terminal's, else 80."""
    try:
        columns = int(os.environ["COLUMNS"])
    except (KeyError, ValueError):
        columns = 0
    if columns <= 0:
        try:
            columns = os.get_terminal_size(sys.__stdout__.fileno()).columns  # type: ignore[union-attr]
        except (AttributeError, ValueError, OSError):
            columns = 0
        columns = columns or 80
    return columns


def build_parser(
    only: str | None = None, *, pack_commands: bool = False
) -> argparse.ArgumentParser:
    """The parser with one sub-parser per entry of :data:`COMMANDS` (or just ``only``'s),
    plus, with ``pack_commands``, the commands installed packs add (``register_commands``).

    ``only`` is for a command line whose first word names the command: nothing can then
    show the other commands (``--help`` after the command is the command's own), so their
    modules are not imported. Packs are imported only when the first word is not a core
    command (or for the full ``--help``).
    """
    parser = argparse.ArgumentParser(
        prog="haversack",
        description="Inspect and use the tool packs installed in this environment.",
        epilog="Set HAVERSACK_DEBUG=1 for tracebacks and HAVERSACK_TRACE=1 to trace hook calls.",
        formatter_class=_Formatter,
    )
    subs = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    for name, module_name in COMMANDS.items():
        if only is not None and name != only:
            continue
        module: ModuleType = importlib.import_module(module_name)
        sub = subs.add_parser(
            name, help=module.HELP, description=module.HELP, formatter_class=_Formatter
        )
        add_common(sub)
        module.add_arguments(sub)
        sub.set_defaults(_run=module.run)
    if pack_commands:
        from haversack._packs._commands import pack_commands as installed

        for name, command in installed(reserved=COMMANDS, warn=_warn).items():
            if only is not None and name != only:
                continue
            sub = subs.add_parser(
                name,
                help=f"{command.help} (pack {command.pack!r})",
                description=command.help,
                formatter_class=_Formatter,
            )
            add_common(sub)
            command.add_arguments(sub)
            sub.set_defaults(_run=command.run)
    return parser


def _warn(message: str) -> None:
    print(f"haversack: warning: {printable(message)}", file=sys.stderr)


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; returns the exit status (0 ok, 1 check/call failed, 2 error)."""
    from haversack.errors import HaversackError

    words = sys.argv[1:] if argv is None else list(argv)
    first = words[0] if words else ""
    # Not a core command: one a pack adds, a typo (whose error lists every command), --help.
    parser = build_parser(first) if first in COMMANDS else build_parser(pack_commands=True)
    args = parser.parse_args(words)
    try:
        status: int = args._run(args)
    except HaversackError as exc:
        if os.environ.get("HAVERSACK_DEBUG", "").strip() not in ("", "0"):
            raise
        print(f"haversack: error: {printable(str(exc))}", file=sys.stderr)
        print(f"hint: {_hint(exc)}", file=sys.stderr)
        return EXIT_ERROR
    except BrokenPipeError:  # `haversack tools | head`
        return 0
    return status


def _hint(exc: Exception) -> str:
    from haversack.errors import (
        CheckpointError,
        NameConflictError,
        PackConfigError,
        PackLoadError,
        ProviderError,
        ResourceError,
    )

    if isinstance(exc, NameConflictError):
        return "`haversack check` lists every conflict; see docs/configuration.md (prefix, rename)."
    if isinstance(exc, PackConfigError):
        return "check the [tool.haversack] options; see docs/configuration.md."
    if isinstance(exc, PackLoadError):
        return (
            "`haversack packs` shows every pack's status; fix or reinstall the pack, or leave "
            "it out (--disable NAME, or drop it from your pack list)."
        )
    if isinstance(exc, ResourceError):
        return "`haversack check` opens every resource and lists each one that fails."
    if isinstance(exc, CheckpointError):
        return (
            "see docs/agents.md (checkpoint and resume); start the run again without "
            "--resume if the checkpoint cannot be used."
        )
    if isinstance(exc, ProviderError):
        return "see docs/agents.md (models, API keys, base URLs)."
    return "set HAVERSACK_DEBUG=1 for the traceback."

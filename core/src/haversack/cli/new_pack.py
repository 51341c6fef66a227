"""``haversack new-pack NAME``: scaffold a ready-to-publish pack project."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from haversack.cli._terminal import printable

HELP = "create a new pack project (pyproject, plugin, a tool, a section, a policy, tests)"

#: Exit status for a bad name or an unusable directory (as the CLI's other usage errors).
EXIT_ERROR = 2


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """``NAME`` and ``--dir PATH``."""
    parser.add_argument(
        "name",
        metavar="NAME",
        help="the pack name: lowercase letters and digits, words joined by '-' or '_'; the "
        "project is the distribution haversack-NAME importing haversack_NAME",
    )
    parser.add_argument(
        "--dir",
        metavar="PATH",
        type=Path,
        default=None,
        help="the project directory to create (default: ./haversack-NAME); it must not exist "
        "or be empty",
    )


def run(args: argparse.Namespace) -> int:
    """Write the project and print what to do next; exit 2 on a bad name or directory."""
    from haversack._scaffold import ScaffoldError, pack_names, scaffold

    try:
        root = scaffold(args.name, args.dir)
    except ScaffoldError as exc:
        print(f"haversack new-pack: error: {printable(str(exc))}", file=sys.stderr)
        return EXIT_ERROR
    names = pack_names(args.name)
    print(f"Created pack {names.pack!r} ({names.distribution}) in {root}")
    print("Next:")
    print(f"  cd {root}")
    print("  pip install -e '.[test]'")
    print("  pytest")
    print(f"  haversack check --pack {names.pack}")
    return 0

"""``haversack packs``: list installed packs with status, contributions and token estimates."""

from __future__ import annotations

import argparse
import json

from haversack.cli._common import selection_kwargs
from haversack.cli._terminal import printable

HELP = "list installed packs, their status, contributions and token estimates"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """``--json``, ``--all`` (include built-in plugins), ``--no-import``."""
    parser.add_argument("--json", action="store_true", help="print JSON")
    parser.add_argument("--all", action="store_true", help="include built-in plugins")
    parser.add_argument(
        "--no-import",
        action="store_true",
        help="list from metadata only: import no pack (no contributions or token estimates)",
    )


def run(args: argparse.Namespace) -> int:
    """Print the discovery report.

    Exit 2 when the user's own selection or options name something not installed (the
    listing is still printed, so the typo can be seen next to what exists); otherwise 0,
    even with conflicts or broken packs (``haversack check`` gates those).
    """
    from haversack._packs import discover
    from haversack._packs._watch import budget_from_env

    report = discover(
        load=not args.no_import, import_budget=budget_from_env(), **selection_kwargs(args)
    )
    if args.json:
        print(json.dumps(report.as_dict(include_builtin=args.all), indent=2))
        return 2 if report.problems else 0
    rows = report.visible(include_builtin=args.all)
    if not rows:
        print("No packs installed (entry-point group 'haversack').")
    for info in rows:
        tokens = "" if info.token_estimate is None else f"  ~{info.token_estimate} tokens"
        if info.tokens_saved:
            tokens += f" (~{info.tokens_saved} saved by tools/exclude_tools)"
        origin = "built-in" if info.builtin else f"{info.distribution} {info.version}"
        print(printable(f"{info.name}  ({origin})  {info.status}{tokens}", newlines=False))
        if info.tools:
            print(printable(f"    tools: {', '.join(info.tools)}", newlines=False))
        if info.removed_tools:
            print(
                printable(
                    f"    removed by options: {', '.join(info.removed_tools)}", newlines=False
                )
            )
        if info.sections:
            print(printable(f"    sections: {', '.join(info.sections)}", newlines=False))
        if info.policies:
            print(printable(f"    policies: {', '.join(info.policies)}", newlines=False))
        if info.resources:
            print(printable(f"    resources: {', '.join(info.resources)}", newlines=False))
        if info.reason:
            print(printable(f"    reason: {info.reason}"))
    for conflict in report.conflicts:
        print(printable(f"conflict: {conflict.message}", newlines=False))
    for problem in report.problems:
        print(printable(f"problem: {problem}", newlines=False))
    return 2 if report.problems else 0

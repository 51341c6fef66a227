"""``haversack check``: compose strictly enough for CI and report every problem."""

from __future__ import annotations

import argparse
import json

from haversack.cli._common import KEY, NS, selection_kwargs

HELP = "check that the selected packs load and compose without conflicts (for CI)"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """``--json``."""
    parser.add_argument("--json", action="store_true", help="print JSON")


def run(args: argparse.Namespace) -> int:
    """Exit 0 when every selected pack loads and the prompt composes, 1 otherwise.

    Unlike ``compose``, this reports every conflict and every broken or incompatible pack at
    once rather than stopping at the first.
    """
    from haversack._packs import discover
    from haversack._packs._compose import compose
    from haversack.errors import HaversackError

    report = discover(load=True, **selection_kwargs(args))  # type: ignore[arg-type]
    errors = [
        f"{i.label} is {i.status}: {i.reason}"
        for i in report.packs
        if i.status in ("broken", "incompatible")
    ]
    errors += [c.message for c in report.conflicts]
    errors += list(report.problems)
    if not errors:
        try:
            compose(ns=NS, key=KEY, strict=True, **selection_kwargs(args)).render()  # type: ignore[arg-type]
        except HaversackError as exc:
            errors.append(f"composing failed: {exc}")
    loaded = [i.name for i in report.visible() if i.status == "loaded"]
    if args.json:
        print(json.dumps({"ok": not errors, "loaded": loaded, "errors": errors}, indent=2))
    else:
        for line in errors:
            print(f"error: {line}")
        verdict = "FAILED" if errors else "OK"
        print(
            f"haversack check: {verdict} ({len(loaded)} packs loaded: {', '.join(loaded) or 'none'}; {len(errors)} problems)"
        )
    return 1 if errors else 0

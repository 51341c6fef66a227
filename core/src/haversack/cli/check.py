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

    report = discover(load=True, **selection_kwargs(args))
    errors = [
        f"{i.label} is {i.status}: {i.reason}"
        for i in report.packs
        if i.status in ("broken", "incompatible")
    ]
    errors += [c.message for c in report.conflicts]
    errors += list(report.problems)
    if not errors:
        try:
            compose(ns=NS, key=KEY, strict=True, **selection_kwargs(args)).render()
        except HaversackError as exc:
            errors.append(f"composing failed: {exc}")
    loaded = [i.name for i in report.visible() if i.status == "loaded"]
    if args.json:
        print(json.dumps({"ok": not errors, "loaded": loaded, "errors": errors}, indent=2))
    else:
        for line in errors:
            print(f"error: {line}")
        verdict = "FAILED" if errors else "OK"
        names = ", ".join(loaded) or "none"
        print(f"haversack check: {verdict} ({len(loaded)} loaded: {names}; {len(errors)} errors)")
    return 1 if errors else 0

"""``haversack check``: compose strictly, open every resource, report every problem (CI)."""

from __future__ import annotations

import argparse
import json

from haversack.cli._common import KEY, NS, selection_kwargs
from haversack.cli._terminal import printable

HELP = (
    "check that the selected packs load, compose without conflicts and that every resource "
    "opens (for CI and before serving)"
)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """``--json`` and ``--no-resources``."""
    parser.add_argument("--json", action="store_true", help="print JSON")
    parser.add_argument(
        "--no-resources",
        dest="resources",
        action="store_false",
        help="do not open the resources (sandbox containers, mounts, databases)",
    )


def run(args: argparse.Namespace) -> int:
    """Exit 0 when every selected pack loads, the prompt composes and its resources open.

    Unlike ``compose``, this reports every problem at once rather than stopping at the
    first, each on one line: your configuration's mistakes as ``config error``, a pack's own
    failures under its name, resources that cannot open with their cause.
    """
    from haversack._packs import discover
    from haversack._packs._compose import compose
    from haversack._packs._report import FAILED
    from haversack._packs._watch import budget_from_env
    from haversack.cli._resources import check_resources
    from haversack.errors import HaversackError, PackConfigError

    report = discover(load=True, import_budget=budget_from_env(), **selection_kwargs(args))
    errors: list[str] = [f"config error: {problem}" for problem in report.problems]
    for info in report.packs:
        if info.status == "misconfigured":
            errors.append(f"config error: {info.reason}")
        elif info.status in FAILED:
            errors.append(f"{info.label} is {info.status}: {info.reason}")
    errors += [c.message for c in report.conflicts]
    if not errors:
        try:
            prompt = compose(ns=NS, key=KEY, strict=True, **selection_kwargs(args))
            prompt.render()
        except PackConfigError as exc:
            errors.append(f"config error: {exc}")
        except HaversackError as exc:
            errors.append(f"composing failed: {exc}")
        else:
            if args.resources:
                errors += [problem.line for problem in check_resources(prompt)]
    loaded = [i.name for i in report.visible() if i.status == "loaded"]
    if args.json:
        print(json.dumps({"ok": not errors, "loaded": loaded, "errors": errors}, indent=2))
    else:
        for line in errors:
            print(f"error: {printable(line)}")
        verdict = "FAILED" if errors else "OK"
        names = ", ".join(loaded) or "none"
        print(
            printable(
                f"haversack check: {verdict} ({len(loaded)} loaded: {names}; {len(errors)} errors)"
            )
        )
    return 1 if errors else 0

"""``haversack tools``: every tool of the composed prompt with its parameter schema."""

from __future__ import annotations

import argparse
import json

from haversack.cli._common import compose_from
from haversack.cli._terminal import printable

HELP = "list the composed prompt's tools with descriptions and parameter schemas"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """``--json``: a list of ``{name, description, parameters}``."""
    parser.add_argument("--json", action="store_true", help="print JSON")


def run(args: argparse.Namespace) -> int:
    """Compose, render, describe each enabled tool."""
    from haversack import serde
    from haversack._packs._watch import budget_from_env

    rendered = compose_from(args, import_budget=budget_from_env()).render()
    tools = [
        {
            "name": t.name,
            "description": t.description,
            "parameters": serde.schema(t.params_type),
            "section": ".".join(rendered.section_path(t.name)),
        }
        for t in rendered.tools
    ]
    if args.json:
        print(json.dumps(tools, indent=2))
        return 0
    if not tools:
        print("No tools (no pack contributes any, or every pack is disabled).")
    for item in tools:
        print(printable(f"{item['name']}  [{item['section']}]", newlines=False))
        print(f"    {printable(str(item['description']))}")
        print(f"    parameters: {json.dumps(item['parameters'], separators=(',', ':'))}")
    return 0

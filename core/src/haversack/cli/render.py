"""``haversack render``: the composed prompt's text (or JSON with its tool names)."""

from __future__ import annotations

import argparse
import json

from haversack.cli._common import add_defer, compose_from
from haversack.cli._terminal import printable

HELP = "print the composed prompt text"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """``--json``: ``{"text": ..., "tools": [...]}``."""
    add_defer(parser)
    parser.add_argument("--json", action="store_true", help="print JSON with text and tool names")


def run(args: argparse.Namespace) -> int:
    """Compose, render with default params, print."""
    rendered = compose_from(args).render()
    if args.json:
        payload = {"text": rendered.text, "tools": [t.name for t in rendered.tools]}
        print(json.dumps(payload, indent=2))
    else:
        print(printable(rendered.text))
    return 0

"""``haversack serve``: the composed prompt as an MCP server over stdio."""

from __future__ import annotations

import argparse

from haversack.cli._common import compose_from

HELP = "serve the installed packs' tools over MCP (stdio); needs haversack[mcp]"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """``--name``: the server name MCP clients show."""
    parser.add_argument("--name", default="haversack", help="server name shown to MCP clients")


def run(args: argparse.Namespace) -> int:
    """Compose the prompt, then serve it until the client disconnects."""
    try:
        import anyio

        from haversack.server import serve_stdio
    except ImportError as exc:
        from haversack.errors import HaversackError

        raise HaversackError(
            f"The MCP server needs the 'mcp' package ({exc}); install it with: "
            "pip install 'haversack[mcp]'"
        ) from exc
    prompt = compose_from(args)
    anyio.run(lambda: serve_stdio(prompt, name=args.name))
    return 0

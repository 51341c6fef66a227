"""``haversack client-config``: the MCP client entry that launches this environment's server."""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path
from typing import Any

HELP = (
    "print a ready MCP client configuration entry (Claude Desktop, Cursor, VS Code...) that "
    "serves this environment's packs from any working directory"
)

#: Client family -> how its configuration file nests server entries.
FORMATS = {
    "mcpServers": "Claude Desktop, Claude Code (.mcp.json), Cursor, Windsurf and most clients",
    "vscode": "VS Code (.vscode/mcp.json): servers with type stdio",
}


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """``--format``, ``--name`` and ``--entry-only``."""
    parser.add_argument(
        "--format",
        choices=sorted(FORMATS),
        default="mcpServers",
        help="; ".join(f"{k}: {v}" for k, v in FORMATS.items()),
    )
    parser.add_argument("--name", default="haversack", help="the server's name in the client")
    parser.add_argument(
        "--entry-only",
        action="store_true",
        help="print only the server's entry, not the surrounding object",
    )


def entry(args: argparse.Namespace) -> dict[str, Any]:
    """The server entry: absolute interpreter, ``-m haversack serve``, the selection and an
    absolute ``HAVERSACK_CONFIG``, so the client's working directory does not matter."""
    from haversack._packs._config import ENV_CONFIG, find_config_file
    from haversack.errors import PackConfigError

    serve: list[str] = ["-m", "haversack", "serve", "--name", args.name]
    for pack in args.packs or ():
        serve += ["--pack", pack]
    for pack in args.disable:
        serve += ["--disable", pack]
    if args.strict:
        serve.append("--strict")
    env: dict[str, str] = {}

    given = args.config or os.environ.get(ENV_CONFIG, "").strip() or None
    config = Path(given).expanduser().absolute() if given else find_config_file(Path.cwd())
    if config is not None and not config.is_file():
        raise PackConfigError(f"Config file {config} does not exist; pass an existing one.")
    if config is not None:
        env[ENV_CONFIG] = str(config)
    result: dict[str, Any] = {"command": sys.executable, "args": serve}
    if env:
        result["env"] = env
    return result


def run(args: argparse.Namespace) -> int:
    """Print the JSON; exit 0."""
    server = entry(args)
    if args.format == "vscode":
        server = {"type": "stdio", **server}
        payload: dict[str, Any] = {"servers": {args.name: server}}
    else:
        payload = {"mcpServers": {args.name: server}}
    print(json.dumps(server if args.entry_only else payload, indent=2))
    return 0

"""Haversack serving, over stdio, the mcp pack configured with rich_server.py: a proxy
between a real MCP client and a real upstream server (run as a script)."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

from haversack import compose
from haversack.server import serve_stdio

RICH = str(Path(__file__).with_name("rich_server.py"))

if __name__ == "__main__":
    prompt = compose(
        ns="tests",
        key="proxy",
        packs=["mcp"],
        config={"mcp": {"servers": {"rich": {"command": [sys.executable, RICH], "prefix": "-"}}}},
        strict=True,
    )
    asyncio.run(serve_stdio(prompt))

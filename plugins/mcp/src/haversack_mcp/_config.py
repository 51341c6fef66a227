"""``McpConfig``: the external servers the pack connects to."""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field

from haversack.errors import PackConfigError

__all__ = ["McpConfig", "McpServer"]

#: ~50,000 tokens: a large file or page, but not a flood that fills the model's context.
DEFAULT_MAX_RESULT_CHARS = 200_000
DEFAULT_MAX_MESSAGE_BYTES = 32 * 1024 * 1024
#: OpenAI accepts 128 tools per request; a server offering more is rarely meant whole.
DEFAULT_MAX_TOOLS = 128
#: Sessions (executors) whose servers run at once in one process: ~70 MB a Python server.
DEFAULT_MAX_LIVE = 16

_SERVER_NAME = re.compile(r"[a-z][a-z0-9_-]{0,31}")


@dataclass(frozen=True, slots=True)
class McpServer:
    """One external MCP server: a command to start (stdio) or a URL (Streamable HTTP)."""

    command: tuple[str, ...] = field(
        default=(),
        metadata={
            "description": "Program and arguments of a stdio server, e.g. "
            '["mcp-server-time", "--local-timezone", "UTC"]; a program path holding a '
            "'/' is relative to the config file's folder.",
            "path": "program",
        },
    )
    url: str = field(
        default="",
        metadata={"description": "URL of a Streamable HTTP server (instead of command)."},
    )
    env: dict[str, str] = field(
        default_factory=dict,
        metadata={
            "description": "Environment variables for a stdio server, added to the "
            "SDK's safe default environment (PATH, HOME, ...)."
        },
    )
    cwd: str = field(
        default="",
        metadata={
            "description": "Working directory of a stdio server (relative to the config "
            "file's folder).",
            "path": True,
        },
    )
    headers: dict[str, str] = field(
        default_factory=dict,
        metadata={"description": "HTTP headers for a URL server, e.g. Authorization."},
    )
    prefix: str = field(
        default="",
        metadata={
            "description": "Prepended to every tool name (default: the server's name "
            "and '_'); an empty string is written as prefix = \"-\"."
        },
    )
    tools: tuple[str, ...] = field(
        default=(),
        metadata={
            "description": "Only these tools of the server (by the server's names); empty for all."
        },
    )
    exclude_tools: tuple[str, ...] = field(
        default=(), metadata={"description": "Tools of the server to leave out."}
    )
    timeout_s: float = field(
        default=60.0, metadata={"description": "Longest a tool call may take."}
    )
    startup_timeout_s: float = field(
        default=30.0,
        metadata={"description": "Longest starting the server and listing its tools may take."},
    )
    max_result_chars: int = field(
        default=DEFAULT_MAX_RESULT_CHARS,
        metadata={
            "description": "Most characters of a tool result passed on to the model; a longer "
            "result is cut, and the model is told so."
        },
    )
    max_message_bytes: int = field(
        default=DEFAULT_MAX_MESSAGE_BYTES,
        metadata={
            "description": "Largest message read from a stdio server; a call whose answer "
            "is larger fails with an error saying so."
        },
    )
    max_tools: int = field(
        default=DEFAULT_MAX_TOOLS,
        metadata={
            "description": "Most tools taken from the server (after tools/exclude_tools); "
            "the rest are left out and reported."
        },
    )


@dataclass(frozen=True, slots=True)
class McpConfig:
    """Options of the MCP pack (``[tool.haversack.packs.mcp.servers.NAME]``).

    With no servers the pack contributes nothing.
    """

    servers: dict[str, McpServer] = field(
        default_factory=dict,
        metadata={"description": "The external MCP servers, by a short name."},
    )
    max_live_sessions: int = field(
        default=DEFAULT_MAX_LIVE,
        metadata={
            "description": "Most sessions (executors; each HTTP session of haversack serve "
            "has one) whose servers run at once in this process; starting one more stops the "
            "servers of the least recently used idle session, which start again on its next "
            "call."
        },
    )

    def __post_init__(self) -> None:
        problems: list[str] = []
        if not (isinstance(self.max_live_sessions, int) and self.max_live_sessions > 0):
            problems.append("max_live_sessions must be a positive whole number")
        for name, server in self.servers.items():
            where = f"servers.{name}"
            if not _SERVER_NAME.fullmatch(name):
                problems.append(
                    f"{where}: the name must be 1-32 lowercase letters, digits, '_' or '-', "
                    "starting with a letter"
                )
            if bool(server.command) == bool(server.url):
                problems.append(f"{where}: give exactly one of command (stdio) or url (HTTP)")
            if server.url and not server.url.startswith(("http://", "https://")):
                problems.append(f"{where}: url must start with http:// or https://")
            for what, value in (
                ("timeout_s", server.timeout_s),
                ("startup_timeout_s", server.startup_timeout_s),
            ):
                if not (math.isfinite(value) and value > 0):
                    problems.append(f"{where}: {what} must be a positive number of seconds")
            for what, count in (
                ("max_result_chars", server.max_result_chars),
                ("max_message_bytes", server.max_message_bytes),
                ("max_tools", server.max_tools),
            ):
                if not (isinstance(count, int) and count > 0):
                    problems.append(f"{where}: {what} must be a positive whole number")
        if problems:
            raise PackConfigError(
                "Invalid MCP pack configuration: " + "; ".join(problems) + ".", pack="mcp"
            )

"""Provider formats: tool definitions for OpenAI, Anthropic and MCP, and tool calls back.

Each provider module turns a :class:`~haversack.RenderedPrompt`'s tools into the tool
definitions that provider's API expects (name, description, a parameter schema with field
descriptions and no ``$ref``) and runs a provider's tool call through a
:class:`~haversack.ToolExecutor`, returning the provider's tool-result message. Calls and
results may be the official SDKs' objects or plain dicts of the same shape.
"""

from __future__ import annotations

from . import anthropic, mcp, openai
from ._common import ToolCall, tool_definition

__all__ = ["ToolCall", "anthropic", "mcp", "openai", "tool_definition"]

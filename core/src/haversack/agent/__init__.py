"""The agent loop: a composed prompt, a model and its tools, until the model is done.

::

    from haversack.agent import Agent

    agent = Agent(prompt, "openai:gpt-4o-mini", max_turns=10)
    result = agent.run("Summarise notes.md")
    print(result.output, result.stop_reason, result.usage)

Providers go through their official SDKs (``pip install 'haversack[openai]'`` or
``'haversack[anthropic]'``): :class:`OpenAIChat` (any OpenAI-compatible server via
``base_url``), :class:`OpenAIResponses` and :class:`AnthropicMessages`.
"""

from __future__ import annotations

from ._anthropic import AnthropicMessages
from ._checkpoint import Checkpoint, load_checkpoint, save_checkpoint, tree_hash
from ._loop import Agent, ApproveCallback, EventCallback
from ._openai import OpenAIChat, OpenAIResponses
from ._provider import Conversation, OnText, Provider, Reply
from ._records import (
    AgentEvent,
    ApprovalRequested,
    ModelTurn,
    RunResult,
    StopReason,
    TextDelta,
    ToolCallFinished,
    ToolCallStarted,
    Usage,
)
from ._spec import PROVIDERS, model

__all__ = [
    "PROVIDERS",
    "Agent",
    "AgentEvent",
    "AnthropicMessages",
    "ApprovalRequested",
    "ApproveCallback",
    "Checkpoint",
    "Conversation",
    "EventCallback",
    "ModelTurn",
    "OnText",
    "OpenAIChat",
    "OpenAIResponses",
    "Provider",
    "Reply",
    "RunResult",
    "StopReason",
    "TextDelta",
    "ToolCallFinished",
    "ToolCallStarted",
    "Usage",
    "load_checkpoint",
    "model",
    "save_checkpoint",
    "tree_hash",
]

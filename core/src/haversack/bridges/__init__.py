"""Bridges: other agent frameworks' own loops run Haversack tools.

Each bridge hands a :class:`~haversack.ToolExecutor`'s tools to one framework, so every
call goes through the executor (policies, approval and rollback hold) and a held call is
answered through the framework's own approval mechanism where it has one:

- :mod:`haversack.bridges.pydantic_ai`: a pydantic-ai toolset (``haversack[pydantic-ai]``);
- :mod:`haversack.bridges.openai_agents`: OpenAI Agents SDK function tools
  (``haversack[openai-agents]``);
- :mod:`haversack.bridges.llm`: ``llm`` tools and the plugin behind ``llm -T``
  (``haversack[llm]``).

Importing this package imports no framework: each module imports its own when imported.
"""

from __future__ import annotations

__all__: list[str] = []

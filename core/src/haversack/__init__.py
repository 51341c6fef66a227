"""Haversack: a thin core for distributable LLM tool packs.

A prompt is a tree of sections (markdown instructions) carrying tools (typed
function-calling affordances) and policies (rules on when a tool may run). Tool packs are
separately installed distributions that contribute sections, tools, policies and resources
through pluggy hooks.
"""

from __future__ import annotations

from typing import Any

from ._context import ResourceLookup, ToolContext
from ._deadline import Deadline
from ._events import CallOutcome, ToolInvoked
from ._executor import ToolExecutor
from ._filesystem import FileStat, Filesystem, GrepMatch, GrepResult, ReadWindow, Snapshottable
from ._markdown import MarkdownSection
from ._paths import normalize_path
from ._policy import PolicyDecision, ToolPolicy
from ._prompt import Prompt, RenderedPrompt
from ._read_before_write import ReadBeforeWritePolicy
from ._resources import Binding, ResourceRegistry, ResourceResolver, Resources, Scope, ToolCallScope
from ._result import ToolResult
from ._section import Section
from ._sequential import SequentialDependencyPolicy
from ._session import (
    Append,
    Clear,
    Extend,
    Reducer,
    Replace,
    Session,
    SessionSnapshot,
    Slice,
    SliceOp,
    SlicePolicy,
    SliceView,
)
from ._tool import Tool, ToolAnnotations, ToolExample, ToolHandler, tool
from .errors import (
    DeadlineExceededError,
    HaversackError,
    NameConflictError,
    PromptEvaluationError,
    PromptRenderError,
    PromptValidationError,
    ResourceError,
    ToolValidationError,
)

__all__ = [
    "Append",
    "Binding",
    "CallOutcome",
    "Clear",
    "Deadline",
    "DeadlineExceededError",
    "Extend",
    "FileStat",
    "Filesystem",
    "GrepMatch",
    "GrepResult",
    "HaversackError",
    "MarkdownSection",
    "NameConflictError",
    "PolicyDecision",
    "Prompt",
    "PromptEvaluationError",
    "PromptRenderError",
    "PromptValidationError",
    "ReadBeforeWritePolicy",
    "ReadWindow",
    "Reducer",
    "RenderedPrompt",
    "Replace",
    "ResourceError",
    "ResourceLookup",
    "ResourceRegistry",
    "ResourceResolver",
    "Resources",
    "Scope",
    "Section",
    "SequentialDependencyPolicy",
    "Session",
    "SessionSnapshot",
    "Slice",
    "SliceOp",
    "SlicePolicy",
    "SliceView",
    "Snapshottable",
    "Tool",
    "ToolAnnotations",
    "ToolCallScope",
    "ToolContext",
    "ToolExample",
    "ToolExecutor",
    "ToolHandler",
    "ToolInvoked",
    "ToolPolicy",
    "ToolResult",
    "ToolValidationError",
    "normalize_path",
    "tool",
]

# Show the public home of each name in reprs, tracebacks and docs.
for _name in __all__:
    _obj = globals()[_name]
    if getattr(_obj, "__module__", "").startswith("haversack._"):
        _obj.__module__ = "haversack"
del _name, _obj


def __getattr__(name: str) -> Any:
    # Lazy so that `import haversack` does not pay for pluggy or the pack system.
    if name == "hookimpl":
        from .hookspecs import hookimpl

        return hookimpl
    if name == "__version__":
        from importlib.metadata import version

        return version("haversack")
    raise AttributeError(f"module 'haversack' has no attribute {name!r}")

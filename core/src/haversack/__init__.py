"""Haversack: a thin core for distributable LLM tool packs.

A prompt is a tree of sections (markdown instructions) carrying tools (typed
function-calling affordances) and policies (rules on when a tool may run). Tool packs are
separately installed distributions that contribute sections, tools, policies and resources
through pluggy hooks.

Names are imported on first use (PEP 562), so ``import haversack`` costs almost nothing and a
program pays only for the parts it touches.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .lazy import lazy_exports

if TYPE_CHECKING:
    from ._approval import Approval, ApprovalPolicy, ApprovalVerdict, PendingApproval
    from ._context import ResourceLookup, ToolContext
    from ._deadline import Deadline
    from ._events import CallOutcome, ToolInvoked, ToolLog
    from ._executor import ToolExecutor
    from ._json_params import JsonArguments, json_schema_params
    from ._markdown import MarkdownSection
    from ._packs import Conflict, PackInfo, PackReport, PackStatus, compose, discover
    from ._policy import PolicyDecision, ToolPolicy
    from ._prompt import Prompt, RenderedPrompt
    from ._read_before_write import ReadBeforeWritePolicy
    from ._resources import (
        Binding,
        ResourceRegistry,
        ResourceResolver,
        Resources,
        Scope,
        ToolCallScope,
    )
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
    from ._tool import Tool, ToolAnnotations, ToolExample, ToolHandler
    from ._tool_decorator import tool
    from .errors import (
        ApprovalError,
        DeadlineExceededError,
        HaversackError,
        NameConflictError,
        PackConfigError,
        PackError,
        PackLoadError,
        PromptEvaluationError,
        PromptRenderError,
        PromptValidationError,
        ProviderError,
        ResourceError,
        ToolValidationError,
    )
    from .filesystem import (
        FileStat,
        Filesystem,
        GrepMatch,
        GrepResult,
        ReadWindow,
        Snapshottable,
        normalize_path,
    )
    from .hookspecs import hookimpl

#: Public name -> the private module that defines it.
_EXPORTS: dict[str, str] = {
    "Append": "._session",
    "Approval": "._approval",
    "ApprovalError": ".errors",
    "ApprovalPolicy": "._approval",
    "ApprovalVerdict": "._approval",
    "Binding": "._resources",
    "CallOutcome": "._events",
    "Clear": "._session",
    "Conflict": "._packs",
    "Deadline": "._deadline",
    "DeadlineExceededError": ".errors",
    "Extend": "._session",
    "FileStat": ".filesystem",
    "Filesystem": ".filesystem",
    "GrepMatch": ".filesystem",
    "GrepResult": ".filesystem",
    "HaversackError": ".errors",
    "JsonArguments": "._json_params",
    "MarkdownSection": "._markdown",
    "NameConflictError": ".errors",
    "PackConfigError": ".errors",
    "PackError": ".errors",
    "PackInfo": "._packs",
    "PackLoadError": ".errors",
    "PackReport": "._packs",
    "PackStatus": "._packs",
    "PendingApproval": "._approval",
    "PolicyDecision": "._policy",
    "Prompt": "._prompt",
    "PromptEvaluationError": ".errors",
    "PromptRenderError": ".errors",
    "PromptValidationError": ".errors",
    "ProviderError": ".errors",
    "ReadBeforeWritePolicy": "._read_before_write",
    "ReadWindow": ".filesystem",
    "Reducer": "._session",
    "RenderedPrompt": "._prompt",
    "Replace": "._session",
    "ResourceError": ".errors",
    "ResourceLookup": "._context",
    "ResourceRegistry": "._resources",
    "ResourceResolver": "._resources",
    "Resources": "._resources",
    "Scope": "._resources",
    "Section": "._section",
    "SequentialDependencyPolicy": "._sequential",
    "Session": "._session",
    "SessionSnapshot": "._session",
    "Slice": "._session",
    "SliceOp": "._session",
    "SlicePolicy": "._session",
    "SliceView": "._session",
    "Snapshottable": ".filesystem",
    "Tool": "._tool",
    "ToolAnnotations": "._tool",
    "ToolCallScope": "._resources",
    "ToolContext": "._context",
    "ToolExample": "._tool",
    "ToolExecutor": "._executor",
    "ToolHandler": "._tool",
    "ToolInvoked": "._events",
    "ToolLog": "._events",
    "ToolPolicy": "._policy",
    "ToolResult": "._result",
    "ToolValidationError": ".errors",
    "compose": "._packs",
    "discover": "._packs",
    "hookimpl": ".hookspecs",
    "json_schema_params": "._json_params",
    "normalize_path": ".filesystem",
    "tool": "._tool_decorator",
}

__all__ = [
    "Append",
    "Approval",
    "ApprovalError",
    "ApprovalPolicy",
    "ApprovalVerdict",
    "Binding",
    "CallOutcome",
    "Clear",
    "Conflict",
    "Deadline",
    "DeadlineExceededError",
    "Extend",
    "FileStat",
    "Filesystem",
    "GrepMatch",
    "GrepResult",
    "HaversackError",
    "JsonArguments",
    "MarkdownSection",
    "NameConflictError",
    "PackConfigError",
    "PackError",
    "PackInfo",
    "PackLoadError",
    "PackReport",
    "PackStatus",
    "PendingApproval",
    "PolicyDecision",
    "Prompt",
    "PromptEvaluationError",
    "PromptRenderError",
    "PromptValidationError",
    "ProviderError",
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
    "ToolLog",
    "ToolPolicy",
    "ToolResult",
    "ToolValidationError",
    "compose",
    "discover",
    "hookimpl",
    "json_schema_params",
    "normalize_path",
    "tool",
]


_exported, __dir__ = lazy_exports(globals(), _EXPORTS, rehome=True)


def __getattr__(name: str) -> Any:
    if name == "__version__":
        from importlib.metadata import version

        return version("haversack")
    return _exported(name)

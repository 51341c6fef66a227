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

# For type checkers only: each public name imported as itself (``X as X``), which marks it
# re-exported under mypy --strict and pyright. They read no ``__all__`` (see below), so this
# is their list of the package's names; a test checks it against ``_EXPORTS``.
if TYPE_CHECKING:
    from ._approval import Approval as Approval
    from ._approval import ApprovalPolicy as ApprovalPolicy
    from ._approval import ApprovalVerdict as ApprovalVerdict
    from ._approval import PendingApproval as PendingApproval
    from ._bindings import Binding as Binding
    from ._bindings import ResourceRegistry as ResourceRegistry
    from ._bindings import ResourceResolver as ResourceResolver
    from ._bindings import Scope as Scope
    from ._content import MAX_CONTENT_BYTES as MAX_CONTENT_BYTES
    from ._content import Audio as Audio
    from ._content import Content as Content
    from ._content import EmbeddedResource as EmbeddedResource
    from ._content import Image as Image
    from ._content import Text as Text
    from ._context import ToolContext as ToolContext
    from ._deadline import Deadline as Deadline
    from ._events import CallOutcome as CallOutcome
    from ._events import ToolInvoked as ToolInvoked
    from ._events import ToolLog as ToolLog
    from ._executor import ToolExecutor as ToolExecutor
    from ._identity import ToolIdentity as ToolIdentity
    from ._interaction import Answer as Answer
    from ._interaction import Interaction as Interaction
    from ._interaction import Progress as Progress
    from ._interaction import Question as Question
    from ._interaction import ScriptedInteraction as ScriptedInteraction
    from ._interrupt import check_cancelled as check_cancelled
    from ._interrupt import uninterruptible as uninterruptible
    from ._json_params import JsonArguments as JsonArguments
    from ._json_params import JsonResult as JsonResult
    from ._json_params import json_schema_params as json_schema_params
    from ._json_params import json_schema_result as json_schema_result
    from ._markdown import MarkdownSection as MarkdownSection
    from ._packs import Conflict as Conflict
    from ._packs import PackInfo as PackInfo
    from ._packs import PackReport as PackReport
    from ._packs import PackStatus as PackStatus
    from ._packs import compose as compose
    from ._packs import discover as discover
    from ._packs._watch import expect_slow as expect_slow
    from ._policy import PolicyDecision as PolicyDecision
    from ._policy import ToolPolicy as ToolPolicy
    from ._prompt import Prompt as Prompt
    from ._prompt import RenderedPrompt as RenderedPrompt
    from ._read_before_write import ReadBeforeWritePolicy as ReadBeforeWritePolicy
    from ._resources import HoldsMemory as HoldsMemory
    from ._resources import Resources as Resources
    from ._resources import ToolCallScope as ToolCallScope
    from ._result import ToolResult as ToolResult
    from ._section import Section as Section
    from ._sequential import SequentialDependencyPolicy as SequentialDependencyPolicy
    from ._session import Append as Append
    from ._session import Clear as Clear
    from ._session import Extend as Extend
    from ._session import Reducer as Reducer
    from ._session import Replace as Replace
    from ._session import Session as Session
    from ._session import SessionSnapshot as SessionSnapshot
    from ._session import Slice as Slice
    from ._session import SliceOp as SliceOp
    from ._session import SlicePolicy as SlicePolicy
    from ._session import SliceView as SliceView
    from ._tool import Tool as Tool
    from ._tool import ToolAnnotations as ToolAnnotations
    from ._tool import ToolExample as ToolExample
    from ._tool import ToolHandler as ToolHandler
    from ._tool import max_description as max_description
    from ._tool_decorator import tool as tool
    from .errors import ApprovalError as ApprovalError
    from .errors import CheckpointError as CheckpointError
    from .errors import DeadlineExceededError as DeadlineExceededError
    from .errors import HaversackError as HaversackError
    from .errors import InteractionError as InteractionError
    from .errors import NameConflictError as NameConflictError
    from .errors import PackConfigError as PackConfigError
    from .errors import PackError as PackError
    from .errors import PackLoadError as PackLoadError
    from .errors import PromptEvaluationError as PromptEvaluationError
    from .errors import PromptRenderError as PromptRenderError
    from .errors import PromptValidationError as PromptValidationError
    from .errors import ProviderError as ProviderError
    from .errors import ResourceError as ResourceError
    from .errors import ToolCallCancelled as ToolCallCancelled
    from .errors import ToolValidationError as ToolValidationError
    from .filesystem import FileStat as FileStat
    from .filesystem import Filesystem as Filesystem
    from .filesystem import GrepMatch as GrepMatch
    from .filesystem import GrepResult as GrepResult
    from .filesystem import ReadWindow as ReadWindow
    from .filesystem import Snapshottable as Snapshottable
    from .filesystem import normalize_path as normalize_path
    from .hookspecs import hookimpl as hookimpl

#: Public name -> the private module that defines it.
_EXPORTS: dict[str, str] = {
    "Append": "._session",
    "Audio": "._content",
    "Content": "._content",
    "EmbeddedResource": "._content",
    "HoldsMemory": "._resources",
    "Image": "._content",
    "MAX_CONTENT_BYTES": "._content",
    "Text": "._content",
    "Approval": "._approval",
    "ApprovalError": ".errors",
    "CheckpointError": ".errors",
    "ApprovalPolicy": "._approval",
    "ApprovalVerdict": "._approval",
    "Binding": "._bindings",
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
    "Interaction": "._interaction",
    "InteractionError": ".errors",
    "Answer": "._interaction",
    "Progress": "._interaction",
    "Question": "._interaction",
    "ScriptedInteraction": "._interaction",
    "JsonArguments": "._json_params",
    "JsonResult": "._json_params",
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
    "ResourceRegistry": "._bindings",
    "ResourceResolver": "._bindings",
    "Resources": "._resources",
    "Scope": "._bindings",
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
    "ToolCallCancelled": ".errors",
    "ToolCallScope": "._resources",
    "ToolContext": "._context",
    "ToolExample": "._tool",
    "ToolExecutor": "._executor",
    "ToolHandler": "._tool",
    "ToolInvoked": "._events",
    "ToolLog": "._events",
    "ToolIdentity": "._identity",
    "ToolPolicy": "._policy",
    "ToolResult": "._result",
    "ToolValidationError": ".errors",
    "check_cancelled": "._interrupt",
    "compose": "._packs",
    "discover": "._packs",
    "hookimpl": ".hookspecs",
    "expect_slow": "._packs._watch",
    "json_schema_params": "._json_params",
    "json_schema_result": "._json_params",
    "max_description": "._tool",
    "normalize_path": ".filesystem",
    "tool": "._tool_decorator",
    "uninterruptible": "._interrupt",
}

# Derived from the table so there is no third list to keep. Hidden from type checkers: an
# ``__all__`` mypy cannot read (it only reads a literal list) would make it treat every name
# as private; without one they take the ``X as X`` imports above.
if not TYPE_CHECKING:
    __all__ = sorted(_EXPORTS)


_exported, __dir__ = lazy_exports(globals(), _EXPORTS, rehome=True)


def __getattr__(name: str) -> Any:
    if name == "__version__":
        from importlib.metadata import version

        return version("haversack")
    return _exported(name)

"""Every exception Haversack raises, in one tree.

Framework misuse (a bad section, a clashing pack) raises at construction or composition time.
A tool failing at run time never raises into the evaluation: the executor turns it into a
``ToolResult.error``. The two channels share this hierarchy so callers can catch either::

    HaversackError
    ├── PromptError
    │   ├── PromptValidationError (ValueError)      a prompt, section or tool is malformed
    │   │   └── NameConflictError                   two contributors claim one name
    │   └── PromptRenderError                       rendering needs params it was not given
    ├── ToolValidationError (ValueError)            tool arguments or tool input are invalid
    │   └── FilesystemError                         a filesystem operation cannot be done
    │       ├── InvalidPathError                    the path breaks a path rule
    │       │   └── LinkRefusedError                a component is a symbolic link
    │       ├── PathNotFoundError (FileNotFoundError)
    │       ├── PathExistsError (FileExistsError)
    │       ├── PathKindError                       file where a directory is needed, or back
    │       ├── FilesystemLimitError                a size, count or budget limit is exceeded
    │       ├── ReadOnlyFilesystemError (PermissionError)
    │       │   └── ProtectedPathError              the host runs or trusts this path
    │       └── InvalidArgumentError                another argument is unusable (offset, text)
    │           └── InvalidPatternError             a grep pattern does not compile
    ├── PromptEvaluationError (RuntimeError)        the evaluation itself must stop
    │   └── DeadlineExceededError
    ├── ResourceError (LookupError)                 a resource is unbound or cannot be built
    ├── ApprovalError (LookupError)                 resume() named no call awaiting approval
    ├── CheckpointError                             a checkpoint cannot be written or resumed
    ├── InteractionError                            a tool's question to the user got no answer
    ├── ProviderError                               a model provider is misconfigured or failed
    └── PackError                                   a tool pack cannot be used
        ├── PackLoadError                           import, hook or compatibility failure
        └── PackConfigError (ValueError)            a pack's configuration is invalid

Outside the tree, a ``BaseException`` like :class:`asyncio.CancelledError` (so a tool's
``except Exception`` does not swallow it)::

    ToolCallCancelled                               a sync tool's call was cancelled
"""

from __future__ import annotations

from collections.abc import Sequence

__all__ = [
    "ApprovalError",
    "CheckpointError",
    "DeadlineExceededError",
    "FilesystemError",
    "FilesystemLimitError",
    "HaversackError",
    "InteractionError",
    "InvalidArgumentError",
    "InvalidPathError",
    "InvalidPatternError",
    "LinkRefusedError",
    "NameConflictError",
    "PackConfigError",
    "PackError",
    "PackLoadError",
    "PathExistsError",
    "PathKindError",
    "PathNotFoundError",
    "PromptError",
    "PromptEvaluationError",
    "PromptRenderError",
    "PromptValidationError",
    "ProtectedPathError",
    "ProviderError",
    "ReadOnlyFilesystemError",
    "ResourceError",
    "ToolCallCancelled",
    "ToolValidationError",
]


class HaversackError(Exception):
    """Root of every error Haversack raises."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message

    def __str__(self) -> str:
        return self.message


class PromptError(HaversackError):
    """A prompt, section or tool definition problem, with where it happened.

    ``section_path`` is the tuple of section keys from the root, ``tool_name`` the tool
    involved, ``dataclass_type`` the params or result dataclass and ``placeholder`` the
    template placeholder, each ``None`` (or empty) when it does not apply.
    """

    def __init__(
        self,
        message: str,
        *,
        section_path: Sequence[str] = (),
        tool_name: str | None = None,
        dataclass_type: type | None = None,
        placeholder: str | None = None,
    ) -> None:
        super().__init__(message)
        self.section_path: tuple[str, ...] = tuple(section_path)
        self.tool_name = tool_name
        self.dataclass_type = dataclass_type
        self.placeholder = placeholder

    def __str__(self) -> str:
        where: list[str] = []
        if self.section_path:
            where.append(f"section {'.'.join(self.section_path)!r}")
        if self.tool_name is not None:
            where.append(f"tool {self.tool_name!r}")
        if self.dataclass_type is not None:
            where.append(f"dataclass {self.dataclass_type.__qualname__}")
        if self.placeholder is not None:
            where.append(f"placeholder {self.placeholder!r}")
        return f"{self.message} [{', '.join(where)}]" if where else self.message


class PromptValidationError(PromptError, ValueError):
    """A prompt, section, tool or example breaks a construction rule."""


class NameConflictError(PromptValidationError):
    """Two contributors claim the same name (pack, section key, tool, policy or resource).

    ``kind`` is what clashed (``"tool"``, ``"section"``...), ``name`` the contested name and
    ``contributors`` the two parties, each described with its distribution and version.
    """

    def __init__(self, message: str, *, kind: str, name: str, contributors: Sequence[str]) -> None:
        super().__init__(message)
        self.kind = kind
        self.name = name
        self.contributors: tuple[str, ...] = tuple(contributors)


class PromptRenderError(PromptError):
    """Rendering failed, typically because required params are missing."""


class ToolValidationError(HaversackError, ValueError):
    """Tool arguments or tool input are invalid; the message is written for the model.

    ``field_path`` locates the offending field in the arguments (``"steps.0.title"``) when
    one field is to blame.
    """

    def __init__(self, message: str, *, field_path: str | None = None) -> None:
        super().__init__(message)
        self.field_path = field_path


class FilesystemError(ToolValidationError):
    """A filesystem operation cannot be done; ``path`` is the normalised path involved."""

    def __init__(self, message: str, *, path: str | None = None) -> None:
        super().__init__(message)
        self.path = path


class InvalidPathError(FilesystemError):
    """The path escapes the workspace or breaks a depth, length or character rule."""


class LinkRefusedError(InvalidPathError):
    """A component of the path is a symbolic link: host-side file operations never follow one
    (a link, or a directory swapped for one mid-operation, could lead out of the workspace)."""


class PathNotFoundError(FilesystemError, FileNotFoundError):
    """No file or directory exists at the path."""


class PathExistsError(FilesystemError, FileExistsError):
    """Something already exists at the path and the operation refuses to replace it."""


class PathKindError(FilesystemError):
    """The path is a directory where a file is needed, or a file where a directory is."""


class FilesystemLimitError(FilesystemError):
    """A size, count or byte-budget limit would be exceeded."""


class ReadOnlyFilesystemError(FilesystemError, PermissionError):
    """The filesystem (or this part of it) cannot be written."""


class ProtectedPathError(ReadOnlyFilesystemError):
    """The path is protected: the host's own tools (git, direnv, an editor) later run or trust
    what it holds, so nothing the model drives may change it."""


class InvalidArgumentError(FilesystemError):
    """An argument other than the path is unusable: negative offset, bad content, empty text."""


class InvalidPatternError(InvalidArgumentError):
    """A grep regular expression does not compile (or uses syntax the engine refuses)."""


class PromptEvaluationError(HaversackError, RuntimeError):
    """The evaluation cannot continue; raised out of the executor, never turned into a result."""


class DeadlineExceededError(PromptEvaluationError):
    """The evaluation's deadline has passed."""


class ResourceError(HaversackError, LookupError):
    """A resource is not bound, or its factory failed."""


class ApprovalError(HaversackError, LookupError):
    """``resume()`` named a call that is not awaiting approval on that executor."""


class CheckpointError(HaversackError):
    """A checkpoint cannot be written, or cannot be resumed: missing, damaged, too large, from
    another format version, or made for another prompt, provider or workspace."""


class ProviderError(HaversackError):
    """A model provider cannot be used (unknown provider, missing API key or SDK) or failed."""


class PackError(HaversackError):
    """A tool pack cannot be used; ``pack`` names it when known."""

    def __init__(self, message: str, *, pack: str | None = None) -> None:
        super().__init__(message)
        self.pack = pack


class PackLoadError(PackError):
    """A pack failed to import, a hook raised or returned garbage, or it is incompatible."""


class PackConfigError(PackError, ValueError):
    """A pack's configuration has unknown keys or values of the wrong type."""


class ToolCallCancelled(BaseException):
    """Raised inside a sync tool's handler when its call is cancelled (say, over MCP).

    A ``BaseException`` like :class:`asyncio.CancelledError`, so a tool's ``except
    Exception`` does not swallow it; the executor treats it as an abort (rolls the call
    back, records it, re-raises). It lands only while the tool's own code runs, never in
    the executor's bookkeeping nor inside an import. A tool that holds outside resources
    (processes, connections) releases them in ``finally`` or ``except BaseException``.
    """


class InteractionError(HaversackError):
    """A tool's question to the user (``ToolContext.ask``) got no usable answer: nobody can
    be asked there, the wait timed out, the client failed or sent an answer that does not
    fit. Raised in the handler; uncaught, the call fails with this message for the model."""

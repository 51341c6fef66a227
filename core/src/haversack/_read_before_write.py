"""``ReadBeforeWritePolicy``: an existing file must be read before it is changed."""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from ._policy import PolicyDecision
from ._policy_state import add_policy_value, policy_values
from .errors import FilesystemError
from .filesystem._protocol import Filesystem

if TYPE_CHECKING:
    from ._context import ToolContext
    from ._result import ToolResult
    from ._tool import Tool

__all__ = ["ReadBeforeWritePolicy"]


def _names(names: Iterable[str], what: str) -> frozenset[str]:
    if isinstance(names, str):
        raise TypeError(f"{what} must be a collection of tool names, not the string {names!r}.")
    found = frozenset(names)
    if not found or not all(isinstance(n, str) and n for n in found):
        raise ValueError(f"{what} must name at least one tool (non-empty strings).")
    return found


class ReadBeforeWritePolicy:
    """Deny overwriting or editing an existing file the session has not read.

    ``read_tools`` and ``write_tools`` name the tools that read and write files; they are
    required, since the core names no pack's tools. Names resolve within the policy's
    :meth:`~haversack.RenderedPrompt.scope` (for a section's policy, the tools of its own
    contributor; for a prompt-wide one, every tool): the tool of that final name, else those
    originally registered under it (before a ``prefix`` or ``rename``). So another
    contributor's ``read_file`` never counts as a read of a pack's files. New files may always
    be written. A write whose params carry no string path in any of
    ``path_fields`` is denied, since it could be overwriting anything. A successful call of a
    ``read_tools`` tool records its path; so does a successful write (the model knows what it
    just wrote). Paths are taken from the first of ``path_fields`` present on the params and
    normalised by the bound filesystem's own ``normalize`` (the shared
    :func:`normalize_path`), so every spelling of a file counts as that file. Without a bound
    filesystem the policy cannot tell new files from existing ones and denies (fail closed).
    """

    __slots__ = ("_name", "path_fields", "read_tools", "write_tools")

    def __init__(
        self,
        *,
        read_tools: Iterable[str],
        write_tools: Iterable[str],
        path_fields: Iterable[str] = ("path", "file_path"),
        name: str = "read-before-write",
    ) -> None:
        # Required: the core knows no pack's tools, so the pack (or caller) names its own.
        self._name = name
        self.read_tools = _names(read_tools, "read_tools")
        self.write_tools = _names(write_tools, "write_tools")
        self.path_fields = tuple(path_fields)

    def tool_names(self) -> tuple[str, ...]:
        """Every tool this policy names: when it is yours, each must mean a tool it governs,
        or the prompt is refused (see :class:`~haversack.ToolPolicy`)."""
        return tuple(sorted(self.read_tools | self.write_tools))

    @property
    def name(self) -> str:
        return self._name

    def check(self, tool: Tool[Any, Any], params: Any, *, context: ToolContext) -> PolicyDecision:
        if not _named(self, tool, self.write_tools, context):
            return PolicyDecision.allow()
        raw = self._raw_path(params)
        if raw is None:
            # Fail closed: a write we cannot locate could be overwriting any file.
            fields = ", ".join(repr(f) for f in self.path_fields) or "none configured"
            return PolicyDecision.deny(
                f"cannot check {tool.name!r}: its arguments carry no path in a field this "
                f"policy reads ({fields}); pass the file's path there, then retry."
            )
        filesystem = context.resources.get_optional(Filesystem)  # type: ignore[type-abstract]
        if filesystem is None:
            return PolicyDecision.deny(
                f"cannot check {tool.name!r} on {raw!r}: no workspace filesystem is bound, so "
                "existing files cannot be told from new ones."
            )
        try:
            path = filesystem.normalize(raw)
            exists = filesystem.exists(path)
        except FilesystemError as exc:
            return PolicyDecision.deny(str(exc))
        if not exists or path in policy_values(context.session, self._name):
            return PolicyDecision.allow()
        readers = " or ".join(_final_names(self, self.read_tools, context))
        if not readers:  # every read tool was removed (exclude_tools): name none of them
            return PolicyDecision.deny(
                f"{raw!r} already exists and has not been read in this session, and no tool "
                f"here reads it, so {tool.name!r} cannot change it: tell the user."
            )
        return PolicyDecision.deny(
            f"{raw!r} already exists and has not been read in this session; call {readers} "
            f"on it first, then retry {tool.name!r}."
        )

    def on_result(
        self, tool: Tool[Any, Any], params: Any, result: ToolResult[Any], *, context: ToolContext
    ) -> None:
        if not result.success:
            return
        if not _named(self, tool, self.read_tools, context) and not _named(
            self, tool, self.write_tools, context
        ):
            return
        raw = self._raw_path(params)
        filesystem = context.resources.get_optional(Filesystem)  # type: ignore[type-abstract]
        if raw is None or filesystem is None:
            return
        try:
            path = filesystem.normalize(raw)
        except FilesystemError:
            return
        add_policy_value(context.session, self._name, path)

    def _raw_path(self, params: Any) -> str | None:
        for field in self.path_fields:
            value = getattr(params, field, None)
            if isinstance(value, str):
                return value
        return None

    def __repr__(self) -> str:
        return (
            f"ReadBeforeWritePolicy(name={self._name!r}, read_tools={sorted(self.read_tools)}, "
            f"write_tools={sorted(self.write_tools)})"
        )


def _named(
    policy: ReadBeforeWritePolicy, tool: Tool[Any, Any], names: frozenset[str], context: ToolContext
) -> bool:
    """Whether ``names`` (as the policy holds them) mean ``tool`` within the policy's scope."""
    rendered = context.rendered_prompt
    if rendered is None or not rendered.scope(policy):
        # Asked outside an executor, about a render it is not part of: match names bare.
        return tool.name in names or tool.original_name in names
    return any(tool.name in rendered.resolve(policy, name) for name in names)


def _final_names(
    policy: ReadBeforeWritePolicy, names: frozenset[str], context: ToolContext
) -> list[str]:
    """What the model calls the tools ``names`` mean, for a message."""
    rendered = context.rendered_prompt
    if rendered is None or not rendered.scope(policy):
        return sorted(names)  # asked outside an executor: nothing to resolve against
    # Only tools that exist under this composition: a name meaning none is left out.
    return sorted({final for name in names for final in rendered.resolve(policy, name)})

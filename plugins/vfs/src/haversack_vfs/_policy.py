"""``VfsReadBeforeWritePolicy``: the core read-before-write rule, fitted to the VFS tools."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Final

from haversack import PolicyDecision, ReadBeforeWritePolicy, ToolContext

if TYPE_CHECKING:
    from haversack import Tool

__all__ = ["READ_BEFORE_WRITE_POLICY", "VfsReadBeforeWritePolicy"]

#: The policy's name in a composed prompt (unique: another pack may add its own).
READ_BEFORE_WRITE_POLICY: Final = "vfs-read-before-write"


class VfsReadBeforeWritePolicy(ReadBeforeWritePolicy):
    """The core read-before-write rule over ``read_file``, ``write_file`` and ``edit_file``.

    ``edit_file`` on an existing file needs a successful ``read_file`` (or the ``write_file``
    that created it) of the same file earlier in the session; every spelling of a path
    counts as the same file. ``write_file`` itself is never denied: it only creates files
    and refuses an existing one with a message pointing at ``edit_file``, which is clearer
    than a "read it first" denial that would be followed by that refusal anyway.
    """

    __slots__ = ()

    def __init__(self, *, name: str = READ_BEFORE_WRITE_POLICY) -> None:
        super().__init__(
            read_tools=("read_file",), write_tools=("write_file", "edit_file"), name=name
        )

    def check(self, tool: Tool[Any, Any], params: Any, *, context: ToolContext) -> PolicyDecision:
        """Allow ``write_file`` (create-only); otherwise the core rule."""
        if tool.original_name == "write_file":
            return PolicyDecision.allow()
        return super().check(tool, params, context=context)

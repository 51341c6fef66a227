"""The VFS tools: ls, read_file, write_file, edit_file, glob, grep and rm.

Every handler works on ``context.filesystem``, so the tools serve whatever workspace is
bound: the pack's in-memory one by default, another pack's (a sandbox's host directory)
when that replaces it. Paths go through the filesystem's own ``normalize`` (the shared
:func:`haversack.normalize_path`). Failures raise :mod:`haversack.errors` filesystem
errors whose messages the executor hands to the model; the executor also rolls back any
change of a failed call.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Final

from haversack import Filesystem, Tool, ToolAnnotations, ToolResult
from haversack.errors import (
    FilesystemLimitError,
    InvalidArgumentError,
    InvalidPathError,
    PathExistsError,
    PathKindError,
)
from haversack.filesystem import (
    MATCH_COUNT_CAP,
    count_lines,
    count_occurrences,
    replaced_size,
    utf8_size,
)

from ._config import VfsConfig
from ._params import (
    EditFileParams,
    GlobParams,
    GrepParams,
    ListParams,
    ReadFileParams,
    RemoveParams,
    WriteFileParams,
)
from ._results import (
    EditFileResult,
    GlobResult,
    GrepHit,
    GrepResult,
    ListEntry,
    ListResult,
    ReadFileResult,
    RemoveResult,
    WriteFileResult,
)

if TYPE_CHECKING:
    from haversack import ToolContext

__all__ = ["TOOL_NAMES", "vfs_tools"]

#: The tools' original names, in prompt order.
TOOL_NAMES: Final = ("ls", "read_file", "write_file", "edit_file", "glob", "grep", "rm")

_READ_ONLY: Final = ToolAnnotations(
    read_only=True, destructive=False, idempotent=True, open_world=False
)
# write_file only creates: repeating it fails without changing anything.
_CREATE: Final = ToolAnnotations(destructive=False, idempotent=True, open_world=False)
# edit_file changes existing text; repeating a replace_all of "a" by "aa" changes it again.
_EDIT: Final = ToolAnnotations(destructive=True, idempotent=False, open_world=False)
# rm removes data; repeating it fails without changing anything more.
_REMOVE: Final = ToolAnnotations(destructive=True, idempotent=True, open_world=False)


def _display(fs: Filesystem, path: str) -> str:
    """The absolute spelling of a normalised path, as the section describes paths."""
    mount = fs.mount_point.rstrip("/")
    if not path:
        return mount or "/"
    return f"{mount}/{path}"


def _plural(count: int, one: str, many: str) -> str:
    return f"{count} {one if count == 1 else many}"


def _hint(context: ToolContext, original: str, text: str) -> str:
    """A space and ``text`` with the current name of the pack's tool ``original`` in it, or ``""``
    when this composition does not offer it (``exclude_tools`` may remove any tool)."""
    if not context.offers(original):
        return ""
    return " " + text.format(context.tool_name(original))


def _more(line: str, width: int, cut_bytes: int) -> str:
    hidden = len(line) - width if len(line) > width else 0
    parts = []
    if hidden:
        parts.append(f"{hidden} more characters")
    if cut_bytes:
        parts.append(f"{cut_bytes} more bytes")
    return " and ".join(parts)


def _size(text: str) -> int:
    return len(text) if text.isascii() else len(text.encode("utf-8", "surrogatepass"))


class _VfsTools:
    """The handlers, bound to one configuration (limits)."""

    __slots__ = ("config",)

    def __init__(self, config: VfsConfig) -> None:
        self.config = config

    # -- ls -----------------------------------------------------------------------------

    def ls(self, params: ListParams, *, context: ToolContext) -> ToolResult[ListResult]:
        """List one directory."""
        fs = context.filesystem
        p = fs.normalize(params.path)
        stats = fs.list(p)
        limit = self.config.max_list_entries
        entries = tuple(
            ListEntry(stat.path.rpartition("/")[2], stat.kind, stat.size) for stat in stats[:limit]
        )
        dirs = sum(1 for stat in stats if stat.kind == "directory")
        files = len(stats) - dirs
        shown = "" if len(stats) <= limit else f"; showing the first {limit}"
        message = (
            f"{_display(fs, p)}: {_plural(dirs, 'directory', 'directories')}, "
            f"{_plural(files, 'file', 'files')}{shown}."
        )
        if shown:
            message += _hint(context, "glob", "Use {} with a narrower pattern to find files.")
        if not stats:
            message = f"{_display(fs, p)} is empty."
        return ToolResult.ok(ListResult(_display(fs, p), entries, len(stats)), message)

    # -- read_file ----------------------------------------------------------------------

    def read_file(
        self, params: ReadFileParams, *, context: ToolContext
    ) -> ToolResult[ReadFileResult]:
        """Read a window of a file's lines."""
        fs = context.filesystem
        p = fs.normalize(params.path)
        cfg = self.config
        offset = params.offset
        if offset < 0:
            raise InvalidArgumentError(
                f"offset must be 0 or more (the number of lines to skip), got {offset}.", path=p
            )
        limit = cfg.max_read_lines if params.limit is None else params.limit
        if limit < 1:
            raise InvalidArgumentError(
                f"limit must be a positive number of lines, got {limit}; omit it to read up "
                f"to {cfg.max_read_lines} lines.",
                path=p,
            )
        notes: list[str] = []
        if limit > cfg.max_read_lines:
            notes.append(f"limit {limit} is above the maximum; read {cfg.max_read_lines}")
            limit = cfg.max_read_lines
        shown = _display(fs, p)
        window = fs.read(p, offset=offset) if offset else fs.read(p)
        content = window.content
        total = window.total_lines
        remaining = total - offset  # lines in the window read (it runs to the end)
        if remaining > limit:
            content = fs.read(p, offset=offset, limit=limit).content
            remaining = limit
        if total == 0:
            return ToolResult.ok(ReadFileResult(shown, "", 0, 0, 0), f"{shown} is empty (0 lines).")
        if offset >= total:
            raise InvalidArgumentError(
                f"{shown} has {_plural(total, 'line', 'lines')}, so offset {offset} is past its "
                f"end; use an offset from 0 to {total - 1}.",
                path=p,
            )
        fitted, exact = self._fit(content, notes)
        lines = remaining if fitted is content else count_lines(fitted)
        content = fitted
        first, last = offset + 1, offset + lines
        message = f"{shown}: lines {first}-{last} of {total}"
        if notes:
            message += f" ({'; '.join(notes)})"
        message += "."
        if last < total:
            message += f" More lines follow: continue with offset={last}."
        return ToolResult.ok(ReadFileResult(shown, content, first, last, total, exact), message)

    def _fit(self, content: str, notes: list[str]) -> tuple[str, bool]:
        """Cut ``content`` to the byte budget at a line end (or inside an over-long line)."""
        budget = self.config.max_read_bytes
        if len(content) <= budget // 4 or _size(content) <= budget:
            return content, True
        kept: list[str] = []
        used = 0
        for line in content.splitlines(keepends=True):
            size = _size(line)
            if used + size > budget:
                break
            kept.append(line)
            used += size
        if kept:
            notes.append(f"stopped at the {budget}-byte read limit")
            return "".join(kept), True
        first = content.split("\n", 1)[0]
        cut = first.encode("utf-8", "surrogatepass")[:budget].decode("utf-8", "ignore")
        notes.append(
            f"this line is {_size(first)} bytes, longer than the {budget}-byte read limit: "
            f"showing its first {_size(cut)} bytes only, so this text is not exact"
        )
        return cut, False

    # -- write_file ---------------------------------------------------------------------

    def write_file(
        self, params: WriteFileParams, *, context: ToolContext
    ) -> ToolResult[WriteFileResult]:
        """Create a new file with exactly ``content``."""
        fs = context.filesystem
        p = fs.normalize(params.path)
        shown = _display(fs, p)
        if not p:
            raise PathKindError(
                "The workspace root is a directory; give a file path such as 'notes.txt'.", path=p
            )
        size = utf8_size(params.content, path=p)
        if size > self.config.max_write_bytes:
            raise FilesystemLimitError(
                f"The content is {size} bytes; one {context.name} call may write at most "
                f"{self.config.max_write_bytes}. Write a smaller file, or split the content "
                "over several files.",
                path=p,
            )
        if fs.exists(p):
            if fs.stat(p).kind == "directory":
                raise PathKindError(
                    f"{shown} is a directory; write to a file inside it, such as "
                    f"{shown}/notes.txt.",
                    path=p,
                )
            read, edit, rm = (context.tool_name(n) for n in ("read_file", "edit_file", "rm"))
            # Name only the tools this composition offers (exclude_tools may drop any).
            hints = []
            if context.offers("read_file") and context.offers("edit_file"):
                hints.append(f"To change it, call {read} and then {edit}.")
            if context.offers("rm"):
                hints.append(f"To replace it entirely, call {rm} first.")
            raise PathExistsError(
                f"{shown} already exists and {context.tool_name('write_file')} only creates new "
                f"files. {' '.join(hints) or 'Choose a new path.'}",
                path=p,
            )
        written = fs.write(p, params.content, mode="create")
        lines = count_lines(params.content)
        return ToolResult.ok(
            WriteFileResult(shown, written, lines),
            f"Created {shown} ({_plural(written, 'byte', 'bytes')}, "
            f"{_plural(lines, 'line', 'lines')}).",
        )

    # -- edit_file ----------------------------------------------------------------------

    def edit_file(
        self, params: EditFileParams, *, context: ToolContext
    ) -> ToolResult[EditFileResult]:
        """Replace exact text in an existing file."""
        fs = context.filesystem
        p = fs.normalize(params.path)
        shown = _display(fs, p)
        old, new = params.old_string, params.new_string
        old_size = utf8_size(old, what="old_string", path=p)
        new_size = utf8_size(new, what="new_string", path=p)
        if not old:
            raise InvalidArgumentError(
                "old_string must not be empty: copy the exact text to replace from the file."
                + _hint(context, "write_file", "To create a file use {}."),
                path=p,
            )
        if old == new:
            raise InvalidArgumentError(
                "old_string and new_string are the same, so the edit would change nothing.",
                path=p,
            )
        if new_size > self.config.max_write_bytes:
            raise FilesystemLimitError(
                f"new_string is {new_size} bytes; one {context.name} call may insert at most "
                f"{self.config.max_write_bytes}. Make the change in smaller edits.",
                path=p,
            )
        text = fs.read_text(p)
        first = text.find(old)
        if first < 0:
            raise InvalidArgumentError(self._not_found(context, shown, text, old), path=p)
        if params.replace_all:
            count = text.count(old)  # linear; the size check below comes before any building
        else:
            second = text.find(old, first + 1)
            if second >= 0:
                raise InvalidArgumentError(self._ambiguous(shown, text, old, first), path=p)
            count = 1
        after = replaced_size(utf8_size(text, path=p), count, old_size, new_size)
        if after > self.config.max_file_bytes:
            raise FilesystemLimitError(
                f"Replacing {_plural(count, 'occurrence', 'occurrences')} would make {shown} "
                f"{after} bytes; the limit for one file is {self.config.max_file_bytes} bytes. "
                "Replace fewer occurrences or a shorter text, or split the file.",
                path=p,
            )
        if params.replace_all:
            updated = text.replace(old, new)
        else:
            updated = text[:first] + new + text[first + len(old) :]
        size = fs.write(p, updated, mode="overwrite")
        line = text.count("\n", 0, first) + 1
        where = f"at line {line}" if count == 1 else f"first at line {line}"
        return ToolResult.ok(
            EditFileResult(shown, count, size, line),
            f"Replaced {_plural(count, 'occurrence', 'occurrences')} in {shown} ({where}); the "
            f"file is now {_plural(size, 'byte', 'bytes')}.",
        )

    @staticmethod
    def _not_found(context: ToolContext, shown: str, text: str, old: str) -> str:
        message = f"old_string was not found in {shown}."
        if "\r" not in old and "\n" in old and old.replace("\n", "\r\n") in text:
            return (
                f"{message} The file uses \\r\\n line endings: write \\r\\n (not \\n) between the "
                "lines of old_string and new_string."
            )
        if old.strip() and old.strip() in text:
            return (
                f"{message} It does occur without its leading or trailing whitespace: copy the "
                "whitespace exactly, or leave it out of old_string."
            )
        return message + _hint(
            context,
            "read_file",
            "Call {} to see the current text and copy it exactly, including indentation, "
            "whitespace and line endings.",
        )

    @staticmethod
    def _ambiguous(shown: str, text: str, old: str, first: int) -> str:
        # Counted up to a small cap: each overlapping check costs len(old), so counting every
        # occurrence of a long old_string would be quadratic.
        count, exact = count_occurrences(text, old, start=first, cap=MATCH_COUNT_CAP)
        starts: list[int] = []
        index = first
        while index >= 0 and len(starts) < 10:
            starts.append(index)
            index = text.find(old, index + 1)
        lines: list[int] = []
        line, counted = 1, 0
        for start in starts:  # one pass over the text, however many starts
            line += text.count("\n", counted, start)
            counted = start
            if not lines or lines[-1] != line:
                lines.append(line)
        where = ", ".join(str(n) for n in lines) + (", ..." if count > len(starts) else "")
        amount = f"{count} times" if exact else f"at least {count} times"
        return (
            f"old_string occurs {amount} in {shown} (at lines {where}); it must "
            "match exactly once. Include more surrounding text so it is unique, or set "
            "replace_all to true to replace every occurrence."
        )

    # -- glob ---------------------------------------------------------------------------

    def glob(self, params: GlobParams, *, context: ToolContext) -> ToolResult[GlobResult]:
        """Files under a directory whose path matches a pattern."""
        fs = context.filesystem
        base = fs.normalize(params.path)
        self._check_pattern("glob pattern", params.pattern)
        found = fs.glob(params.pattern, path=base)
        limit = self.config.max_list_entries
        shown = _display(fs, base)
        if not found:
            message = f"No files match {params.pattern!r} under {shown}."
        else:
            matched = _plural(len(found), "file matches", "files match")
            message = f"{matched} {params.pattern!r} under {shown}"
            message += f"; showing the first {limit}." if len(found) > limit else "."
        return ToolResult.ok(GlobResult(params.pattern, found[:limit], len(found)), message)

    # -- grep ---------------------------------------------------------------------------

    def grep(self, params: GrepParams, *, context: ToolContext) -> ToolResult[GrepResult]:
        """Lines matching a regular expression."""
        fs = context.filesystem
        cfg = self.config
        base = fs.normalize(params.path)
        cap = cfg.max_grep_matches if params.max_matches is None else params.max_matches
        if cap < 1:
            raise InvalidArgumentError(
                f"max_matches must be a positive number, got {cap}; omit it for up to "
                f"{cfg.max_grep_matches}."
            )
        self._check_pattern("grep pattern", params.pattern)
        if params.glob:
            self._check_pattern("glob pattern", params.glob)
        note = ""
        if cap > cfg.max_grep_matches:
            note = f" (max_matches {cap} is above the maximum; used {cfg.max_grep_matches})"
            cap = cfg.max_grep_matches
        found = fs.grep(params.pattern, path=base, glob=params.glob, max_matches=cap)
        width = cfg.max_grep_line_chars
        hits = tuple(
            GrepHit(
                m.path,
                m.line_number,
                m.line
                if len(m.line) <= width and not m.cut_bytes
                else f"{m.line[:width]}[... {_more(m.line, width, m.cut_bytes)}]",
            )
            for m in found.matches
        )
        where = _display(fs, base)
        if params.glob:
            where += f" (files matching {params.glob!r})"
        if not hits:
            message = f"No lines match {params.pattern!r} in {where}."
        else:
            files = len({hit.path for hit in hits})
            lead = (
                f"First {len(hits)} matches"
                if found.truncated
                else _plural(len(hits), "match", "matches")
            )
            message = (
                f"{lead} for {params.pattern!r} in {_plural(files, 'file', 'files')} under "
                f"{where}{note}."
            )
            if found.truncated:
                message += " More matches exist."
        if found.skipped_lines:
            message += (
                f" {_plural(found.skipped_lines, 'line was', 'lines were')} too long to search "
                "with this regular expression within the work budget; a plain-text pattern "
                "(no regex metacharacters) searches lines of any length."
            )
        if found.stopped:
            message += f" The search {found.stopped}"
        return ToolResult.ok(
            GrepResult(params.pattern, hits, found.truncated, found.stopped), message
        )

    def _check_pattern(self, what: str, pattern: object) -> None:
        limit = self.config.max_pattern_chars
        if isinstance(pattern, str) and len(pattern) > limit:
            raise InvalidArgumentError(
                f"The {what} is {len(pattern)} characters long; the limit is {limit}. Use a "
                "shorter pattern: a few distinctive words, or a path pattern such as '**/*.py'."
            )

    # -- rm -----------------------------------------------------------------------------

    def rm(self, params: RemoveParams, *, context: ToolContext) -> ToolResult[RemoveResult]:
        """Remove a file or a directory tree."""
        fs = context.filesystem
        p = fs.normalize(params.path)
        if not p:
            raise InvalidPathError(
                "The workspace root cannot be removed; remove the entries inside it instead"
                + (f" ({context.tool_name('ls')} shows them)." if context.offers("ls") else "."),
                path=p,
            )
        kind = fs.stat(p).kind
        files = set(fs.glob("**", path=p)) if kind == "directory" else {p}
        removed = fs.delete(p, recursive=True)
        limit = self.config.max_list_entries
        listed = tuple(path if path in files else f"{path}/" for path in removed[:limit])
        dirs = len(removed) - len(files)
        shown = _display(fs, p)
        if kind == "file":
            message = f"Removed the file {shown}."
        else:
            message = (
                f"Removed the directory {shown} with everything in it: "
                f"{_plural(len(files), 'file', 'files')} and "
                f"{_plural(dirs, 'directory', 'directories')} (itself included)."
            )
        return ToolResult.ok(RemoveResult(shown, listed, len(files), dirs), message)


def vfs_tools(config: VfsConfig | None = None) -> tuple[Tool[Any, Any], ...]:
    """The seven VFS tools for ``config`` (defaults when ``None``), in prompt order."""
    handlers = _VfsTools(config if config is not None else VfsConfig())
    return (
        Tool[ListParams, ListResult](
            name="ls",
            description="List the files and directories directly inside a workspace directory.",
            handler=handlers.ls,
            annotations=_READ_ONLY,
        ),
        Tool[ReadFileParams, ReadFileResult](
            name="read_file",
            description="Read a text file as numbered lines, a window at a time (offset, "
            "limit). Read a file before editing it.",
            handler=handlers.read_file,
            annotations=_READ_ONLY,
        ),
        Tool[WriteFileParams, WriteFileResult](
            name="write_file",
            # The clause goes with edit_file: exclude_tools = ["edit_file"] must work.
            description="Create a new file with exactly the given content. Refuses existing "
            "files${if tool:edit_file}: change those with ${tool:edit_file}${endif}.",
            handler=handlers.write_file,
            annotations=_CREATE,
        ),
        Tool[EditFileParams, EditFileResult](
            name="edit_file",
            description="Replace an exact string in an existing file. old_string must match "
            "once unless replace_all is true.",
            handler=handlers.edit_file,
            annotations=_EDIT,
        ),
        Tool[GlobParams, GlobResult](
            name="glob",
            description="Find files by path pattern, e.g. **/*.py (** spans any number of "
            "directories, including none).",
            handler=handlers.glob,
            annotations=_READ_ONLY,
        ),
        Tool[GrepParams, GrepResult](
            name="grep",
            description="Search file contents for lines matching a regular expression, "
            "optionally only in files matching a glob.",
            handler=handlers.grep,
            annotations=_READ_ONLY,
        ),
        Tool[RemoveParams, RemoveResult](
            name="rm",
            description="Remove a file, or a directory with everything in it. Reports every "
            "path removed.",
            handler=handlers.rm,
            annotations=_REMOVE,
        ),
    )

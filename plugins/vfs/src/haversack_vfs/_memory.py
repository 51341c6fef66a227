"""``InMemoryFilesystem``: the workspace as a persistent tree with O(1) snapshots."""

from __future__ import annotations

import builtins
from collections.abc import Iterator

from haversack.errors import (
    FilesystemError,
    FilesystemLimitError,
    InvalidPathError,
    PathExistsError,
    PathKindError,
    PathNotFoundError,
    ReadOnlyFilesystemError,
)
from haversack.filesystem import (
    DEFAULT_MAX_PATTERN_CHARS,
    WORKSPACE_MOUNT,
    FileStat,
    GrepBudget,
    GrepResult,
    ReadWindow,
    WriteMode,
    check_new_name,
    check_old_text,
    check_window,
    check_write_mode,
    compile_glob,
    compile_grep_pattern,
    count_lines,
    directory_write_error,
    exists_error,
    file_size_error,
    grep_texts,
    line_window,
    missing_error,
    normalize_path,
    not_a_directory_error,
    not_a_file_error,
    replace_exact,
    replaced_size,
    root_write_error,
    utf8_size,
)

from ._limits import (
    DEFAULT_MAX_DIRECTORIES,
    DEFAULT_MAX_FILE_BYTES,
    DEFAULT_MAX_FILES,
    DEFAULT_MAX_TOTAL_BYTES,
)
from ._nodes import EMPTY_DIR, DirNode, FileNode, Node, State, child_path, parent_and_name

__all__ = ["InMemoryFilesystem"]


def _path_key(item: tuple[str, FileNode]) -> str:
    return item[0]


def _under(base: str, prefix: str) -> str:
    """The directory a glob with literal ``prefix`` can match under, below ``base``."""
    return child_path(base, prefix) if prefix else base


class _Snapshot:
    """An opaque snapshot: the (immutable) state and the filesystem that made it."""

    __slots__ = ("owner", "state")

    def __init__(self, owner: InMemoryFilesystem, state: State) -> None:
        self.owner = owner
        self.state = state

    def __repr__(self) -> str:
        return f"<InMemoryFilesystem snapshot: {self.state.file_count} file(s)>"


class _Change:
    """One operation's edits to a state, applied to a trie mutation and committed at once.

    Nothing is visible until :meth:`commit`, so an operation that raises half-way leaves
    the filesystem exactly as it was.
    """

    def __init__(self, state: State) -> None:
        self.nodes = state.nodes.mutate()
        self.total_bytes = state.total_bytes
        self.file_count = state.file_count
        self.dir_count = state.dir_count

    def get(self, path: str) -> Node | None:
        return self.nodes.get(path)

    def link(self, path: str, is_dir: bool) -> None:
        parent, name = parent_and_name(path)
        node = self.nodes[parent]
        assert isinstance(node, DirNode)
        self.nodes[parent] = DirNode(node.children.set(name, is_dir))

    def unlink(self, path: str) -> None:
        parent, name = parent_and_name(path)
        node = self.nodes[parent]
        assert isinstance(node, DirNode)
        self.nodes[parent] = DirNode(node.children.delete(name))

    def add_dir(self, path: str) -> None:
        self.nodes[path] = EMPTY_DIR
        self.link(path, True)
        self.dir_count += 1

    def put_file(self, path: str, node: FileNode, old: FileNode | None) -> None:
        self.nodes[path] = node
        if old is None:
            self.link(path, False)
            self.file_count += 1
            self.total_bytes += node.size
        else:
            self.total_bytes += node.size - old.size

    def commit(self) -> State:
        return State(self.nodes.finish(), self.total_bytes, self.file_count, self.dir_count)


class InMemoryFilesystem:
    """A workspace of text files and directories held in memory.

    Implements :class:`haversack.Filesystem` and :class:`haversack.HoldsMemory` (its
    files' bytes). The state is persistent (see ``_nodes``): :meth:`snapshot` is O(1) and
    copies nothing, :meth:`restore` is exact, and every operation either completes or
    changes nothing. Limits raise
    :class:`~haversack.errors.FilesystemLimitError`: ``max_file_bytes`` per file,
    ``max_total_bytes`` across files (UTF-8 bytes), ``max_files`` and ``max_directories``.
    ``read_only`` refuses every change with :class:`~haversack.errors.ReadOnlyFilesystemError`.
    ``grep_budget`` bounds the work of one grep and ``max_pattern_chars`` the length of grep
    and glob patterns.
    """

    def __init__(
        self,
        *,
        mount_point: str = WORKSPACE_MOUNT,
        max_file_bytes: int = DEFAULT_MAX_FILE_BYTES,
        max_total_bytes: int = DEFAULT_MAX_TOTAL_BYTES,
        max_files: int = DEFAULT_MAX_FILES,
        max_directories: int = DEFAULT_MAX_DIRECTORIES,
        read_only: bool = False,
        grep_budget: GrepBudget | None = None,
        max_pattern_chars: int = DEFAULT_MAX_PATTERN_CHARS,
    ) -> None:
        for name, value in (
            ("max_file_bytes", max_file_bytes),
            ("max_total_bytes", max_total_bytes),
            ("max_files", max_files),
            ("max_directories", max_directories),
        ):
            if isinstance(value, bool) or not isinstance(value, int) or value < 0:
                raise ValueError(f"{name} must be a non-negative integer, got {value!r}.")
        self._mount_point = "/" + mount_point.strip("/") if mount_point.strip("/") else "/"
        self.max_file_bytes = max_file_bytes
        self.max_total_bytes = max_total_bytes
        self.max_files = max_files
        self.max_directories = max_directories
        self.read_only = read_only
        #: The work budget of one :meth:`grep` (bytes scanned, seconds).
        self.grep_budget = grep_budget if grep_budget is not None else GrepBudget()
        #: Longest grep or glob pattern accepted, in characters.
        self.max_pattern_chars = max_pattern_chars
        self._state = State.empty()

    # -- identity and paths -------------------------------------------------------------

    @property
    def mount_point(self) -> str:
        """Where the workspace root appears to the model (``"/workspace"`` by default)."""
        return self._mount_point

    def normalize(self, path: str) -> str:
        """Normalise ``path`` with :func:`haversack.normalize_path` and this mount point."""
        return normalize_path(path, mount_point=self._mount_point)

    def display(self, path: str) -> str:
        """The absolute spelling of a normalised path, as the model sees it."""
        if not path:
            return self._mount_point
        return f"{self._mount_point.rstrip('/')}/{path}"

    @property
    def total_bytes(self) -> int:
        """UTF-8 bytes held across all files."""
        return self._state.total_bytes

    def held_bytes(self) -> int:
        """The workspace's size in memory (:class:`haversack.HoldsMemory`): its files' bytes."""
        return self._state.total_bytes

    @property
    def file_count(self) -> int:
        """Number of files."""
        return self._state.file_count

    @property
    def directory_count(self) -> int:
        """Number of directories, the root not counted."""
        return self._state.dir_count

    # -- snapshots ----------------------------------------------------------------------

    def snapshot(self) -> object:
        """Capture the whole tree in O(1): the current state is immutable, so keep it."""
        return _Snapshot(self, self._state)

    def restore(self, snapshot: object) -> None:
        """Put back exactly the tree captured by :meth:`snapshot` of this filesystem."""
        if not isinstance(snapshot, _Snapshot) or snapshot.owner is not self:
            raise FilesystemError(
                "restore() was given an object that is not a snapshot taken from this "
                "filesystem; pass back the value returned by this filesystem's snapshot()."
            )
        self._state = snapshot.state

    # -- queries ------------------------------------------------------------------------

    def exists(self, path: str) -> bool:
        """Whether a file or directory exists at ``path``."""
        return self.normalize(path) in self._state.nodes

    def stat(self, path: str) -> FileStat:
        """The kind and size of the entry at ``path``."""
        p = self.normalize(path)
        return self._stat(p, self._node(p))

    def list(self, path: str = "") -> tuple[FileStat, ...]:
        """Direct children of the directory at ``path``, sorted by name."""
        p = self.normalize(path)
        node = self._node(p)
        if isinstance(node, FileNode):
            raise PathKindError(
                f"{self.display(p)} is a file, not a directory; use read to see its content, "
                "or list its parent directory.",
                path=p,
            )
        nodes = self._state.nodes
        result = []
        for name in sorted(node.children):
            child = child_path(p, name)
            result.append(self._stat(child, nodes[child]))
        return tuple(result)

    def read(self, path: str, *, offset: int = 0, limit: int | None = None) -> ReadWindow:
        """Lines ``offset`` .. ``offset + limit`` (0-based) of a file, endings included."""
        p = self.normalize(path)
        check_window(offset, limit, p)
        text = self._file(p).content
        if offset == 0 and limit is None:  # the common whole-file read: no splitting
            return ReadWindow(p, text, 0, count_lines(text))
        content, total = line_window(text, offset, limit)
        return ReadWindow(p, content, offset, total)

    def read_text(self, path: str) -> str:
        """The whole text of the file at ``path``."""
        return self._file(self.normalize(path)).content

    def glob(self, pattern: str, *, path: str = "") -> tuple[str, ...]:
        """Files under the directory ``path`` whose path relative to it matches ``pattern``.

        The dialect is :func:`haversack._glob.compile_glob`'s: ``*`` stays within a segment,
        ``**/`` spans zero or more directories. Returns normalised paths, sorted.
        """
        base = self.normalize(path)
        self._directory(base)
        matcher = compile_glob(
            pattern, mount_point=self._mount_point, max_chars=self.max_pattern_chars
        )
        cut = len(base) + 1 if base else 0
        if matcher.pattern == "**":  # every file below: no pattern to match (rm lists this way)
            found = [file_path for file_path, _ in self._walk_files(base)]
        else:
            found = [
                file_path
                for file_path, _ in self._walk_files(_under(base, matcher.prefix))
                if matcher.match(file_path[cut:])
            ]
        found.sort()
        return tuple(found)

    def grep(
        self, pattern: str, *, path: str = "", glob: str | None = None, max_matches: int = 100
    ) -> GrepResult:
        """Lines matching the RE2 regular expression ``pattern`` in files under ``path``.

        ``path`` may be one file. ``glob`` (blank means none) filters files by their path
        relative to ``path`` (by name when ``path`` is a file). Matches come in path then
        line order; ``truncated`` says more existed beyond ``max_matches``.
        """
        compiled = compile_grep_pattern(pattern, max_chars=self.max_pattern_chars)
        base = self.normalize(path)
        node = self._node(base)
        matcher = None
        if glob is not None and glob.strip():
            matcher = compile_glob(
                glob, mount_point=self._mount_point, max_chars=self.max_pattern_chars
            )
        if isinstance(node, FileNode):
            name = parent_and_name(base)[1]
            files = [(base, node)] if matcher is None or matcher.match(name) else []
        else:
            cut = len(base) + 1 if base else 0
            start = base if matcher is None else _under(base, matcher.prefix)
            files = [
                item
                for item in self._walk_files(start)
                if matcher is None or matcher.match(item[0][cut:])
            ]
            files.sort(key=_path_key)
        texts = ((file_path, file_node.content) for file_path, file_node in files)
        return grep_texts(compiled, texts, max_matches=max_matches, budget=self.grep_budget)

    # -- changes ------------------------------------------------------------------------

    def write(
        self, path: str, content: str, *, mode: WriteMode = "create", parents: bool = True
    ) -> int:
        """Write ``content`` to a file and return the UTF-8 bytes written.

        ``create`` refuses an existing file, ``overwrite`` replaces or creates, ``append``
        extends or creates; ``parents`` creates missing parent directories.
        """
        p = self.normalize(path)
        self._check_writable(p)
        check_write_mode(mode, p)
        size = utf8_size(content, path=p)
        if not p:
            raise root_write_error()
        change = _Change(self._state)
        old = change.get(p)
        if isinstance(old, DirNode):
            raise directory_write_error(p, self.display(p), self.display(child_path(p, "file.txt")))
        if old is None:
            check_new_name(p, self.display(p))
            self._make_parents(change, p, parents)
            node = FileNode(content, size)
        elif mode == "create":
            raise exists_error(p, self.display(p))
        elif mode == "append":
            node = FileNode(old.content + content, old.size + size)
        else:
            node = FileNode(content, size)
        self._check_file_size(p, node.size)
        change.put_file(p, node, old)
        self._commit(change, p)
        return size

    def edit(self, path: str, old: str, new: str, *, replace_all: bool = False) -> int:
        """Replace the text ``old`` by ``new`` in a file; return the number of replacements.

        Without ``replace_all`` ``old`` must occur exactly once (overlapping occurrences
        count), so an edit never lands somewhere the caller did not mean.
        """
        p = self.normalize(path)
        self._check_writable(p)
        old_size = utf8_size(old, what="text to replace", path=p)
        new_size = utf8_size(new, what="replacement text", path=p)
        check_old_text(old, p)
        file = self._file(p)
        # replace_exact checks the result's size arithmetically before building it.
        updated, count = replace_exact(
            file.content,
            old,
            new,
            replace_all=replace_all,
            where=self.display(p),
            path=p,
            max_bytes=self.max_file_bytes,
            content_bytes=file.size,
        )
        node = FileNode(updated, replaced_size(file.size, count, old_size, new_size))
        change = _Change(self._state)
        change.put_file(p, node, file)
        self._commit(change, p)
        return count

    def mkdir(self, path: str, *, parents: bool = True, exist_ok: bool = True) -> None:
        """Create a directory (and, with ``parents``, its missing parents)."""
        p = self.normalize(path)
        self._check_writable(p)
        existing = self._state.nodes.get(p)
        if isinstance(existing, FileNode):
            raise PathKindError(
                f"{self.display(p)} is a file, so a directory cannot be created there.", path=p
            )
        if existing is not None:
            if exist_ok:
                return
            raise PathExistsError(f"The directory {self.display(p)} already exists.", path=p)
        check_new_name(p, self.display(p))
        change = _Change(self._state)
        self._make_parents(change, p, parents)
        change.add_dir(p)
        self._commit(change, p)

    def delete(self, path: str, *, recursive: bool = False) -> tuple[str, ...]:
        """Remove a file, an empty directory, or with ``recursive`` a whole tree.

        Returns every removed path (files and directories, the target included), sorted.
        """
        p = self.normalize(path)
        self._check_writable(p)
        if not p:
            raise InvalidPathError(
                "The workspace root cannot be deleted; delete the entries inside it instead.",
                path=p,
            )
        node = self._node(p)
        change = _Change(self._state)
        if isinstance(node, FileNode):
            removed = [p]
        else:
            if node.children and not recursive:
                count = len(node.children)
                raise PathKindError(
                    f"{self.display(p)} is a directory holding {count} "
                    f"{'entry' if count == 1 else 'entries'}; pass recursive=True to delete it "
                    "and everything in it.",
                    path=p,
                )
            removed = [p, *self._walk_paths(p)]
        for removed_path in removed:
            gone = change.nodes.pop(removed_path)
            if isinstance(gone, FileNode):
                change.file_count -= 1
                change.total_bytes -= gone.size
            else:
                change.dir_count -= 1
        change.unlink(p)
        self._state = change.commit()
        removed.sort()
        return tuple(removed)

    # -- internals ----------------------------------------------------------------------

    def _node(self, p: str) -> Node:
        node = self._state.nodes.get(p)
        if node is None:
            raise missing_error(p, self.display(p))
        return node

    def _file(self, p: str) -> FileNode:
        node = self._node(p)
        if isinstance(node, DirNode):
            raise not_a_file_error(p, self.display(p))
        return node

    def _directory(self, p: str) -> DirNode:
        node = self._node(p)
        if isinstance(node, FileNode):
            raise not_a_directory_error(p, self.display(p))
        return node

    @staticmethod
    def _stat(path: str, node: Node) -> FileStat:
        if isinstance(node, FileNode):
            return FileStat(path, "file", node.size)
        return FileStat(path, "directory")

    def _walk_files(self, start: str) -> Iterator[tuple[str, FileNode]]:
        """Every file at or below ``start`` (nothing if it does not exist), unordered."""
        nodes = self._state.nodes
        first = nodes.get(start)
        if isinstance(first, FileNode):
            yield start, first
            return
        if first is None:
            return
        stack = [start]
        while stack:
            directory = stack.pop()
            node = nodes[directory]
            assert isinstance(node, DirNode)
            for name, is_dir in node.children.items():
                path = f"{directory}/{name}" if directory else name
                if is_dir:
                    stack.append(path)
                else:
                    child = nodes[path]
                    assert isinstance(child, FileNode)
                    yield path, child

    def _walk_paths(self, directory: str) -> builtins.list[str]:
        """Every path strictly below ``directory``."""
        nodes = self._state.nodes
        out: list[str] = []
        stack = [directory]
        while stack:
            current = stack.pop()
            node = nodes[current]
            assert isinstance(node, DirNode)
            for name, is_dir in node.children.items():
                path = child_path(current, name)
                out.append(path)
                if is_dir:
                    stack.append(path)
        return out

    def _make_parents(self, change: _Change, p: str, parents: bool) -> None:
        """Make sure the parent directory of ``p`` exists, creating it when ``parents``."""
        parent = parent_and_name(p)[0]
        missing: list[str] = []
        current = parent
        while True:
            node = change.get(current)
            if isinstance(node, DirNode):
                break
            if isinstance(node, FileNode):
                raise PathKindError(
                    f"{self.display(current)} is a file, so {self.display(p)} cannot be created "
                    "inside it. Choose another path, or delete the file first.",
                    path=p,
                )
            missing.append(current)
            current = parent_and_name(current)[0]
        if missing and not parents:
            raise PathNotFoundError(
                f"The parent directory {self.display(parent)} does not exist; create it with "
                "mkdir first, or pass parents=True.",
                path=p,
            )
        for directory in reversed(missing):
            change.add_dir(directory)

    def _check_writable(self, p: str) -> None:
        if self.read_only:
            raise ReadOnlyFilesystemError(
                f"This workspace is read-only, so {self.display(p)} cannot be changed.", path=p
            )

    def _check_file_size(self, p: str, size: int) -> None:
        if size > self.max_file_bytes:
            raise file_size_error(p, self.display(p), size, self.max_file_bytes)

    def _commit(self, change: _Change, p: str) -> None:
        if change.total_bytes > self.max_total_bytes:
            raise FilesystemLimitError(
                f"Writing {self.display(p)} would bring the workspace to {change.total_bytes} "
                f"bytes; the limit is {self.max_total_bytes}. Delete files you no longer need.",
                path=p,
            )
        if change.file_count > self.max_files:
            raise FilesystemLimitError(
                f"Creating {self.display(p)} would exceed the limit of {self.max_files} files. "
                "Delete files you no longer need.",
                path=p,
            )
        if change.dir_count > self.max_directories:
            raise FilesystemLimitError(
                f"Creating {self.display(p)} would exceed the limit of {self.max_directories} "
                "directories. Use a flatter layout or delete directories you no longer need.",
                path=p,
            )
        self._state = change.commit()

    def __repr__(self) -> str:
        state = self._state
        return (
            f"InMemoryFilesystem(files={state.file_count}, directories={state.dir_count}, "
            f"bytes={state.total_bytes})"
        )

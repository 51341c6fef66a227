"""The workspace agent's program: the core's ``DirectoryFilesystem`` behind a framed RPC.

Runs in the agent container (``_agent`` starts it with ``python3 -I -S -B -c`` in one
long-lived exec, as the command uid), never in the sandbox. The agent container mounts the
workspace volume and its own snapshot volume, has no network and a read-only root. The core's
code is not in the image: the host sends its own ``haversack.errors``, ``haversack.lazy`` and
``haversack.filesystem`` sources in the first request and they are imported from memory, so
the agent always runs exactly the host's version of the snapshotter and the file rules.
``google-re2`` (grep) is a C extension: when the host's build fits this interpreter, its files
and the C++ runtime it needs arrive in the same request and are loaded from a private
directory on the agent's tmpfs; otherwise grep says it is unavailable.

Frames both ways: a 4-byte big-endian length, then that many bytes of JSON. Host to agent
``{"id", "op", "args", "drop"}``; agent to host ``{"id", "ok": result}``, ``{"id", "err":
{"type", "message", "path"}}`` or, while a tar streams out, ``{"id", "chunk": base64}``.
Standard library only until the boot request arrives. The tar helpers are also imported by
the host (``sync_to``): they need only ``haversack.filesystem`` and the standard library.
"""

from __future__ import annotations

import base64
import contextlib
import importlib.abc
import importlib.machinery
import importlib.util
import itertools
import json
import os
import stat
import struct
import sys
import tarfile
import tempfile
from collections.abc import Callable, Iterator
from typing import IO, Any

LENGTH = struct.Struct(">I")
PROTOCOL = 1
#: Largest request the agent accepts (the boot request carries the core's source and re2).
MAX_REQUEST = 64 * 1024 * 1024
CHUNK = 1 << 20
#: Most bytes one seeding tar may hold on the agent's disk while it is unpacked.
MAX_TAR_BYTES = 1 << 33


# -- link-safe tar in and out (host and agent) -----------------------------------------------


def _ensure_dirs(beneath: Any, rel: str) -> None:
    parts = rel.split("/") if rel else []
    for i in range(len(parts)):
        sub = "/".join(parts[: i + 1])
        with beneath.parent(sub) as (fd, name), contextlib.suppress(FileExistsError):
            os.mkdir(name, 0o755, dir_fd=fd)


def extract_tar(
    root: str, source: IO[bytes], dest: str = "", owner: tuple[int, int] | None = None
) -> dict[str, Any]:
    """Unpack the tar stream ``source`` under ``root``/``dest`` without following any link:
    every name is resolved beneath a handle on ``root``; links, devices and names that leave
    the tree are skipped and reported. Regular files replace what was there (a link at the
    name is replaced as a name, never written through). ``owner`` (as root) owns what is made.
    """
    from haversack.filesystem import Beneath, normalize_path

    files = dirs = 0
    skipped: list[str] = []
    chown = owner is not None and os.geteuid() == 0
    with Beneath(root) as beneath, tarfile.open(fileobj=source, mode="r|") as tar:
        for member in tar:
            try:
                rel = normalize_path(f"{dest}/{member.name}" if dest else member.name)
            except ValueError:
                skipped.append(member.name)
                continue
            try:
                if member.isdir():
                    _ensure_dirs(beneath, rel)
                    if rel:
                        with beneath.parent(rel) as (fd, name):
                            os.chmod(name, 0o700 | (member.mode & 0o755), dir_fd=fd)
                            if chown and owner is not None:
                                os.chown(name, *owner, dir_fd=fd, follow_symlinks=False)
                    dirs += 1
                elif member.isreg() and rel:
                    _ensure_dirs(beneath, rel.rpartition("/")[0])
                    data = tar.extractfile(member)
                    assert data is not None
                    _write_member(beneath, rel, data, member.mode, owner if chown else None)
                    files += 1
                else:
                    skipped.append(rel or member.name)
            except (OSError, ValueError):
                skipped.append(rel)
    return {"files": files, "dirs": dirs, "skipped": skipped}


def _write_member(
    beneath: Any, rel: str, data: IO[bytes], mode: int, owner: tuple[int, int] | None
) -> None:
    with beneath.parent(rel) as (fd, name):
        try:
            st = os.stat(name, dir_fd=fd, follow_symlinks=False)
        except FileNotFoundError:
            st = None
        if st is not None:
            if stat.S_ISDIR(st.st_mode):
                raise IsADirectoryError(rel)
            os.unlink(name, dir_fd=fd)  # a link or another name: replaced, never written through
        flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
        out = os.open(name, flags, 0o600, dir_fd=fd)
        try:
            while block := data.read(CHUNK):
                os.write(out, block)
            os.fchmod(out, 0o600 | (mode & 0o755))
            if owner is not None:
                os.fchown(out, *owner)
        finally:
            os.close(out)


def _tree(beneath: Any, top: str) -> Iterator[tuple[str, os.stat_result]]:
    """Every entry under ``top`` (itself first), directories before their contents, without
    following a link; iterative, so depth costs memory, not recursion."""
    fd = beneath.open(top, os.O_RDONLY) if top else os.open(".", os.O_RDONLY, dir_fd=beneath.fd)
    try:
        st = os.fstat(fd)
    finally:
        os.close(fd)
    yield top, st
    stack = [top] if stat.S_ISDIR(st.st_mode) else []
    while stack:
        rel = stack.pop()
        dir_fd = beneath.open_dir(rel)
        try:
            with os.scandir(dir_fd) as entries:
                children = sorted((e.name, e.stat(follow_symlinks=False)) for e in entries)
        finally:
            os.close(dir_fd)
        for name, st in children:
            child = f"{rel}/{name}" if rel else name
            yield child, st
            if stat.S_ISDIR(st.st_mode):
                stack.append(child)


def write_tar(root: str, top: str, sink: Any, target: str = "") -> dict[str, Any]:
    """Write the tree ``top`` of ``root`` as a tar stream to ``sink``, named as if ``top``
    were ``target``: directories and regular files (opened beneath the root, never through a
    link); links and special files are left out and reported."""
    from haversack.filesystem import Beneath

    files = 0
    skipped: list[str] = []
    with Beneath(root) as beneath, tarfile.open(fileobj=sink, mode="w|") as tar:
        for rel, st in _tree(beneath, top):
            tail = rel[len(top) :].lstrip("/")
            name = f"{target}/{tail}" if target and tail else (target or tail)
            info = tarfile.TarInfo(name or ".")
            info.mode = stat.S_IMODE(st.st_mode)
            info.mtime = int(st.st_mtime)
            if stat.S_ISDIR(st.st_mode):
                info.type = tarfile.DIRTYPE
                tar.addfile(info)
            elif stat.S_ISREG(st.st_mode):
                fd = beneath.open(rel, os.O_RDONLY)
                with os.fdopen(fd, "rb") as handle:
                    info.size = os.fstat(handle.fileno()).st_size
                    tar.addfile(info, handle)
                files += 1
            else:
                skipped.append(name)
    return {"files": files, "skipped": skipped}


# -- the agent ------------------------------------------------------------------------------


class _MemoryImporter(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Imports the modules the host sent (``{name: source}``) from memory."""

    def __init__(self, sources: dict[str, str], packages: set[str]) -> None:
        self._sources = sources
        self._packages = packages

    def find_spec(self, fullname: str, path: Any = None, target: Any = None) -> Any:
        if fullname not in self._sources:
            return None
        return importlib.util.spec_from_loader(
            fullname, self, is_package=fullname in self._packages
        )

    def create_module(self, spec: Any) -> None:
        return None

    def exec_module(self, module: Any) -> None:
        name = module.__spec__.name
        code = compile(self._sources[name], f"<host>/{name.replace('.', '/')}.py", "exec")
        exec(code, module.__dict__)  # noqa: S102 - the host's own core source


class _Channel:
    def __init__(self) -> None:
        self._in = sys.stdin.buffer
        self._out = sys.stdout.buffer

    def recv(self) -> Any:
        head = self._in.read(LENGTH.size)
        if len(head) < LENGTH.size:
            return None
        (size,) = LENGTH.unpack(head)
        if size > MAX_REQUEST:
            raise SystemExit(f"request of {size} bytes is over the limit")
        body = self._in.read(size)
        if len(body) < size:
            return None
        return json.loads(body)

    def send(self, message: dict[str, Any]) -> None:
        body = json.dumps(message, separators=(",", ":")).encode()
        self._out.write(LENGTH.pack(len(body)) + body)
        self._out.flush()


class _ChunkSink:
    """A write-only file whose bytes leave as ``chunk`` frames of one request."""

    def __init__(self, channel: _Channel, ident: int) -> None:
        self._channel = channel
        self._ident = ident
        self._buffer = bytearray()

    def write(self, data: bytes) -> int:
        self._buffer += data
        if len(self._buffer) >= CHUNK:
            self.flush()
        return len(data)

    def flush(self) -> None:
        if self._buffer:
            encoded = base64.b64encode(bytes(self._buffer)).decode()
            self._channel.send({"id": self._ident, "chunk": encoded})
            self._buffer.clear()


def _load_native(files: dict[str, str], preload: list[str]) -> None:
    """Write re2 and its C++ runtime to a private directory and load them from there."""
    import ctypes

    where = tempfile.mkdtemp(prefix="agent-native-")
    for rel, data in files.items():
        path = os.path.join(where, rel)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "wb") as handle:
            handle.write(base64.b64decode(data))
    for rel in preload:  # the loader then finds them by soname when re2 needs them
        ctypes.CDLL(os.path.join(where, rel), mode=ctypes.RTLD_GLOBAL)
    sys.path.insert(0, where)


class _Agent:
    def __init__(self, channel: _Channel, boot: dict[str, Any]) -> None:
        from pathlib import Path

        from haversack.filesystem import DirectoryFilesystem, remove_tree

        self.channel = channel
        self.root = boot["root"]
        storage = boot["storage"]
        # Left by an agent that was killed: this volume is the agent's alone.
        for name in os.listdir(storage):
            remove_tree(os.path.join(storage, name))
        self.storage = storage
        self.fs = DirectoryFilesystem(
            self.root,
            mount_point=boot["mount_point"],
            max_file_bytes=boot["max_file_bytes"],
            storage_parent=Path(storage),
            max_bytes=boot["max_bytes"],
            max_files=boot["max_files"],
        )
        self.snapshots: dict[int, object] = {}
        self.tokens = itertools.count(1)
        self.upload: IO[bytes] | None = None
        self.upload_bytes = 0

    def serve(self) -> None:
        while True:
            request = self.channel.recv()
            if request is None:
                return
            ident = request.get("id")
            for token in request.get("drop") or ():
                snap = self.snapshots.pop(token, None)
                if snap is not None:
                    self.fs.discard(snap)
            try:
                result = self.dispatch(ident, request["op"], request.get("args") or {})
            except Exception as exc:  # noqa: BLE001 - every failure goes back as a result
                self.channel.send({"id": ident, "err": _error(exc)})
            else:
                self.channel.send({"id": ident, "ok": result})

    def dispatch(self, ident: int, op: str, a: dict[str, Any]) -> Any:
        handler: Callable[..., Any] | None = getattr(self, f"op_{op}", None)
        if handler is None:
            raise ValueError(f"unknown operation {op!r}")
        return handler(ident, **{key: _unwire(value) for key, value in a.items()})

    # The file operations: the core's own, results as plain JSON.
    def op_ping(self, ident: int) -> Any:
        return {"pid": os.getpid()}

    def op_exists(self, ident: int, path: str) -> Any:
        return self.fs.exists(path)

    def op_stat(self, ident: int, path: str) -> Any:
        return _stat(self.fs.stat(path))

    def op_list(self, ident: int, path: str) -> Any:
        return [_stat(entry) for entry in self.fs.list(path)]

    def op_read(self, ident: int, path: str, offset: int, limit: int | None) -> Any:
        w = self.fs.read(path, offset=offset, limit=limit)
        return {"path": w.path, "content": w.content, "offset": w.offset, "total": w.total_lines}

    def op_read_text(self, ident: int, path: str) -> Any:
        return self.fs.read_text(path)

    def op_write(self, ident: int, path: str, content: str, mode: Any, parents: bool) -> Any:
        return self.fs.write(path, content, mode=mode, parents=parents)

    def op_edit(self, ident: int, path: str, old: str, new: str, replace_all: bool) -> Any:
        return self.fs.edit(path, old, new, replace_all=replace_all)

    def op_glob(self, ident: int, pattern: str, path: str) -> Any:
        return list(self.fs.glob(pattern, path=path))

    def op_grep(
        self, ident: int, pattern: str, path: str, glob: str | None, max_matches: int
    ) -> Any:
        try:
            import re2  # type: ignore[import-untyped]  # noqa: F401
        except ImportError as exc:
            from haversack.errors import FilesystemError

            raise FilesystemError(
                "grep is unavailable in the workspace agent: google-re2 could not be loaded "
                f"there ({exc}); use glob and read instead."
            ) from None
        r = self.fs.grep(pattern, path=path, glob=glob, max_matches=max_matches)
        return {
            "matches": [[m.path, m.line_number, m.line, m.cut_bytes] for m in r.matches],
            "truncated": r.truncated,
            "stopped": r.stopped,
            "skipped_lines": r.skipped_lines,
            "scanned_bytes": r.scanned_bytes,
            "scanned_files": r.scanned_files,
        }

    def op_delete(self, ident: int, path: str, recursive: bool) -> Any:
        return list(self.fs.delete(path, recursive=recursive))

    def op_mkdir(self, ident: int, path: str, parents: bool, exist_ok: bool) -> Any:
        self.fs.mkdir(path, parents=parents, exist_ok=exist_ok)

    def op_snapshot(self, ident: int) -> Any:
        token = next(self.tokens)
        self.snapshots[token] = self.fs.snapshot()
        return token

    def op_restore(self, ident: int, token: int) -> Any:
        snap = self.snapshots.get(token)
        if snap is None:
            from haversack.errors import FilesystemError

            raise FilesystemError("This snapshot is unknown to the workspace agent.")
        self.fs.restore(snap)

    def op_usage(self, ident: int) -> Any:
        return _usage(self.fs.usage())

    def op_check_quota(self, ident: int) -> Any:
        return _usage(self.fs.check_quota())

    # Seeding: a tar arrives in chunks, is kept on the agent's disk, then unpacked link-safely.
    def op_put_chunk(self, ident: int, data: str) -> Any:
        raw = base64.b64decode(data)
        if self.upload is None:
            self.upload = tempfile.TemporaryFile(dir=self.storage)  # noqa: SIM115
            self.upload_bytes = 0
        self.upload_bytes += len(raw)
        if self.upload_bytes > MAX_TAR_BYTES:
            self.upload.close()
            self.upload = None
            raise ValueError("the archive is larger than the agent accepts")
        self.upload.write(raw)

    def op_put_end(self, ident: int, dest: str) -> Any:
        upload, self.upload = self.upload, None
        if upload is None:
            return {"files": 0, "dirs": 0, "skipped": []}
        with upload:
            upload.seek(0)
            return extract_tar(self.root, upload, self.fs.normalize(dest))

    def op_get(self, ident: int, path: str) -> Any:
        sink = _ChunkSink(self.channel, ident)
        result = write_tar(self.root, self.fs.normalize(path), sink)
        sink.flush()
        return result


def _unwire(value: Any) -> Any:
    """An argument the host could not send as JSON: a stand-in of the same type name."""
    if isinstance(value, dict):
        return type(str(value.get("$type")), (), {})()
    return value


def _stat(entry: Any) -> list[Any]:
    return [entry.path, entry.kind, entry.size]


def _usage(usage: Any) -> list[int]:
    return [usage.bytes, usage.files, usage.max_bytes, usage.max_files]


def _error(exc: BaseException) -> dict[str, Any]:
    from haversack.errors import FilesystemError

    if isinstance(exc, FilesystemError):
        return {"type": type(exc).__name__, "message": exc.message, "path": exc.path}
    return {"type": "", "message": f"{type(exc).__name__}: {exc}", "path": None}


def main() -> None:
    channel = _Channel()
    suffixes = importlib.machinery.EXTENSION_SUFFIXES
    channel.send({"hello": PROTOCOL, "pid": os.getpid(), "suffixes": suffixes})
    boot = channel.recv()
    if boot is None:
        return
    sys.meta_path.insert(0, _MemoryImporter(boot["sources"], set(boot["packages"])))
    native = boot.get("native")
    if native:
        try:
            _load_native(native["files"], native["preload"])
        except OSError as exc:  # grep then says re2 is unavailable
            sys.stderr.write(f"re2 not loaded: {exc}\n")
    try:
        agent = _Agent(channel, boot)
    except Exception as exc:  # noqa: BLE001 - reported as the boot request's result
        channel.send({"id": boot.get("id"), "err": _error(exc)})
        return
    tracks = agent.fs._tracker().tracks_changes
    channel.send({"id": boot.get("id"), "ok": {"tracks_changes": tracks, "pid": os.getpid()}})
    agent.serve()


if __name__ == "__main__":
    main()

"""The workspace agent, host side: the ``Filesystem`` of a workspace volume, driven by RPC.

When the engine does not share this host's disk, the workspace is a named volume and the
host cannot open it. A second container, the *agent*, mounts the same volume and a private
snapshot volume, runs the core's unchanged ``DirectoryFilesystem`` (``_agent_program``) and
answers framed JSON requests over one long-lived exec (``ExecStream``). The sandbox container
never sees the agent; neither has a network. Every request is bounded by a deadline and every
answer by a size limit: an agent that hangs, closes its stream or sends anything but the
protocol costs one clear ``WorkspaceAgentError``, after which the agent is started anew once
(the volume and its files are kept; snapshots taken before are gone).
"""

from __future__ import annotations

import base64
import collections
import contextlib
import functools
import importlib.util
import itertools
import json
import os
import struct
import subprocess
import tarfile
import tempfile
import threading
import time
import uuid
import weakref
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any, Final, Protocol, TypeVar

from haversack.errors import FilesystemError

from ._config import PYTHON_IMAGE
from ._errors import SandboxError, WorkspaceAgentError
from ._output import CappedBuffer

if TYPE_CHECKING:
    from haversack.filesystem import (
        FileStat,
        GrepResult,
        ReadWindow,
        RollbackReport,
        WorkspaceUsage,
        WriteMode,
    )

    from ._exec_stream import ExecStream
    from ._service import PodmanService

__all__ = ["AGENT_LABEL", "AgentFilesystem", "AgentSnapshot", "create_volume"]

#: Present (value "1") on every agent container and snapshot volume.
AGENT_LABEL: Final = "haversack.agent"
_LENGTH: Final = struct.Struct(">I")
_PROTOCOL: Final = 1
#: Longest one request may take when no call's deadline is shorter (a grep has its own
#: budget, well below this).
RPC_TIMEOUT_S: Final = 30.0
#: How long the agent may take to start (container, python, the boot request).
_START_S: Final = 30.0
#: The largest answer frame: a whole file read at the byte limit, JSON-escaped, fits.
_MIN_FRAME: Final = 16 * 1024 * 1024
#: Largest request frame the agent takes (``_agent_program.MAX_REQUEST``).
_MAX_REQUEST: Final = 64 * 1024 * 1024
_CHUNK: Final = 1 << 20
#: The core modules the agent needs, shipped as source; everything else is the standard
#: library (``haversack`` itself becomes an empty package there).
_CORE: Final = ("haversack.errors", "haversack.lazy")
_MOUNT: Final = "/workspace"
_AGENT_MEMORY: Final = 1 << 30
_AGENT_PIDS: Final = 64
_STORE: Final = "/snapshots"


_T = TypeVar("_T")


class _Writer(Protocol):
    def write(self, data: bytes, /) -> int: ...


class AgentSnapshot:
    """An agent's snapshot: opaque, valid only for the agent run (``generation``) that took
    it; released in the agent when collected (or by ``discard``)."""

    __slots__ = ("__weakref__", "generation", "token")

    def __init__(self, token: int, generation: int) -> None:
        self.token = token
        self.generation = generation

    def __repr__(self) -> str:
        return f"AgentSnapshot({self.token}, generation={self.generation})"


class _Frames:
    """The agent's stdout: length-prefixed JSON frames, each at most ``cap`` bytes."""

    def __init__(self, cap: int) -> None:
        self._cap = cap
        self._pending = bytearray()
        self.messages: collections.deque[dict[str, Any]] = collections.deque()
        self.broken: str | None = None

    def write(self, data: bytes) -> None:
        if self.broken is not None:
            return
        self._pending += data
        while len(self._pending) >= _LENGTH.size:
            (size,) = _LENGTH.unpack_from(self._pending)
            if size > self._cap:
                self.broken = f"sent a frame of {size} bytes (the limit is {self._cap})"
                self._pending.clear()
                return
            end = _LENGTH.size + size
            if len(self._pending) < end:
                return
            body = bytes(self._pending[_LENGTH.size : end])
            del self._pending[:end]
            try:
                message = json.loads(body)
            except ValueError:
                message = None
            if not isinstance(message, dict):
                self.broken = f"sent a frame that is not a JSON object ({body[:40]!r})"
                self._pending.clear()
                return
            self.messages.append(message)

    def ready(self) -> bool:
        return bool(self.messages) or self.broken is not None


class _Failed:
    """An operation the agent answered with an error (the channel is in step)."""

    __slots__ = ("error",)

    def __init__(self, error: Exception) -> None:
        self.error = error


class _Lost(Exception):  # noqa: N818 - internal signal, turned into WorkspaceAgentError
    pass


def create_volume(service: PodmanService, name: str, *, uid: int, gid: int) -> str:
    """Create the named volume ``name`` with its root owned by ``uid:gid`` (no chown, no
    capability needed) and the agent label; return its name."""
    body = {"Name": name, "Labels": {AGENT_LABEL: "1"}, "Options": {"o": f"uid={uid},gid={gid}"}}
    response = service.client.api.post("/volumes/create", data=json.dumps(body))
    if response.status_code >= 400:
        raise WorkspaceAgentError(f"Creating volume {name} failed: {response.text.strip()}")
    return name


def _remove_volume(service: PodmanService, name: str) -> None:
    with contextlib.suppress(Exception):
        service.client.api.delete(f"/volumes/{name}", params={"force": True})


@functools.cache
def _core_sources() -> tuple[dict[str, str], tuple[str, ...]]:
    """The source of every core module the agent imports, and which are packages."""
    import haversack.filesystem

    sources = {"haversack": ""}
    for name in _CORE:
        spec = importlib.util.find_spec(name)
        assert spec is not None
        assert spec.origin is not None
        sources[name] = Path(spec.origin).read_text(encoding="utf-8")
    package = Path(haversack.filesystem.__file__)
    for path in sorted(package.parent.glob("*.py")):
        stem = path.stem
        name = "haversack.filesystem" if stem == "__init__" else f"haversack.filesystem.{stem}"
        sources[name] = path.read_text(encoding="utf-8")
    return sources, ("haversack", "haversack.filesystem")


@functools.cache
def _native() -> tuple[str, dict[str, str], tuple[str, ...]] | None:
    """re2 as this host has it: its extension suffix, its files and the shared libraries it
    needs beyond the C library (preloaded in this order); None when it cannot be shipped."""
    spec = importlib.util.find_spec("re2")
    if spec is None or spec.origin is None:
        return None
    package = Path(spec.origin).parent
    files: dict[str, str] = {}
    suffix = ""
    extensions: list[Path] = []
    for path in sorted(package.iterdir()):
        if path.suffix not in (".py", ".so"):
            continue
        files[f"re2/{path.name}"] = base64.b64encode(path.read_bytes()).decode()
        if path.suffix == ".so":
            extensions.append(path)
            suffix = path.name[path.name.index(".") :]
    preload: list[str] = []
    for ext in extensions:
        try:
            out = subprocess.run(
                ["ldd", str(ext)], capture_output=True, text=True, check=True, timeout=10
            ).stdout
        except (OSError, subprocess.SubprocessError):
            return None
        for line in out.splitlines():
            parts = line.split()
            if "=>" not in parts or len(parts) < 3 or not parts[2].startswith("/"):
                continue
            lib = parts[0]
            # The C library and the loader are the image's own (the python image has them).
            if lib.startswith(("libc.", "libm.", "ld-linux")):
                continue
            files[f"lib/{lib}"] = base64.b64encode(Path(parts[2]).read_bytes()).decode()
            preload.append(f"lib/{lib}")
    # The C++ runtime after what it needs (libgcc_s, libpthread).
    preload.sort(key=lambda rel: "stdc++" in rel)
    return suffix, files, tuple(preload)


class AgentFilesystem:
    """A :class:`haversack.Filesystem` (and ``Snapshottable``) over the named volume
    ``volume`` of the Podman service ``service``, through a workspace agent container.

    The agent container (``name``, default ``haversack-agent-<random>``) runs ``image`` (it
    needs ``python3``: the pack's python image) with the workspace volume at ``/workspace``,
    a private snapshot volume ``<name>-snapshots`` at ``/snapshots``, a read-only root, no
    network and no capability; its primary user and the agent process are ``uid:gid``
    (the command user), so what it writes is owned like what commands write. ``guard``, when
    given, is entered around every method (the sandbox's ``quiesced``). ``close`` removes the
    agent container and the snapshot volume, never the workspace volume.
    """

    def __init__(
        self,
        service: PodmanService,
        volume: str,
        *,
        uid: int,
        gid: int,
        image: str = PYTHON_IMAGE,
        name: str | None = None,
        labels: Mapping[str, str] | None = None,
        mount_point: str = "/workspace",
        max_file_bytes: int | None = None,
        max_bytes: int | None = None,
        max_files: int | None = None,
        guard: Callable[[], contextlib.AbstractContextManager[object]] | None = None,
        rpc_timeout: float = RPC_TIMEOUT_S,
    ) -> None:
        from haversack.filesystem import DEFAULT_MAX_FILE_BYTES, normalize_path

        self._service = service
        self.volume = volume
        self.uid, self.gid = uid, gid
        self.image = image
        self.name = name or f"haversack-agent-{uuid.uuid4().hex[:16]}"
        self.snapshot_volume = f"{self.name}-snapshots"
        self._labels = {AGENT_LABEL: "1", **(labels or {})}
        stripped = mount_point.strip("/")
        self._mount_point = f"/{stripped}" if stripped else "/"
        self._normalize = functools.partial(normalize_path, mount_point=self._mount_point)
        self.max_file_bytes = max_file_bytes or DEFAULT_MAX_FILE_BYTES
        self._quota = (max_bytes, max_files)
        self._guard = guard
        self.rpc_timeout = rpc_timeout
        self._frame_cap = max(_MIN_FRAME, 6 * self.max_file_bytes + _CHUNK)
        self._lock = threading.RLock()
        self._ids = itertools.count(1)
        self._generation = 0
        self._dropped: collections.deque[int] = collections.deque()
        self._stream: ExecStream | None = None
        self._frames = _Frames(self._frame_cap)
        self._log = CappedBuffer(4096)
        self._container_id: str | None = None
        self._closed = False
        #: Whether the agent's snapshotter sees changes through inotify (else full walks).
        self.tracks_changes = False
        #: Why the last agent was lost and started anew (None: never).
        self.lost: str | None = None
        self.pid = 0
        create_volume(service, self.snapshot_volume, uid=uid, gid=gid)
        try:
            with self._lock:
                self._start()
        except BaseException:
            self._teardown()
            raise

    # -- the agent's life -------------------------------------------------------------------

    def _spec(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "image": self.image,
            "command": ["sleep", "infinity"],
            "init": True,
            "labels": self._labels,
            "user": f"{self.uid}:{self.gid}",
            "work_dir": "/",
            "hostname": "agent",
            "read_only_filesystem": True,
            "read_write_tmpfs": False,
            "volumes": [
                {"Name": self.volume, "Dest": _MOUNT, "Options": ["rw"]},
                {"Name": self.snapshot_volume, "Dest": _STORE, "Options": ["rw"]},
            ],
            "mounts": [
                {
                    # re2's shared objects are loaded from here: it must allow exec.
                    "destination": "/tmp",  # noqa: S108 - the agent's own tmpfs
                    "source": "tmpfs",
                    "type": "tmpfs",
                    "options": ["rw", "nosuid", "nodev", "exec", "size=64m", "mode=1777"],
                }
            ],
            "netns": {"nsmode": "none"},
            "cap_drop": ["ALL"],
            "no_new_privileges": True,
            # The workspace is the commands' to shape: the agent working through it must not
            # take the host down with it.
            "resource_limits": {
                "memory": {"limit": _AGENT_MEMORY, "swap": _AGENT_MEMORY},
                "pids": {"limit": _AGENT_PIDS},
            },
        }

    def _start(self) -> None:
        """Create and start the agent container (a fresh one) and its exec, and boot it."""
        from ._exec_stream import ExecStream
        from ._service import engine_deadline, request_timeout

        # Within the call's own deadline when it has one (every engine request is bounded
        # by it), else _START_S.
        limit = min(_START_S, request_timeout())
        with engine_deadline(limit):
            api = self._service.client.api
            self._remove_container()
            spec = json.dumps(self._spec())
            response = api.post("/containers/create", data=spec)
            if response.status_code >= 400 and "already in use" in response.text:
                self._remove_container(self.name)
                response = api.post("/containers/create", data=spec)
            if response.status_code >= 400:
                raise WorkspaceAgentError(
                    f"Creating the workspace agent {self.name} failed: {response.text.strip()}"
                )
            self._container_id = str(response.json()["Id"])
            started = api.post(f"/containers/{self._container_id}/start")
            if started.status_code >= 400:
                raise WorkspaceAgentError(
                    f"Starting the workspace agent {self.name} failed: {started.text.strip()}"
                )
            body = {
                "Cmd": ["python3", "-I", "-S", "-B", "-c", self._program()],
                "User": f"{self.uid}:{self.gid}",
                "WorkingDir": "/",
                "AttachStdin": True,
                "AttachStdout": True,
                "AttachStderr": True,
                "Tty": False,
            }
            created = api.post(f"/containers/{self._container_id}/exec", data=json.dumps(body))
            if created.status_code >= 400:
                raise WorkspaceAgentError(
                    f"Podman could not start the workspace agent in {self.name}: "
                    f"{created.text.strip()}"
                )
            exec_id = str(created.json()["Id"])
            self._frames = _Frames(self._frame_cap)
            self._log = CappedBuffer(4096)
            self._stream = ExecStream(
                self._service.base_url, exec_id, None, self._frames, self._log
            )
        self._generation += 1
        self._dropped.clear()
        try:
            self._boot(time.monotonic() + limit)
        except _Lost as lost:
            self._close_stream()
            raise WorkspaceAgentError(
                f"The workspace agent did not start: it {lost}"
                + self._stderr_tail()
                + " (is python3 in the image?)"
            ) from None

    def _program(self) -> str:
        """The agent's program text, given on the command line (no file in the container
        holds it)."""
        from ._agent_program import __file__ as program_file

        return Path(program_file).read_text(encoding="utf-8")

    def _boot(self, deadline: float) -> None:
        hello = self._next_message(deadline)
        if hello.get("hello") != _PROTOCOL or not isinstance(hello.get("suffixes"), list):
            raise _Lost(f"greeted with {str(hello)[:100]} instead of protocol {_PROTOCOL}")
        sources, packages = _core_sources()
        max_bytes, max_files = self._quota
        boot: dict[str, Any] = {
            "id": 0,
            "sources": sources,
            "packages": list(packages),
            "root": _MOUNT,
            "storage": _STORE,
            "mount_point": self._mount_point,
            "max_file_bytes": self.max_file_bytes,
            "max_bytes": max_bytes,
            "max_files": max_files,
        }
        native = _native()
        if native is not None and native[0] in hello["suffixes"]:
            boot["native"] = {"files": native[1], "preload": list(native[2])}
        answer = self._exchange(boot, deadline)
        if isinstance(answer, _Failed):
            raise _Lost(f"could not open the workspace: {answer.error}")
        if not isinstance(answer, dict) or not isinstance(answer.get("pid"), int):
            raise _Lost("answered the boot request with something else")
        self.tracks_changes = bool(answer.get("tracks_changes"))
        self.pid = answer["pid"]

    def _remove_container(self, ref: str | None = None) -> None:
        ref = ref or self._container_id
        if ref is None:
            return
        with contextlib.suppress(Exception):
            self._service.client.api.delete(
                f"/containers/{ref}", params={"force": True, "timeout": 0}
            )
        if ref == self._container_id:
            self._container_id = None

    def _close_stream(self) -> None:
        if self._stream is not None:
            self._stream.close()
            self._stream = None

    def _stderr_tail(self) -> str:
        text = self._log.text().strip()
        return f" (its last words: {text[-300:]})" if text else ""

    def _lose(self, why: str) -> WorkspaceAgentError:
        """The channel broke: start the agent anew, once, and say what happened."""
        self._close_stream()
        message = f"The workspace agent {why}{self._stderr_tail()}"
        self.lost = message
        try:
            self._start()
        except SandboxError as exc:
            return WorkspaceAgentError(
                f"{message}. Starting it again failed too ({exc}); the next file operation "
                "tries once more."
            )
        return WorkspaceAgentError(
            f"{message}. It was started again: the workspace's files are kept, snapshots "
            "taken before are gone, and this operation may or may not have been applied; "
            "check, then retry."
        )

    # -- the channel ------------------------------------------------------------------------

    def _next_message(self, deadline: float) -> dict[str, Any]:
        stream = self._stream
        if stream is None:
            raise _Lost("is not running")
        frames = self._frames
        if not frames.messages:
            stream.pump(deadline, until=frames.ready)
        if frames.broken is not None:
            raise _Lost(frames.broken)
        if frames.messages:
            return frames.messages.popleft()
        if stream.eof:
            raise _Lost("closed its channel")
        raise _Lost("did not answer in time")

    def _exchange(
        self,
        request: dict[str, Any],
        deadline: float,
        chunks: _Writer | None = None,
        idle: float | None = None,
    ) -> Any:
        """Send one request and read its answer (and any ``chunk`` frames into ``chunks``;
        with ``idle``, each chunk moves the deadline to ``idle`` seconds after it, so a long
        archive is bounded by its progress and the caller's byte limit, not by one timeout)."""
        body = json.dumps(request, separators=(",", ":")).encode()
        if len(body) > _MAX_REQUEST:
            raise WorkspaceAgentError(
                f"The request is {len(body)} bytes, over the agent's {_MAX_REQUEST}-byte limit."
            )
        stream = self._stream
        if stream is None:
            raise _Lost("is not running")
        answered = False
        try:
            if not stream.send(_LENGTH.pack(len(body)) + body, deadline):
                raise _Lost("did not take the request" + (" in time" if not stream.eof else ""))
            result = self._answer(request["id"], deadline, chunks, idle)
            answered = True
            return result
        finally:
            if not answered and self._stream is stream:
                # Stopped between the request and its answer (a cancelled call, a refused
                # chunk): what the agent still sends would be read as the next answer, so
                # this channel is closed and the next operation starts the agent anew.
                self._close_stream()

    def _answer(
        self, ident: int, deadline: float, chunks: _Writer | None, idle: float | None
    ) -> Any:
        while True:
            message = self._next_message(deadline)
            if message.get("id") != ident:
                raise _Lost(f"answered request {message.get('id')!r}, not {ident}")
            if "chunk" in message and chunks is not None:
                try:
                    chunks.write(base64.b64decode(message["chunk"], validate=True))
                except (ValueError, TypeError):
                    raise _Lost("sent a chunk that is not base64") from None
                if idle is not None:
                    deadline = time.monotonic() + idle
                continue
            if "ok" in message:
                return message["ok"]
            error = message.get("err")
            if isinstance(error, dict):
                return _Failed(_failure(error))
            raise _Lost(f"sent a frame that is no answer ({str(message)[:80]})")

    def _call(
        self,
        op: str,
        args: dict[str, Any] | None = None,
        *,
        chunks: _Writer | None = None,
        timeout: float | None = None,
    ) -> Any:
        from ._service import request_timeout

        if self._closed:
            raise WorkspaceAgentError(f"The workspace agent {self.name} is closed.")
        if self._stream is None:
            self._start()  # lost before, and its restart failed: try once more
        limit = min(timeout or self.rpc_timeout, max(request_timeout(), 0.001))
        deadline = time.monotonic() + limit
        drop = []
        while self._dropped:
            drop.append(self._dropped.popleft())
        wire = {key: _wire(value) for key, value in (args or {}).items()}
        request = {"id": next(self._ids), "op": op, "args": wire, "drop": drop}
        try:
            result = self._exchange(request, deadline, chunks, limit if chunks else None)
        except _Lost as lost:
            raise self._lose(str(lost)) from None
        if isinstance(result, _Failed):
            raise result.error
        return result

    @contextlib.contextmanager
    def _guarded(self) -> Iterator[None]:
        with (
            self._guard() if self._guard is not None else contextlib.nullcontext(),
            self._lock,
        ):
            yield

    def _rpc(self, op: str, **args: Any) -> Any:
        # Normalised here, with the host's interpreter: CPython 3.11.2 (the python image's)
        # mis-runs the core's possessive-quantifier path pattern and would pass '../x' as
        # canonical. A canonical path is one the agent then takes as it is.
        if isinstance(args.get("path"), str):
            args["path"] = self._normalize(args["path"])
        with self._guarded():
            return self._call(op, args)

    # -- the Filesystem protocol -----------------------------------------------------------

    @property
    def mount_point(self) -> str:
        """Where the workspace root appears to the model (``/workspace`` by default)."""
        return self._mount_point

    def normalize(self, path: str) -> str:
        """Normalise ``path`` exactly as the agent does (the same core function)."""
        return self._normalize(path)

    def exists(self, path: str) -> bool:
        """Whether ``path`` exists (a link counts; it is never followed)."""
        return bool(self._rpc("exists", path=path))

    def stat(self, path: str) -> FileStat:
        """The entry at ``path``."""
        return _file_stat(self._rpc("stat", path=path))

    def list(self, path: str = "") -> tuple[FileStat, ...]:
        """Direct children of a directory, sorted by name."""
        entries = self._rpc("list", path=path)
        return tuple(_file_stat(entry) for entry in _checked(entries, list))

    def read(self, path: str, *, offset: int = 0, limit: int | None = None) -> ReadWindow:
        """Lines ``offset`` .. ``offset + limit`` of a text file."""
        from haversack.filesystem import ReadWindow

        w = _checked(self._rpc("read", path=path, offset=offset, limit=limit), dict)
        return ReadWindow(
            _checked(w.get("path"), str),
            _checked(w.get("content"), str),
            _checked(w.get("offset"), int),
            _checked(w.get("total"), int),
        )

    def read_text(self, path: str) -> str:
        """The whole text of a file."""
        return _checked(self._rpc("read_text", path=path), str)

    def write(
        self, path: str, content: str, *, mode: WriteMode = "create", parents: bool = True
    ) -> int:
        """Write ``content``; the number of UTF-8 bytes written."""
        if isinstance(content, str) and len(content) > self.max_file_bytes:
            from haversack.filesystem import file_size_error

            rel = self._normalize(path)
            shown = f"{self._mount_point.rstrip('/')}/{rel}"
            raise file_size_error(rel, shown, len(content.encode()), self.max_file_bytes)
        return _checked(
            self._rpc("write", path=path, content=content, mode=mode, parents=parents), int
        )

    def edit(self, path: str, old: str, new: str, *, replace_all: bool = False) -> int:
        """Replace ``old`` by ``new``; the number of replacements."""
        return _checked(
            self._rpc("edit", path=path, old=old, new=new, replace_all=replace_all), int
        )

    def glob(self, pattern: str, *, path: str = "") -> tuple[str, ...]:
        """Files under ``path`` matching ``pattern``, sorted."""
        found = _checked(self._rpc("glob", pattern=pattern, path=path), list)
        return tuple(_checked(item, str) for item in found)

    def grep(
        self, pattern: str, *, path: str = "", glob: str | None = None, max_matches: int = 100
    ) -> GrepResult:
        """Lines matching the RE2 expression ``pattern`` in files under ``path``."""
        from haversack.filesystem import GrepMatch, GrepResult

        r = _checked(
            self._rpc("grep", pattern=pattern, path=path, glob=glob, max_matches=max_matches),
            dict,
        )
        try:
            matches = tuple(
                GrepMatch(str(p), int(n), str(line), int(cut))
                for p, n, line, cut in _checked(r.get("matches"), list)
            )
        except (TypeError, ValueError):
            raise WorkspaceAgentError("The workspace agent sent malformed grep matches.") from None
        return GrepResult(
            matches,
            truncated=bool(r.get("truncated")),
            stopped=str(r.get("stopped") or ""),
            skipped_lines=_checked(r.get("skipped_lines", 0), int),
            scanned_bytes=_checked(r.get("scanned_bytes", 0), int),
            scanned_files=_checked(r.get("scanned_files", 0), int),
        )

    def delete(self, path: str, *, recursive: bool = False) -> tuple[str, ...]:
        """Remove a file, or a tree when ``recursive``; every removed path, sorted."""
        removed = _checked(self._rpc("delete", path=path, recursive=recursive), list)
        return tuple(_checked(item, str) for item in removed)

    def mkdir(self, path: str, *, parents: bool = True, exist_ok: bool = True) -> None:
        """Create a directory."""
        self._rpc("mkdir", path=path, parents=parents, exist_ok=exist_ok)

    # -- snapshots and quotas ---------------------------------------------------------------

    def snapshot(self) -> AgentSnapshot:
        """Record the workspace in the agent (incremental: only changed files are copied)."""
        with self._guarded():
            token = _checked(self._call("snapshot"), int)
            snap = AgentSnapshot(token, self._generation)
            weakref.finalize(snap, _release, weakref.ref(self), token, self._generation)
            return snap

    def restore(self, snapshot: object) -> RollbackReport | None:
        """Put the workspace back exactly as ``snapshot`` recorded it."""
        with self._guarded():
            if not isinstance(snapshot, AgentSnapshot):
                raise FilesystemError("This snapshot was not taken by this workspace.")
            if snapshot.generation != self._generation:
                raise WorkspaceAgentError(
                    "This snapshot was taken by a workspace agent that has since been started "
                    "again; it is gone, so the workspace cannot be put back to it."
                )
            self._call("restore", {"token": snapshot.token})
            return None

    def discard(self, snapshot: object) -> None:
        """Release a snapshot's storage now (otherwise when it is collected)."""
        if isinstance(snapshot, AgentSnapshot) and snapshot.generation == self._generation:
            self._dropped.append(snapshot.token)
            snapshot.generation = -1

    def usage(self) -> WorkspaceUsage:
        """What the workspace uses now and its budgets."""
        return _usage(self._rpc("usage"))

    def check_quota(self) -> WorkspaceUsage:
        """Raise ``FilesystemLimitError`` when the workspace is over a budget; else its usage."""
        return _usage(self._rpc("check_quota"))

    # -- content in and out -----------------------------------------------------------------

    def seed(self, mounts: Mapping[str, str]) -> dict[str, Any]:
        """Copy each host path of ``mounts`` (host path -> workspace path, as
        ``SandboxConfig.mounts``) into the volume: one tar, sent through the agent and
        unpacked there beneath the workspace root without following links. Links and special
        files on the host are skipped (reported under ``skipped``); what is written is owned
        by the agent's user, the command uid."""
        from ._agent_program import write_tar

        with tempfile.TemporaryFile() as spool:
            skipped: list[str] = []
            with tarfile.open(fileobj=spool, mode="w|") as tar:
                for source, target in mounts.items():
                    real = os.path.realpath(source)
                    if not os.path.exists(real):
                        raise FilesystemError(
                            f"Mount source {source!r} does not exist on the host.", path=source
                        )
                    # One tar per source, appended: write_tar closes what it opens, so it
                    # writes to a buffer that is copied in.
                    with tempfile.TemporaryFile() as part:
                        parent, name = os.path.split(real)
                        result = write_tar(parent, name, _NoClose(part), self._normalize(target))
                        skipped += result["skipped"]
                        part.seek(0)
                        with tarfile.open(fileobj=part, mode="r|") as inner:
                            for member in inner:
                                data = inner.extractfile(member) if member.isreg() else None
                                tar.addfile(member, data)
            spool.seek(0)
            with self._guarded():
                while block := spool.read(_CHUNK):
                    self._call("put_chunk", {"data": base64.b64encode(block).decode()})
                result = _checked(self._call("put_end", {"dest": ""}), dict)
        result["skipped"] = skipped + list(result.get("skipped") or [])
        return dict(result)

    def sync_to(
        self, destination: Path | str, *, path: str = "", max_bytes: int = 1 << 33
    ) -> dict[str, Any]:
        """Bring the workspace's files (under ``path``) back into the host directory
        ``destination``, which must exist: directories and regular files, written beneath it
        without following any link (a link there is replaced as a name); links and special
        files in the workspace are skipped and reported. Files the workspace no longer has
        are left alone. At most ``max_bytes`` of archive are accepted. Returns the counts."""
        from ._agent_program import extract_tar

        dest = os.path.abspath(os.fspath(destination))
        st = os.stat(dest)
        with tempfile.TemporaryFile() as spool:
            capped = _Capped(spool, max_bytes)
            with self._guarded():
                sent = _checked(
                    self._call("get", {"path": path}, chunks=capped),
                    dict,
                )
            spool.seek(0)
            result = extract_tar(dest, spool, "", (st.st_uid, st.st_gid))
        result["skipped"] = list(sent.get("skipped") or []) + result["skipped"]
        return result

    # -- closing ---------------------------------------------------------------------------

    def restart(self) -> None:
        """Start the agent anew (its container too); snapshots taken before are gone."""
        with self._guarded():
            self._close_stream()
            self._start()

    @property
    def closed(self) -> bool:
        """Whether ``close`` ran."""
        return self._closed

    def close(self) -> None:
        """Stop the agent: its container and snapshot volume are removed; the workspace
        volume is kept (idempotent)."""
        with self._lock:
            if self._closed:
                return
            self._closed = True
            self._teardown()

    def _teardown(self) -> None:
        from ._service import engine_deadline

        self._close_stream()
        with engine_deadline(_START_S):
            self._remove_container(self.name)
            _remove_volume(self._service, self.snapshot_volume)

    def __enter__(self) -> AgentFilesystem:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"AgentFilesystem({self.volume!r}, agent={self.name!r})"


class _NoClose:
    """A file whose ``close`` does nothing (``tarfile`` closes a stream it wrote)."""

    def __init__(self, inner: IO[bytes]) -> None:
        self._inner = inner

    def write(self, data: bytes) -> int:
        return self._inner.write(data)

    def close(self) -> None:
        pass


class _Capped:
    """A file that refuses more than ``limit`` bytes in all."""

    def __init__(self, inner: IO[bytes], limit: int) -> None:
        self._inner = inner
        self._left = limit

    def write(self, data: bytes) -> int:
        self._left -= len(data)
        if self._left < 0:
            raise WorkspaceAgentError("The workspace's archive is larger than allowed.")
        return self._inner.write(data)


def _wire(value: Any) -> Any:
    """An argument as JSON: one of another type (the model's tools check types, a library
    caller may not) goes as its type's name, so the agent's core refuses it in its own words."""
    if value is None or isinstance(value, str | int | float):
        return value
    return {"$type": type(value).__name__}


def _release(ref: weakref.ref[AgentFilesystem], token: int, generation: int) -> None:
    # A finalizer: no lock, no I/O; the next request tells the agent.
    fs = ref()
    if fs is not None and generation == fs._generation:
        fs._dropped.append(token)


def _failure(error: dict[str, Any]) -> Exception:
    """The core error the agent raised, rebuilt (only ``FilesystemError`` kinds); anything
    else as ``WorkspaceAgentError``."""
    import haversack.errors as errors

    message = str(error.get("message") or "no message")[:4000]
    path = error.get("path")
    kind = getattr(errors, str(error.get("type") or ""), None)
    if isinstance(kind, type) and issubclass(kind, FilesystemError):
        return kind(message, path=path if isinstance(path, str) else None)
    return WorkspaceAgentError(f"The workspace agent failed: {message}")


def _checked(value: Any, kind: type[_T]) -> _T:
    if not isinstance(value, kind) or (kind is int and isinstance(value, bool)):
        raise WorkspaceAgentError(
            f"The workspace agent sent {type(value).__name__} where {kind.__name__} belongs."
        )
    return value


def _file_stat(raw: Any) -> FileStat:
    from haversack.filesystem import FileStat

    entry = _checked(raw, list)
    if len(entry) != 3 or entry[1] not in ("file", "directory", "link"):
        raise WorkspaceAgentError("The workspace agent sent a malformed entry.")
    return FileStat(_checked(entry[0], str), entry[1], _checked(entry[2], int))


def _usage(raw: Any) -> WorkspaceUsage:
    from haversack.filesystem import WorkspaceUsage

    values = _checked(raw, list)
    if len(values) != 4:
        raise WorkspaceAgentError("The workspace agent sent a malformed usage.")
    return WorkspaceUsage(*(_checked(v, int) for v in values))

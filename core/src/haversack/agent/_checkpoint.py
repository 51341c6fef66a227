"""``Checkpoint``: an agent run (transcript, session state, workspace) saved to a directory,
written atomically and loaded only whole and valid."""

from __future__ import annotations

import hashlib
import json
import os
import sys
import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final, Literal

from haversack.errors import CheckpointError

if TYPE_CHECKING:
    from haversack._events import ToolInvoked
    from haversack._result import ToolResult
    from haversack._session import Session
    from haversack.adapters import ToolCall
    from haversack.filesystem import Filesystem

    from ._records import ModelTurn

__all__ = [
    "CHECKPOINT_FILE",
    "CHECKPOINT_FORMAT",
    "CHECKPOINT_VERSION",
    "DEFAULT_MAX_CHECKPOINT_BYTES",
    "Checkpoint",
    "load_checkpoint",
    "save_checkpoint",
    "tree_hash",
]

#: The file a checkpoint directory holds (replaced whole on every save).
CHECKPOINT_FILE: Final = "checkpoint.json"
#: The ``format`` of a checkpoint's header line.
CHECKPOINT_FORMAT: Final = "haversack-checkpoint"
#: The one format version this release writes and reads.
CHECKPOINT_VERSION: Final = 1
#: A checkpoint file larger than this is refused before it is read (256 MiB).
DEFAULT_MAX_CHECKPOINT_BYTES: Final = 256 * 1024 * 1024
# The header line is small; a longer first line is not a checkpoint.
_MAX_HEADER_BYTES: Final = 4096


# ---------------------------------------------------------------------------- the data
@dataclass(frozen=True, slots=True)
class UsageData:
    """Token counts of one turn."""

    input_tokens: int
    output_tokens: int


@dataclass(frozen=True, slots=True)
class CallData:
    """A tool call the model made."""

    call_id: str | None
    name: str
    arguments: str | dict[str, Any] | None


@dataclass(frozen=True, slots=True)
class TurnData:
    """A :class:`~haversack.agent.ModelTurn` as stored."""

    provider: str
    model: str
    index: int
    text: str
    tool_calls: tuple[CallData, ...]
    usage: UsageData
    stop: str
    duration_s: float


@dataclass(frozen=True, slots=True)
class InvokedData:
    """A ``ToolInvoked`` record in its bounded form (no params, no result value)."""

    prompt_ns: str
    prompt_key: str
    tool_name: str
    arguments: str | dict[str, Any] | None
    rendered: str
    outcome: Literal["ok", "failed", "denied", "invalid", "error", "aborted"]
    call_id: str | None
    duration_s: float
    success: bool
    message: str
    rendered_chars: int | None = None


@dataclass(frozen=True, slots=True)
class PendingData:
    """A call a policy held for a human when the checkpoint was written."""

    call_id: str
    tool_name: str
    arguments: str | dict[str, Any] | None
    arguments_hash: str
    policy: str
    reason: str


@dataclass(frozen=True, slots=True)
class DoneCallData:
    """A call of the open turn that already has its result: the text the model gets."""

    call: CallData
    text: str
    success: bool


@dataclass(frozen=True, slots=True)
class OpenTurnData:
    """The last turn, when its tool calls were not all answered as the checkpoint was written.

    It is written while a held call waits for a human: ``done`` are the turn's first calls
    with their results. A resume runs the turn's other calls again: the held one goes
    through every policy again and is held again, so the human is asked again.
    """

    done: tuple[DoneCallData, ...]


@dataclass(frozen=True, slots=True)
class SliceData:
    """One STATE slice: its type as ``module:qualname`` and its items as JSON data."""

    type: str
    items: tuple[dict[str, Any], ...]


@dataclass(frozen=True, slots=True)
class WorkspaceData:
    """The workspace: its tree hash, and for a workspace that lives in memory, its contents.

    ``kind`` is ``directory`` (a host directory: only ``root`` and the hash are kept, and a
    resume refuses a directory whose hash changed) or ``memory`` (every directory and file
    is kept, and written back on resume).
    """

    kind: Literal["directory", "memory"]
    tree_hash: str
    root: str | None = None
    directories: tuple[str, ...] = ()
    files: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class Checkpoint:
    """An agent run after a whole turn, or while a held call waits for a human: everything
    needed to continue it in a new process.

    ``stop_reason`` is ``None`` while the run was still going, else how it ended. ``extra``
    is for the caller (``haversack run`` keeps its transcript records there). ``open_turn``
    is set when the checkpoint was written in the middle of a turn, while ``pending`` holds
    the call a policy held for a human. ``loaded_packs`` are the deferred packs the run had
    loaded (in order), loaded again on resume.
    """

    task: str
    provider: str
    model: str
    prompt_digest: str
    system: str
    messages: tuple[Any, ...]
    turns: tuple[TurnData, ...]
    stop_reason: Literal["completed", "max_turns", "truncated"] | None
    session_id: str
    slices: tuple[SliceData, ...]
    policy_records: dict[str, tuple[str, ...]]
    calls: tuple[InvokedData, ...]
    pending: tuple[PendingData, ...]
    workspace: WorkspaceData | None
    extra: dict[str, Any] = field(default_factory=dict)
    open_turn: OpenTurnData | None = None
    loaded_packs: tuple[str, ...] = ()

    def answered(self) -> list[tuple[ToolCall, ToolResult[Any]]]:
        """The open turn's answered calls with their results (none without an open turn)."""
        from haversack._result import ToolResult
        from haversack.adapters import ToolCall

        done = () if self.open_turn is None else self.open_turn.done
        return [
            (
                ToolCall(d.call.call_id, d.call.name, d.call.arguments),
                ToolResult(message=d.text, value=None, success=d.success),
            )
            for d in done
        ]

    def model_turns(self) -> tuple[ModelTurn, ...]:
        """The turns as :class:`~haversack.agent.ModelTurn` records."""
        from haversack.adapters import ToolCall

        from ._records import ModelTurn, Usage

        return tuple(
            ModelTurn(
                provider=t.provider,
                model=t.model,
                index=t.index,
                text=t.text,
                tool_calls=tuple(ToolCall(c.call_id, c.name, c.arguments) for c in t.tool_calls),
                usage=Usage(t.usage.input_tokens, t.usage.output_tokens),
                stop=t.stop,
                duration_s=t.duration_s,
            )
            for t in self.turns
        )

    def tool_records(self) -> tuple[ToolInvoked, ...]:
        """The run's tool calls as bounded ``ToolInvoked`` records (``complete=False``)."""
        from haversack._events import CallOutcome, ToolInvoked
        from haversack._result import ToolResult

        return tuple(
            ToolInvoked(
                prompt_ns=c.prompt_ns,
                prompt_key=c.prompt_key,
                tool_name=c.tool_name,
                params=None,
                arguments=c.arguments,
                result=ToolResult(message=c.message, value=None, success=c.success),
                rendered=c.rendered,
                outcome=CallOutcome(c.outcome),
                call_id=c.call_id,
                duration_s=c.duration_s,
                complete=False,
                rendered_chars=c.rendered_chars,
            )
            for c in self.calls
        )


# ---------------------------------------------------------------------------- capture
def turn_data(turn: ModelTurn) -> TurnData:
    """``turn`` as stored."""
    return TurnData(
        provider=turn.provider,
        model=turn.model,
        index=turn.index,
        text=turn.text,
        tool_calls=tuple(call_data(c) for c in turn.tool_calls),
        usage=UsageData(turn.usage.input_tokens, turn.usage.output_tokens),
        stop=turn.stop,
        duration_s=float(turn.duration_s),
    )


def call_data(call: ToolCall) -> CallData:
    """A model's tool call as stored."""
    return CallData(call.call_id, call.name, _json_arguments(call.arguments))


def open_turn_data(done: Sequence[tuple[ToolCall, ToolResult[Any]]]) -> OpenTurnData:
    """The open turn: its answered calls with the text their results gave the model."""
    return OpenTurnData(
        done=tuple(
            DoneCallData(call_data(call), result.render(), result.success) for call, result in done
        )
    )


def invoked_data(record: ToolInvoked) -> InvokedData:
    """``record`` in its bounded, stored form."""
    small = record.compact()
    return InvokedData(
        prompt_ns=small.prompt_ns,
        prompt_key=small.prompt_key,
        tool_name=small.tool_name,
        arguments=_json_arguments(small.arguments),
        rendered=small.rendered,
        outcome=small.outcome.value,  # type: ignore[arg-type]
        call_id=small.call_id,
        duration_s=float(small.duration_s),
        success=small.result.success,
        message=small.result.message,
        rendered_chars=small.rendered_length if small.rendered_chars is not None else None,
    )


def pending_data(pending: Any) -> PendingData:
    """A ``PendingApproval`` as stored."""
    return PendingData(
        call_id=pending.call_id,
        tool_name=pending.tool_name,
        arguments=_json_arguments(pending.arguments),
        arguments_hash=pending.arguments_hash,
        policy=pending.policy,
        reason=pending.reason,
    )


def session_state(session: Session) -> tuple[tuple[SliceData, ...], dict[str, tuple[str, ...]]]:
    """Every non-empty STATE slice of ``session`` and what each policy has recorded."""
    from haversack._policy_state import ValueSet, policy_values
    from haversack._session import SlicePolicy
    from haversack.serde import dump

    slices: list[SliceData] = []
    for slice_type in session.slice_types:
        live: Any = session[slice_type]
        if live.policy is not SlicePolicy.STATE or not len(live):
            continue
        name = type_name(slice_type)
        try:
            items = tuple(dump(item) for item in live.all())
        except Exception as exc:
            raise CheckpointError(
                f"Cannot checkpoint session slice {name}: its items are not JSON data ({exc})."
            ) from exc
        slices.append(SliceData(name, items))
    records: dict[str, tuple[str, ...]] = {}
    for policy, value in session.snapshot()._policy_state.items():
        if type(value) is not ValueSet:
            raise CheckpointError(
                f"Cannot checkpoint what policy {policy!r} recorded: it is a "
                f"{type(value).__name__}, and a checkpoint keeps only sets of strings."
            )
        records[policy] = tuple(sorted(policy_values(session, policy)))
    return tuple(slices), records


def workspace_data(filesystem: Filesystem | None) -> WorkspaceData | None:
    """The workspace's tree hash, and for an in-memory one its directories and files."""
    if filesystem is None:
        return None
    from haversack.filesystem import DirectoryFilesystem

    if isinstance(filesystem, DirectoryFilesystem):
        root = filesystem.root
        return WorkspaceData("directory", tree_hash(root), root=str(root))
    directories, files = _walk(filesystem)
    return WorkspaceData(
        "memory", _hash_entries(directories, files), directories=directories, files=files
    )


# ---------------------------------------------------------------------------- tree hash
def tree_hash(root: str | os.PathLike[str]) -> str:
    """A SHA-256 over a host directory's tree: every path, its kind, and each file's bytes
    (a link's target, never followed). Equal trees give equal hashes on any machine."""
    digest = hashlib.sha256(b"haversack-tree-1\0")
    base = Path(root)
    stack = [""]
    while stack:
        relative = stack.pop()
        with os.scandir(base / relative if relative else base) as entries:
            found = sorted(entries, key=lambda e: e.name)
        subdirs = []
        for entry in found:
            path = f"{relative}/{entry.name}" if relative else entry.name
            name = path.encode("utf-8", "surrogateescape")
            if entry.is_symlink():
                target = os.readlink(entry.path).encode("utf-8", "surrogateescape")
                digest.update(b"l\0" + name + b"\0" + target + b"\0")
            elif entry.is_dir(follow_symlinks=False):
                digest.update(b"d\0" + name + b"\0")
                subdirs.append(path)
            elif entry.is_file(follow_symlinks=False):
                digest.update(b"f\0" + name + b"\0" + _file_digest(entry.path) + b"\0")
            else:  # a socket or fifo: its kind is all there is to compare
                digest.update(b"o\0" + name + b"\0")
        stack.extend(reversed(subdirs))
    return digest.hexdigest()


def _file_digest(path: str) -> bytes:
    file_hash = hashlib.sha256()
    with open(path, "rb") as file:
        while chunk := file.read(1 << 20):
            file_hash.update(chunk)
    return file_hash.digest()


def _walk(filesystem: Filesystem) -> tuple[tuple[str, ...], dict[str, str]]:
    directories: list[str] = []
    files: dict[str, str] = {}
    stack = [""]
    while stack:
        for entry in filesystem.list(stack.pop()):
            if entry.kind == "directory":
                directories.append(entry.path)
                stack.append(entry.path)
            elif entry.kind == "file":
                files[entry.path] = filesystem.read_text(entry.path)
    return tuple(sorted(directories)), dict(sorted(files.items()))


def _hash_entries(directories: tuple[str, ...], files: Mapping[str, str]) -> str:
    """The tree hash of an in-memory workspace: the same layout as :func:`tree_hash`."""
    digest = hashlib.sha256(b"haversack-tree-1\0")
    kinds = dict.fromkeys(directories, "d") | dict.fromkeys(files, "f")
    for path in sorted(kinds):
        name = path.encode("utf-8", "surrogateescape")
        if kinds[path] == "d":
            digest.update(b"d\0" + name + b"\0")
        else:
            content = hashlib.sha256(files[path].encode("utf-8", "surrogatepass")).digest()
            digest.update(b"f\0" + name + b"\0" + content + b"\0")
    return digest.hexdigest()


# ---------------------------------------------------------------------------- save
def save_checkpoint(directory: str | os.PathLike[str], checkpoint: Checkpoint) -> Path:
    """Write ``checkpoint`` to ``directory`` (created if missing) and return the file.

    The file is written beside the old one, flushed to disk and renamed over it, so a crash
    at any moment leaves either the previous checkpoint or the new one, never a mix.
    """
    from haversack.serde import dump

    target = Path(directory)
    try:
        target.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise CheckpointError(f"Cannot create the checkpoint directory {target}: {exc}") from exc
    try:
        body = json.dumps(
            dump(checkpoint), ensure_ascii=False, allow_nan=False, separators=(",", ":")
        ).encode("utf-8", "surrogatepass")
    except (TypeError, ValueError) as exc:
        raise CheckpointError(f"Cannot checkpoint this run: {exc}") from exc
    header = json.dumps(
        {
            "format": CHECKPOINT_FORMAT,
            "version": CHECKPOINT_VERSION,
            "bytes": len(body),
            "sha256": hashlib.sha256(body).hexdigest(),
        }
    ).encode()
    final = target / CHECKPOINT_FILE
    # A writer killed mid-write leaves its temporary file; the next save clears it.
    for stale in target.glob(".checkpoint-*.tmp"):
        stale.unlink(missing_ok=True)
    fd, temporary = tempfile.mkstemp(prefix=".checkpoint-", suffix=".tmp", dir=target)
    try:
        with os.fdopen(fd, "wb") as file:
            file.write(header + b"\n")
            file.write(body)
            file.flush()
            os.fsync(file.fileno())
        os.replace(temporary, final)
    except BaseException as exc:
        Path(temporary).unlink(missing_ok=True)
        if isinstance(exc, OSError):
            raise CheckpointError(f"Cannot write the checkpoint {final}: {exc}") from exc
        raise
    _sync_directory(target)
    return final


def _sync_directory(directory: Path) -> None:
    # The rename is durable only once the directory entry is on disk too.
    try:
        fd = os.open(directory, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


# ---------------------------------------------------------------------------- load
def load_checkpoint(
    directory: str | os.PathLike[str], *, max_bytes: int = DEFAULT_MAX_CHECKPOINT_BYTES
) -> Checkpoint:
    """Read and validate the checkpoint in ``directory``, whole, without changing anything.

    Raises :class:`~haversack.errors.CheckpointError` naming the problem when the file is
    missing, larger than ``max_bytes``, damaged or truncated (its SHA-256 does not match),
    of another format version, or not a valid checkpoint.
    """
    path = Path(directory) / CHECKPOINT_FILE
    try:
        with open(path, "rb") as file:
            size = os.fstat(file.fileno()).st_size
            if size > max_bytes:
                raise CheckpointError(
                    f"The checkpoint {path} is {size} bytes, over the limit of {max_bytes}; "
                    "it was not read."
                )
            data = file.read(max_bytes + 1)
    except FileNotFoundError:
        raise CheckpointError(
            f"No checkpoint in {directory}: {CHECKPOINT_FILE} is missing (a run writes it "
            "with --checkpoint DIR)."
        ) from None
    except OSError as exc:
        raise CheckpointError(f"Cannot read the checkpoint {path}: {exc}") from exc
    if len(data) > max_bytes:  # it grew after the size was checked
        raise CheckpointError(f"The checkpoint {path} is over the limit of {max_bytes} bytes.")
    head, newline, body = data[:_MAX_HEADER_BYTES].partition(b"\n")
    if not newline:
        raise CheckpointError(f"The checkpoint {path} is not a haversack checkpoint: no header.")
    body = data[len(head) + 1 :]
    header = _header(head, path)
    if header["bytes"] != len(body) or hashlib.sha256(body).hexdigest() != header["sha256"]:
        raise CheckpointError(
            f"The checkpoint {path} is damaged or truncated: its content does not match the "
            f"SHA-256 in its header ({len(body)} of {header['bytes']} bytes present)."
        )
    from haversack.errors import ToolValidationError
    from haversack.serde._parse import parse_as

    try:
        return parse_as(Checkpoint, body, f"The checkpoint {path} is not valid")
    except ToolValidationError as exc:
        raise CheckpointError(str(exc)) from None


def _header(head: bytes, path: Path) -> dict[str, Any]:
    try:
        header = json.loads(head)
    except (ValueError, RecursionError):
        header = None
    if not isinstance(header, dict) or header.get("format") != CHECKPOINT_FORMAT:
        raise CheckpointError(f"The checkpoint {path} is not a haversack checkpoint.")
    version = header.get("version")
    if version != CHECKPOINT_VERSION or type(version) is not int:
        raise CheckpointError(
            f"The checkpoint {path} is in format version {version!r}; this haversack reads "
            f"version {CHECKPOINT_VERSION} only. Resume it with the haversack release that "
            "wrote it, or start the run again."
        )
    size, digest = header.get("bytes"), header.get("sha256")
    if type(size) is not int or not isinstance(digest, str):
        raise CheckpointError(f"The checkpoint {path} has a malformed header.")
    return header


# ---------------------------------------------------------------------------- restore
def type_name(slice_type: type) -> str:
    """``module:qualname``, how a checkpoint names a slice type."""
    return f"{slice_type.__module__}:{slice_type.__qualname__}"


def resolve_slices(
    checkpoint: Checkpoint, allowed: tuple[type, ...] | None = None
) -> list[tuple[type, tuple[Any, ...]]]:
    """Every stored slice parsed back into its dataclass type, before anything is changed.

    A type is only looked up in modules already imported (a checkpoint never makes Python
    import anything) and must be a dataclass; with ``allowed``, it must be one of those.
    """
    import dataclasses

    from haversack.errors import ToolValidationError
    from haversack.serde._parse import parse_as

    out: list[tuple[type, tuple[Any, ...]]] = []
    for stored in checkpoint.slices:
        module_name, _, qualname = stored.type.partition(":")
        module = sys.modules.get(module_name)
        found: Any = module
        for part in qualname.split(".") if module is not None and qualname else ():
            found = getattr(found, part, None)
        if not (isinstance(found, type) and dataclasses.is_dataclass(found)) or (
            allowed is not None and found not in allowed
        ):
            raise CheckpointError(
                f"The checkpoint holds session slice {stored.type}, which this process does "
                "not know (is the same pack installed and selected?); nothing was loaded."
            )
        try:
            items = tuple(
                parse_as(found, item, f"Session slice {stored.type} in the checkpoint")
                for item in stored.items
            )
        except ToolValidationError as exc:
            raise CheckpointError(f"{exc} Nothing was loaded.") from None
        out.append((found, items))
    return out


def check_workspace(checkpoint: Checkpoint) -> None:
    """Refuse an in-memory workspace whose files do not have the checkpoint's tree hash."""
    saved = checkpoint.workspace
    if (
        saved is not None
        and saved.kind == "memory"
        and _hash_entries(saved.directories, saved.files) != saved.tree_hash
    ):
        raise CheckpointError(
            "The checkpoint's in-memory workspace does not match its own tree hash; "
            "nothing was loaded."
        )


def restore_workspace(checkpoint: Checkpoint, filesystem: Filesystem | None) -> None:
    """Check the host workspace is unchanged, or write an in-memory one back; then check its
    tree hash equals the checkpoint's."""
    saved = checkpoint.workspace
    if saved is None:
        if filesystem is not None:
            raise CheckpointError(
                "The checkpoint was written without a workspace, and this run has one; "
                "resume with the same packs and options."
            )
        return
    if filesystem is None:
        raise CheckpointError(
            "The checkpoint has a workspace, and this run has none; resume with the same "
            "packs and options (and --workspace if the run had one)."
        )
    from haversack.filesystem import DirectoryFilesystem

    if saved.kind == "directory":
        if not isinstance(filesystem, DirectoryFilesystem):
            raise CheckpointError(
                f"The checkpoint's workspace is the directory {saved.root}; this run's is in "
                "memory. Resume with --workspace set as the run had it."
            )
        now = tree_hash(filesystem.root)
        if now != saved.tree_hash:
            raise CheckpointError(
                f"The workspace {filesystem.root} changed since the checkpoint was written "
                f"(tree hash {now[:12]}..., checkpoint {saved.tree_hash[:12]}...): resuming "
                "would continue from files the run never saw. Put the files back, or start "
                "the run again."
            )
        return
    if isinstance(filesystem, DirectoryFilesystem):
        raise CheckpointError(
            "The checkpoint's workspace was in memory; this run's is a host directory. "
            "Resume without --workspace."
        )
    check_workspace(checkpoint)
    for entry in filesystem.list(""):
        filesystem.delete(entry.path, recursive=True)
    for directory in saved.directories:
        filesystem.mkdir(directory, parents=True, exist_ok=True)
    for path, content in saved.files.items():
        filesystem.write(path, content, mode="overwrite", parents=True)
    directories, files = _walk(filesystem)
    if _hash_entries(directories, files) != saved.tree_hash:
        raise CheckpointError(
            "The in-memory workspace written back from the checkpoint does not have the "
            "checkpoint's tree hash."
        )


def _json_arguments(arguments: object) -> str | dict[str, Any] | None:
    if arguments is None or isinstance(arguments, str):
        return arguments
    if isinstance(arguments, bytes):
        return arguments.decode("utf-8", "replace")
    if isinstance(arguments, Mapping):
        return dict(arguments)
    return str(arguments)

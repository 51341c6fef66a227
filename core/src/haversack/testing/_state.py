"""Fingerprints of what a failed call must leave alone: session state and the filesystem."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from haversack import Filesystem, Resources, Session

__all__ = ["StateFingerprint", "filesystem_contents", "fingerprint"]


@dataclass(frozen=True, slots=True)
class StateFingerprint:
    """The items of every non-empty STATE slice, and the files of the bound filesystem."""

    slices: dict[str, tuple[Any, ...]]
    files: dict[str, str] | None

    def differences(self, after: StateFingerprint) -> list[str]:
        """What changed from ``self`` to ``after``, one phrase per slice or file."""
        changes = [
            f"session slice {name} changed"
            for name in sorted(set(self.slices) | set(after.slices))
            if self.slices.get(name, ()) != after.slices.get(name, ())
        ]
        if self.files is not None and after.files is not None:
            changes += [
                f"file {path!r} changed"
                for path in sorted(set(self.files) | set(after.files))
                if self.files.get(path) != after.files.get(path)
            ]
        return changes


def fingerprint(session: Session, resources: Resources | None = None) -> StateFingerprint:
    """Capture ``session``'s STATE slices and, if bound, the ``Filesystem``'s files."""
    from haversack import Filesystem

    snap = session.snapshot()
    slices: dict[str, tuple[Any, ...]] = {
        f"{tp.__module__}.{tp.__qualname__}": snap.items(tp)
        for tp in snap.slice_types
        if snap.items(tp)
    }
    files = None
    if resources is not None:
        fs = resources.get_optional(Filesystem)  # type: ignore[type-abstract]
        if fs is not None:
            files = filesystem_contents(fs)
    return StateFingerprint(slices, files)


def filesystem_contents(fs: Filesystem) -> dict[str, str]:
    """Every file's text and every directory (as ``"<dir>"``), keyed by path."""
    out: dict[str, str] = {}
    pending = [""]
    while pending:
        folder = pending.pop()
        for entry in fs.list(folder):
            if entry.kind == "directory":
                out[entry.path] = "<dir>"
                pending.append(entry.path)
            else:
                try:
                    out[entry.path] = fs.read_text(entry.path)
                except Exception as exc:  # noqa: BLE001 - binary or unreadable: compare the size
                    out[entry.path] = f"<unreadable {entry.size} bytes: {type(exc).__name__}>"
    return out

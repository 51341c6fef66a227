"""``SandboxConfig``: every knob of a sandbox container, frozen and validated."""

from __future__ import annotations

import math
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import Final

from haversack.errors import PackConfigError
from haversack.filesystem import ProtectedPaths, normalize_path

__all__ = ["BUSYBOX_IMAGE", "PYTHON_IMAGE", "SandboxConfig", "parse_bytes"]

#: Offline image with busybox only (built by ``python -m haversack_podman build-images``).
BUSYBOX_IMAGE: Final = "localhost/haversack-sandbox-busybox:latest"
#: Offline image with busybox plus the host's CPython (built by ``build-images``).
PYTHON_IMAGE: Final = "localhost/haversack-sandbox-python:latest"


_UNITS: Final = {"": 1, "b": 1, "k": 1024, "m": 1024**2, "g": 1024**3}
_NETNS: Final = ("none", "host", "bridge", "private", "slirp4netns", "pasta")


def parse_bytes(text: str) -> int:
    """``"512m"`` -> 536870912. Units b, k, m, g (binary), case-insensitive."""
    value = text.strip().lower()
    unit = value[-1] if value and value[-1] in _UNITS else ""
    number = value[: len(value) - len(unit)]
    if not number.isdigit() or int(number) <= 0:
        raise ValueError(f"{text!r} is not a size like 512m or 1g")
    return int(number) * _UNITS[unit]


def _default_user(workspace: Path | None) -> str:
    """``1000:1000``, or who owns ``workspace``: with a user's directory the container runs
    as its owner, so new files are theirs and no existing file is ever chowned. Rootless
    Podman maps container root to the invoking user, so there ``0:0`` is that owner."""
    if workspace is None or not workspace.is_dir():
        return "1000:1000"
    st = workspace.stat()
    if os.geteuid() != 0 and st.st_uid == os.geteuid():
        return "0:0"
    return f"{st.st_uid}:{st.st_gid}"


def _frozen_env(env: Mapping[str, str]) -> Mapping[str, str]:
    return MappingProxyType(dict(env))


@dataclass(frozen=True, slots=True)
class SandboxConfig:
    """How a session's sandbox container is built and how commands run in it."""

    image: str = field(
        default=PYTHON_IMAGE,
        metadata={"description": "Local image to run; never pulled. Build with build-images."},
    )
    memory: str = field(
        default="512m",
        metadata={"description": "Memory limit (swap included), podman syntax: 512m, 1g."},
    )
    cpus: float = field(default=1.0, metadata={"description": "CPU quota in cores."})
    pids_limit: int = field(
        default=256, metadata={"description": "Maximum number of processes in the container."}
    )
    network: str = field(
        default="none",
        metadata={
            "description": "Podman network mode; 'none' leaves only the container's own "
            "loopback. Any other mode needs accept_network_risk."
        },
    )
    accept_network_risk: bool = field(
        default=False,
        metadata={
            "description": "Required for any network other than 'none': commands can then "
            "reach networks (with 'host', every service on the host's 127.0.0.1, e.g. "
            "databases, caches, a Podman API on TCP) and send the workspace anywhere."
        },
    )
    user: str = field(
        default="",
        metadata={
            "description": "uid:gid commands run as; empty: 1000:1000, or with a workspace "
            "directory, its owner's uid:gid (so the user's files are never chowned)."
        },
    )
    read_only: bool = field(
        default=True, metadata={"description": "Mount the image's root filesystem read-only."}
    )
    tmpfs_size: str = field(
        default="64m", metadata={"description": "Size of the writable tmpfs at /tmp."}
    )
    env: Mapping[str, str] = field(
        default_factory=dict,
        metadata={"description": "Environment of every command (per-call env overrides it)."},
    )
    mounts: Mapping[str, str] = field(
        default_factory=dict,
        metadata={
            "description": "Host path -> workspace-relative path, copied into the workspace "
            "when the sandbox starts (copies, not live mounts). Relative host paths in a "
            "config file are relative to that file.",
            "path": "keys",
        },
    )
    connection_url: str | None = field(
        default=None,
        metadata={
            "description": "Podman API URL (unix:///run/podman/podman.sock, tcp://host:port "
            "or ssh://user@host/run/podman/podman.sock); None starts a private 'podman "
            "system service' for this process. A tcp:// or ssh:// engine is remote: the "
            "workspace is a volume there and images are loaded onto it through the API."
        },
    )
    default_timeout_s: float = field(
        default=30.0, metadata={"description": "Command timeout when the caller gives none."}
    )
    max_timeout_s: float = field(
        default=300.0, metadata={"description": "Upper bound for any command timeout."}
    )
    output_limit_bytes: int = field(
        default=64 * 1024,
        metadata={"description": "Bytes kept per stream (stdout, stderr); the rest is cut."},
    )
    resident: bool = field(
        default=True,
        metadata={
            "description": "Start commands through one resident process in the container "
            "(about 1 ms each) instead of a new engine exec per command (about 100 ms). It "
            "runs as container root holding only CAP_SETUID/CAP_SETGID; off, or with an "
            "image without python3 or commands running as uid 0, every command is an exec."
        },
    )
    workspace_root: Path | None = field(
        default=None,
        metadata={
            "description": "Directory holding per-session workspaces; None uses "
            "<tempdir>/haversack-podman-<uid>/workspaces."
        },
    )
    workspace: Path | None = field(
        default=None,
        metadata={
            "description": "A project directory to work on instead of a new temporary one: "
            "commands and file tools change it for real (the container sees a private copy, "
            "synced before each command; only the command's own changes are written back, "
            "never to a protected path), a failed call undoes only its own changes, and "
            "closing the sandbox never deletes it. A relative path resolves against the "
            "current directory."
        },
    )

    protect: tuple[str, ...] = field(
        default=(),
        metadata={
            "description": "More globs of workspace paths commands may read but never change, "
            "besides the default protected set (git's config and hooks, direnv, editor task "
            "files...: see the trust boundary docs). Needs workspace."
        },
    )
    unprotect: tuple[str, ...] = field(
        default=(),
        metadata={
            "description": "Default protected globs to drop, each named exactly (warns: the "
            "model can then plant what the host's tools run). Needs workspace."
        },
    )

    def protected_paths(self) -> ProtectedPaths:
        """The protected set of the workspace directory: the defaults, ``protect`` added and
        ``unprotect`` removed."""
        return ProtectedPaths.configured(protect=self.protect, unprotect=self.unprotect)

    def __post_init__(self) -> None:
        object.__setattr__(self, "env", _frozen_env(self.env))
        object.__setattr__(self, "mounts", MappingProxyType(dict(self.mounts)))
        object.__setattr__(self, "protect", tuple(self.protect))
        object.__setattr__(self, "unprotect", tuple(self.unprotect))
        problems: list[str] = []
        if self.workspace is not None:
            # A relative path from a config file was already joined to its directory by the
            # core (a Path-typed option); one given in code is relative to the working dir.
            workspace = Path(self.workspace).absolute()
            object.__setattr__(self, "workspace", workspace)
            if not workspace.is_dir():
                problems.append(f"workspace {str(workspace)!r} is not an existing directory")
            if self.mounts:
                problems.append(
                    "mounts are copied into a new workspace and cannot be combined with a "
                    "workspace directory (the user's files would be overwritten); drop one"
                )
            try:
                self.protected_paths()  # an unknown unprotect glob is an error now
            except ValueError as exc:
                problems.append(str(exc).rstrip("."))
        elif self.protect or self.unprotect:
            problems.append(
                "protect and unprotect apply to a workspace directory; set workspace too, or "
                "drop them (a per-session workspace is nobody else's)"
            )
        if not self.user:
            object.__setattr__(self, "user", _default_user(self.workspace))
        if not self.image.strip():
            problems.append("image must not be empty")
        if not (math.isfinite(self.cpus) and self.cpus > 0):
            problems.append(f"cpus must be a positive number, got {self.cpus!r}")
        if self.pids_limit < 16:
            problems.append(f"pids_limit must be at least 16, got {self.pids_limit}")
        if not (math.isfinite(self.default_timeout_s) and self.default_timeout_s > 0):
            problems.append("default_timeout_s must be a positive number")
        if not (math.isfinite(self.max_timeout_s) and self.max_timeout_s >= self.default_timeout_s):
            problems.append("max_timeout_s must be a number >= default_timeout_s")
        if self.output_limit_bytes < 256:
            problems.append("output_limit_bytes must be at least 256")
        for name, size in (("memory", self.memory), ("tmpfs_size", self.tmpfs_size)):
            try:
                parse_bytes(size)
            except ValueError as exc:
                problems.append(f"{name}: {exc}")
        if self.network not in _NETNS:
            problems.append(f"network must be one of {', '.join(_NETNS)}, got {self.network!r}")
        elif self.network != "none" and not self.accept_network_risk:
            problems.append(
                f"network {self.network!r} lets commands in the sandbox reach "
                + (
                    "every service listening on the host, its 127.0.0.1 included"
                    if self.network == "host"
                    else "other machines and the host's services on its other addresses"
                )
                + " and send the workspace's files there; set accept_network_risk = true to "
                "accept that, or keep network = 'none'"
            )
        uid, _, gid = self.user.partition(":")
        if not (uid.isdigit() and gid.isdigit()):
            problems.append(f"user must be numeric 'uid:gid', got {self.user!r}")
        for key in self.env:
            if not key or "=" in key or "\0" in key:
                problems.append(f"env key {key!r} is not a valid variable name")
        for host, target in self.mounts.items():
            if not Path(host).is_absolute():
                problems.append(f"mount source {host!r} must be an absolute host path")
            try:
                normalize_path(target)
            except ValueError as exc:
                problems.append(f"mount target {target!r}: {exc}")
        if problems:
            raise PackConfigError(
                "Invalid SandboxConfig: " + "; ".join(problems) + ".", pack="podman"
            )

    @property
    def memory_bytes(self) -> int:
        """``memory`` in bytes."""
        return parse_bytes(self.memory)

    @property
    def uid(self) -> int:
        """The numeric user id commands run as."""
        return int(self.user.partition(":")[0])

    @property
    def gid(self) -> int:
        """The numeric group id commands run as."""
        return int(self.user.partition(":")[2])

    def clamp_timeout(self, timeout_s: float | None) -> float:
        """The effective timeout for a call: the default when None, never above the maximum."""
        if timeout_s is None:
            return self.default_timeout_s
        if not math.isfinite(timeout_s) or timeout_s <= 0:
            return self.default_timeout_s
        return min(timeout_s, self.max_timeout_s)

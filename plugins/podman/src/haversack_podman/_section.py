"""``podman_section``: what the sandbox is, its limits, and its two tools."""

from __future__ import annotations

from haversack import MarkdownSection

from ._config import SandboxConfig, parse_bytes
from ._tools import podman_tools

__all__ = ["SECTION_KEY", "podman_section"]

#: The Podman section's key in a composed prompt.
SECTION_KEY = "podman"


def _size(n: int) -> str:
    for unit, scale in (("GiB", 1024**3), ("MiB", 1024**2), ("KiB", 1024)):
        if n >= scale and n % scale == 0:
            return f"{n // scale} {unit}"
    return f"{n} bytes"


def _user_workspace(cfg: SandboxConfig) -> list[str]:
    """What differs when ``/workspace`` is the user's own directory."""
    if cfg.workspace is None:
        return []
    return [
        "- `/workspace` is the user's own project directory, shared with them: they and "
        "their tools may change files while you work. A command works on a private copy that "
        "is brought up to date before it starts; afterwards only what the command itself "
        "changed is written to the directory, and where someone else changed the same path "
        "meanwhile, their version is kept and you are told which paths. When a call fails, "
        "only that call's own changes are undone; anyone else's are kept. Links leading out "
        "of the workspace are not copied out.",
        "- " + cfg.protected_paths().summary().replace("$", "$$") + " A command that changes "
        "one of them fails, and none of its changes are written (`git add` and `git commit` "
        "work: git's objects, index and refs are not protected).",
    ]


def _template(cfg: SandboxConfig) -> str:
    network = (
        "no network (loopback only)" if cfg.network == "none" else f"network mode `{cfg.network}`"
    )
    root = "a read-only root filesystem" if cfg.read_only else "a writable root filesystem"
    return "\n".join(
        [
            "You can run code in an isolated Linux sandbox container.",
            "",
            # Each tool's sentence exists only while it does (exclude_tools works).
            "${if tool:shell_execute}",
            "- ${tool:shell_execute} runs a `/bin/sh -c` command line (busybox tools).",
            "${endif}",
            "${if tool:evaluate_python}",
            "- ${tool:evaluate_python} runs Python code (python3, standard library only) in a "
            "kernel that keeps its variables and imports between calls; a failed call leaves "
            "them as they were before it.",
            "${endif}",
            "${if tool:python_restart}",
            "- ${tool:python_restart} restarts the Python kernel with nothing defined.",
            "${endif}",
            "- `/workspace` in the container is the same workspace the file tools edit: a "
            "file written with the file tools is there for the shell, and files commands "
            "create are visible to the file tools. Commands start in `/workspace`.",
            f"- The container has {network}, runs as a non-root user "
            f"(`{cfg.user}`) without capabilities, and has {root}: only `/workspace` and a "
            f"{_size(parse_bytes(cfg.tmpfs_size))} temporary `/tmp` are "
            "writable. Nothing can be installed from the internet.",
            f"- Limits: {_size(cfg.memory_bytes)} of memory, {cfg.cpus:g} CPU, "
            f"{cfg.pids_limit} processes; each call times out after "
            f"{cfg.default_timeout_s:g} s by default (at most {cfg.max_timeout_s:g} s with "
            f"timeout); stdout and stderr keep the first {_size(cfg.output_limit_bytes)} each. "
            "A timed-out command is killed with everything it started; background processes "
            "do not outlive their call.",
            "- A call that exits non-zero or times out fails: you still see its exit code "
            "and output, but every change it made to `/workspace` is rolled back. Commands "
            "that are expected to fail (such as `grep` finding nothing) should end in "
            "`|| true` if their changes must be kept. `/tmp` and `/dev/shm` are emptied "
            "after a failed call.",
            *_user_workspace(cfg),
        ]
    )


def podman_section(config: SandboxConfig | None = None) -> MarkdownSection[None]:
    """The ``podman`` section for ``config`` (defaults when ``None``), carrying
    ``shell_execute``, ``evaluate_python`` and ``python_restart``."""
    cfg = config if config is not None else SandboxConfig()
    return MarkdownSection[None](
        title="Sandbox",
        key=SECTION_KEY,
        template=_template(cfg),
        tools=podman_tools(cfg),
    )

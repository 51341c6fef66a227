"""``CommandResult``: what one sandbox command did, and the text the model sees of it."""

from __future__ import annotations

from dataclasses import dataclass

from ._sandbox import ExecResult

__all__ = ["RESTART_NOTICE", "CommandResult"]

#: What the model is told when its command left the sandbox in a state that needed a restart.
RESTART_NOTICE = (
    "The sandbox container was restarted because what the command left running could not "
    "be stopped otherwise: every process in it is gone (servers, background jobs), /tmp is "
    "empty and anything written outside /workspace is lost; /workspace itself was kept."
)


def _block(name: str, text: str) -> str:
    if not text:
        return f"{name}: (empty)"
    # One final newline is implied by the layout; the value keeps the exact text.
    return f"{name}:\n{text.removesuffix(chr(10))}"


@dataclass(frozen=True, slots=True)
class CommandResult:
    """A finished command: exit code (137 = killed), decoded output (cut streams end with a
    visible ``[... output truncated ...]`` marker), wall time, whether it timed out, and
    whether the sandbox had to be restarted after it (see :data:`RESTART_NOTICE`)."""

    command: str
    cwd: str
    exit_code: int
    stdout: str
    stderr: str
    duration_ms: int
    timed_out: bool = False
    stdout_truncated: bool = False
    stderr_truncated: bool = False
    sandbox_restarted: bool = False

    @classmethod
    def of(cls, command: str, cwd: str, result: ExecResult) -> CommandResult:
        """Build from the sandbox's :class:`ExecResult`."""
        return cls(
            command=command,
            cwd=cwd,
            exit_code=result.exit_code,
            stdout=result.stdout,
            stderr=result.stderr,
            duration_ms=round(result.duration_s * 1000),
            timed_out=result.timed_out,
            stdout_truncated=result.stdout_truncated,
            stderr_truncated=result.stderr_truncated,
            sandbox_restarted=result.sandbox_restarted,
        )

    @property
    def ok(self) -> bool:
        """Whether the command exited 0 without timing out."""
        return self.exit_code == 0 and not self.timed_out

    def render(self) -> str:
        """Exit code, duration, working directory, the restart notice if any, then stdout and
        stderr."""
        status = f"exit code {self.exit_code}"
        if self.timed_out:
            status += " (timed out, killed)"
        head = f"{status} in {self.duration_ms} ms, cwd {self.cwd}"
        lines = [head]
        if self.sandbox_restarted:
            lines.append(RESTART_NOTICE)
        return "\n".join((*lines, _block("stdout", self.stdout), _block("stderr", self.stderr)))

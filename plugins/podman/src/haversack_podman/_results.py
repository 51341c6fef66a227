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
#: The same notice when the restart had another cause (``{reason}``).
_RESTART_BECAUSE = (
    "The sandbox container was restarted before this command ran because {reason}: every "
    "process started by earlier commands is gone (servers, background jobs), /tmp is empty "
    "and anything written outside /workspace is lost; /workspace itself was kept."
)


_MAX_LISTED = 20


def _listed(paths: tuple[str, ...]) -> str:
    more = len(paths) - _MAX_LISTED
    return ", ".join(paths[:_MAX_LISTED]) + (f" (and {more} more)" if more > 0 else "")


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
    restart_reason: str = ""
    refused: tuple[tuple[str, str], ...] = ()
    kept: tuple[str, ...] = ()
    skipped: tuple[tuple[str, str], ...] = ()

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
            restart_reason=result.restart_reason,
            refused=result.refused,
            kept=result.kept,
            skipped=result.skipped,
        )

    @property
    def ok(self) -> bool:
        """Whether the command exited 0 without timing out."""
        return self.exit_code == 0 and not self.timed_out

    def workspace_notes(self) -> list[str]:
        """What did not reach the user's workspace directory, and why (empty when all did)."""
        notes: list[str] = []
        if self.refused:
            shown = "; ".join(why for _, why in self.refused[:_MAX_LISTED])
            more = len(self.refused) - _MAX_LISTED
            notes.append(
                "None of the command's changes were written to the workspace, because it "
                f"changed protected paths: {shown}"
                + (f" (and {more} more)" if more > 0 else "")
                + ". Protected paths can be read but never changed from the sandbox."
            )
        if self.kept:
            notes.append(
                "Someone else changed these paths while the command ran, so their version "
                f"was kept and the command's was dropped: {_listed(self.kept)}."
            )
        if self.skipped:
            shown = "; ".join(f"{p}: {why}" for p, why in self.skipped[:_MAX_LISTED])
            notes.append(f"Not written to the workspace: {shown}.")
        return notes

    def render(self) -> str:
        """Exit code, duration, working directory, the restart notice if any, then stdout and
        stderr."""
        status = f"exit code {self.exit_code}"
        if self.timed_out:
            status += " (timed out, killed)"
        head = f"{status} in {self.duration_ms} ms, cwd {self.cwd}"
        lines = [head]
        if self.sandbox_restarted:
            reason = self.restart_reason
            lines.append(_RESTART_BECAUSE.format(reason=reason) if reason else RESTART_NOTICE)
        lines.extend(self.workspace_notes())
        return "\n".join((*lines, _block("stdout", self.stdout), _block("stderr", self.stderr)))

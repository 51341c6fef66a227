"""Whether Podman can run here, asked of the ``podman`` binary (the core imports no pack)."""

from __future__ import annotations

import shutil
import subprocess

__all__ = ["error_line", "first_line", "podman_problem"]

_TIMEOUT_S = 30.0


def podman_problem() -> str | None:
    """``None`` when ``podman info`` succeeds, else a one-line reason."""
    binary = shutil.which("podman")
    if binary is None:
        return "the podman command is not installed (not on PATH)"
    try:
        done = subprocess.run(
            [binary, "info", "--format", "{{.Host.OS}}"],
            capture_output=True,
            text=True,
            timeout=_TIMEOUT_S,
            check=False,
        )
    except (OSError, subprocess.SubprocessError) as exc:
        return f"'podman info' could not run: {first_line(str(exc)) or type(exc).__name__}"
    if done.returncode != 0:
        detail = error_line(done.stderr) or error_line(done.stdout) or "no output"
        return f"'podman info' exited {done.returncode}: {detail}"
    return None


def error_line(text: str) -> str:
    """The line of ``text`` that states the error: the first ``Error...`` line, else the last."""
    lines = [line for line in text.splitlines() if line.strip()]
    for line in lines:
        if line.lstrip().lower().startswith("error"):
            return first_line(line)
    return first_line(lines[-1]) if lines else ""


def first_line(text: str) -> str:
    """The first non-blank line of ``text``, stripped, at most 200 characters."""
    for line in text.splitlines():
        if line.strip():
            line = line.strip()
            return line if len(line) <= 200 else line[:197] + "..."
    return ""

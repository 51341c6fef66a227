"""Params dataclasses of the sandbox tools: what the model sends, each field described."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

__all__ = ["EvaluatePythonParams", "PythonRestartParams", "ShellExecuteParams"]

_TIMEOUT = (
    "Seconds before the command and everything it started are killed; omit for the "
    "configured default. Must be positive and at most the configured maximum."
)


@dataclass(frozen=True, slots=True)
class ShellExecuteParams:
    """``shell_execute``: one ``/bin/sh -c`` command in the sandbox."""

    command: str = field(
        metadata={
            "description": "Shell command line run with /bin/sh -c inside the container "
            "(busybox tools; pipes, redirections and && work), e.g. 'ls -la && wc -l *.py'."
        }
    )
    cwd: str = field(
        default="",
        metadata={
            "description": "Working directory relative to /workspace ('' is /workspace "
            "itself); must exist and stay inside the workspace."
        },
    )
    env: Mapping[str, str] = field(
        default_factory=dict,
        metadata={
            "description": "Extra environment variables for this command, NAME -> value "
            "(names: letters, digits, underscore, not starting with a digit)."
        },
    )
    stdin: str | None = field(
        default=None,
        metadata={"description": "Text fed to the command's standard input, then closed."},
    )
    timeout: float | None = field(default=None, metadata={"description": _TIMEOUT})


@dataclass(frozen=True, slots=True)
class EvaluatePythonParams:
    """``evaluate_python``: a Python program run inside the sandbox."""

    code: str = field(
        metadata={
            "description": "Python source run by python3 in /workspace in the sandbox's "
            "kernel: names defined by earlier successful calls are still defined; print() "
            "what you want to see. The standard library only; no network."
        }
    )
    timeout: float | None = field(default=None, metadata={"description": _TIMEOUT})


@dataclass(frozen=True, slots=True)
class PythonRestartParams:
    """``python_restart``: no arguments."""

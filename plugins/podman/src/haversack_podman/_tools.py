"""The sandbox tools: ``shell_execute`` and ``evaluate_python``.

Both run in the session's :class:`Sandbox` (its container starts on the first call). A
non-zero exit or a timeout is a failed result (``success=False``) that still carries the whole
:class:`CommandResult`, so the model sees the output while the executor rolls the workspace
back, as for any failed call.
"""

from __future__ import annotations

import math
import os
import re
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Final

from haversack import Tool, ToolAnnotations, ToolResult, normalize_path
from haversack.errors import (
    FilesystemLimitError,
    PathNotFoundError,
    ResourceError,
    ToolValidationError,
)

from ._config import SandboxConfig
from ._container import WORKDIR
from ._params import EvaluatePythonParams, ShellExecuteParams
from ._results import CommandResult
from ._sandbox import Sandbox

if TYPE_CHECKING:
    from haversack import ToolContext

__all__ = ["MAX_COMMAND_CHARS", "MAX_STDIN_BYTES", "TOOL_NAMES", "podman_tools"]

#: Longest command or program accepted, in characters.
MAX_COMMAND_CHARS: Final = 100_000
#: Largest stdin accepted, in UTF-8 bytes.
MAX_STDIN_BYTES: Final = 1024 * 1024
#: Most per-call environment variables.
_MAX_ENV: Final = 100
#: The tools' names, in prompt order.
TOOL_NAMES: Final = ("shell_execute", "evaluate_python")

#: How far past its timeout a call's engine requests may run: starting the container before
#: the command and the clean-up after it (the call returns within about timeout + 2 s).
_ENGINE_GRACE_S: Final = 2.0
_ENV_NAME: Final = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_RUN: Final = ToolAnnotations(destructive=True, idempotent=False, open_world=False)


def _check_text(value: object, name: str, what: str, example: str) -> str:
    if not isinstance(value, str) or not value.strip():
        raise ToolValidationError(f"{name} is empty; give {what}, e.g. {example}.", field_path=name)
    if "\0" in value:
        raise ToolValidationError(f"{name} contains a NUL character; remove it.", field_path=name)
    if len(value) > MAX_COMMAND_CHARS:
        raise ToolValidationError(
            f"{name} is {len(value)} characters long; the limit is {MAX_COMMAND_CHARS}. Write "
            "long programs to a file with the file tools and run that file instead.",
            field_path=name,
        )
    return value


def _check_env(env: Mapping[str, str]) -> dict[str, str]:
    if len(env) > _MAX_ENV:
        raise ToolValidationError(
            f"env has {len(env)} variables; the limit is {_MAX_ENV}.", field_path="env"
        )
    for key, value in env.items():
        if not isinstance(key, str) or not _ENV_NAME.fullmatch(key):
            raise ToolValidationError(
                f"env name {key!r} is not a valid variable name: use letters, digits and "
                "underscores, not starting with a digit (e.g. MY_VAR).",
                field_path=f"env.{key}",
            )
        if not isinstance(value, str) or "\0" in value:
            raise ToolValidationError(
                f"env value of {key} must be text without NUL characters.",
                field_path=f"env.{key}",
            )
    return dict(env)


def _check_stdin(stdin: str | None) -> str | None:
    if stdin is None:
        return None
    try:
        size = len(stdin.encode("utf-8"))
    except UnicodeEncodeError:
        raise ToolValidationError(
            "stdin contains an unpaired surrogate; it is not valid text.", field_path="stdin"
        ) from None
    if size > MAX_STDIN_BYTES:
        raise ToolValidationError(
            f"stdin is {size} bytes; the limit is {MAX_STDIN_BYTES}. Write the data to a file "
            "in the workspace and redirect it instead (cmd < file).",
            field_path="stdin",
        )
    return stdin


def _check_timeout(timeout: float | None, config: SandboxConfig) -> float:
    if timeout is None:
        return config.default_timeout_s
    if isinstance(timeout, bool) or not math.isfinite(timeout) or timeout <= 0:
        raise ToolValidationError(
            f"timeout must be a positive number of seconds, got {timeout!r}; omit it for the "
            f"default of {config.default_timeout_s:g} s.",
            field_path="timeout",
        )
    if timeout > config.max_timeout_s:
        raise ToolValidationError(
            f"timeout {timeout:g} s is above the maximum of {config.max_timeout_s:g} s; run "
            "shorter steps or ask for a smaller timeout.",
            field_path="timeout",
        )
    return float(timeout)


def _check_cwd(sandbox: Sandbox, cwd: str) -> str:
    rel = normalize_path(cwd)
    if sandbox.mounted is None:
        return rel  # a workspace on the engine: the command fails on a missing directory
    root = os.path.realpath(sandbox.workspace)
    real = os.path.realpath(os.path.join(root, rel)) if rel else root
    if real != root and not real.startswith(root + os.sep):
        raise ToolValidationError(
            f"cwd {cwd!r} goes through a symbolic link that leaves the workspace; use a "
            "directory inside /workspace.",
            field_path="cwd",
        )
    if not os.path.isdir(real):
        raise PathNotFoundError(
            f"cwd {WORKDIR}/{rel} is not an existing directory in the workspace; create it "
            "first (mkdir -p) or omit cwd.",
            path=rel,
        )
    return rel


def _over_budget(context: ToolContext) -> str | None:
    """Why the workspace is over its byte, file or depth budget after a command, or ``None``.

    A command that leaves it there fails, so the executor rolls its changes back.
    """
    try:
        fs: object = context.filesystem
    except ResourceError:
        return None
    # A workspace with budgets (the sandbox's DirectoryFilesystem) says how to check them; a
    # replacing Filesystem without any has nothing to enforce here.
    check = getattr(fs, "check_quota", None)
    if check is None:
        return None
    try:
        check()
    except FilesystemLimitError as exc:
        return str(exc)
    return None


def _undone(context: ToolContext) -> str:
    """What became of a failed call's changes to the workspace."""
    try:
        fs: object = context.filesystem
    except ResourceError:
        fs = None
    from ._remote_backend import NoAgentFilesystem

    if isinstance(fs, NoAgentFilesystem):
        return (
            "its changes to /workspace on the remote engine were NOT undone (that needs "
            "the workspace agent)"
        )
    return "its changes to the workspace were rolled back"


def _outcome(
    result: CommandResult,
    timeout: float,
    what: str,
    over: str | None = None,
    undone: str = "its changes to the workspace were rolled back",
) -> ToolResult[CommandResult]:
    # The full notice is in the result's text (CommandResult.render); the message points to it.
    restarted = ""
    if result.sandbox_restarted:
        restarted = " The sandbox container had to be restarted (see below)."
    if result.refused:
        return ToolResult.error(
            f"{what} changed protected paths, so none of its changes were written to the "
            f"workspace: {'; '.join(why for _, why in result.refused[:5])}"
            + (f" (and {len(result.refused) - 5} more)" if len(result.refused) > 5 else "")
            + f". Protected paths can be read but never changed from the sandbox.{restarted}",
            value=result,
        )
    if over is not None:
        return ToolResult.error(
            f"{what} left the workspace over its limits, so the call failed and its changes "
            f"to the workspace were rolled back. {over}{restarted}",
            value=result,
        )
    if result.timed_out:
        return ToolResult.error(
            f"{what} timed out after {timeout:g} s and was killed with everything it started; "
            f"{undone}.{restarted}",
            value=result,
        )
    if result.exit_code != 0:
        return ToolResult.error(
            f"{what} exited with code {result.exit_code}; the call failed, so {undone}.{restarted}",
            value=result,
        )
    return ToolResult.ok(
        result, f"{what} exited with code 0 in {result.duration_ms} ms.{restarted}"
    )


class _SandboxTools:
    """The handlers, bound to the pack's configuration."""

    __slots__ = ("config",)

    def __init__(self, config: SandboxConfig) -> None:
        self.config = config

    def shell_execute(
        self, params: ShellExecuteParams, *, context: ToolContext
    ) -> ToolResult[CommandResult]:
        """Run one shell command in the sandbox."""
        command = _check_text(params.command, "command", "a shell command", "'ls -la'")
        env = _check_env(params.env)
        stdin = _check_stdin(params.stdin)
        timeout = _check_timeout(params.timeout, self.config)
        sandbox = context.resources.get(Sandbox)
        from ._service import engine_deadline  # loaded with the sandbox's first command

        with engine_deadline(timeout + _ENGINE_GRACE_S):
            with sandbox.quiesced():  # a host-side check: nothing may swap the path meanwhile
                rel = _check_cwd(sandbox, params.cwd)
            done = sandbox.exec(command, cwd=rel, env=env, stdin=stdin, timeout_s=timeout)
        cwd = f"{WORKDIR}/{rel}" if rel else WORKDIR
        over = _over_budget(context)
        result = CommandResult.of(command, cwd, done)
        return _outcome(result, timeout, "The command", over, _undone(context))

    def evaluate_python(
        self, params: EvaluatePythonParams, *, context: ToolContext
    ) -> ToolResult[CommandResult]:
        """Run a Python program (given on stdin, never through argv quoting)."""
        code = _check_text(params.code, "code", "Python source", '"print(2 + 2)"')
        _check_stdin(code)
        timeout = _check_timeout(params.timeout, self.config)
        sandbox = context.resources.get(Sandbox)
        from ._service import engine_deadline

        with engine_deadline(timeout + _ENGINE_GRACE_S):
            done = sandbox.exec(["python3", "-B", "-"], stdin=code, timeout_s=timeout)
        result = CommandResult.of("python3 -B -", WORKDIR, done)
        over = _over_budget(context)
        if over is not None:
            return _outcome(result, timeout, "The program", over)
        if result.exit_code == 127 and "python3" in result.stderr and not result.timed_out:
            return ToolResult.error(
                f"python3 is not installed in the sandbox image {self.config.image!r}. Set the "
                "podman pack's image option to localhost/haversack-sandbox-python:latest "
                "(built by `python -m haversack_podman build-images`).",
                value=result,
            )
        return _outcome(result, timeout, "The program", undone=_undone(context))


def podman_tools(config: SandboxConfig | None = None) -> tuple[Tool[Any, Any], ...]:
    """``shell_execute`` and ``evaluate_python`` for ``config`` (defaults when ``None``)."""
    handlers = _SandboxTools(config if config is not None else SandboxConfig())
    return (
        Tool[ShellExecuteParams, CommandResult](
            name="shell_execute",
            description="Run a shell command in the sandbox container (cwd /workspace, no "
            "network). Returns exit code, stdout, stderr; a non-zero exit or timeout fails "
            "and rolls back workspace changes.",
            handler=handlers.shell_execute,
            annotations=_RUN,
        ),
        Tool[EvaluatePythonParams, CommandResult](
            name="evaluate_python",
            description="Run a Python 3 program in the sandbox container (cwd /workspace, "
            "no network); print() what you need. An exception or timeout fails and rolls "
            "back workspace changes.",
            handler=handlers.evaluate_python,
            annotations=_RUN,
        ),
    )

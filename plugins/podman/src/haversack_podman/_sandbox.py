"""``Sandbox``: one locked-down, long-lived container per session, and commands run in it.

The container's life (create, start, restart, freeze, remove) is ``Container``
(``_container``); this module runs one command in it and reports the outcome.
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Final

from haversack import check_cancelled, uninterruptible
from haversack.errors import PathNotFoundError, ToolValidationError
from haversack.filesystem import normalize_path

from ._container import SWEEP_S, WORKDIR, Container
from ._errors import SandboxError
from ._output import CappedBuffer

__all__ = ["ExecResult", "Sandbox"]

#: How long the output stream may take to end once its command was killed.
_GRACE_S: Final = 0.3
#: How long the exit code may take to appear once the command ended by itself, and once it
#: was killed at its timeout (short: the call must return within timeout + 2 s).
_EXIT_CODE_S: Final = 5.0
_EXIT_CODE_KILLED_S: Final = 0.3


@dataclass(frozen=True, slots=True)
class ExecResult:
    """The outcome of one command: exit code (137 = killed, e.g. timeout or OOM), decoded
    output, wall time, whether it timed out or had output cut, and whether the container had
    to be restarted (``sandbox_restarted``: ``/tmp`` emptied, every process gone, the
    workspace kept) because it could not be brought back to its idle state otherwise."""

    exit_code: int
    stdout: str
    stderr: str
    duration_s: float
    timed_out: bool = False
    stdout_truncated: bool = False
    stderr_truncated: bool = False
    sandbox_restarted: bool = False


def _check_env(env: Mapping[str, str]) -> list[str]:
    pairs: list[str] = []
    for key, value in env.items():
        if not key or "=" in key or "\0" in key or not isinstance(value, str) or "\0" in value:
            raise ToolValidationError(
                f"Environment variable {key!r} has an invalid name or value (no '=', no NUL).",
                field_path="env",
            )
        pairs.append(f"{key}={value}")
    return pairs


class Sandbox(Container):
    """A session's sandbox: a host workspace directory bind-mounted at ``/workspace`` and a
    container created on the first ``exec`` (or ``start``), reused, removed by ``close``.

    The container runs ``sleep infinity`` under ``--init`` (both as an unprivileged user of
    their own, so commands can neither signal nor trace them) with no network, no
    capabilities, no-new-privileges, a read-only root, a tmpfs ``/tmp`` and memory, CPU and
    pids limits. Commands run one at a time. The workspace is created at construction (so
    file tools can use it before any command) with ``config.mounts`` copied in.

    **No process outlives its command, and none runs between commands.** After every command
    the container's cgroup is frozen, every task other than init and ``sleep infinity`` is
    killed, and it stays frozen until the next command starts (with a remote service: the
    command user's processes are killed with ``kill -9 -1`` from a second exec and the
    container is paused through the engine). If it cannot be brought back to that baseline
    within a second, it is restarted and the result says so. :meth:`quiesced` is the
    guarantee the host-side file tools rely on.
    """

    def exec(
        self,
        command: str | Sequence[str],
        *,
        cwd: str = "",
        env: Mapping[str, str] | None = None,
        stdin: str | None = None,
        timeout_s: float | None = None,
    ) -> ExecResult:
        """Run ``command`` (a shell string for ``/bin/sh -c``, or an argv) in the sandbox.

        ``cwd`` is workspace-relative; ``env`` extends the configured environment; ``stdin``
        is fed as UTF-8 then closed; ``timeout_s`` is clamped to the config's maximum. On a
        timeout the command and everything it started are killed (exit code 137,
        ``timed_out``) and the call returns within about ``timeout_s`` + 2 s. No process
        outlives its command; if the container cannot be brought back to its idle state it
        is restarted and ``sandbox_restarted`` is set.
        """
        if self._state.closed:
            raise SandboxError(f"Sandbox {self.name} is closed; create a new one.")
        argv = ["/bin/sh", "-c", command] if isinstance(command, str) else list(command)
        if not argv or not all(isinstance(a, str) for a in argv) or any("\0" in a for a in argv):
            raise ToolValidationError(
                "command must be a non-empty string or list of strings without NUL characters.",
                field_path="command",
            )
        rel = normalize_path(cwd)
        merged = {**self.config.env, **(env or {})}
        env_pairs = _check_env(merged)
        timeout = self.config.clamp_timeout(timeout_s)
        # Not cut short by a cancellation (an MCP client's): the command and whatever it
        # started are always killed and the container frozen again before the call ends.
        # The waits inside check for it instead, and stop early.
        with uninterruptible(), self._lock:
            self.start()
            check_cancelled()  # a first start can take seconds: do not run the command then
            # Checked while the container is quiet: nothing can swap the directory meanwhile.
            if not (self.workspace / rel).is_dir():
                raise PathNotFoundError(
                    f"Working directory {rel or '.'!r} does not exist in the "
                    "workspace; create it first.",
                    path=rel,
                )
            try:
                return self._exec_once(argv, rel, env_pairs, stdin, timeout, restarted=False)
            except SandboxError:
                # A dead container (or an exec podman refuses) makes exec fail before the
                # command runs: reset the container once and retry.
                self._recover()
                return self._exec_once(argv, rel, env_pairs, stdin, timeout, restarted=True)

    def _exec_once(
        self,
        argv: list[str],
        rel: str,
        env_pairs: list[str],
        stdin: str | None,
        timeout: float,
        *,
        restarted: bool,
    ) -> ExecResult:
        from ._exec_stream import ExecStream

        body = {
            "Cmd": argv,
            "AttachStdin": stdin is not None,
            "AttachStdout": True,
            "AttachStderr": True,
            "Tty": False,
            "Env": env_pairs,
            "User": self.config.user,
            "WorkingDir": f"{WORKDIR}/{rel}" if rel else WORKDIR,
        }
        out = CappedBuffer(self.config.output_limit_bytes)
        err = CappedBuffer(self.config.output_limit_bytes)
        started = time.monotonic()
        timed_out = False
        quiet = False
        exit_code = -1
        try:
            self._resume()
            exec_id = self._create_exec(body)
            stream = ExecStream(
                self._svc().base_url,
                exec_id,
                None if stdin is None else stdin.encode("utf-8"),
                out,
                err,
            )
            try:
                if not stream.pump(started + timeout):
                    timed_out = True
                    quiet = self._quiesce(time.monotonic() + SWEEP_S)
                    if not quiet:
                        self.restart()
                        restarted = quiet = True
                    stream.pump(time.monotonic() + _GRACE_S)
            finally:
                stream.close()
            # Asked before the sweep below, which may restart the container (and end the
            # exec session with it).
            exit_code = self._exit_code(exec_id, killed=timed_out)
        finally:
            # Whatever happened above, nothing the command started may keep running.
            if not quiet and not self._quiesce(time.monotonic() + SWEEP_S):
                self.restart()
                restarted = True
        return ExecResult(
            exit_code=exit_code,
            stdout=out.text(),
            stderr=err.text(),
            duration_s=time.monotonic() - started,
            timed_out=timed_out,
            stdout_truncated=out.truncated,
            stderr_truncated=err.truncated,
            sandbox_restarted=restarted,
        )

    def _exit_code(self, exec_id: str, *, killed: bool) -> int:
        api = self._svc().client.api
        deadline = time.monotonic() + (_EXIT_CODE_KILLED_S if killed else _EXIT_CODE_S)
        while True:
            response = api.get(f"/exec/{exec_id}/json")
            if response.status_code >= 400:
                break
            data = response.json()
            if not data.get("Running") and data.get("ExitCode") is not None:
                return int(data["ExitCode"])
            if time.monotonic() >= deadline:
                break
            time.sleep(0.005)
        return 137 if killed else -1

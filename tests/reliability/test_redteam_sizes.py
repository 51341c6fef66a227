"""Red-team suite for bounded cost (issue 14), black box, through the public API and CLI.

Hostile sizes against the file tools in both workspaces (the VFS pack's in-memory one and
the Podman pack's host directory), a long session's memory, packs whose import never
returns, and malformed JSON-RPC sent to ``haversack serve``. Each attack runs in a child
process under a hard timeout, so the unfixed code cannot hang the suite, and measures wall
time and peak memory (``ru_maxrss``) of that child alone. Sizes are scaled down from the
issue so the unfixed code is clearly slow or bloated but cannot harm a shared machine
(< 1 GiB, < 60 s per case).
"""

from __future__ import annotations

import contextlib
import json
import os
import queue
import resource
import signal
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path
from typing import Any

import pytest

_RUNNER = r"""
import faulthandler, importlib.util, json, sys
faulthandler.dump_traceback_later(float(sys.argv[4]), exit=False)  # where a hang is, on stderr
spec = importlib.util.spec_from_file_location("hvrt_sizes", sys.argv[1])
mod = importlib.util.module_from_spec(spec)
spec.loader.exec_module(mod)
out = getattr(mod, sys.argv[2])(**json.loads(sys.argv[3]))
print("HVRT-RESULT " + json.dumps(out), flush=True)
"""

CLI = str(Path(sys.executable).with_name("haversack"))


def _require_podman() -> None:
    if os.environ.get("HAVERSACK_SKIP_PODMAN") == "1" and os.environ.get("CI") != "true":
        pytest.skip("HAVERSACK_SKIP_PODMAN=1: Podman tests disabled by the environment")


def _env(scratch: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("HAVERSACK_")}
    env.pop("XDG_RUNTIME_DIR", None)
    env["TMPDIR"] = str(scratch)
    env["HAVERSACK_NO_CACHE"] = "1"
    return env


def run_attack(func: str, scratch: Path, limit: float, **kwargs: Any) -> dict[str, Any]:
    """Run ``func(**kwargs)`` of this module in a child process with ``TMPDIR=scratch``."""
    kwargs = {"scratch": str(scratch), **kwargs}
    started = time.monotonic()
    proc = subprocess.Popen(
        [sys.executable, "-c", _RUNNER, __file__, func, json.dumps(kwargs), str(limit - 5)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=_env(scratch),
        start_new_session=True,
    )
    try:
        out, err = proc.communicate(timeout=limit)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        out, err = proc.communicate()
        pytest.fail(
            f"{func}({kwargs.get('variant')}) did not return within {limit:.0f} s "
            f"(unbounded work); stderr tail: {err[-2500:]}"
        )
    results = [line for line in out.splitlines() if line.startswith("HVRT-RESULT ")]
    if not results:
        pytest.fail(f"{func} crashed (exit {proc.returncode}); stderr tail: {err[-3000:]}")
    result: dict[str, Any] = json.loads(results[-1][len("HVRT-RESULT ") :])
    result.setdefault("figures", {})["child_wall_s"] = round(time.monotonic() - started, 2)
    print(f"{func} {kwargs.get('variant', '')}: figures {result['figures']}")
    return result


def assert_clean(result: dict[str, Any]) -> None:
    problems = result.get("problems", [])
    assert not problems, f"{problems}; figures: {result.get('figures')}"


# --------------------------------------------------------------------------- child side


def _peak_mib() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def _rss_mib() -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return 0.0


def _executor(scratch: str, workspace: str, **vfs: Any) -> Any:
    import haversack

    if workspace == "memory":
        packs, config = ["vfs"], {"vfs": vfs}
    else:
        root = Path(scratch) / "ws"
        root.mkdir(exist_ok=True)
        packs = ["vfs", "podman"]
        config = {"vfs": vfs, "podman": {"workspace_root": str(root)}}
    prompt = haversack.compose(ns="redteam", key="sizes", packs=packs, config=config)
    executor = haversack.ToolExecutor(prompt.render(), session=haversack.Session())
    executor.__enter__()
    return executor


def _timed(executor: Any, tool: str, args: dict[str, Any]) -> tuple[Any, float, float]:
    """The result, seconds and peak-memory growth (MiB) of one call."""
    import gc

    gc.collect()
    peak = _peak_mib()
    started = time.monotonic()
    try:
        result = executor.execute(tool, args)
    except Exception as exc:
        result = exc
    return result, time.monotonic() - started, _peak_mib() - peak


def _judge(
    result: Any, seconds: float, grown: float, *, label: str, max_s: float, max_mib: float
) -> list[str]:
    problems = []
    if isinstance(result, Exception):
        problems.append(f"{label}: execute() raised {type(result).__name__}: {result}")
    if seconds > max_s:
        problems.append(f"{label}: took {seconds:.1f} s (bound {max_s} s)")
    if grown > max_mib:
        problems.append(f"{label}: peak memory grew by {grown:.0f} MiB (bound {max_mib} MiB)")
    return problems


WORKSPACES = [
    pytest.param("memory", id="memory"),
    pytest.param("host", id="host", marks=pytest.mark.podman),
]

GREPS = {
    # pattern chars, line chars, lines per file, files: a literal of "a"s over lines of "a"s.
    # RE2 leaves its DFA and the unfixed code costs ~pattern x text (20k x 20k: ~5 s here).
    "20k literal matching one 20k line": (20_000, 20_000, 1, 1),
    "12k literal matching a 12k line in 4 files": (12_000, 12_000, 1, 4),
    "100k literal longer than any of 500 1k lines": (100_000, 1_000, 500, 1),
}


def attack_grep(scratch: str, workspace: str, variant: str) -> dict[str, Any]:
    pattern_chars, line_chars, lines, files = GREPS[variant]
    ex = _executor(scratch, workspace)
    for i in range(files):
        body = ("a" * line_chars + "\n") * lines
        ex.execute("write_file", {"path": f"g/big{i}.txt", "content": body})
    result, seconds, grown = _timed(ex, "grep", {"pattern": "a" * pattern_chars, "path": "g"})
    problems = _judge(result, seconds, grown, label=variant, max_s=3.0, max_mib=256)
    ex.__exit__(None, None, None)
    return {
        "problems": problems,
        "figures": {"grep_s": round(seconds, 2), "peak_growth_mib": round(grown, 1)},
    }


@pytest.mark.parametrize("workspace", WORKSPACES)
@pytest.mark.parametrize("variant", list(GREPS))
def test_grep_long_literal_is_bounded(workspace: str, variant: str, scratch: Path) -> None:
    """Item 1: a long literal pattern over long lines answers (result or a clear refusal) in
    under 3 s (the issue's target is 0.2 s; the unfixed code scales as pattern x text)."""
    if workspace == "host":
        _require_podman()
    assert_clean(run_attack("attack_grep", scratch, 150, workspace=workspace, variant=variant))


EDITS = {
    # file chars of "a", old, new length: the unfixed code builds file x new/old chars
    "256 KiB, 'a' -> 1 KiB each": (256 * 1024, "a", 1024),
    "64 KiB, 'a' -> 4 KiB each": (64 * 1024, "a", 4096),
    "64 KiB, 'aa' -> 8 KiB each": (64 * 1024, "aa", 8192),
}


def attack_replace_all(scratch: str, workspace: str, variant: str) -> dict[str, Any]:
    size, old, new_len = EDITS[variant]
    ex = _executor(scratch, workspace)
    ex.execute("write_file", {"path": "a.txt", "content": "a" * size})
    ex.execute("read_file", {"path": "a.txt"})
    args = {"path": "a.txt", "old_string": old, "new_string": "b" * new_len, "replace_all": True}
    result, seconds, grown = _timed(ex, "edit_file", args)
    problems = _judge(result, seconds, grown, label=variant, max_s=10.0, max_mib=96)
    if not isinstance(result, Exception) and result.success:
        problems.append(f"{variant}: a {size * new_len // len(old) >> 20} MiB result was accepted")
    text = "" if isinstance(result, Exception) else result.render()
    ex.__exit__(None, None, None)
    return {
        "problems": problems,
        "figures": {
            "edit_s": round(seconds, 2),
            "peak_growth_mib": round(grown, 1),
            "message": text[:160],
        },
    }


@pytest.mark.parametrize("workspace", WORKSPACES)
@pytest.mark.parametrize("variant", list(EDITS))
def test_edit_replace_all_checks_size_first(workspace: str, variant: str, scratch: Path) -> None:
    """Item 2: ``replace_all`` whose result would be hundreds of MiB is refused with a clear
    error before it is built (peak memory growth < 96 MiB, < 10 s)."""
    if workspace == "host":
        _require_podman()
    assert_clean(
        run_attack("attack_replace_all", scratch, 120, workspace=workspace, variant=variant)
    )


AMBIGUOUS = {
    # file chars of "a", old_string chars of "a": overlapping search costs (file-old) x old
    "200k file, 100k old": (200_000, 100_000),
    "150k file, 50k old": (150_000, 50_000),
}


def attack_ambiguous(scratch: str, workspace: str, variant: str) -> dict[str, Any]:
    size, old = AMBIGUOUS[variant]
    ex = _executor(scratch, workspace)
    ex.execute("write_file", {"path": "a.txt", "content": "a" * size})
    ex.execute("read_file", {"path": "a.txt"})
    args = {"path": "a.txt", "old_string": "a" * old, "new_string": "b"}
    result, seconds, grown = _timed(ex, "edit_file", args)
    problems = _judge(result, seconds, grown, label=variant, max_s=3.0, max_mib=64)
    if not isinstance(result, Exception) and result.success:
        problems.append(f"{variant}: an ambiguous old_string was accepted")
    ex.__exit__(None, None, None)
    return {
        "problems": problems,
        "figures": {"edit_s": round(seconds, 2), "peak_growth_mib": round(grown, 1)},
    }


@pytest.mark.parametrize("workspace", WORKSPACES)
@pytest.mark.parametrize("variant", list(AMBIGUOUS))
def test_edit_ambiguous_match_count_is_bounded(workspace: str, variant: str, scratch: Path) -> None:
    """Item 3: an old_string that occurs many (overlapping) times is refused as ambiguous in
    under 3 s (the unfixed code counts matches in quadratic time)."""
    if workspace == "host":
        _require_podman()
    assert_clean(run_attack("attack_ambiguous", scratch, 150, workspace=workspace, variant=variant))


LONG_SESSIONS = {
    # tool, arguments, warm-up calls, measured calls, bound on RSS growth (MiB)
    "read_file of 200 KB x 400": ("read_file", {"path": "big.txt"}, 100, 400, 24),
    "grep with 100 long matches x 400": (
        "grep",
        {"pattern": "x", "path": "big.txt"},
        100,
        400,
        24,
    ),
    "cheap ls x 20,000": ("ls", {"path": ""}, 5000, 20000, 6),
}


def attack_long_session(scratch: str, workspace: str, variant: str) -> dict[str, Any]:
    import gc

    tool, args, warm, calls, bound = LONG_SESSIONS[variant]
    ex = _executor(scratch, workspace)
    ex.execute("write_file", {"path": "big.txt", "content": ("x" * 99 + "\n") * 2000})
    for _ in range(warm):
        ex.execute(tool, args)
    gc.collect()
    before = _rss_mib()
    started = time.monotonic()
    for _ in range(calls):
        ex.execute(tool, args)
    seconds = time.monotonic() - started
    gc.collect()
    grown = _rss_mib() - before
    problems = []
    if grown > bound:
        problems.append(
            f"{variant}: memory grew by {grown:.0f} MiB over {calls} calls "
            f"({grown * 2**20 / calls:.0f} bytes per call; bound {bound} MiB): the session "
            "keeps every result"
        )
    ex.__exit__(None, None, None)
    return {
        "problems": problems,
        "figures": {
            "rss_growth_mib": round(grown, 1),
            "calls": calls,
            "seconds": round(seconds, 1),
        },
    }


@pytest.mark.parametrize("workspace", WORKSPACES)
@pytest.mark.parametrize("variant", list(LONG_SESSIONS))
def test_long_session_memory_is_flat(workspace: str, variant: str, scratch: Path) -> None:
    """Item 4: the session's memory stays flat over many calls (the unfixed log keeps every
    call's full result and rendered text)."""
    if workspace == "host":
        _require_podman()
    assert_clean(
        run_attack("attack_long_session", scratch, 240, workspace=workspace, variant=variant)
    )


# ------------------------------------------------------------------ packs that never import

_HANG_PLUGINS = {
    "sleeps": "import time\ntime.sleep(600)\n",
    "waits on an event": "import threading\nthreading.Event().wait()\n",
    "deadlocks on its own lock": (
        "import threading\nlock = threading.Lock()\nlock.acquire()\nlock.acquire()\n"
    ),
}


def _hanging_pack(site: Path, how: str) -> None:
    """A real installed distribution (dist-info on the path) whose plugin import hangs."""
    pkg = site / "hvrt_hang"
    pkg.mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "plugin.py").write_text(_HANG_PLUGINS[how])
    info = site / "hvrt_hang-0.1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(
        "Metadata-Version: 2.1\nName: hvrt-hang\nVersion: 0.1.0\nRequires-Dist: haversack>=0.1\n"
    )
    (info / "entry_points.txt").write_text("[haversack]\nhvrthang = hvrt_hang.plugin\n")
    (info / "RECORD").write_text("")


HANG_COMMANDS = {
    "packs": ["packs"],
    "check": ["check"],
    "tools": ["tools"],
    "call": ["call", "ls", "{}"],
}


HANG_CASES = [(command, "sleeps") for command in HANG_COMMANDS] + [
    ("packs", how) for how in _HANG_PLUGINS if how != "sleeps"
]
#: The one case that waits out the default import budget (10 s); the others set a 1 s budget
#: (the same watchdog, the same report), so six hanging imports cost seconds, not a minute.
DEFAULT_BUDGET_CASE = HANG_CASES[0]


@pytest.mark.parametrize(("command", "how"), HANG_CASES)
def test_hanging_pack_import_is_reported(command: str, how: str, scratch: Path) -> None:
    """Item 5: a pack whose import never returns does not hang the CLI silently: the
    command ends within 30 s and names the pack (as timed out), or at least names it on
    stderr while it waits."""
    site = scratch / "site"
    _hanging_pack(site, how)
    env = _env(scratch)
    env["PYTHONPATH"] = str(site)
    if (command, how) != DEFAULT_BUDGET_CASE:
        env["HAVERSACK_IMPORT_BUDGET"] = "1"
    started = time.monotonic()
    proc = subprocess.Popen(
        [CLI, *HANG_COMMANDS[command]],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
        cwd=scratch,
        start_new_session=True,
    )
    try:
        out, err = proc.communicate(timeout=30)
        hung = False
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        out, err = proc.communicate()
        hung = True
    took = time.monotonic() - started
    print(f"haversack {command} with a pack that {how}: {took:.1f} s, hung={hung}")
    assert not hung, (
        f"`haversack {command}` with a pack that {how} did not finish in 30 s; stderr said: "
        f"{err[-300:]!r} (names the pack: {'hvrthang' in err or 'hvrt-hang' in err})"
    )
    assert "hvrthang" in out + err or "hvrt-hang" in out + err, (
        f"`haversack {command}` finished in {took:.1f} s without naming the hanging pack: "
        f"{(out + err)[-400:]!r}"
    )


# ------------------------------------------------------------------ the MCP server


class _Server:
    """``haversack serve`` over stdio, its stdout read line by line on a thread."""

    def __init__(self, scratch: Path, packs: list[str], config: str = "") -> None:
        args = [CLI, "serve"]
        for pack in packs:
            args += ["-p", pack]
        if config:
            path = scratch / "haversack.toml"
            path.write_text(config)
            args += ["--config", str(path)]
        self.proc = subprocess.Popen(
            args,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=_env(scratch),
            cwd=scratch,
            start_new_session=True,
        )
        self.lines: queue.Queue[bytes] = queue.Queue()
        threading.Thread(target=self._pump, daemon=True).start()

    def _pump(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self.lines.put(line)

    def send(self, raw: bytes) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(raw + b"\n")
        self.proc.stdin.flush()

    def reply(self, timeout: float) -> dict[str, Any] | None:
        try:
            line = self.lines.get(timeout=timeout)
        except queue.Empty:
            return None
        try:
            value = json.loads(line)
        except ValueError:
            return {"unparsable": line[:200].decode(errors="replace")}
        return value if isinstance(value, dict) else {"not an object": value}

    def initialize(self) -> dict[str, Any] | None:
        self.send(
            json.dumps(
                {
                    "jsonrpc": "2.0",
                    "id": 1,
                    "method": "initialize",
                    "params": {
                        "protocolVersion": "2024-11-05",
                        "capabilities": {},
                        "clientInfo": {"name": "redteam", "version": "0"},
                    },
                }
            ).encode()
        )
        answer = self.reply(30)
        self.send(b'{"jsonrpc": "2.0", "method": "notifications/initialized"}')
        return answer

    def stop(self) -> None:
        if self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGTERM)
            try:
                self.proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                os.killpg(self.proc.pid, signal.SIGKILL)
                self.proc.wait()
        for pipe in (self.proc.stdin, self.proc.stdout, self.proc.stderr):
            if pipe is not None:
                with contextlib.suppress(OSError):
                    pipe.close()


MALFORMED = {
    "invalid JSON": b"{this is not json",
    "truncated object": b'{"jsonrpc": "2.0", "id": 7, "method": "tools/list"',
    "bare array": b"[]",
    "array of numbers": b"[1, 2, 3]",
    "bare string": b'"hello"',
    "nested 100,000 deep": b"[" * 100_000 + b"]" * 100_000,
    "object nested 50,000 deep": b'{"a":' * 50_000 + b"1" + b"}" * 50_000,
    "invalid UTF-8 before the object": b'\xff\xfe{"jsonrpc": "2.0", "id": 8, "method": "ping"}',
}


@pytest.mark.parametrize("variant", list(MALFORMED))
def test_serve_answers_malformed_jsonrpc(variant: str, scratch: Path) -> None:
    """Item 6: malformed input gets a JSON-RPC error reply (-32700 parse error or -32600
    invalid request, id null) and the server keeps serving."""
    server = _Server(scratch, ["vfs"])
    try:
        hello = server.initialize()
        assert hello is not None, "initialize was not answered"
        assert "result" in hello, f"initialize failed: {hello}"
        server.send(MALFORMED[variant])
        answer = server.reply(10)
        server.send(b'{"jsonrpc": "2.0", "id": 99, "method": "tools/list"}')
        alive = server.reply(20)
        while alive is not None and alive.get("id") != 99:
            alive = server.reply(10)
        still_running = server.proc.poll() is None
    finally:
        server.stop()
    assert answer is not None, f"{variant}: no reply at all within 10 s (expected -32700/-32600)"
    code = (answer.get("error") or {}).get("code")
    assert code in (-32700, -32600), (
        f"{variant}: the reply is not a parse/invalid-request error: {answer}"
    )
    assert answer.get("id") is None, f"{variant}: an error reply to unparsable input: {answer}"
    assert alive is not None, f"{variant}: the server stopped answering"
    assert still_running, f"{variant}: the server exited"


@pytest.mark.podman
def test_serve_disconnect_cancels_running_call(scratch: Path) -> None:
    """Item 6: a client that disconnects mid-call does not leave the call running: the
    server exits within 20 s of stdin closing, not when the 60 s command ends."""
    _require_podman()
    ws = scratch / "ws"
    ws.mkdir()
    config = textwrap.dedent(
        f"""\
        [packs.podman]
        workspace_root = "{ws}"
        max_timeout_s = 120.0
        """
    )
    server = _Server(scratch, ["vfs", "podman"], config)
    try:
        hello = server.initialize()
        assert hello is not None, "initialize was not answered"
        assert "result" in hello, f"initialize failed: {hello}"
        call = {
            "jsonrpc": "2.0",
            "id": 2,
            "method": "tools/call",
            "params": {
                "name": "shell_execute",
                "arguments": {
                    "command": "touch started; sleep 60; touch finished",
                    "timeout": 90,
                },
            },
        }
        server.send(json.dumps(call).encode())
        deadline = time.monotonic() + 60
        while not list(ws.glob("*/started")) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert list(ws.glob("*/started")), "the command never started"
        assert server.proc.stdin is not None
        server.proc.stdin.close()
        closed = time.monotonic()
        try:
            server.proc.wait(timeout=20)
            exited_after = time.monotonic() - closed
        except subprocess.TimeoutExpired:
            exited_after = None
        still = server.proc.poll() is None
        if still:  # measure how long it really keeps running (bounded by the 60 s sleep)
            try:
                server.proc.wait(timeout=70)
                exited_after = time.monotonic() - closed
            except subprocess.TimeoutExpired:
                pass
    finally:
        server.stop()
    print(f"serve exited {exited_after} s after the client disconnected")
    assert not still, (
        f"`haversack serve` kept running its call after the client disconnected: exited "
        f"{exited_after and round(exited_after, 1)} s after stdin closed (bound 20 s)"
    )

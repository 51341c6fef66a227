"""The Podman sandbox under attack (real Podman, ``@pytest.mark.podman``).

- hostile arguments for the sandbox tools (``shell_execute``, ``evaluate_python``), a small
  budget, with the same checks as every other tool;
- path escapes against the sandbox workspace, which the VFS tools then reach on the host
  disk (``DirectoryFilesystem``): symlinks planted in the workspace and in host mounts, and the
  path corpus; a canary outside must stay unread and untouched;
- abuse: fork bomb, memory hog, disk filler, runaway loop, network, writes outside
  /workspace: each contained, reported with a message, and the next command works;
- leaks: after a run in a child process, no container (by the pack's label), no service
  process, no workspace or snapshot directory is left.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
import uuid
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings

from haversack import Filesystem, serde
from haversack.testing import bad_arguments, compose_packs

from ._canary import Canary, tree
from ._harness import Harness, budget
from ._hostile import GLOB_ATTACKS, PATH_ATTACKS, hostile_call
from .test_escapes import PATH_FIELDS

pytestmark = pytest.mark.podman

SANDBOX_TOOLS = ("shell_execute", "evaluate_python")


def _sandbox_config(tmp_path: Path, **extra: Any) -> dict[str, Any]:
    root = tmp_path / "workspaces"
    root.mkdir(exist_ok=True)
    return {
        "workspace_root": str(root),
        "memory": "256m",
        "pids_limit": 64,
        "tmpfs_size": "16m",
        "default_timeout_s": 10.0,
        "max_timeout_s": 10.0,
        **extra,
    }


def _harness(tmp_path: Path, **extra: Any) -> Harness:
    config = {"podman": _sandbox_config(tmp_path, **extra)}
    h = Harness(compose_packs(["planning", "vfs", "podman"], config=config))
    h.ok("write_file", {"path": "notes/a.txt", "content": "alpha\n"})
    h.ok("read_file", {"path": "notes/a.txt"})
    h.mark_baseline()
    return h


@pytest.mark.parametrize("tool_name", SANDBOX_TOOLS)
def test_sandbox_tool_hostile_arguments(
    tool_name: str, podman_service: Any, tmp_path: Path, figure
) -> None:
    fig = figure("hostile-arguments", f"{tool_name} (podman)")
    h = _harness(tmp_path)
    try:
        tool = h.rendered.tool(tool_name)
        assert tool is not None
        schema = serde.schema(tool.params_type)
        for case in bad_arguments(schema):
            h.hostile(fig, tool_name, case.arguments, case.label, must_fail=case.must_fail)

        @settings(
            max_examples=budget(8, 150),
            deadline=None,
            database=None,
            suppress_health_check=list(HealthCheck),
        )
        @given(call=hostile_call(schema, True, ("notes", "notes/a.txt")))
        def fuzz(call: tuple[str, Any, bool]) -> None:
            label, arguments, must_fail = call
            if isinstance(arguments, dict) and "timeout" in arguments:
                arguments = {**arguments, "timeout": 3}  # keep the budget small: 3 s at most
            h.hostile(fig, tool_name, arguments, label, must_fail=must_fail)

        fuzz()
        fig.case()
        after = h.executor.execute("shell_execute", {"command": "echo still-alive"})
        fig.check("still-alive" in after.render(), f"sandbox unusable after: {after.render()}")
    finally:
        h.close()
    fig.assert_clean()


def test_sandbox_workspace_escapes(podman_service: Any, tmp_path: Path, figure) -> None:
    fig = figure("escapes", "sandbox workspace (host disk)")
    canary = Canary.plant(tmp_path / "outside")
    mount = tmp_path / "mount"
    mount.mkdir()
    (mount / "ok.txt").write_text("fine\n")
    (mount / "link_file").symlink_to(canary.path)
    (mount / "link_dir").symlink_to(canary.path.parent)
    (mount / "link_root").symlink_to("/")
    (tmp_path / "workspaces").mkdir()
    outside_before = tree(tmp_path, skip=(tmp_path / "workspaces", mount))
    h = _harness(tmp_path, mounts={str(mount): "proj"})
    try:
        fs = h.executor.resources.get(Filesystem)  # type: ignore[type-abstract]
        workspace = Path(fs.root)  # type: ignore[attr-defined]
        # Plant symlinks in the workspace from the host and from inside the sandbox.
        (workspace / "host_link").symlink_to(canary.path)
        (workspace / "host_dir_link").symlink_to(canary.path.parent)
        (workspace / "host_root_link").symlink_to("/")
        planted = h.executor.execute(
            "shell_execute",
            {
                "command": f"ln -s {canary.path} in_link; ln -s / in_root; "
                f"ln -s {canary.path.parent} in_dir; ls -la"
            },
        )
        fig.check(planted.success, f"could not plant symlinks in the sandbox: {planted.render()}")
        copied_links = {}
        for name in ("proj/link_file", "proj/link_dir", "proj/link_root"):
            fig.case()
            path = workspace / name
            if path.is_symlink():  # copied as a link: never follow it here (that is a read)
                copied_links[name] = os.readlink(path)
                continue
            text = path.read_text() if path.is_file() else ""
            fig.check(not canary.leaked_in(text), f"mount copied the canary into {name}")
        fig.note("mount symlinks copied as symlinks", copied_links)
        h.mark_baseline()
        links = [
            "host_link",
            "host_dir_link/canary.txt",
            "host_root_link/etc/passwd",
            "in_link",
            "in_dir/canary.txt",
            "in_root" + str(canary.path),
            "proj/link_file",
            "proj/link_dir/canary.txt",
            "host_dir_link",
            "in_dir",
        ]
        corpus = [
            *PATH_ATTACKS,
            str(canary.path),
            str(canary.path.parent),
            *links,
            *(f"/workspace/{x}" for x in links),
        ]
        for tool, fields in PATH_FIELDS.items():
            for field, rest in fields:
                for attack in corpus + (list(GLOB_ATTACKS) if field != "path" else []):
                    result = h.hostile(fig, tool, {**rest, field: attack}, "a path attack")
                    if result is not None:
                        fig.check(
                            not canary.leaked_in(result.render()),
                            f"{tool} {field}={attack!r}: canary text in the result",
                        )
        # The shell itself: host paths do not exist in the container; cwd attacks refused.
        for command in (
            f"cat {canary.path}",
            "cat in_link",
            "cat host_link",
            "cat in_dir/canary.txt",
            f"ls {canary.path.parent}",
        ):
            result = h.hostile(fig, "shell_execute", {"command": command}, "a host read")
            if result is not None:
                fig.check(not canary.leaked_in(result.render()), f"{command!r} read the canary")
        for cwd in (
            "..",
            "../..",
            "/",
            "/etc",
            "host_dir_link",
            "in_dir",
            "in_root",
            "%2e%2e",
            "\uff0e\uff0e",
            str(canary.path.parent),
        ):
            result = h.hostile(fig, "shell_execute", {"command": "pwd; ls", "cwd": cwd}, "cwd")
            if result is not None and result.success:
                fig.check("/workspace" in result.render(), f"cwd {cwd!r} left /workspace")
                fig.check(not canary.leaked_in(result.render()), f"cwd {cwd!r} listed the canary")
    finally:
        h.close()
    fig.problems.extend(canary.intact())
    after = tree(tmp_path, skip=(tmp_path / "workspaces", mount))
    fig.check(after == outside_before, f"files changed outside: {set(after) ^ set(outside_before)}")
    fig.assert_clean()


ABUSE: tuple[tuple[str, str, dict[str, Any]], ...] = (
    ("fork bomb (background)", "shell_execute", {"command": "f(){ f | f & }; f", "timeout": 5}),
    ("fork bomb", "shell_execute", {"command": "f(){ f | f; }; f", "timeout": 5}),
    (
        "memory hog",
        "evaluate_python",
        {"code": "x = []\nwhile True:\n    x.append(bytearray(16 * 1024 * 1024))", "timeout": 10},
    ),
    (
        "disk filler in /tmp",
        "shell_execute",
        {"command": "dd if=/dev/zero of=/tmp/fill bs=1M count=1000", "timeout": 10},
    ),
    (
        "disk filler in /workspace",
        "shell_execute",
        {"command": "head -c 100000000 /dev/zero > big.bin; ls -la big.bin", "timeout": 10},
    ),
    ("runaway loop", "shell_execute", {"command": "while :; do :; done", "timeout": 2}),
    ("busy python", "evaluate_python", {"code": "while True:\n    pass", "timeout": 2}),
    ("network: wget", "shell_execute", {"command": "wget -T 3 -q -O- http://1.1.1.1/"}),
    (
        "network: python socket",
        "evaluate_python",
        {"code": "import socket\nsocket.create_connection(('8.8.8.8', 53), timeout=3)"},
    ),
    ("network: DNS", "shell_execute", {"command": "nslookup example.com"}),
    ("write /", "shell_execute", {"command": "echo pwned > /pwned-{tag}"}),
    ("write /etc", "shell_execute", {"command": "echo pwned >> /etc/passwd; touch /etc/{tag}"}),
    ("write /usr", "shell_execute", {"command": "mkdir -p /usr/{tag} && touch /usr/{tag}/x"}),
    ("write via ..", "shell_execute", {"command": "touch /workspace/../{tag}"}),
    ("background survivor", "shell_execute", {"command": "(sleep 1000 &) ; echo started"}),
    ("kill init", "shell_execute", {"command": "kill -9 1; kill -9 -1; echo sent"}),
)


def test_sandbox_abuse(podman_service: Any, tmp_path: Path, figure) -> None:
    fig = figure("sandbox-abuse", "abuse then next command")
    tag = f"hvrel-{uuid.uuid4().hex[:8]}"
    h = _harness(tmp_path)
    results: dict[str, str] = {}
    try:
        for n, (label, tool, arguments) in enumerate(ABUSE):
            args = {
                k: v.replace("{tag}", tag) if isinstance(v, str) else v
                for k, v in arguments.items()
            }
            result = h.hostile(fig, tool, args, label)
            if result is None:
                continue
            text = result.render()
            results[label] = text.splitlines()[0][:160] if text else ""
            fig.check(bool(text.strip()), f"{label}: no message for the model")
            if label.startswith(("network", "write")) or label in ("fork bomb", "memory hog"):
                fig.check(not result.success, f"{label}: reported success: {text[:300]}")
            fig.case()
            nxt = h.executor.execute("shell_execute", {"command": f"echo next-{n}"})
            fig.check(
                nxt.success and f"next-{n}" in nxt.render(),
                f"after {label}: the next command failed: {nxt.render()[:300]}",
            )
        fig.case()
        ps = h.executor.execute("shell_execute", {"command": "ps -o pid,args"})
        procs = [line for line in ps.render().splitlines() if line.strip()[:1].isdigit()]
        fig.note("processes left in the sandbox", len(procs))
        fig.check(len(procs) < 10, f"abuse left processes running: {procs[:10]}")
    finally:
        h.close()
    for host_path in (Path("/") / f"pwned-{tag}", Path("/etc") / tag, Path("/usr") / tag):
        fig.case()
        fig.check(not host_path.exists(), f"{host_path} appeared on the host")
    fig.note("first_lines", results)
    fig.assert_clean()


_LEAK_CHILD = textwrap.dedent(
    """
    import json, os, sys
    from haversack import Session, ToolExecutor
    from haversack.testing import compose_packs
    from haversack_podman import shutdown_services
    config = json.loads(sys.argv[1])
    rendered = compose_packs(["vfs", "podman"], config={"podman": config}).render()
    calls = 0
    for s in range(int(sys.argv[2])):
        with ToolExecutor(rendered, session=Session()) as ex:
            for n in range(int(sys.argv[3])):
                ex.execute("write_file", {"path": f"f{n}.txt", "content": "x"})
                ex.execute("shell_execute", {"command": f"cat f{n}.txt; sleep 100 &"})
                ex.execute("shell_execute", {"command": "exit 3"})
                calls += 3
    shutdown_services()
    print(json.dumps({"pid": os.getpid(), "calls": calls}))
    """
)


def test_sandbox_leaves_nothing(podman_service: Any, tmp_path: Path, figure) -> None:
    from haversack_podman import PID_LABEL, podman_binary, podman_env
    from haversack_podman._runtime_dir import runtime_dir, snapshots_dir

    fig = figure("leaks", "sandbox: containers, services, directories")
    config = _sandbox_config(tmp_path)
    sessions, commands = budget(3, 10), budget(5, 40)
    child = subprocess.run(
        [sys.executable, "-c", _LEAK_CHILD, json.dumps(config), str(sessions), str(commands)],
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert child.returncode == 0, child.stderr[-2000:]
    out = json.loads(child.stdout.strip().splitlines()[-1])
    pid = out["pid"]
    fig.case(out["calls"])
    fig.note("sessions", sessions)
    fig.note("calls", out["calls"])
    containers = subprocess.run(
        [podman_binary(), "ps", "-aq", "--filter", f"label={PID_LABEL}={pid}"],
        capture_output=True,
        text=True,
        env=podman_env(),
        check=True,
    ).stdout.split()
    fig.check(not containers, f"containers left behind by pid {pid}: {containers}")
    left = sorted(p.name for p in Path(config["workspace_root"]).iterdir())
    fig.check(not left, f"workspace directories left: {left}")
    snaps = sorted(p.name for p in snapshots_dir().iterdir() if p.name.startswith(f"{pid}-"))
    fig.check(not snaps, f"snapshot directories left: {snaps}")
    services = sorted(p.name for p in runtime_dir().iterdir() if p.name.startswith(f"{pid}-"))
    fig.check(not services, f"service directories left: {services}")
    for proc in Path("/proc").iterdir():
        if proc.name.isdigit():
            try:
                cmdline = (proc / "cmdline").read_bytes()
            except OSError:
                continue
            if b"system\0service" in cmdline and f"/{pid}-service-".encode() in cmdline:
                fig.problem(f"podman service process {proc.name} of pid {pid} still runs")
    fig.assert_clean()


def test_sandbox_swap_race(podman_service: Any, tmp_path: Path, figure) -> None:
    """A process swaps a workspace directory of a live sandbox with a link to a host
    directory in a tight loop while the host runs every file operation on the workspace.

    Between commands the container is frozen and every process of a command is killed when
    its call ends (layer (a), attacked from inside by the process-containment families
    below), so a racer cannot run there; this family attacks the path walks themselves
    (layer (b)) as if layer (a) had failed: the racer is a process on the host and the file
    operations use a ``DirectoryFilesystem`` over the live workspace without the sandbox's
    guard. The root-only canary is never read or written, nothing appears in the host
    directory, no host name shows up in a result."""
    from haversack.filesystem import DirectoryFilesystem
    from haversack_podman import Sandbox

    from ._racer import OPERATIONS, RACER, Racer, RaceSite, attack

    h = _harness(tmp_path)
    sandbox = h.executor.resources.get(Sandbox)
    owner = (sandbox.config.uid, sandbox.config.gid)
    host = tmp_path / "host"
    site = RaceSite.plant(sandbox.workspace, host, owner=owner)
    h.ok("shell_execute", {"command": "ls -l d s"})  # the container runs; the link dangles in it
    unguarded = DirectoryFilesystem(sandbox.workspace, owner=owner)
    racer = Racer(
        [sys.executable, "-c", RACER, str(sandbox.workspace / "d"), str(sandbox.workspace / "s")]
    )
    attempts = budget(150, 3000)
    figures = {}
    try:
        for operation in sorted(OPERATIONS):
            fig = figures[operation] = figure("escapes", f"sandbox swap race: {operation}")
            outcome = attack(unguarded, operation, attempts)
            fig.case(attempts)
            fig.problems.extend(site.escapes(outcome.values, outcome.errors))
            fig.note("succeeded", outcome.succeeded)
            fig.note("refused: link met", outcome.links)
    finally:
        swaps = racer.stop()
        unguarded.close()
        h.close()
    for fig in figures.values():
        fig.note("swaps (whole run)", swaps)
        fig.note("escapes", len(fig.problems))
        fig.check(swaps > 0, "the racer never swapped: the race was not exercised")
    for fig in figures.values():
        fig.assert_clean()


# ---------------------------------------------------------------------- process containment
# Each family aims at "a process outlives its command" (issue 13, items 2 and 3): the
# process is started by a call that returns (or times out), then must be gone. Leftovers are
# counted from the host (the container's cgroup holds only init and sleep, frozen) and from
# inside (ps, as the attacker would look). Durations are noted, never asserted.

# A writer thread appends to the workspace every 10 ms; the main thread leaves with a raw
# SYS_exit (60 on x86-64), so /proc/<pid>/stat shows a zombie while the thread runs.
ZOMBIE_WRITER = r"""
import ctypes, os, sys, threading, time
path = sys.argv[1]
def write():
    while True:
        with open(path, "a") as f:
            f.write("x\n")
        time.sleep(0.01)
threading.Thread(target=write).start()
while not os.path.exists(path):
    time.sleep(0.001)
ctypes.CDLL(None, use_errno=True).syscall(60, 0)
"""

# Starts it in the background and returns once it writes and its leader is a zombie: the
# state the old process-group sweep took for dead.
START_ZOMBIE = (
    "python3 /tmp/z.py /workspace/grow.txt > /dev/null 2>&1 & p=$!; "
    "until [ -s /workspace/grow.txt ] && grep -q ') Z' /proc/$p/stat; do sleep 0.01; done"
)

# Swaps /workspace/d (a real directory) with /workspace/swap (a symlink to the canary's
# host directory) as fast as it can: a host-side path walk that checks, then opens, loses
# the race when this runs meanwhile.
SWAPPER = r"""
import ctypes
libc = ctypes.CDLL(None, use_errno=True)
open("/tmp/swapping", "w").close()
while True:
    libc.renameat2(-100, b"/workspace/d", -100, b"/workspace/swap", 2)  # RENAME_EXCHANGE
"""

# The resident executor runs as root, which no command can become (no capabilities,
# no-new-privileges): it is the one root process, and not a leftover.
LEFTOVERS = (
    "ps -o user= -o pid= -o ppid= -o args= | awk -v me=$$ "
    "'$1 != \"root\" && $2 != 1 && $2 != me && $3 != me && $0 !~ /sleep infinity/' | wc -l"
)

CONTAINMENT: tuple[tuple[str, str, float], ...] = (
    (
        "zombie leader with a writer thread",
        START_ZOMBIE,
        10.0,
    ),
    (
        "zombie leader in the foreground (timeout)",
        "python3 /tmp/z.py /workspace/grow.txt",
        1.0,
    ),
    ("setsid flood (timeout)", "while :; do setsid sh -c 'while :; do :; done' & done", 2.0),
    ("setsid sessions left behind", "for i in $(seq 30); do setsid sleep 300 & done", 10.0),
    (
        "double-forked daemon",
        "(setsid sh -c 'while :; do date >> /workspace/d.log; sleep 0.05; done' &); echo ok",
        10.0,
    ),
    ("fork bomb (timeout)", "f(){ f | f & }; f; sleep 300", 2.0),
    ("background and nohup sleep", "sleep 300 & nohup sleep 300 > /dev/null 2>&1 & true", 10.0),
)


def _leftovers(h: Harness) -> tuple[int, int]:
    """(tasks beyond the baseline in the host's view, processes left in the sandbox's view)."""
    from haversack_podman import Sandbox

    sandbox = h.executor.resources.get(Sandbox)
    cgroup = sandbox._state.cgroup
    host = len(cgroup.tasks() - sandbox._baseline) if cgroup is not None else 0
    if cgroup is not None and not cgroup.frozen():
        host += 1000  # not quiescent between commands: a finding in itself
    probe = h.executor.execute("shell_execute", {"command": LEFTOVERS})
    inside = int(probe.value.stdout.strip()) if probe.success else 1000
    return host, inside


def _workspace_size(h: Harness, name: str) -> int:
    from haversack_podman import Sandbox

    path = h.executor.resources.get(Sandbox).workspace / name
    return path.stat().st_size if path.exists() else 0


@pytest.mark.parametrize(
    ("label", "command", "timeout"), CONTAINMENT, ids=[c[0] for c in CONTAINMENT]
)
def test_sandbox_process_containment(
    label: str, command: str, timeout: float, podman_service: Any, tmp_path: Path, figure
) -> None:
    fig = figure("process-containment", label)
    canary = Canary.plant(tmp_path / "outside")
    h = _harness(tmp_path)
    walls: list[float] = []
    restarts = 0
    try:
        for _ in range(budget(2, 25)):
            # Written each round: a failed call's rollback empties /tmp.
            h.ok("shell_execute", {"command": "cat > /tmp/z.py", "stdin": ZOMBIE_WRITER})
            fig.case()
            result = h.executor.execute("shell_execute", {"command": command, "timeout": timeout})
            walls.append(result.value.duration_ms / 1000 if result.value else float("nan"))
            restarts += bool(result.value and result.value.sandbox_restarted)
            fig.check(bool(result.render().strip()), f"{label}: no message for the model")
            grow = _workspace_size(h, "grow.txt"), _workspace_size(h, "d.log")
            host, inside = _leftovers(h)
            fig.check(host == 0, f"{label}: {host} task(s) left in the container's cgroup")
            fig.check(inside == 0, f"{label}: {inside} process(es) visible in the sandbox")
            # One more command gives a survivor 0.3 s to write; nothing may.
            h.executor.execute("shell_execute", {"command": "sleep 0.3"})
            after = _workspace_size(h, "grow.txt"), _workspace_size(h, "d.log")
            fig.check(after == grow, f"{label}: a killed process kept writing: {grow} -> {after}")
            nxt = h.executor.execute("shell_execute", {"command": "echo next"})
            fig.check(nxt.success and "next" in nxt.render(), f"{label}: next command failed")
            h.ok("shell_execute", {"command": "rm -f grow.txt d.log"})
    finally:
        h.close()
    fig.problems.extend(canary.intact())
    fig.note("max wall time of the attack call (s)", round(max(walls), 2) if walls else None)
    fig.note("timeout (s)", timeout)
    fig.note("sandbox restarts", restarts)
    fig.assert_clean()


# Every root process is the resident executor (commands cannot become root): signal it,
# stop it, write into its channel, list its fds, trace it, replace its interpreter, and
# print frames that look like its own (an exit status 42 for the next hundred commands).
ATTACK_RESIDENT = r"""
for p in /proc/[0-9]*; do
  [ "$(awk '/^Uid:/{print $2}' $p/status 2>/dev/null)" = 0 ] || continue
  n=${p#/proc/}; echo "ROOT $n"
  kill -9 $n 2>/dev/null && echo "KILLED $n"
  kill -STOP $n 2>/dev/null && echo "STOPPED $n"
  echo x 2>/dev/null > $p/fd/0 && echo "WROTE $n"
  echo x 2>/dev/null > $p/fd/1 && echo "WROTE $n"
  ls $p/fd > /dev/null 2>&1 && echo "LISTED $n"
  python3 -c "import ctypes,sys; sys.exit(ctypes.CDLL(None).ptrace(16, $n, 0, 0) != 0)" \
    2>/dev/null && echo "TRACED $n"
done
( cp /bin/sh "$(command -v python3)" ) 2>/dev/null && echo REPLACED
python3 -c "import struct,sys
for n in range(100): sys.stdout.buffer.write(struct.pack('>BIIi', 5, n, 4, 42))"
echo; echo done
"""


def test_sandbox_attacks_on_the_resident(podman_service: Any, tmp_path: Path, figure) -> None:
    """A command attacks the process that starts commands: every attack fails, the same
    resident serves the next command, and its exit status is the real one."""
    from haversack_podman import Sandbox

    fig = figure("process-containment", "attacks on the resident executor")
    h = _harness(tmp_path)
    try:
        sandbox = h.executor.resources.get(Sandbox)
        h.ok("shell_execute", {"command": "true"})
        resident = sandbox._resident
        fig.check(resident is not None, f"no resident executor: {sandbox.resident_off}")
        pid = resident.pid if resident is not None else -1
        for _ in range(budget(2, 25)):
            fig.case()
            result = h.executor.execute("shell_execute", {"command": ATTACK_RESIDENT})
            out = result.value.stdout if result.value else result.render()
            fig.check(f"ROOT {pid}\n" in out, f"the resident was not found: {out[:300]}")
            for word in ("KILLED", "STOPPED", "WROTE", "LISTED", "TRACED", "REPLACED"):
                fig.check(word not in out, f"an attack succeeded: {word} in {out[-300:]!r}")
            fig.check(result.success and out.endswith("done\n"), f"attack call: {out[-300:]!r}")
            nxt = h.executor.execute("shell_execute", {"command": "echo next; exit 7"})
            code = nxt.value.exit_code if nxt.value else None
            fig.check(code == 7, f"next command's exit code {code}, not 7: {nxt.render()[:300]}")
            now = sandbox._resident
            fig.check(now is not None and now.pid == pid, "the resident was replaced")
            host, inside = _leftovers(h)
            fig.check(host == 0, f"{host} task(s) left in the container's cgroup")
            fig.check(inside == 0, f"{inside} process(es) visible in the sandbox")
    finally:
        h.close()
    fig.assert_clean()


def test_sandbox_swapper_against_the_file_tools(
    podman_service: Any, tmp_path: Path, figure
) -> None:
    """The red team's host-read race: a process left by a command swaps a workspace directory
    with a symlink to the canary's directory while the host-side file tools and a rollback
    walk that path. With nothing running between commands, there is no race to win."""
    fig = figure("process-containment", "symlink swapper vs the file tools (canary)")
    canary = Canary.plant(tmp_path / "outside")
    before = tree(canary.path.parent)
    h = _harness(tmp_path)
    try:
        start = (
            f"mkdir -p d && echo inside > d/canary.txt; ln -sfn {canary.path.parent} swap; "
            "rm -f /tmp/swapping; python3 /tmp/swap.py > /dev/null 2>&1 & "
            "until [ -e /tmp/swapping ]; do sleep 0.01; done"
        )
        for n in range(budget(2, 25)):
            # Written each round: a failed call's rollback empties /tmp.
            h.ok("shell_execute", {"command": "cat > /tmp/swap.py", "stdin": SWAPPER})
            fig.case()
            started = h.executor.execute("shell_execute", {"command": start})
            fig.check(started.success, f"swapper did not start: {started.render()[:300]}")
            for tool, args in (
                ("read_file", {"path": "d/canary.txt"}),
                ("read_file", {"path": "swap/canary.txt"}),
                ("write_file", {"path": "d/pwn.txt", "content": "pwned"}),
                ("edit_file", {"path": "d/canary.txt", "old_string": "CANARY", "new_string": "x"}),
                ("ls", {"path": "d"}),
                ("grep", {"pattern": "CANARY", "path": "d"}),
            ):
                fig.case()
                result = h.executor.execute(tool, args)
                fig.check(
                    not canary.leaked_in(result.render()), f"{tool} {args}: canary in the result"
                )
            # A failing call: its rollback walks the workspace while the swapper (restarted
            # by the same call) would be running.
            fig.case()
            failed = h.executor.execute("shell_execute", {"command": f"{start}; exit 1"})
            fig.check(not failed.success, "the failing command succeeded")
            host, inside = _leftovers(h)
            fig.check(host == 0, f"round {n}: {host} task(s) left in the container's cgroup")
            fig.check(inside == 0, f"round {n}: {inside} process(es) visible in the sandbox")
    finally:
        h.close()
    fig.problems.extend(canary.intact())
    after = tree(canary.path.parent)
    fig.check(after == before, f"files changed next to the canary: {set(after) ^ set(before)}")
    fig.assert_clean()

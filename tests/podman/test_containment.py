"""Process containment: no process outlives its command, none runs between commands.

Each attack aims at what the red team used: a process whose main thread exits with a raw
``SYS_exit`` while a writer thread keeps going (a zombie leader the old group sweep took for
dead), ``setsid`` floods, double-forked daemons, fork bombs. After the call every one of them
must be gone, seen from inside (``ps``, the file it writes stops growing, also across a
rollback) and from the host (the container's cgroup holds only init and ``sleep infinity``,
frozen).
"""

from __future__ import annotations

import contextlib
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from haversack_podman import Sandbox, podman_binary, podman_env
from haversack_podman._cgroup import ContainerCgroup

podman = pytest.mark.podman

# A writer thread appends to the workspace every 10 ms; the main thread then leaves with a
# raw SYS_exit (60 on x86-64), so /proc/<pid>/stat shows a zombie while the thread runs.
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

# Counts what is left, the way an attacker would look: every process but init, sleep, the
# probe's own shell and its children (ps, awk, wc).
# The resident executor runs as root, which no command can become (no capabilities,
# no-new-privileges): it is the one root process, and not a leftover.
LEFTOVERS = (
    "ps -o user= -o pid= -o ppid= -o args= | awk -v me=$$ "
    "'$1 != \"root\" && $2 != 1 && $2 != me && $3 != me && $0 !~ /sleep infinity/' | wc -l"
)


def _cgroup(sandbox: Sandbox) -> ContainerCgroup:
    cgroup = sandbox._state.cgroup
    assert cgroup is not None, "the local service must give the sandbox its cgroup"
    return cgroup


def _at_baseline(sandbox: Sandbox) -> None:
    """From the host: the cgroup holds exactly init and sleep, and it is frozen."""
    cgroup = _cgroup(sandbox)
    assert cgroup.frozen(), cgroup.describe()
    assert cgroup.tasks() == sandbox._baseline, cgroup.describe()


def _size(path: Path) -> int:
    return path.stat().st_size if path.exists() else 0


def _stopped_growing(sandbox: Sandbox, path: Path) -> None:
    """The file does not grow while later commands run (each gives the attacker 0.3 s)."""
    before = _size(path)
    for _ in range(2):
        probe = sandbox.exec(f"sleep 0.3; {LEFTOVERS}")
        assert probe.stdout.strip() == "0", probe
        assert _size(path) == before


@podman
def test_zombie_leader_with_a_live_thread_is_killed(sandbox):
    sandbox.exec(["sh", "-c", "cat > /tmp/z.py"], stdin=ZOMBIE_WRITER)
    started = sandbox.exec(START_ZOMBIE)
    assert started.exit_code == 0, started
    grow = sandbox.workspace / "grow.txt"
    assert _size(grow) > 0  # it did run and write
    _at_baseline(sandbox)
    _stopped_growing(sandbox, grow)


@podman
def test_zombie_leader_in_the_foreground_times_out_and_dies(sandbox):
    sandbox.exec(["sh", "-c", "cat > /tmp/z.py"], stdin=ZOMBIE_WRITER)
    result = sandbox.exec(["python3", "/tmp/z.py", "/workspace/grow.txt"], timeout_s=1)
    assert result.timed_out
    assert result.exit_code == 137
    _at_baseline(sandbox)
    _stopped_growing(sandbox, sandbox.workspace / "grow.txt")


@podman
def test_zombie_leader_stops_writing_across_a_rollback(make_sandbox, tmp_path):
    import haversack

    prompt = haversack.compose(
        ns="t",
        key="contain",
        packs=["vfs", "podman"],
        config={
            "podman": {
                "image": "localhost/haversack-sandbox-python:latest",
                "workspace_root": str(tmp_path),
            }
        },
        strict=True,
    )
    with haversack.ToolExecutor(prompt.render(), session=haversack.Session()) as ex:
        sandbox = ex.resources.get(Sandbox)
        ok = ex.execute("write_file", {"path": "z.py", "content": ZOMBIE_WRITER})
        assert ok.success, ok.render()
        # The attack starts the writer and fails, so the executor rolls the workspace back.
        failed = ex.execute(
            "shell_execute",
            {"command": f"cp z.py /tmp/z.py; {START_ZOMBIE}; exit 1"},
        )
        assert not failed.success
        grow = sandbox.workspace / "grow.txt"
        assert not grow.exists()  # rolled back, and nothing wrote it again afterwards
        _at_baseline(sandbox)
        after = ex.execute("shell_execute", {"command": f"sleep 0.3; {LEFTOVERS}"})
        assert after.success, after.render()
        assert after.value.stdout.strip() == "0", after.render()
        assert not grow.exists()


@podman
def test_setsid_flood_is_killed_and_the_next_command_works(sandbox):
    flood = "while :; do setsid sh -c 'while :; do :; done' & done"
    result = sandbox.exec(flood, timeout_s=2)
    # The flood runs until the timeout, or until the pids limit stops its own shell forking.
    assert result.timed_out or "can't fork" in result.stderr, result
    _at_baseline(sandbox)
    after = sandbox.exec(f"echo ok; {LEFTOVERS}")
    assert after.stdout == "ok\n0\n", after


@podman
def test_setsid_sessions_left_by_a_finished_command_are_killed(sandbox):
    started = sandbox.exec("for i in $(seq 50); do setsid sleep 300 & done; echo started")
    assert started.stdout == "started\n"
    _at_baseline(sandbox)
    assert sandbox.exec(LEFTOVERS).stdout.strip() == "0"


@podman
def test_double_forked_daemon_is_killed(sandbox):
    daemon = "(setsid sh -c 'while :; do date >> /workspace/d.log; sleep 0.05; done' &) ; echo ok"
    result = sandbox.exec(daemon)
    assert result.stdout == "ok\n"
    _at_baseline(sandbox)
    _stopped_growing(sandbox, sandbox.workspace / "d.log")


@podman
def test_fork_bomb_leaves_only_the_baseline(make_sandbox):
    sandbox = make_sandbox(pids_limit=64)
    result = sandbox.exec("f(){ f | f & }; f; sleep 300", timeout_s=2)
    assert result.timed_out or "can't fork" in result.stderr, result
    _at_baseline(sandbox)
    assert sandbox.exec(f"echo ok; {LEFTOVERS}").stdout == "ok\n0\n"


@podman
def test_a_later_command_cannot_see_or_signal_an_earlier_ones_process(sandbox):
    # The pid with its start time: after a restart (a sweep past its deadline on a loaded
    # machine) a new process may carry the same pid, and signalling it proves nothing.
    first = sandbox.exec("sleep 1000 > /dev/null 2>&1 & echo $! $(cut -d' ' -f22 /proc/$!/stat)")
    pid, started = first.stdout.split()
    assert pid.isdigit(), first
    assert started.isdigit(), first
    same = f'[ "$(cut -d" " -f22 /proc/{pid}/stat 2>/dev/null)" = {started} ]'
    second = sandbox.exec(f"{{ {same} && kill -0 {pid} 2>&1; }} || echo gone; {LEFTOVERS}")
    assert second.stdout.endswith("gone\n0\n"), second


@podman
def test_the_container_is_frozen_between_commands_and_thawed_during_them(sandbox):
    sandbox.start()
    cgroup = _cgroup(sandbox)
    assert cgroup.frozen()
    # A command sees itself running: the cgroup is thawed for it (it could not run otherwise).
    assert sandbox.exec("echo running").stdout == "running\n"
    assert cgroup.frozen()


@podman
def test_quiesced_freezes_even_after_something_thawed_the_container(sandbox):
    sandbox.start()
    cgroup = _cgroup(sandbox)
    # Something outside the sandbox's control thaws it and starts a writer (podman exec -d).
    cgroup.thaw()
    log = sandbox.workspace / "rogue.log"
    subprocess.run(
        [
            podman_binary(),
            "exec",
            "-d",
            "-u",
            sandbox.config.user,
            sandbox.name,
            "sh",
            "-c",
            "while :; do echo x >> /workspace/rogue.log; done",
        ],
        env=podman_env(),
        check=True,
        capture_output=True,
    )
    with sandbox.quiesced():
        assert cgroup.frozen(), cgroup.describe()
        assert cgroup.tasks() == sandbox._baseline  # the rogue writer is gone
    _stopped_growing(sandbox, log)


@podman
def test_quiesced_on_a_sandbox_without_a_container_runs_nothing(make_sandbox):
    sandbox = make_sandbox()
    with sandbox.quiesced():
        assert sandbox.container_id is None
    sandbox.close()
    with sandbox.quiesced():
        assert sandbox.closed


@podman
def test_close_and_restart_thaw_first(make_sandbox, containers_with_label):
    sandbox = make_sandbox()
    sandbox.start()
    assert _cgroup(sandbox).frozen()
    sandbox.restart()
    _at_baseline(sandbox)
    assert sandbox.exec("echo back").stdout == "back\n"
    sandbox.close()
    assert containers_with_label(f"haversack.owner={sandbox.id}") == []


@podman
def test_cgroup_v2_interface_contains_the_same_attacks(sandbox):
    """The v2 code path (cgroup.freeze, cgroup.threads) on the container's own v2 cgroup.

    This host is cgroup v1 hybrid: the container also has a cgroup in the unified (v2)
    hierarchy, so the code for v2-only hosts runs here against the real kernel interface.
    """
    sandbox.start()
    init_pid = min(sandbox._baseline)
    v2 = ContainerCgroup.locate(init_pid, version=2)
    assert v2 is not None
    assert v2.version == 2
    _cgroup(sandbox).thaw()
    sandbox._state.cgroup = v2
    assert v2.tasks() == sandbox._baseline
    sandbox.exec(["sh", "-c", "cat > /tmp/z.py"], stdin=ZOMBIE_WRITER)
    started = sandbox.exec(f"for i in $(seq 20); do setsid sleep 300 & done; {START_ZOMBIE}")
    assert started.exit_code == 0
    assert v2.frozen()
    assert v2.tasks() == sandbox._baseline
    _stopped_growing(sandbox, sandbox.workspace / "grow.txt")


def test_every_workspace_operation_runs_inside_quiesced(tmp_path, monkeypatch):
    """The pack wires the workspace filesystem's guard to ``Sandbox.quiesced``: every public
    operation (queries, changes, snapshot, restore, close) enters it. No container is needed:
    nothing here runs a command."""
    import haversack

    calls: list[str] = []

    @contextlib.contextmanager
    def recording(self: Sandbox) -> Iterator[None]:
        calls.append("enter")
        yield
        calls.append("exit")

    monkeypatch.setattr(Sandbox, "quiesced", recording)
    prompt = haversack.compose(
        ns="t",
        key="guard",
        packs=["vfs", "podman"],
        config={"podman": {"workspace_root": str(tmp_path)}},
        strict=True,
    )
    with haversack.ToolExecutor(prompt.render(), session=haversack.Session()) as ex:
        fs = ex.resources.get(haversack.Filesystem)
        snapshot = None

        def take() -> None:
            nonlocal snapshot
            snapshot = fs.snapshot()

        operations: list[tuple[str, Any]] = [
            ("write", lambda: fs.write("a.txt", "one\n")),
            ("read", lambda: fs.read("a.txt")),
            ("read_text", lambda: fs.read_text("a.txt")),
            ("exists", lambda: fs.exists("a.txt")),
            ("stat", lambda: fs.stat("a.txt")),
            ("list", lambda: fs.list()),
            ("glob", lambda: fs.glob("*.txt")),
            ("grep", lambda: fs.grep("one")),
            ("edit", lambda: fs.edit("a.txt", "one", "two")),
            ("mkdir", lambda: fs.mkdir("d")),
            ("snapshot", take),
            ("delete", lambda: fs.delete("d", recursive=True)),
            ("restore", lambda: fs.restore(snapshot)),
            ("close", lambda: fs.close()),
        ]
        for name, operation in operations:
            before = len(calls)
            operation()
            assert calls[before : before + 1] == ["enter"], name
            assert calls[-1] == "exit", name


def test_cgroup_paths_follow_the_mount_table(tmp_path, monkeypatch):
    """v1 freezer and v2 mounts are read from mountinfo, including a mount whose root is a
    sub-cgroup (as inside a nested container); nothing assumes /sys/fs/cgroup."""
    from haversack_podman import _cgroup

    mountinfo = tmp_path / "mountinfo"
    mountinfo.write_text(
        "37 31 0:34 / /mnt/fz rw,relatime - cgroup cgroup rw,freezer\n"
        "40 31 0:38 /outer /mnt/v2 rw,relatime - cgroup2 cgroup2 rw\n"
        "41 31 0:39 / /mnt/cpu rw,relatime - cgroup cgroup rw,cpu,cpuacct\n"
    )
    monkeypatch.setattr(_cgroup, "_MOUNTINFO", mountinfo)
    v1, v2 = _cgroup._mounts()
    assert v1["freezer"] == ("/mnt/fz", "/")
    assert v1["cpuacct"] == ("/mnt/cpu", "/")
    assert v2 == ("/mnt/v2", "/outer")
    assert _cgroup._under(v1["freezer"], "/libpod_parent/libpod-x") == Path(
        "/mnt/fz/libpod_parent/libpod-x"
    )
    assert _cgroup._under(v2, "/outer/libpod-x") == Path("/mnt/v2/libpod-x")
    assert _cgroup._under(v2, "/elsewhere/libpod-x") is None
    assert _cgroup._under(v2, "/outer2/libpod-x") is None


def test_a_missing_process_has_no_cgroup():
    # pid 0 has no /proc entry: locate answers None rather than raising.
    assert ContainerCgroup.locate(0) is None


@podman
def test_a_sandbox_that_cannot_reach_its_baseline_is_restarted_and_says_so(sandbox, monkeypatch):
    assert sandbox.exec("echo kept > /tmp/marker; echo kept > /workspace/kept.txt").exit_code == 0
    first = sandbox.container_id
    real_sweep = ContainerCgroup.sweep
    failures = iter([True])

    def failing_once(self, keep, deadline):
        if next(failures, False):
            return False  # as if the baseline could not be reached within the bound
        return real_sweep(self, keep, deadline)

    monkeypatch.setattr(ContainerCgroup, "sweep", failing_once)
    result = sandbox.exec("sleep 300 & echo started")
    assert result.sandbox_restarted
    assert result.stdout == "started\n"
    assert sandbox.container_id == first  # restarted, not replaced
    _at_baseline(sandbox)
    after = sandbox.exec("cat /tmp/marker 2>&1; cat /workspace/kept.txt")
    assert "No such file" in after.stdout  # /tmp was emptied
    assert after.stdout.endswith("kept\n")  # the workspace was kept
    assert not after.sandbox_restarted


def test_the_restart_notice_reaches_the_model():
    from haversack_podman import CommandResult, ExecResult
    from haversack_podman._results import RESTART_NOTICE
    from haversack_podman._tools import _outcome

    done = ExecResult(0, "out\n", "", 0.1, sandbox_restarted=True)
    result = CommandResult.of("sleep 300 &", "/workspace", done)
    text = result.render()
    assert RESTART_NOTICE in text
    assert "/tmp is empty" in text
    assert "/workspace itself was kept" in text
    tool_result = _outcome(result, 30, "The command")
    assert tool_result.success
    assert "had to be restarted" in tool_result.message
    quiet = CommandResult.of("true", "/workspace", ExecResult(0, "", "", 0.1))
    assert RESTART_NOTICE not in quiet.render()
    assert "restarted" not in _outcome(quiet, 30, "The command").message

"""The resident executor: commands start through one long-lived process in the container.

It runs as container root holding only CAP_SETUID and CAP_SETGID; each command runs as the
configured user with none. The attacks come from a command: signal it, ptrace it, write to its
channel, replace its program, forge its frames. Each must fail and leave it serving. A
resident that dies (killed from the host, between or during commands) is replaced and the
command still gets a result; without one (off, no python3, uid 0) every command is an exec.
"""

from __future__ import annotations

import os
import signal
import struct
import threading
import time
from collections.abc import Iterator

import pytest

from haversack_podman import BUSYBOX_IMAGE, PodmanService, Sandbox, SandboxConfig
from haversack_podman._resident import Resident

podman = pytest.mark.podman

PARENT = "grep PPid /proc/$$/status | cut -f2"


def _resident(sandbox: Sandbox) -> Resident:
    resident = sandbox._resident
    assert resident is not None, sandbox.resident_off
    return resident


def _host_tid(sandbox: Sandbox) -> int:
    (tid,) = sandbox._resident_tids
    return tid


def _serving(sandbox: Sandbox, pid: int) -> None:
    """The same resident still starts commands: it is their parent."""
    result = sandbox.exec(PARENT)
    assert (result.exit_code, result.stdout) == (0, f"{pid}\n"), result
    assert _resident(sandbox).pid == pid


@podman
def test_commands_are_children_of_the_resident(sandbox):
    first = sandbox.exec(PARENT)
    assert first.exit_code == 0, first
    assert sandbox.resident_off is None
    pid = _resident(sandbox).pid
    assert first.stdout == f"{pid}\n"
    # The resident is container root; the command is the configured user with no capability
    # and no supplementary group.
    status = sandbox.exec(
        f"grep -E '^(Uid|Gid|Groups|Cap(Inh|Prm|Eff|Amb))' /proc/{pid}/status /proc/self/status"
    ).stdout
    assert f"/proc/{pid}/status:Uid:\t0\t0\t0\t0" in status, status
    mine = [line.split(":", 1)[1].strip() for line in status.splitlines() if "/self/" in line]
    assert mine == [
        "Uid:\t1000\t1000\t1000\t1000",
        "Gid:\t1000\t1000\t1000\t1000",
        "Groups:",
        "CapInh:\t0000000000000000",
        "CapPrm:\t0000000000000000",
        "CapEff:\t0000000000000000",
        "CapAmb:\t0000000000000000",
    ], status
    _serving(sandbox, pid)


@podman
def test_same_environment_as_an_engine_exec(make_sandbox):
    command = "env | grep -v -e '^PWD=' -e '^SHLVL=' | sort; pwd; umask; id"
    fast = make_sandbox(env={"A": "1"})
    slow = make_sandbox(env={"A": "1"}, resident=False)
    got = fast.exec(command, cwd="", env={"B": "2"})
    want = slow.exec(command, cwd="", env={"B": "2"})
    assert fast.resident_off is None
    assert slow.resident_off == "off in the config"
    assert got.stdout == want.stdout, (got, want)
    assert "A=1\nB=2\n" in got.stdout


@podman
def test_a_command_cannot_signal_it(sandbox):
    sandbox.exec("true")
    pid = _resident(sandbox).pid
    for sig in ("KILL", "TERM", "STOP", "INT"):
        attack = sandbox.exec(f"kill -{sig} {pid}; echo $?")
        assert attack.stdout.strip() != "0", attack
        assert "Operation not permitted" in attack.stderr, attack
    # kill -1 (every process the command user may signal) leaves it too.
    sandbox.exec("kill -9 -1")
    _serving(sandbox, pid)


@podman
def test_a_command_cannot_trace_it_or_touch_its_channel(sandbox):
    sandbox.exec("true")
    pid = _resident(sandbox).pid
    program = (
        "import ctypes, os, sys\n"
        "pid = int(sys.argv[1])\n"
        "libc = ctypes.CDLL(None, use_errno=True)\n"
        "print('attach', libc.ptrace(16, pid, 0, 0), ctypes.get_errno())\n"  # PTRACE_ATTACH
        "print('seize', libc.ptrace(0x4206, pid, 0, 0), ctypes.get_errno())\n"
        "for what in ('fd/0', 'fd/1', 'fd/2', 'mem', 'environ'):\n"
        "    try:\n"
        "        os.close(os.open(f'/proc/{pid}/{what}', os.O_WRONLY))\n"
        "        print(what, 'opened')\n"
        "    except OSError as exc:\n"
        "        print(what, exc.errno)\n"
        "try:\n"
        "    print('listed', os.listdir(f'/proc/{pid}/fd'))\n"
        "except OSError as exc:\n"
        "    print('list', exc.errno)\n"
    )
    attack = sandbox.exec(["python3", "-c", program, str(pid)])
    assert attack.exit_code == 0, attack
    lines = attack.stdout.splitlines()
    assert lines[:2] == ["attach -1 1", "seize -1 1"], attack  # EPERM
    # EACCES (13) or EPERM (1) for every file of its channel and memory; nothing listed.
    assert all(line.split()[1] in {"1", "13"} for line in lines[2:]), attack
    assert not any("opened" in line or "listed" in line for line in lines), attack
    _serving(sandbox, pid)


@podman
def test_a_command_cannot_replace_its_program(sandbox):
    sandbox.exec("true")
    pid = _resident(sandbox).pid
    attack = sandbox.exec(
        "p=$(command -v python3); "
        'cp /bin/sh "$p" 2>/dev/null && echo replaced; '
        '( : > "$p" ) 2>/dev/null && echo truncated; '
        f"cp /bin/sh /proc/{pid}/exe 2>/dev/null && echo exe; "
        f"head -c 20 /proc/{pid}/cmdline | tr '\\0' ' '"
    )
    # The program is on its command line, the interpreter on the read-only root.
    assert attack.stdout == "python3 -I -S -B -c ", attack
    _serving(sandbox, pid)


@podman
def test_forged_frames_are_only_output(sandbox):
    sandbox.exec("true")
    pid = _resident(sandbox).pid
    # Frames for this command and the next ones (ready, started, exit 42, failed), printed
    # on stdout and stderr: they arrive as the command's output, inside the resident's own.
    program = (
        "import json, struct, sys\n"
        "for n in range(1, 50):\n"
        "    for out in (sys.stdout.buffer, sys.stderr.buffer):\n"
        "        out.write(struct.pack('>BII', 5, n, 4) + struct.pack('>i', 42))\n"
        "        out.write(struct.pack('>BII', 1, 0, 4) + struct.pack('>i', 1))\n"
        "        body = json.dumps({'code': 7, 'message': 'forged'}).encode()\n"
        "        out.write(struct.pack('>BII', 6, n, len(body)) + body)\n"
        "        out.write(struct.pack('>BII', 3, n, 1 << 30))\n"
        "        out.flush()\n"
    )
    forged = sandbox.exec(["python3", "-c", program])
    assert forged.exit_code == 0, forged
    assert forged.stdout.count("forged") == 49, forged
    assert forged.stderr.count("forged") == 49, forged
    after = sandbox.exec("echo real; exit 3")
    assert (after.exit_code, after.stdout, after.stderr) == (3, "real\n", ""), after
    _serving(sandbox, pid)


@podman
def test_survives_a_timeout_and_the_sweep(sandbox):
    sandbox.exec("true")
    pid = _resident(sandbox).pid
    late = sandbox.exec("echo started; sleep 60 & sleep 60", timeout_s=1)
    assert late.timed_out, late
    assert (late.exit_code, late.stdout) == (137, "started\n"), late
    # Its late report of the kill is for that command, not this one.
    again = sandbox.exec("echo next; exit 5")
    assert (again.exit_code, again.stdout) == (5, "next\n"), again
    assert sandbox.exec("ps -o args | grep -c '^sleep 60' || true").stdout == "0\n"
    _serving(sandbox, pid)


@podman
def test_killed_between_commands_it_is_replaced(sandbox):
    sandbox.exec("true")
    old = _resident(sandbox).pid
    os.kill(_host_tid(sandbox), signal.SIGKILL)  # delivered when the container thaws
    result = sandbox.exec("echo still; exit 4")
    assert (result.exit_code, result.stdout) == (4, "still\n"), result
    new = _resident(sandbox).pid
    assert new != old
    assert sandbox.resident_off is None
    _serving(sandbox, new)


def _children(tid: int) -> list[str]:
    try:
        with open(f"/proc/{tid}/task/{tid}/children") as fh:
            return fh.read().split()
    except OSError:
        return []


@podman
def test_killed_during_a_command_the_call_still_ends(sandbox):
    sandbox.exec("true")
    old = _resident(sandbox).pid
    tid = _host_tid(sandbox)
    results = []
    runner = threading.Thread(
        target=lambda: results.append(sandbox.exec("sleep 30; echo never", timeout_s=60))
    )
    runner.start()
    deadline = time.monotonic() + 60  # a bound on the wait, not a timing assertion
    while not _children(tid) and time.monotonic() < deadline:  # the command runs
        time.sleep(0.01)
    assert _children(tid), "the command never started"
    os.kill(tid, signal.SIGKILL)
    runner.join()
    (result,) = results
    assert result.exit_code == -1, result
    assert "command runner ended during the command" in result.stderr, result
    assert "never" not in result.stdout
    # It was not run a second time by a new resident.
    assert sandbox.exec("ps -o args | grep -c '^sleep 30' || true").stdout == "0\n"
    follow = sandbox.exec("ps -o args | grep -c '^sleep 30' || true")
    assert follow.stdout == "0\n", follow  # the orphaned command was swept
    assert _resident(sandbox).pid != old


@podman
def test_a_half_sent_request_retires_the_resident(sandbox):
    """What a call cancelled in the middle of sending its request leaves: the program waits
    for the rest. The next command must not be read from its middle."""
    sandbox.exec("true")
    old = _resident(sandbox)
    old_tid = _host_tid(sandbox)
    assert old._stream.send(b"\0\0\0\x09\0\0", time.monotonic() + 30)
    old.in_step = False  # what Resident.run leaves when the send does not finish
    result = sandbox.exec("echo fresh; exit 6")
    assert (result.exit_code, result.stdout, result.stderr) == (6, "fresh\n", ""), result
    assert _resident(sandbox).pid != old.pid
    cgroup = sandbox._state.cgroup
    assert cgroup is not None
    assert old_tid not in cgroup.tasks()
    assert cgroup.tasks() == sandbox._baseline


@podman
def test_a_failed_calls_wipe_goes_through_it(sandbox):
    mark = sandbox.snapshot()
    sandbox.exec("echo x > /tmp/a; mkdir -p /tmp/d/e; chmod 000 /tmp/d; echo y > /dev/shm/b")
    resident = _resident(sandbox)
    sent = resident._next
    sandbox.restore(mark)  # what the executor does after a failed call
    assert resident._next == sent + 1  # one request, no engine exec
    assert sandbox._resident is resident  # no restart (a pid may coincide after one)
    left = sandbox.exec("ls -A /tmp /dev/shm")
    assert left.stdout == "/dev/shm:\n\n/tmp:\n", left
    assert not left.sandbox_restarted
    _serving(sandbox, resident.pid)  # and no restart replaced it


@podman
def test_a_dead_container_is_recovered_with_a_resident(sandbox):
    sandbox.exec("true")
    cgroup = sandbox._state.cgroup
    assert cgroup is not None
    cgroup.thaw()  # podman cannot kill a frozen container
    api = sandbox.backend.service.client.api
    api.post(f"/containers/{sandbox.container_id}/kill", params={"signal": "KILL"})
    api.post(f"/containers/{sandbox.container_id}/wait", params={"condition": "stopped"})
    result = sandbox.exec("echo back")
    assert (result.exit_code, result.stdout) == (0, "back\n"), result
    assert result.sandbox_restarted
    assert sandbox.resident_off is None
    _serving(sandbox, _resident(sandbox).pid)


@podman
def test_fallback_without_python3(make_sandbox):
    sandbox = make_sandbox(image=BUSYBOX_IMAGE)
    result = sandbox.exec("echo busy; exit 2")
    assert (result.exit_code, result.stdout) == (2, "busy\n"), result
    assert sandbox.resident_off is not None
    assert "resident executor did not start" in sandbox.resident_off
    assert sandbox.exec("echo again").stdout == "again\n"


@podman
def test_no_resident_and_no_capability_when_commands_are_root(make_sandbox):
    sandbox = make_sandbox(user="0:0")
    assert sandbox._spec().cap_add == ()
    result = sandbox.exec("id -u; grep CapEff /proc/self/status")
    assert result.stdout == "0\nCapEff:\t0000000000000000\n", result
    assert sandbox.resident_off == "commands run as uid 0"


@pytest.fixture
def engine_service(podman_service: PodmanService) -> Iterator[PodmanService]:
    """The same service, used in engine mode (no cgroup: ``kill -9 -1`` and pause)."""
    service = PodmanService(podman_service.base_url, None, None, 0.0)
    service.local = False
    yield service
    service.client.close()


@podman
def test_engine_mode_keeps_it_and_kills_the_rest(engine_service, tmp_path):
    with Sandbox(SandboxConfig(workspace_root=tmp_path), service=engine_service) as sandbox:
        first = sandbox.exec(PARENT)
        assert sandbox._state.cgroup is None
        pid = _resident(sandbox).pid
        assert first.stdout == f"{pid}\n", first
        late = sandbox.exec("sleep 60 & sleep 60", timeout_s=1)
        assert (late.timed_out, late.exit_code) == (True, 137), late
        assert sandbox._state.paused
        left = sandbox.exec("ps -o args | grep -c '^sleep 60' || true")
        assert left.stdout == "0\n", left
        assert not left.sandbox_restarted
        _serving(sandbox, pid)


def test_frames_split_anywhere_decode_the_same():
    from haversack_podman._output import CappedBuffer
    from haversack_podman._resident import _Decoder

    def frame(kind: int, ident: int, payload: bytes) -> bytes:
        return struct.pack(">BII", kind, ident, len(payload)) + payload

    stream = (
        frame(1, 0, struct.pack(">i", 9))
        + frame(3, 1, b"stale")  # an earlier command's
        + frame(2, 2, struct.pack(">i", 77))
        + frame(3, 2, b"out")
        + frame(4, 2, b"err")
        + frame(5, 2, struct.pack(">i", 3))
        + frame(3, 2, b"after the exit")
    )
    for size in (1, 2, 5, 9, len(stream)):
        decoder = _Decoder()
        out, err = CappedBuffer(100), CappedBuffer(100)
        decoder.begin(2, out, err)
        for i in range(0, len(stream), size):
            decoder.write(stream[i : i + size])
        assert (decoder.ready_pid, decoder.started, decoder.exit_code) == (9, True, 3)
        assert (out.text(), err.text()) == ("out", "err")
    oversized = _Decoder()
    oversized.write(struct.pack(">BII", 3, 0, 1 << 30))
    assert oversized.broken
    assert oversized.done()

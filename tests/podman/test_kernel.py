"""The Python kernel: state lives across ``python`` calls, and a failed call leaves it exactly as
it was before (every way a call can fail), a rolled-back call too; a lost kernel is told."""

from __future__ import annotations

import pytest

from haversack import Session, ToolExecutor, compose
from haversack_podman import PYTHON_IMAGE, ExecResult, Sandbox

pytestmark = pytest.mark.podman


def _ok(sandbox: Sandbox, code: str) -> ExecResult:
    result = sandbox.python(code)
    assert result.exit_code == 0, result
    return result


def _x(sandbox: Sandbox) -> str:
    return _ok(sandbox, "print(x)").stdout


def test_state_and_imports_persist(sandbox):
    _ok(sandbox, "x = 41")
    assert sandbox.kernel_off is None
    assert _ok(sandbox, "print(x + 1)").stdout == "42\n"
    _ok(sandbox, "import json as j\ndef f(v):\n    return j.dumps({'v': v})")
    assert _ok(sandbox, "print(f(x))").stdout == '{"v": 41}\n'
    # Like python3 -: __main__, the workspace first on the path, files written are there.
    _ok(sandbox, "open('mod.py', 'w').write('Y = 7\\n')")
    assert _ok(sandbox, "import mod, os\nprint(__name__, mod.Y, os.getcwd())").stdout == (
        "__main__ 7 /workspace\n"
    )
    assert (sandbox.workspace / "mod.py").read_text() == "Y = 7\n"


def test_pythonpath_from_the_configuration_is_on_the_path(make_sandbox):
    sandbox = make_sandbox(env={"PYTHONPATH": "/workspace/lib"})
    _ok(sandbox, "import os\nos.makedirs('lib')\nopen('lib/extra.py', 'w').write('Z = 3')")
    assert _ok(sandbox, "import extra\nprint(extra.Z)").stdout == "3\n"


FAILURES = {
    "exception": ("x = 0\nraise ValueError('boom')", 1, "ValueError: boom"),
    "sys.exit": ("import sys\nx = 0\nsys.exit(3)", 3, ""),
    "sys.exit text": ("import sys\nx = 0\nsys.exit('bye')", 1, "bye"),
    "sys.exit(256)": ("import sys\nx = 0\nsys.exit(256)", 1, ""),
    "os._exit(0)": ("import os\nx = 0\nos._exit(0)", 1, "ended the call's process"),
    "os._exit(5)": ("import os\nx = 0\nos._exit(5)", 5, "ended the call's process"),
    "timeout": ("x = 0\nwhile True:\n    pass", 137, ""),
    "memory bomb": (
        "x = 0\nb = []\nwhile True:\n    b.append(bytearray(16 << 20))",
        None,
        "",
    ),
    "killed by its own shell command": (
        "import os, subprocess\nx = 0\nsubprocess.run(['kill', '-9', str(os.getpid())])",
        137,
        "killed by signal 9",
    ),
    "thread left running": (
        "import threading, time\nx = 0\nthreading.Thread(target=time.sleep, args=(60,)).start()",
        1,
        "thread(s) running",
    ),
    "syntax error": ("x = 0\n)", 1, "SyntaxError"),
    "KeyboardInterrupt": ("x = 0\nraise KeyboardInterrupt", 1, "KeyboardInterrupt"),
}


@pytest.mark.parametrize("case", sorted(FAILURES))
def test_a_failed_call_leaves_the_state_as_before(make_sandbox, case):
    sandbox = make_sandbox(memory="256m")
    code, exit_code, stderr = FAILURES[case]
    _ok(sandbox, "x = 41\nimport json")
    failed = sandbox.python(code, timeout_s=3)
    assert failed.exit_code != 0, failed
    if exit_code is not None:
        assert failed.exit_code == exit_code, failed
    assert stderr in failed.stderr
    assert failed.timed_out == (case == "timeout")
    assert not failed.sandbox_restarted, failed
    assert _x(sandbox) == "41\n"
    assert _ok(sandbox, "print(json.dumps(x))").stdout == "41\n"


def test_a_rolled_back_call_is_undone_and_a_committed_one_stays(sandbox):
    _ok(sandbox, "x = 1")
    mark = sandbox.snapshot()  # the executor's transaction: the call succeeds in the kernel...
    _ok(sandbox, "x = 2")
    sandbox.restore(mark)  # ...and is rolled back afterwards (a later step of the call failed)
    assert _x(sandbox) == "1\n"
    sandbox.snapshot()
    _ok(sandbox, "x = 3")
    sandbox.snapshot()  # the next call began: the previous one committed
    assert _x(sandbox) == "3\n"
    # Two kernel calls in one transaction: the first cannot be undone alone, so a rollback
    # ends the kernel rather than leave a state that is not the one before the transaction.
    mark = sandbox.snapshot()
    _ok(sandbox, "x = 4")
    _ok(sandbox, "x = 5")
    sandbox.restore(mark)
    lost = sandbox.python("print(x)")
    assert lost.exit_code == 1
    assert "a new kernel was started" in lost.stderr
    assert "could not be undone" in lost.stderr


def test_killing_the_kernel_from_a_command_is_told_never_a_hang(sandbox):
    _ok(sandbox, "x = 41")
    killed = sandbox.exec("kill -9 -1; true")
    assert killed.exit_code == 0
    assert not killed.sandbox_restarted, killed
    result = sandbox.python("print(x)")
    assert result.exit_code == 1
    assert "a new kernel was started" in result.stderr, result
    assert "NameError" in result.stderr
    _ok(sandbox, "x = 2")
    assert _x(sandbox) == "2\n"


def test_restart_clears_the_state(sandbox):
    assert sandbox.python_restart() is False
    _ok(sandbox, "x = 41")
    assert sandbox.python_restart() is True
    result = sandbox.python("print(x)")
    assert result.exit_code == 1
    assert "NameError" in result.stderr
    assert "a new kernel" not in result.stderr  # asked for: not news


def test_output_is_capped_and_the_kernel_still_serves(make_sandbox):
    sandbox = make_sandbox(output_limit_bytes=1000)
    _ok(sandbox, "x = 41")
    loud = _ok(sandbox, "import sys\nsys.stdout.write('a' * 200_000)\nx = 42")
    assert loud.stdout_truncated
    assert loud.stdout.startswith("a" * 1000)
    assert "199000 more bytes not shown" in loud.stdout
    assert _x(sandbox) == "42\n"


def test_the_kernel_is_frozen_and_closed_to_commands(sandbox):
    """Between calls every process of the kernel is frozen; a command (same uid) cannot read
    its memory, environment or file descriptors; nothing the code started outlives the call."""
    pids = _ok(
        sandbox,
        "import os, subprocess\nsubprocess.Popen(['sleep', '100'])\n"
        "print(os.getpid(), os.getppid())",
    ).stdout.split()
    cgroup = sandbox._state.cgroup
    assert cgroup is not None
    assert cgroup.frozen()
    kernel = sandbox._kernel
    assert kernel is not None
    assert kernel.tids() <= cgroup.tasks()
    probe = sandbox.exec(
        "for p in " + " ".join(pids) + "; do cat /proc/$p/environ /proc/$p/mem; "
        "ls /proc/$p/fd; done 2>&1; ps -o args | grep -c '^sleep 100' || true"
    )
    assert probe.stdout.count("Permission denied") >= 6, probe
    assert probe.stdout.strip().splitlines()[-1] == "0", probe


def test_without_a_kernel_each_call_is_fresh_and_says_so(sandbox):
    sandbox.start()  # a (re)start lets a kernel be tried again
    sandbox.kernel_off = "turned off by the test"
    first = _ok(sandbox, "x = 41\nprint(x)")
    assert first.stdout == "41\n"
    assert "turned off by the test" in first.stderr
    assert "kept no state" in first.stderr
    assert sandbox.python("print(x)").exit_code == 1


def test_the_tools_keep_state_and_restart(podman_service, tmp_path):
    prompt = compose(
        ns="test",
        key="kernel",
        packs=["vfs", "podman"],
        config={"podman": {"image": PYTHON_IMAGE, "workspace_root": str(tmp_path)}},
        strict=True,
    )
    with ToolExecutor(prompt.render(), session=Session()) as ex:
        assert ex.execute("evaluate_python", {"code": "x = 41"}).success
        failed = ex.execute("evaluate_python", {"code": "x = 0\n1 / 0"})
        assert not failed.success
        assert "ZeroDivisionError" in failed.value.stderr
        again = ex.execute("evaluate_python", {"code": "print(x + 1)"})
        assert again.success, again.render()
        assert again.value.stdout == "42\n"
        restart = ex.execute("python_restart", {})
        assert restart.success
        assert "restarted" in restart.message
        gone = ex.execute("evaluate_python", {"code": "print(x)"})
        assert not gone.success
        assert "NameError" in gone.value.stderr


def test_on_a_users_directory_the_kernel_writes_back_like_a_command(podman_service, tmp_path):
    project = tmp_path / "project"
    project.mkdir()
    (project / "data.txt").write_text("41\n")
    prompt = compose(
        ns="test",
        key="kernel-user",
        packs=["vfs", "podman"],
        config={"podman": {"image": PYTHON_IMAGE, "workspace": str(project)}},
        strict=True,
    )
    with ToolExecutor(prompt.render(), session=Session()) as ex:
        loaded = ex.execute("evaluate_python", {"code": "x = int(open('data.txt').read())"})
        assert loaded.success, loaded.render()
        wrote = ex.execute("evaluate_python", {"code": "open('out.txt', 'w').write(str(x + 1))"})
        assert wrote.success, wrote.render()
        assert (project / "out.txt").read_text() == "42"
        (project / "data.txt").write_text("7\n")  # the user edits meanwhile: seen next call
        failed = ex.execute(
            "evaluate_python",
            {"code": "x = int(open('data.txt').read())\nopen('bad.txt', 'w').write('no')\n1 / 0"},
        )
        assert not failed.success
        assert not (project / "bad.txt").exists()
        kept = ex.execute("evaluate_python", {"code": "print(x, open('data.txt').read())"})
        assert kept.value.stdout == "41 7\n\n", kept.render()


@pytest.mark.parametrize(
    ("attack", "told"),
    [
        (
            "import os\nfor fd in range(3, 64):\n    try:\n        os.write(fd, b'\\xff' * 64)\n"
            "    except OSError:\n        pass",
            "it sent a frame of",
        ),
        ("import os, signal\nos.kill(os.getppid(), signal.SIGKILL)", "did not answer"),
        ("import os, signal\nos.kill(os.getppid(), signal.SIGSTOP)", "did not answer"),
    ],
    ids=["garbage on the channel", "supervisor killed", "supervisor stopped"],
)
def test_code_that_attacks_its_kernel_loses_its_state_within_the_timeout(sandbox, attack, told):
    _ok(sandbox, "x = 41")
    result = sandbox.python(attack + "\nx = 0", timeout_s=2)
    assert result.exit_code != 0, result
    assert told in result.stderr, result
    assert "state is lost" in result.stderr
    after = sandbox.python("print('x' in globals())")
    assert after.stdout == "False\n", after
    assert "a new kernel was started" in after.stderr

"""The Podman pack through ``compose`` and ``ToolExecutor``, against real Podman: the file
tools and the shell share one workspace, failed commands roll back, sessions are isolated."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

import haversack
from haversack import Filesystem, Session, ToolExecutor
from haversack.filesystem import DirectoryFilesystem
from haversack_podman import (
    BUSYBOX_IMAGE,
    OWNER_LABEL,
    PYTHON_IMAGE,
    CommandResult,
    Sandbox,
)

pytestmark = pytest.mark.podman

MakeExecutor = Callable[..., ToolExecutor]


@pytest.fixture
def make_executor(podman_service: Any, tmp_path: Path) -> Iterator[MakeExecutor]:
    """Executors over vfs + podman (+ planning when asked), workspaces under ``tmp_path``."""
    made: list[ToolExecutor] = []

    def make(packs: tuple[str, ...] = ("vfs", "podman"), **options: Any) -> ToolExecutor:
        options.setdefault("image", PYTHON_IMAGE)
        options.setdefault("workspace_root", str(tmp_path))
        prompt = haversack.compose(
            ns="test", key="sandbox", packs=list(packs), config={"podman": options}, strict=True
        )
        executor = ToolExecutor(prompt.render(), session=Session())
        made.append(executor)
        return executor

    yield make
    for executor in made:
        executor.close()


@pytest.fixture
def ex(make_executor: MakeExecutor) -> ToolExecutor:
    return make_executor()


def _sandbox(ex: ToolExecutor) -> Sandbox:
    return ex.resources.get(Sandbox)


def _ok(ex: ToolExecutor, tool: str, args: dict[str, Any]) -> Any:
    result = ex.execute(tool, args)
    assert result.success, result.render()
    return result


def test_filesystem_is_the_sandbox_workspace(ex):
    fs = ex.resources.get(Filesystem)
    assert isinstance(fs, DirectoryFilesystem)
    assert fs.root == _sandbox(ex).workspace.resolve()
    # The sandbox's own snapshot is a command counter (its restore empties /tmp and
    # /dev/shm after a failed call that ran a command); the workspace is the filesystem's.
    assert ex.resources.snapshottables() == (_sandbox(ex), fs)


def test_file_tools_and_shell_see_the_same_files(ex):
    content = "line one\r\nline two\n\ttabbed ✓"
    _ok(ex, "write_file", {"path": "/workspace/src/notes.txt", "content": content})
    shown = _ok(ex, "shell_execute", {"command": "cat src/notes.txt | od -c | head -n 2"})
    assert "\\r  \\n" in shown.value.stdout
    cat = _ok(ex, "shell_execute", {"command": "cat notes.txt", "cwd": "src"})
    assert cat.value.stdout == content
    _ok(ex, "shell_execute", {"command": "printf 'from shell\\n' > made.txt && mkdir -p d/e"})
    read = _ok(ex, "read_file", {"path": "made.txt"})
    assert read.value.content == "from shell\n"
    listing = _ok(ex, "ls", {"path": ""}).render()
    assert "made.txt" in listing
    assert "src" in listing
    assert "d" in listing
    # Files the host created are the container user's: the shell can change them.
    _ok(ex, "shell_execute", {"command": "echo more >> src/notes.txt && rm made.txt"})
    assert ex.execute("read_file", {"path": "made.txt"}).success is False
    grep = _ok(ex, "grep", {"pattern": "✓more$"})
    assert "src/notes.txt" in grep.render()


def test_failed_command_is_rolled_back_but_reported(ex):
    _ok(ex, "write_file", {"path": "keep.txt", "content": "original\n"})
    result = ex.execute(
        "shell_execute",
        {
            "command": "echo half > build.log; echo changed > keep.txt; "
            "echo out; echo err >&2; exit 3"
        },
    )
    assert not result.success
    value = result.value
    assert isinstance(value, CommandResult)
    assert (value.exit_code, value.stdout, value.stderr, value.timed_out) == (
        3,
        "out\n",
        "err\n",
        False,
    )
    text = result.render()
    assert "exit code 3" in text
    assert "out" in text
    assert "err" in text
    assert "rolled back" in result.message
    ws = _sandbox(ex).workspace
    assert not (ws / "build.log").exists()
    assert (ws / "keep.txt").read_text() == "original\n"
    assert "build.log" not in _ok(ex, "ls", {}).render()


def test_timeout_kills_processes_and_rolls_back(ex):
    result = ex.execute(
        "shell_execute",
        {"command": "echo x > partial.txt; sleep 100 & sleep 100", "timeout": 1},
    )
    assert not result.success
    assert result.value.timed_out
    assert result.value.exit_code == 137
    assert "timed out" in result.message
    assert not (_sandbox(ex).workspace / "partial.txt").exists()
    ps = _ok(ex, "shell_execute", {"command": "ps -o args | grep -c '^sleep 100' || true"})
    assert ps.value.stdout.strip() == "0"


def test_background_processes_do_not_outlive_their_call(ex):
    _ok(ex, "shell_execute", {"command": "(sleep 100 &) ; nohup sleep 100 >/dev/null 2>&1 &"})
    ps = _ok(ex, "shell_execute", {"command": "ps -o args | grep -c '^sleep 100' || true"})
    assert ps.value.stdout.strip() == "0"


def test_isolation(ex):
    ident = _ok(ex, "shell_execute", {"command": "id -u; id -g; pwd"})
    assert ident.value.stdout.split() == ["1000", "1000", "/workspace"]
    net = _ok(
        ex,
        "evaluate_python",
        {
            "code": "import socket\ns = socket.socket(); s.settimeout(2)\n"
            "try:\n    s.connect(('1.1.1.1', 53)); print('connected')\n"
            "except OSError:\n    print('no network')\n"
        },
    )
    assert net.value.stdout == "no network\n"
    for target in ("/etc/x", "/usr/x", "/x"):
        denied = ex.execute("shell_execute", {"command": f"touch {target}"})
        assert not denied.success
        assert "Read-only file system" in denied.value.stderr
    _ok(ex, "shell_execute", {"command": "echo t > /tmp/t && cat /tmp/t"})


def test_limits_from_the_configuration(make_executor):
    ex = make_executor(memory="64m", pids_limit=32, output_limit_bytes=1024)
    hog = ex.execute("evaluate_python", {"code": "x = bytearray(256 * 1024 * 1024)\nprint(1)"})
    assert not hog.success
    assert hog.value.exit_code != 0
    many = ex.execute("shell_execute", {"command": "for i in $(seq 60); do sleep 5 & done; wait"})
    assert not many.success or "fork" in many.value.stderr.lower()
    loud = _ok(ex, "shell_execute", {"command": "yes | head -c 5000"})
    assert loud.value.stdout_truncated
    assert "[... output truncated: 3976 more bytes not shown ...]" in loud.value.stdout
    text = ex.rendered_prompt.text
    assert "64 MiB of memory" in text
    assert "32 processes" in text


def test_two_sessions_have_separate_containers_and_workspaces(make_executor):
    one, two = make_executor(), make_executor()
    _ok(one, "shell_execute", {"command": "echo one > only-one.txt"})
    _ok(two, "shell_execute", {"command": "true"})
    assert _sandbox(one).container_id != _sandbox(two).container_id
    assert _sandbox(one).workspace != _sandbox(two).workspace
    missing = two.execute("shell_execute", {"command": "cat only-one.txt"})
    assert not missing.success
    assert "No such file" in missing.value.stderr
    assert not two.resources.get(Filesystem).exists("only-one.txt")


def test_closing_removes_container_workspace_and_snapshot_storage(
    make_executor, containers_with_label
):
    ex = make_executor()
    _ok(ex, "shell_execute", {"command": "echo x > a.txt"})
    sandbox = _sandbox(ex)
    fs = ex.resources.get(Filesystem)
    assert isinstance(fs, DirectoryFilesystem)
    label = f"{OWNER_LABEL}={sandbox.id}"
    assert len(containers_with_label(label)) == 1
    workspace, storage = sandbox.workspace, fs.snapshot_storage
    assert workspace.exists()
    assert storage.exists()
    ex.close()
    assert sandbox.closed
    assert containers_with_label(label) == []
    assert not workspace.exists()
    assert not storage.exists()


def test_file_tools_do_not_start_the_container(ex):
    _ok(ex, "write_file", {"path": "a.txt", "content": "x"})
    _ok(ex, "read_file", {"path": "a.txt"})
    assert _sandbox(ex).container_id is None


def test_read_before_write_policy_on_the_host_workspace(ex):
    _ok(ex, "shell_execute", {"command": "printf 'a = 1\\n' > conf.py"})
    denied = ex.execute("edit_file", {"path": "conf.py", "old_string": "1", "new_string": "2"})
    assert not denied.success
    assert "read_file" in denied.message
    _ok(ex, "read_file", {"path": "/workspace/conf.py"})
    _ok(ex, "edit_file", {"path": "./conf.py", "old_string": "1", "new_string": "2"})
    assert _ok(ex, "shell_execute", {"command": "cat conf.py"}).value.stdout == "a = 2\n"


def test_planted_symlink_is_refused_by_file_tools(ex, tmp_path):
    secret = tmp_path / "host-secret.txt"
    secret.write_text("secret")
    # The container cannot see the host path, but the link resolves on the host.
    _ok(ex, "shell_execute", {"command": f"ln -s {secret} leak.txt && ln -s /etc etcdir"})
    for tool, args in (
        ("read_file", {"path": "leak.txt"}),
        ("write_file", {"path": "etcdir/evil.txt", "content": "x"}),
        ("edit_file", {"path": "leak.txt", "old_string": "secret", "new_string": "x"}),
        ("ls", {"path": "etcdir"}),
    ):
        result = ex.execute(tool, args)
        assert not result.success, (tool, result.render())
        assert "secret" not in result.render().replace("host-secret", "")
    assert secret.read_text() == "secret"
    assert not Path("/etc/evil.txt").exists()
    # Listed for what it is, never followed.
    assert "leak.txt@ (symbolic link, not followed)" in _ok(ex, "ls", {}).render()


@pytest.mark.parametrize(
    ("tool", "args", "needle"),
    [
        ("shell_execute", {"command": "   "}, "command is empty"),
        ("shell_execute", {"command": "echo\x00x"}, "NUL"),
        ("shell_execute", {"command": "ls", "cwd": "../.."}, ".."),
        ("shell_execute", {"command": "ls", "cwd": "no/such/dir"}, "not an existing directory"),
        ("shell_execute", {"command": "ls", "env": {"1BAD": "x"}}, "not a valid variable name"),
        ("shell_execute", {"command": "ls", "env": {"A=B": "x"}}, "not a valid variable name"),
        ("shell_execute", {"command": "ls", "timeout": 0}, "positive"),
        ("shell_execute", {"command": "ls", "timeout": -5}, "positive"),
        ("shell_execute", {"command": "ls", "timeout": 10_000}, "maximum"),
        ("shell_execute", {"command": 12}, "command"),
        ("shell_execute", {}, "command"),
        ("shell_execute", {"command": "ls", "bogus": 1}, "bogus"),
        ("evaluate_python", {"code": ""}, "code is empty"),
        ("evaluate_python", {"code": "print(1)", "timeout": "soon"}, "timeout"),
    ],
)
def test_hostile_arguments_give_clear_errors(ex, tool, args, needle):
    result = ex.execute(tool, args)
    assert not result.success
    assert needle in result.message, result.message
    assert _sandbox(ex).container_id is None or tool == "shell_execute"


def test_hostile_commands_never_crash(ex):
    for command in (
        "printf '\\377\\376 binary \\000 out'",
        "head -c 300000 /dev/urandom",
        "exec 1>&-; echo gone >&2; exit 0",
        "kill -9 $$",
        "cat",  # stdin closed at once: EOF
    ):
        result = ex.execute("shell_execute", {"command": command, "timeout": 10})
        assert isinstance(result.value, CommandResult), command
        assert "exit code" in result.render()
    after = _ok(ex, "shell_execute", {"command": "echo alive"})
    assert after.value.stdout == "alive\n"


def test_evaluate_python(ex):
    _ok(ex, "write_file", {"path": "mod.py", "content": "VALUE = 'it''s \"quoted\"'\n"})
    done = _ok(
        ex,
        "evaluate_python",
        {"code": "import mod, os\nprint(mod.VALUE, os.getcwd())\nprint('$HOME `x`')"},
    )
    assert done.value.stdout == 'its "quoted" /workspace\n$HOME `x`\n'
    failed = ex.execute(
        "evaluate_python",
        {"code": "open('written.txt', 'w').write('x')\nraise ValueError('boom')"},
    )
    assert not failed.success
    assert "ValueError: boom" in failed.value.stderr
    assert not (_sandbox(ex).workspace / "written.txt").exists()
    assert not (_sandbox(ex).workspace / "__pycache__").exists()


def test_stdin_env_and_cwd(ex):
    _ok(ex, "shell_execute", {"command": "mkdir -p sub"})
    done = _ok(
        ex,
        "shell_execute",
        {
            "command": 'cat; echo "$GREETING"; pwd',
            "cwd": "/workspace/sub",
            "stdin": "in\n",
            "env": {"GREETING": "hello"},
        },
    )
    assert done.value.stdout == "in\nhello\n/workspace/sub\n"


def test_busybox_image_has_no_python(make_executor):
    ex = make_executor(image=BUSYBOX_IMAGE)
    result = ex.execute("evaluate_python", {"code": "print(1)"})
    assert not result.success
    assert "haversack-sandbox-python" in result.message


def test_missing_image_is_one_clear_error(make_executor):
    ex = make_executor(image="localhost/haversack-no-such-image:latest")
    result = ex.execute("shell_execute", {"command": "true"})
    assert not result.success
    assert "build-images" in result.message or "not" in result.message.lower()
    # The file tools still work on the workspace.
    _ok(ex, "write_file", {"path": "a.txt", "content": "x"})


def test_workspace_is_owned_by_container_user(ex):
    _ok(ex, "write_file", {"path": "d/a.txt", "content": "x"})
    if os.geteuid() == 0:
        st = (_sandbox(ex).workspace / "d" / "a.txt").stat()
        assert (st.st_uid, st.st_gid) == (1000, 1000)
    _ok(ex, "shell_execute", {"command": "echo y >> d/a.txt && touch d/b.txt"})

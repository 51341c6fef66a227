"""Commands: stdin, env, cwd, output cap and decoding, exit codes."""

from __future__ import annotations

import pytest

from haversack.errors import PathNotFoundError, ToolValidationError

pytestmark = pytest.mark.podman


def test_exit_code_and_separate_streams(sandbox):
    result = sandbox.exec("echo out; echo err >&2; exit 3")
    assert (result.exit_code, result.stdout, result.stderr) == (3, "out\n", "err\n")
    assert not result.timed_out
    assert result.duration_s > 0


def test_argv_is_not_shell_interpreted(sandbox):
    result = sandbox.exec(["echo", "$HOME", "a;b"])
    assert result.stdout == "$HOME a;b\n"


def test_stdin_is_delivered_and_closed(sandbox):
    text = "héllo\nwörld ✓\n"
    result = sandbox.exec(["cat"], stdin=text)
    assert result.stdout == text
    big = "x" * (1 << 20)
    counted = sandbox.exec(["wc", "-c"], stdin=big)
    assert counted.stdout.strip() == str(1 << 20)


def test_empty_stdin_gives_eof(sandbox):
    result = sandbox.exec(["cat"], stdin="", timeout_s=10)
    assert (result.exit_code, result.stdout, result.timed_out) == (0, "", False)


def test_env_and_cwd(sandbox):
    (sandbox.workspace / "sub").mkdir()
    result = sandbox.exec('echo "$GREETING"; pwd', cwd="sub", env={"GREETING": "hi there"})
    assert result.stdout == "hi there\n/workspace/sub\n"
    with pytest.raises(PathNotFoundError):
        sandbox.exec("pwd", cwd="missing")
    with pytest.raises(ToolValidationError):
        sandbox.exec("pwd", cwd="../etc")
    with pytest.raises(ToolValidationError):
        sandbox.exec([])


def test_output_is_capped_with_a_visible_marker(make_sandbox):
    sandbox = make_sandbox(output_limit_bytes=1000)
    result = sandbox.exec("head -c 5000 /dev/zero | tr '\\0' a; echo short >&2")
    assert result.stdout_truncated
    assert not result.stderr_truncated
    assert result.stdout.startswith("a" * 1000)
    assert "truncated: 4000 more bytes" in result.stdout
    assert result.stderr == "short\n"


def test_output_cut_never_splits_a_character(make_sandbox):
    sandbox = make_sandbox(output_limit_bytes=1001)
    result = sandbox.exec(["python3", "-c", "print('é' * 3000, end='')"])
    kept = result.stdout.split("\n[...", 1)[0]
    assert kept == "é" * 500
    assert "\ufffd" not in result.stdout


def test_invalid_utf8_is_replaced(sandbox):
    result = sandbox.exec(["python3", "-c", "import sys; sys.stdout.buffer.write(b'a\\xffb')"])
    assert result.stdout == "a\ufffdb"


def test_python_image_has_working_stdlib(sandbox):
    result = sandbox.exec(["python3", "-c", "import ssl, sqlite3, json, ctypes; print('ok')"])
    assert result.stdout == "ok\n", result.stderr


def test_config_env_applies_and_call_env_overrides(make_sandbox):
    sandbox = make_sandbox(env={"A": "config", "B": "config"})
    result = sandbox.exec('echo "$A $B"', env={"B": "call"})
    assert result.stdout == "config call\n"

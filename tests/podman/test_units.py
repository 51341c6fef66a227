"""Pieces that need no running Podman: config validation, containers.conf, errors, output."""

from __future__ import annotations

import resource

import pytest

from haversack.errors import HaversackError, PackConfigError
from haversack_podman import (
    SandboxConfig,
    SandboxError,
    SandboxUnavailableError,
    containers_conf_text,
    podman_binary,
    podman_env,
)
from haversack_podman._output import CappedBuffer


def test_containers_conf_limits_are_within_hard_limits():
    text = containers_conf_text()
    hard_nofile = resource.getrlimit(resource.RLIMIT_NOFILE)[1]
    nofile = min(4096, hard_nofile) if hard_nofile != resource.RLIM_INFINITY else 4096
    assert f'"nofile={nofile}:{nofile}"' in text
    for line in (
        'runtime = "runc"',
        'pull_policy = "never"',
        "exit_command_delay = 5",
        'network_backend = "netavark"',
    ):
        assert line in text


def test_podman_env_points_at_written_conf():
    env = podman_env({"PATH": "/usr/bin"})
    assert env["PATH"] == "/usr/bin"
    with open(env["CONTAINERS_CONF"], encoding="utf-8") as fh:
        assert fh.read() == containers_conf_text()


def test_missing_binary_error_says_how_to_install(monkeypatch, tmp_path):
    monkeypatch.setenv("PATH", str(tmp_path))
    with pytest.raises(SandboxUnavailableError, match="apt-get install") as info:
        podman_binary()
    assert isinstance(info.value, SandboxError)
    assert isinstance(info.value, HaversackError)
    assert "\n" not in str(info.value)


@pytest.mark.parametrize(
    "overrides",
    [
        {"memory": "lots"},
        {"cpus": 0},
        {"pids_limit": 1},
        {"user": "agent"},
        {"network": "wifi"},
        {"mounts": {"relative/path": "x"}},
        {"mounts": {"/tmp": "../x"}},
        {"max_timeout_s": 1.0, "default_timeout_s": 5.0},
        {"env": {"A=B": "x"}},
    ],
)
def test_config_rejects_bad_values(overrides):
    with pytest.raises(PackConfigError):
        SandboxConfig(**overrides)


def test_config_defaults_and_clamping():
    config = SandboxConfig(default_timeout_s=10, max_timeout_s=20)
    assert config.network == "none"
    assert config.user == "1000:1000"
    assert config.read_only
    assert (config.uid, config.gid) == (1000, 1000)
    assert config.memory_bytes == 512 * 1024 * 1024
    assert config.clamp_timeout(None) == 10
    assert config.clamp_timeout(100) == 20
    assert config.clamp_timeout(float("nan")) == 10
    with pytest.raises(TypeError):
        config.env["X"] = "y"  # type: ignore[index]


def test_capped_buffer_counts_dropped_bytes():
    buf = CappedBuffer(4)
    buf.write(b"ab")
    buf.write(b"cdef")
    buf.write(b"gh")
    assert buf.truncated
    assert buf.dropped == 4
    assert buf.text().startswith("abcd\n[... output truncated: 4 more bytes")
    whole = CappedBuffer(10)
    whole.write(b"ok")
    assert whole.text() == "ok"
    assert not whole.truncated

"""The pack's own ``containers.conf`` and the environment every podman process is given.

Why each setting (tested on Debian 12, podman 4.3.1, cgroup v1 hybrid, root without
CAP_SYS_RESOURCE; see docs/packs/podman.md):

* ``default_ulimits`` at or below the caller's hard limits: podman's root defaults
  (nofile 1048576, nproc 4194304) make runc's setrlimit fail with EPERM.
* ``runtime = "runc"``: crun 1.8.1 refuses cgroup v1 "hybrid" hosts.
* ``pull_policy = "never"``: there is no registry; a missing image fails in ~35 ms.
* ``exit_command_delay = 5``: otherwise every REST exec leaves a conmon alive for 300 s.
* ``network_backend = "netavark"``: no CNI warning on every call.

``CONTAINERS_CONF`` replaces the system files, so nothing under /etc is read or edited.
"""

from __future__ import annotations

import os
import resource
from collections.abc import Mapping
from pathlib import Path
from typing import Final

from ._runtime_dir import runtime_dir

__all__ = ["containers_conf_text", "podman_env", "write_containers_conf"]

_SOFT_CAP: Final = 4096


def _limit(kind: int) -> int:
    hard = resource.getrlimit(kind)[1]
    return _SOFT_CAP if hard == resource.RLIM_INFINITY else min(_SOFT_CAP, hard)


def containers_conf_text() -> str:
    """The containers.conf content for this process's hard limits."""
    nofile = _limit(resource.RLIMIT_NOFILE)
    nproc = _limit(resource.RLIMIT_NPROC)
    return f"""\
# Written by haversack_podman; podman reads it through CONTAINERS_CONF.
[containers]
# podman's root defaults exceed the hard limits here (setrlimit EPERM without CAP_SYS_RESOURCE).
# Any --ulimit flag replaces this whole list: pass nofile AND nproc again.
default_ulimits = ["nofile={nofile}:{nofile}", "nproc={nproc}:{nproc}"]
netns = "none"
pids_limit = 2048
log_driver = "k8s-file"

[network]
network_backend = "netavark"

[engine]
# crun refuses cgroup v1 hybrid hosts
runtime = "runc"
cgroup_manager = "cgroupfs"
events_logger = "file"
# images are built locally; never contact a registry
pull_policy = "never"
stop_timeout = 2
# REST API exec sessions otherwise keep a conmon alive for 300 s each
exit_command_delay = 5
"""


def write_containers_conf(directory: Path | None = None) -> Path:
    """Write containers.conf into ``directory`` (default: the runtime dir) when it changed.

    The write goes through a temporary file and a rename so concurrent processes never see
    a half-written file.
    """
    target = (directory or runtime_dir()) / "containers.conf"
    text = containers_conf_text()
    try:
        if target.read_text(encoding="utf-8") == text:
            return target
    except OSError:
        pass
    tmp = target.with_name(f".containers.conf.{os.getpid()}.tmp")
    tmp.write_text(text, encoding="utf-8")
    tmp.replace(target)
    return target


def podman_env(base: Mapping[str, str] | None = None) -> dict[str, str]:
    """The environment for a podman subprocess: ``base`` (default ``os.environ``) plus
    ``CONTAINERS_CONF`` pointing at the pack's file."""
    env = dict(os.environ if base is None else base)
    env["CONTAINERS_CONF"] = str(write_containers_conf())
    return env

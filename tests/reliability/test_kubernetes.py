"""The Kubernetes backend under attack, through the Kubernetes API stand-in in front of real
Podman (``tests/podman/_kube_standin.py``; what it does not simulate is listed there and in
docs/packs/podman.md).

Process containment without a freezer: commands that try to outlive their call (a zombie
leader with a running writer thread, ``setsid`` sessions, double forks, ``nohup`` jobs) must
be gone after it, seen from inside the Pod, and what they write must stop growing. The API as
a hostile peer: a Pod deleted from outside round after round, an API that accepts connections
and never answers, an image the cluster cannot run, limits an admission rewrote: each ends in
a result or a precise error within a bound, never a hang, and the next command works.
"""

from __future__ import annotations

import socket
import time
from pathlib import Path
from typing import Any

import pytest

from haversack_podman import (
    KubernetesBackend,
    KubernetesConfig,
    Sandbox,
    SandboxConfig,
    SandboxError,
    SandboxUnavailableError,
)
from haversack_podman._kube import KubeApi
from haversack_podman._service import engine_deadline

from ..podman._kube_standin import KubeStandIn, standin_kubeconfig  # noqa: TID252
from ..podman.test_kubernetes import ZOMBIE_WRITER  # noqa: TID252
from ._harness import Figure, budget

pytestmark = pytest.mark.podman

#: Live processes other than PID 1, its ``sleep`` and the probe itself (a zombie leader
#: whose thread runs counts: its task directory shows the live thread).
_LEFT = (
    "n=0; for d in /proc/[0-9]*; do p=${d#/proc/}; [ $p = 1 ] || [ $p = $$ ] && continue; "
    "c=$(cat $d/cmdline 2>/dev/null | tr '\\0' ' '); case $c in 'sleep 2147483647 ') continue;; "
    "esac; for t in $d/task/*; do read -r l < $t/stat 2>/dev/null || continue; "
    'set -- ${l##*) }; case $1 in Z|X) ;; *) n=$((n+1)); echo "$p: $c" >&2; break;; esac; '
    "done; done; echo $n"
)

_FAMILIES = {
    "zombie leader": (
        "python3 /tmp/z.py /workspace/grow.txt > /dev/null 2>&1 & p=$!; "
        "until [ -s /workspace/grow.txt ] && grep -q ') Z' /proc/$p/stat; do sleep 0.01; done"
    ),
    "setsid flood": "for i in $(seq 30); do setsid sh -c 'echo x >> /workspace/grow.txt; "
    "sleep 300' & done; sleep 0.2",
    "double fork": "sh -c '(while :; do echo x >> /workspace/grow.txt; sleep 0.01; done &) &'",
    "nohup job": "nohup sh -c 'while :; do echo x >> /workspace/grow.txt; sleep 0.01; done' "
    "> /dev/null 2>&1 &",
    "timed out": "while :; do echo x >> /workspace/grow.txt; sleep 0.01; done",
}


def _standin(service: Any, tmp_path: Path) -> tuple[KubeStandIn, KubernetesConfig]:
    standin = KubeStandIn(service)
    standin.start()
    path = tmp_path / "kubeconfig"
    path.write_text(standin_kubeconfig(standin.url))
    return standin, KubernetesConfig(kubeconfig=path)


def _check_quiet(fig: Figure, sandbox: Sandbox, label: str) -> None:
    probe = sandbox.exec(_LEFT)
    fig.check(probe.stdout.strip() == "0", f"{label}: left running: {probe.stderr.strip()}")
    size = "wc -c < /workspace/grow.txt 2>/dev/null || echo 0"
    first = sandbox.exec(f"sleep 0.3; {size}").stdout
    second = sandbox.exec(f"sleep 0.3; {size}").stdout
    fig.check(first == second, f"{label}: a file kept growing ({first.strip()} -> {second})")
    fig.check(sandbox.exec("echo ok").stdout == "ok\n", f"{label}: the next command failed")


def test_no_process_outlives_its_command_on_kubernetes(podman_service, tmp_path, figure):
    fig = figure("process-containment", "Kubernetes backend (stand-in): no freezer, kill -9 -1")
    standin, kube = _standin(podman_service, tmp_path)
    try:
        for _round in range(budget(1, 3)):
            for label, command in _FAMILIES.items():
                fig.case()
                sandbox = Sandbox(SandboxConfig(), backend=KubernetesBackend(kube))
                try:
                    sandbox.exec("cat > /tmp/z.py", stdin=ZOMBIE_WRITER)
                    result = sandbox.exec(command, timeout_s=3)
                    if label == "timed out":
                        fig.check(result.timed_out, f"{label}: not reported as timed out")
                    _check_quiet(fig, sandbox, label)
                finally:
                    sandbox.close()
        fig.check(standin.pod_names() == [], f"Pods left: {standin.pod_names()}")
    finally:
        standin.stop()
    fig.assert_clean()


def test_kubernetes_api_failures_are_results(podman_service, tmp_path, figure):
    fig = figure("engine-failures", "Kubernetes API (stand-in): deleted, silent, refusing")
    standin, kube = _standin(podman_service, tmp_path)
    try:
        # The Pod deleted from outside, round after round: recreated, the model told.
        sandbox = Sandbox(SandboxConfig(), backend=KubernetesBackend(kube))
        try:
            sandbox.exec("true")
            for n in range(budget(2, 6)):
                fig.case()
                KubeApi(kube).delete(sandbox.container_id or "")
                again = sandbox.exec("echo back")
                fig.check(again.stdout == "back\n", f"deleted #{n}: {again}")
                fig.check(bool(again.restart_reason), f"deleted #{n}: the model was not told")
        finally:
            sandbox.close()

        # An image the cluster cannot run, then limits an admission rewrote: precise errors,
        # nothing left behind.
        for label, options, admit in (
            ("unrunnable image", {"image": "localhost/haversack-no-such-image:0"}, None),
            ("rewritten limits", {}, _halve_memory),
        ):
            fig.case()
            standin.admit = admit
            sandbox = Sandbox(SandboxConfig(**options), backend=KubernetesBackend(kube))
            try:
                with pytest.raises(SandboxError) as refused:
                    sandbox.exec("true")
                fig.check(bool(str(refused.value)), f"{label}: an error without a message")
            finally:
                sandbox.close()
            fig.check(standin.pod_names() == [], f"{label}: Pods left: {standin.pod_names()}")
        standin.admit = None
    finally:
        standin.stop()

    # An API that accepts connections and never answers: bounded by the call's deadline.
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen(16)
        path = tmp_path / "silent-kubeconfig"
        path.write_text(standin_kubeconfig(f"http://127.0.0.1:{listener.getsockname()[1]}"))
        silent = KubernetesConfig(kubeconfig=path)
        for n in range(budget(1, 3)):
            fig.case()
            sandbox = Sandbox(SandboxConfig(), backend=KubernetesBackend(silent))
            started = time.monotonic()
            try:
                with engine_deadline(2.0), pytest.raises(SandboxUnavailableError):
                    sandbox.exec("true")
            finally:
                sandbox.close()
            fig.note(f"silent API #{n} s", round(time.monotonic() - started, 2))
    fig.assert_clean()


def _halve_memory(manifest: dict[str, Any]) -> None:
    limits = manifest["spec"]["containers"][0]["resources"]["limits"]
    limits["memory"] = str(int(limits["memory"]) // 2)

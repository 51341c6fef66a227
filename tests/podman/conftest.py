"""Fixtures for the Podman pack: a fresh sandbox per test (``podman_service`` is shared).

Podman tests run against real Podman. They are skipped only when HAVERSACK_SKIP_PODMAN=1;
otherwise a missing or broken Podman makes them fail with the pack's own error message.
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from haversack_podman import (
    PYTHON_IMAGE,
    PodmanService,
    Sandbox,
    SandboxConfig,
    podman_binary,
    podman_env,
)

from ._kube_standin import KubeStandIn, standin_kubeconfig

if TYPE_CHECKING:
    from ._remote_engine import RemoteEngine


@pytest.fixture
def make_sandbox(podman_service: PodmanService, tmp_path) -> Iterator[Callable[..., Sandbox]]:
    """Factory for sandboxes with workspaces under ``tmp_path``, all closed at teardown."""
    created: list[Sandbox] = []

    def make(**overrides: object) -> Sandbox:
        overrides.setdefault("image", PYTHON_IMAGE)
        overrides.setdefault("workspace_root", tmp_path)
        sandbox = Sandbox(SandboxConfig(**overrides))  # type: ignore[arg-type]
        created.append(sandbox)
        return sandbox

    yield make
    for sandbox in created:
        sandbox.close()


@pytest.fixture
def sandbox(make_sandbox: Callable[..., Sandbox]) -> Sandbox:
    """A default (python image) sandbox for one test."""
    return make_sandbox()


def _containers_with_label(label: str) -> list[str]:
    out = subprocess.run(
        [podman_binary(), "ps", "-aq", "--filter", f"label={label}"],
        capture_output=True,
        text=True,
        env=podman_env(),
        check=True,
    ).stdout
    return out.split()


@pytest.fixture
def containers_with_label(podman_service: PodmanService) -> Callable[[str], list[str]]:
    """Ids of containers (any state) carrying ``label`` (``key=value``), via the CLI."""
    return _containers_with_label


@pytest.fixture(scope="session")
def remote_engine(podman_service: PodmanService) -> Iterator[RemoteEngine]:
    """This worker's "remote" Podman engine (``_remote_engine``): its own network and mount
    namespaces and storage, reached over TCP from the client namespace only.

    Skipped where it cannot run (not root, no ``ip``/``nsenter``/``unshare``), except under
    CI, where that fails: the remote backend must be tested there.
    """
    from haversack_podman._containers_conf import containers_conf_text

    from ._remote_engine import RemoteEngine, missing_tools

    why = missing_tools()
    if why is not None:
        if os.environ.get("CI", "").strip().lower() in ("1", "true", "yes"):
            pytest.fail(f"The remote Podman engine cannot run under CI: {why}")
        pytest.skip(f"The remote Podman engine cannot run here: {why}")
    engine = RemoteEngine(containers_conf_text())
    engine.start()
    try:
        yield engine
    finally:
        engine.stop()


@pytest.fixture
def kube_standin(podman_service: PodmanService) -> Iterator[KubeStandIn]:
    """The Kubernetes API stand-in (``_kube_standin``) in front of this worker's real Podman
    service, on 127.0.0.1; every Pod it made is removed at teardown."""
    standin = KubeStandIn(podman_service)
    standin.start()
    yield standin
    standin.stop()


@pytest.fixture
def kubeconfig(kube_standin: KubeStandIn, tmp_path) -> Path:
    """A kubeconfig file naming the stand-in (namespace ``default``, a dummy token)."""
    path = tmp_path / "kubeconfig"
    path.write_text(standin_kubeconfig(kube_standin.url))
    return path


@pytest.fixture
def kube_client(kubeconfig: Path) -> Iterator[Any]:
    """A lightkube ``Client`` on the stand-in."""
    from lightkube import Client, KubeConfig

    client = Client(KubeConfig.from_file(kubeconfig))
    yield client
    client.close()

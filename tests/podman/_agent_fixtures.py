"""Shared set-up of the workspace agent tests: a named volume and its host path."""

from __future__ import annotations

import json
import uuid
from pathlib import Path

from haversack_podman import PodmanService
from haversack_podman._agent import create_volume


def new_volume(service: PodmanService, *, uid: int = 1000, gid: int = 1000) -> str:
    """A fresh named volume owned by ``uid:gid`` (removed by ``remove_volume``)."""
    return create_volume(service, f"haversack-test-{uuid.uuid4().hex[:12]}", uid=uid, gid=gid)


def volume_path(service: PodmanService, volume: str) -> Path:
    """Where a local engine keeps the volume (the tests look at it from the host)."""
    response = service.client.api.get(f"/volumes/{volume}/json")
    response.raise_for_status()
    return Path(json.loads(response.text)["Mountpoint"])


def remove_volume(service: PodmanService, volume: str) -> None:
    service.client.api.delete(f"/volumes/{volume}", params={"force": True})

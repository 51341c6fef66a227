"""The labels that mark the pack's containers, so leftovers can always be found."""

from __future__ import annotations

from typing import Final

__all__ = ["OWNER_LABEL", "PID_LABEL", "SANDBOX_LABEL"]

#: Present (value "1") on every sandbox container.
SANDBOX_LABEL: Final = "haversack.sandbox"
#: The sandbox's unique id (a uuid4 hex), also part of the container name.
OWNER_LABEL: Final = "haversack.owner"
#: The pid of the process that created the container; ``cleanup`` uses it to spot orphans.
PID_LABEL: Final = "haversack.pid"

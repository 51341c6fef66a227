"""The pack system: discover installed tool packs, select, check, load and compose them."""

from __future__ import annotations

from ._compose import compose, discover
from ._report import Conflict, PackInfo, PackReport, PackStatus

__all__ = ["Conflict", "PackInfo", "PackReport", "PackStatus", "compose", "discover"]

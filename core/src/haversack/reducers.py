"""Ready-made reducers for ``Session.register_reducer``."""

from __future__ import annotations

from ._session import append, replace_latest, upsert_by

__all__ = ["append", "replace_latest", "upsert_by"]

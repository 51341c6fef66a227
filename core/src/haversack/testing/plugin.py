"""The pytest plugin of :mod:`haversack.testing` (entry point ``pytest11``)."""

from __future__ import annotations

"""Test kit for pack authors: fixtures and a conformance suite, registered as a pytest plugin."""

from __future__ import annotations

__all__: list[str] = []

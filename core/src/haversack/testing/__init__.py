"""Test kit for pack authors: fixtures, fake installed packs, a scripted model, conformance.

Installed with the core and registered as a pytest plugin, so a pack's tests get the
``haversack_compose``, ``haversack_session`` and ``haversack_executor`` fixtures without
any ``conftest.py``. Import the rest from here::

    from haversack.testing import PackConformance, ScriptedModel, play

Names are imported on first use, so loading the pytest plugin costs next to nothing.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ._checks import (
        check_composes_alone,
        check_descriptions,
        check_examples,
        check_handlers,
        check_import_time,
        check_malformed_arguments,
        check_names,
        check_schemas,
    )
    from ._compose import compose_packs
    from ._conformance import CHECKS, PackConformance, assert_pack_conforms, pack_problems
    from ._distributions import FakeSite, write_distribution
    from ._fake_provider import FakeCall, FakeProvider, FakeReply, ReceivedRequest
    from ._fuzz import BadArguments, bad_arguments
    from ._script import ScriptedCall, ScriptedModel, ScriptStep, Transcript, TranscriptEntry, play
    from ._state import StateFingerprint, fingerprint
    from .plugin import ComposeFactory, ExecutorFactory

__all__ = [
    "CHECKS",
    "BadArguments",
    "ComposeFactory",
    "ExecutorFactory",
    "FakeCall",
    "FakeProvider",
    "FakeReply",
    "FakeSite",
    "PackConformance",
    "ReceivedRequest",
    "ScriptStep",
    "ScriptedCall",
    "ScriptedModel",
    "StateFingerprint",
    "Transcript",
    "TranscriptEntry",
    "assert_pack_conforms",
    "bad_arguments",
    "check_composes_alone",
    "check_descriptions",
    "check_examples",
    "check_handlers",
    "check_import_time",
    "check_malformed_arguments",
    "check_names",
    "check_schemas",
    "compose_packs",
    "fingerprint",
    "pack_problems",
    "play",
    "write_distribution",
]

_HOMES = {
    "CHECKS": "_conformance",
    "BadArguments": "_fuzz",
    "ComposeFactory": "plugin",
    "ExecutorFactory": "plugin",
    "FakeCall": "_fake_provider",
    "FakeProvider": "_fake_provider",
    "FakeReply": "_fake_provider",
    "FakeSite": "_distributions",
    "PackConformance": "_conformance",
    "ReceivedRequest": "_fake_provider",
    "ScriptStep": "_script",
    "ScriptedCall": "_script",
    "ScriptedModel": "_script",
    "StateFingerprint": "_state",
    "Transcript": "_script",
    "TranscriptEntry": "_script",
    "assert_pack_conforms": "_conformance",
    "bad_arguments": "_fuzz",
    "check_composes_alone": "_checks",
    "check_descriptions": "_checks",
    "check_examples": "_checks",
    "check_handlers": "_checks",
    "check_import_time": "_checks",
    "check_malformed_arguments": "_checks",
    "check_names": "_checks",
    "check_schemas": "_checks",
    "compose_packs": "_compose",
    "fingerprint": "_state",
    "pack_problems": "_conformance",
    "play": "_script",
    "write_distribution": "_distributions",
}


def __getattr__(name: str) -> Any:
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module 'haversack.testing' has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.{home}"), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted([*globals(), *__all__])

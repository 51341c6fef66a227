"""Run inside the throwaway venv: every broken-pack scenario, printed as one JSON object."""

from __future__ import annotations

import json
import sys
import time

from haversack import Session, ToolExecutor, compose, discover
from haversack.errors import HaversackError

CULPRITS = sys.argv[1].split(",")
CLASHES = [pair.split("+") for pair in sys.argv[2].split(",")]
OUT: dict = {}

start = time.perf_counter()
report = discover(load=True)
OUT["discover_s"] = time.perf_counter() - start
OUT["packs"] = {
    p.name: {"status": p.status, "reason": p.reason, "tools": list(p.tools)} for p in report.packs
}
OUT["conflicts"] = [[c.kind, c.name, list(c.contributors)] for c in report.conflicts]

# Fail-soft: leave one side of each clash out; the rest must compose and work.
exclude = [pair[1] for pair in CLASHES]
start = time.perf_counter()
prompt = compose(ns="t", key="k", exclude=exclude)
OUT["compose_s"] = time.perf_counter() - start
rendered = prompt.render()
OUT["tools"] = [t.name for t in rendered.tools]
calls = {}
with ToolExecutor(rendered, session=Session()) as executor:
    for name, args in (("greet", {"name": "Ada"}), ("fetch", {}), ("slow_tool", {})):
        result = executor.execute(name, args)
        calls[name] = [result.success, result.render()]
OUT["calls"] = calls

# Unresolved clashes: compose raises NameConflictError naming both.
try:
    compose(ns="t", key="k")
    OUT["clash_error"] = None
except HaversackError as exc:
    OUT["clash_error"] = [type(exc).__name__, str(exc)]

# Strict mode: each culprit alone with a good pack raises its precise error.
strict = {}
for culprit in CULPRITS:
    try:
        compose(ns="t", key="k", packs=["good", culprit], strict=True)
        strict[culprit] = None
    except HaversackError as exc:
        strict[culprit] = [type(exc).__name__, getattr(exc, "pack", None), str(exc)]
    except Exception as exc:
        strict[culprit] = ["RAW " + type(exc).__name__, None, str(exc)]
for a, b in CLASHES:
    try:
        compose(ns="t", key="k", packs=[a, b], strict=True)
        strict[f"{a}+{b}"] = None
    except HaversackError as exc:
        strict[f"{a}+{b}"] = [
            type(exc).__name__,
            getattr(exc, "kind", None),
            getattr(exc, "name", None),
            str(exc),
        ]
OUT["strict"] = strict
print(json.dumps(OUT))

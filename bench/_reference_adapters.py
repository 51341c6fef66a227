"""Time the reference library's provider tool lists (run in its own environment).

``python _reference_adapters.py REPEATS`` prints ``{"version", "openai": [s...],
"anthropic": [s...]}``: the durations of building the OpenAI chat ``tools=`` list with its
``tool_to_spec`` (what its OpenAI adapter sent) and the Anthropic list from its ``serde.schema``
(what its Claude bridge does), for the twenty tools of ``_adapter_params``. Kept apart from
``bench_adapters`` so the reference is never a dependency of ours: that suite runs this file
with the reference environment's interpreter.
"""

from __future__ import annotations

import json
import sys
from dataclasses import dataclass
from importlib.metadata import version
from typing import Any

from _adapter_params import TOOLS
from _harness import measure
from weakincentives.adapters.tool_spec import tool_to_spec
from weakincentives.prompt import Tool, ToolContext, ToolResult
from weakincentives.serde import schema


@dataclass(frozen=True)
class Out:
    text: str


def _handler(params: Any, *, context: ToolContext) -> ToolResult[Out]:
    return ToolResult.ok(Out(text=""))


def main() -> None:
    repeats = int(sys.argv[1])
    tools = [Tool[params, Out](name=n, description=d, handler=_handler) for n, d, params in TOOLS]

    def openai_chat() -> list[dict[str, Any]]:
        return [tool_to_spec(tool) for tool in tools]

    def anthropic() -> list[dict[str, Any]]:
        return [
            {"name": t.name, "description": t.description, "input_schema": schema(t.params_type)}
            for t in tools
        ]

    out: dict[str, Any] = {"version": version("weakincentives"), "tools": len(tools)}
    out["python"] = sys.version.split()[0]
    for name, fn in (("openai", openai_chat), ("anthropic", anthropic)):
        out[name] = list(measure(fn, repeats=repeats, warmup=3).times_s)
    print(json.dumps(out))


if __name__ == "__main__":
    main()

"""The conformance checks; each returns a list of problems (empty when the pack passes)."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from ._compose import compose_packs, isolated_selection
from ._fuzz import bad_arguments
from ._script import ScriptStep, play
from ._state import fingerprint

if TYPE_CHECKING:
    from haversack import Prompt, Tool, ToolExecutor

__all__ = [
    "check_composes_alone",
    "check_descriptions",
    "check_examples",
    "check_handlers",
    "check_import_time",
    "check_malformed_arguments",
    "check_names",
    "check_schemas",
]

Config = Mapping[str, Any] | None
_TOOL_NAME = re.compile(r"[a-z0-9_-]{1,64}")
_POLICY_NAME = re.compile(r"\S{1,128}")


def _options(pack: str, config: Config) -> dict[str, Mapping[str, Any]] | None:
    return None if config is None else {pack: config}


def check_composes_alone(pack: str, config: Config = None) -> list[str]:
    """The pack loads alone, declares its core range, contributes, composes and renders.

    This is what ``haversack check --pack NAME`` does, without the project's configuration.
    """
    from haversack._packs import discover
    from haversack.errors import HaversackError

    with isolated_selection() as empty:
        report = discover(load=True, packs=[pack], config=_options(pack, config), config_file=empty)
    info = next((i for i in report.packs if i.name == pack), None)
    problems = list(report.problems)
    if info is None:
        return [*problems, f"pack {pack!r} is not installed (no 'haversack' entry point)."]
    if info.status != "loaded":
        return [*problems, f"{info.label} is {info.status}: {info.reason}"]
    problems += [c.message for c in report.conflicts]
    if not info.requires:
        problems.append(
            f"{info.label} does not declare a dependency on haversack; add "
            "'haversack>=X.Y,<X.Y+1' to [project] dependencies so an incompatible core is "
            "reported before import."
        )
    if not (info.sections or info.tools or info.policies or info.resources):
        problems.append(f"{info.label} contributes nothing (no section, tool, policy, resource).")
    try:
        compose_packs([pack], config=_options(pack, config)).render()
    except HaversackError as exc:
        problems.append(f"composing the pack alone failed: {exc}")
    return problems


def check_names(prompt: Prompt) -> list[str]:
    """Tool names are valid and unique; policy names are unique and without spaces."""
    problems: list[str] = []
    seen: set[str] = set()
    for tool in prompt.tools:
        if not _TOOL_NAME.fullmatch(tool.name):
            problems.append(f"tool name {tool.name!r} is not 1-64 of [a-z0-9_-].")
        if tool.name in seen:
            problems.append(f"tool name {tool.name!r} is used twice.")
        seen.add(tool.name)
    policies: set[str] = set()
    for policy in _policies(prompt):
        name = policy.name
        if not isinstance(name, str) or not _POLICY_NAME.fullmatch(name):
            problems.append(f"policy name {name!r} must be a non-empty string without spaces.")
        elif name in policies:
            problems.append(f"policy name {name!r} is used twice.")
        policies.add(name)
    return problems


def _policies(prompt: Prompt) -> Iterator[Any]:
    unique: dict[int, Any] = {}
    for policy in prompt.policies:
        unique.setdefault(id(policy), policy)
    for _, section in prompt.walk():
        for policy in section.policies:
            unique.setdefault(id(policy), policy)
    return iter(unique.values())


def check_descriptions(prompt: Prompt) -> list[str]:
    """Every tool has a real description and every params field (nested too) has one."""
    from haversack import serde

    problems: list[str] = []
    for tool in prompt.tools:
        if tool.description.strip().lower() == tool.name.replace("_", " ").lower():
            problems.append(f"tool {tool.name!r}: the description only repeats the name.")
        try:
            schema = serde.schema(tool.params_type)
        except Exception:  # noqa: BLE001, S112 - reported by check_schemas
            continue
        for path in _undescribed(schema, ()):
            problems.append(
                f"tool {tool.name!r}: params field {'.'.join(path)!r} has no description; "
                'declare it with field(metadata={"description": "..."}).'
            )
    return problems


def _undescribed(schema: Any, path: tuple[str, ...]) -> Iterator[tuple[str, ...]]:
    if isinstance(schema, list):
        for item in schema:
            yield from _undescribed(item, path)
        return
    if not isinstance(schema, dict):
        return
    for name, prop in (schema.get("properties") or {}).items():
        if not (isinstance(prop, dict) and str(prop.get("description", "")).strip()):
            yield (*path, name)
        yield from _undescribed(prop, (*path, name))
    for key in ("items", "anyOf", "oneOf", "allOf", "additionalProperties", "prefixItems"):
        if key in schema:
            yield from _undescribed(schema[key], (*path, "[]") if key == "items" else path)


def check_schemas(prompt: Prompt) -> list[str]:
    """Every params schema generates, is JSON, is a closed object and has no ``$ref``."""
    from haversack import serde

    problems: list[str] = []
    for tool in prompt.tools:
        try:
            schema = serde.schema(tool.params_type)
            json.dumps(schema)
        except Exception as exc:  # noqa: BLE001 - every tool is reported
            problems.append(f"tool {tool.name!r}: schema generation failed: {exc}")
            continue
        refs = sorted(set(_refs(schema)))
        if refs:
            problems.append(f"tool {tool.name!r}: schema still holds {', '.join(refs)}.")
        if schema.get("type") != "object":
            problems.append(f"tool {tool.name!r}: schema is not an object schema.")
    return problems


def _refs(node: Any) -> Iterator[str]:
    if isinstance(node, list):
        for item in node:
            yield from _refs(item)
    elif isinstance(node, dict):
        for key, value in node.items():
            if key in ("$ref", "$defs", "definitions"):
                yield key
            yield from _refs(value)


def check_handlers(prompt: Prompt) -> list[str]:
    """Every tool is a built :class:`~haversack.Tool` (so its handler shape was checked)."""
    from haversack import Tool

    problems = []
    items: tuple[object, ...] = prompt.tools
    for tool in items:
        if not isinstance(tool, Tool):
            problems.append(f"{tool!r} is not a haversack.Tool.")
        elif tool.handler is None or not callable(tool.handler):
            problems.append(f"tool {tool.name!r} has no handler, so it can never run.")
    return problems


def check_examples(prompt: Prompt) -> list[str]:
    """Every example's input survives the model's round trip (dump, then strict parse)."""
    from haversack import serde

    problems: list[str] = []
    for tool in prompt.tools:
        for number, example in enumerate(tool.examples, 1):
            where = f"tool {tool.name!r} example {number}"
            try:
                if tool.params_type is not None:
                    data = serde.dump(example.input)
                    back = serde.parse(tool.params_type, json.dumps(data))
                    if back != example.input:
                        problems.append(f"{where}: input does not parse back equal: {back!r}.")
                json.dumps(serde.dump(example.output))
            except Exception as exc:  # noqa: BLE001 - every example is reported
                problems.append(f"{where}: {type(exc).__name__}: {exc}")
    return problems


def check_malformed_arguments(
    prompt: Prompt, *, setup: Sequence[ScriptStep] = (), max_problems: int = 20
) -> list[str]:
    """Every tool turns hostile arguments into an error result and leaves no trace.

    Each tool gets a fresh session (``setup`` is played first, e.g. to satisfy a policy),
    then every case of :func:`bad_arguments`. Invalid arguments must give an error result;
    no call may raise; a failed call, or any call of a ``read_only`` tool, must leave the
    session's STATE slices and the bound ``Filesystem`` exactly as they were.
    """
    from haversack import Session, ToolExecutor

    problems: list[str] = []
    rendered = prompt.render()
    for tool in rendered.tools:
        with ToolExecutor(rendered, session=Session()) as executor:
            if setup:
                failed = play(executor, setup).failures
                if failed:
                    problems.append(f"the setup script failed: {failed[0].rendered}")
                    return problems
            problems += _hostile_calls(executor, tool)
        if len(problems) >= max_problems:
            break
    return problems[:max_problems]


def _hostile_calls(executor: ToolExecutor, tool: Tool[Any, Any]) -> list[str]:
    from haversack import ToolResult, serde

    problems: list[str] = []
    schema = serde.schema(tool.params_type)
    baseline_session = executor.session.snapshot()
    baseline_resources = [(r, r.snapshot()) for r in executor.resources.snapshottables()]
    for case in bad_arguments(schema, takes_params=tool.params_type is not None):
        where = f"tool {tool.name!r} given {case.label}"
        before = fingerprint(executor.session, executor.resources)
        try:
            result: object = executor.execute(tool.name, case.arguments)
        except KeyboardInterrupt:
            raise
        except BaseException as exc:  # noqa: BLE001 - a raise is the finding
            problems.append(f"{where}: the call raised {type(exc).__name__}: {exc}")
            continue
        if not isinstance(result, ToolResult):
            problems.append(f"{where}: returned {type(result).__name__}, not a ToolResult.")
            continue
        if case.must_fail and result.success:
            problems.append(f"{where}: the call succeeded; it must return an error result.")
        if not result.success and not result.render().strip():
            problems.append(f"{where}: the error result has no message for the model.")
        if not result.success or tool.annotations.read_only:
            changes = before.differences(fingerprint(executor.session, executor.resources))
            if changes:
                kind = "read-only call" if result.success else "failed call"
                problems.append(f"{where}: the {kind} left state behind: {'; '.join(changes)}.")
        if result.success:  # a legitimate change: start the next case from the baseline
            executor.session.restore(baseline_session)
            for resource, snapshot in baseline_resources:
                resource.restore(snapshot)
    return problems


def check_import_time(pack: str, budget_s: float = 1.0, *, attempts: int = 3) -> list[str]:
    """The pack's plugin module imports within ``budget_s`` in a fresh interpreter.

    The best of up to ``attempts`` measurements counts, so one slow run on a busy machine
    does not fail the check.
    """
    from haversack._packs._discovery import scan

    from ._importtime import measure_import

    candidate = next((c for c in scan() if c.name == pack), None)
    if candidate is None:
        return [f"pack {pack!r} is not installed (no 'haversack' entry point)."]
    best = float("inf")
    for _ in range(attempts):
        try:
            best = min(best, measure_import(candidate.module))
        except RuntimeError as exc:
            return [str(exc)]
        if best <= budget_s:
            return []
    return [
        f"importing {candidate.module} took {best:.2f} s (budget {budget_s:.2f} s); import "
        "heavy dependencies inside the functions that use them."
    ]

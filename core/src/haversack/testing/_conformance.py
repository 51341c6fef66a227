"""``PackConformance`` (subclass it) and ``assert_pack_conforms`` (call it): the pack checks."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, ClassVar

from . import _checks
from ._compose import compose_packs

if TYPE_CHECKING:
    from haversack import Prompt

    from ._script import ScriptStep

__all__ = ["CHECKS", "PackConformance", "assert_pack_conforms", "pack_problems"]

#: Default import budget of a pack's plugin module, in seconds.
DEFAULT_IMPORT_BUDGET_S = 1.0

#: The check names, in the order they run.
CHECKS = (
    "composes_alone",
    "names",
    "descriptions",
    "schemas",
    "handlers",
    "examples",
    "malformed_arguments",
    "import_time",
)


def pack_problems(
    pack: str,
    *,
    config: Mapping[str, Any] | None = None,
    import_budget_s: float = DEFAULT_IMPORT_BUDGET_S,
    setup: Sequence[ScriptStep] = (),
    skip: Sequence[str] = (),
) -> dict[str, list[str]]:
    """Run every check on installed pack ``pack``; map each failed check to its problems.

    ``config`` is the pack's options; ``setup`` is a script played before each tool's
    malformed-arguments battery (to satisfy the pack's policies); ``skip`` names checks
    from :data:`CHECKS` to leave out.
    """
    unknown = sorted(set(skip) - set(CHECKS))
    if unknown:
        raise ValueError(f"Unknown checks {unknown}; the checks are {', '.join(CHECKS)}.")
    found: dict[str, list[str]] = {}

    def record(name: str, run: Callable[[], list[str]]) -> None:
        if name not in skip:
            problems = run()
            if problems:
                found[name] = problems

    record("composes_alone", lambda: _checks.check_composes_alone(pack, config))
    if "composes_alone" in found:
        return found  # nothing else can be checked on a pack that does not compose
    prompt = _compose(pack, config)
    record("names", lambda: _checks.check_names(prompt))
    record("descriptions", lambda: _checks.check_descriptions(prompt))
    record("schemas", lambda: _checks.check_schemas(prompt))
    record("handlers", lambda: _checks.check_handlers(prompt))
    record("examples", lambda: _checks.check_examples(prompt))
    record("malformed_arguments", lambda: _checks.check_malformed_arguments(prompt, setup=setup))
    record("import_time", lambda: _checks.check_import_time(pack, import_budget_s))
    return found


def assert_pack_conforms(
    pack: str,
    *,
    config: Mapping[str, Any] | None = None,
    import_budget_s: float = DEFAULT_IMPORT_BUDGET_S,
    setup: Sequence[ScriptStep] = (),
    skip: Sequence[str] = (),
) -> None:
    """Raise ``AssertionError`` listing every problem :func:`pack_problems` finds."""
    found = pack_problems(
        pack, config=config, import_budget_s=import_budget_s, setup=setup, skip=skip
    )
    if found:
        lines = [
            f"[{check}] {problem}" for check, problems in found.items() for problem in problems
        ]
        raise AssertionError(f"pack {pack!r} does not conform:\n" + "\n".join(lines))


def _compose(pack: str, config: Mapping[str, Any] | None) -> Prompt:
    return compose_packs([pack], config=None if config is None else {pack: config})


def _fail(check: str, problems: list[str]) -> None:
    if problems:
        raise AssertionError(f"[{check}] " + f"\n[{check}] ".join(problems))


class PackConformance:
    """The conformance checks as pytest tests: subclass it in a ``Test*`` class.

    ::

        class TestMyPack(PackConformance):
            pack = "mypack"
            config = {"option": 1}        # optional: the pack's options
            import_budget_s = 0.5         # optional: default 1.0
            setup = [("mypack_login", {})]  # optional: played before the malformed-args tests

    Each check is its own test, so a report names exactly what is wrong. Override a test
    with ``pytest.mark.skip`` to opt out of it.
    """

    #: The pack (entry-point) name under test. Required.
    pack: ClassVar[str] = ""
    #: The pack's options, as ``config={pack: ...}`` would give them.
    config: ClassVar[Mapping[str, Any] | None] = None
    #: Seconds the pack's plugin module may take to import.
    import_budget_s: ClassVar[float] = DEFAULT_IMPORT_BUDGET_S
    #: Calls played on each fresh session before the malformed-arguments battery.
    setup: ClassVar[Sequence[ScriptStep]] = ()

    def _prompt(self) -> Prompt:
        if not self.pack:
            raise AssertionError(f'{type(self).__name__} must set `pack = "<pack name>"`.')
        return _compose(self.pack, self.config)

    def test_composes_alone(self) -> None:
        """The pack loads on its own and composes like ``haversack check --pack``."""
        if not self.pack:
            raise AssertionError(f'{type(self).__name__} must set `pack = "<pack name>"`.')
        _fail("composes_alone", _checks.check_composes_alone(self.pack, self.config))

    def test_names(self) -> None:
        """Tool and policy names are valid and unique."""
        _fail("names", _checks.check_names(self._prompt()))

    def test_descriptions(self) -> None:
        """Tools and every params field are described."""
        _fail("descriptions", _checks.check_descriptions(self._prompt()))

    def test_schemas(self) -> None:
        """Params schemas generate, inlined (no ``$ref``)."""
        _fail("schemas", _checks.check_schemas(self._prompt()))

    def test_handlers(self) -> None:
        """Every tool was built (its handler's signature checked) and has a handler."""
        _fail("handlers", _checks.check_handlers(self._prompt()))

    def test_examples(self) -> None:
        """Examples round-trip through the model's JSON."""
        _fail("examples", _checks.check_examples(self._prompt()))

    def test_malformed_arguments(self) -> None:
        """Hostile arguments give error results and leave no trace."""
        problems = _checks.check_malformed_arguments(self._prompt(), setup=self.setup)
        _fail("malformed_arguments", problems)

    def test_import_time(self) -> None:
        """The plugin module imports within the budget."""
        _fail("import_time", _checks.check_import_time(self.pack, self.import_budget_s))

"""Which scripted steps can run with the packs that loaded, and why the others cannot."""

from __future__ import annotations

from collections.abc import Collection, Mapping
from dataclasses import dataclass

from ._model import Act, Step
from ._transcript import PackLine, SandboxStatus

__all__ = ["Availability"]


@dataclass(frozen=True, slots=True)
class Availability:
    """The composed prompt's tools, the packs found and the sandbox decision."""

    tools: Collection[str]
    packs: Mapping[str, PackLine]
    providers: Mapping[str, str]
    sandbox: SandboxStatus

    def skip_reason(self, act: Act, step: Step) -> str | None:
        """``None`` if ``step`` can run, else why not (naming the pack to install or enable)."""
        if act.sandbox and not self.sandbox.enabled:
            return f"sandbox skipped: {self.sandbox.reason}"
        missing = self.missing(step.tool)
        if missing:
            return missing
        for need in step.needs:
            why = self.missing(need)
            if why:
                return f"depends on an earlier {need} call: {why}"
        return None

    def missing(self, tool: str) -> str | None:
        """``None`` if ``tool`` is in the prompt, else which pack provides it and its state."""
        if tool in self.tools:
            return None
        pack = self.providers.get(tool)
        if pack is None:
            return f"{tool} is not in the composed prompt"
        info = self.packs.get(pack)
        if info is None:
            return (
                f"{tool} is provided by the {pack} pack (haversack-{pack}), which is not "
                f"installed; install haversack-{pack} to run this step"
            )
        where = f"{tool} is provided by the {pack} pack ({info.distribution} {info.version})"
        if info.status == "disabled":
            return f"{where}, which is disabled ({info.reason or 'pack selection'})"
        if info.status in ("broken", "incompatible"):
            return f"{where}, which did not load ({info.status}: {info.reason})"
        if info.status == "loaded":
            return f"{where}, but this version of the pack does not provide it"
        return f"{where}, which is {info.status}"

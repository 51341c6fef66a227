"""Protected workspace paths: what the host's own tools later run or trust, so nothing the
model drives may change it.

A project directory is not just data. The user's ``git`` reads ``.git/config`` (where
``core.fsmonitor`` names a program to run) and runs ``.git/hooks/*``; direnv evaluates
``.envrc`` on ``cd``; editors run task files when a folder opens. A file tool or a sandboxed
command that writes one of these plants code that runs later on the host, outside any
sandbox. :data:`DEFAULT_PROTECTED` lists them with the reason; :class:`ProtectedPaths` is the
configured set a workspace enforces (reads stay allowed).

Matching is on normalised workspace-relative paths, case-insensitively (a case-folding
filesystem would otherwise let ``.GIT/config`` through). A rule ``X/**`` also covers ``X``
itself, so the directory can be neither created, removed nor replaced.
"""

from __future__ import annotations

import difflib
import re
import threading
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Final

from ._glob import _translate
from ._paths import normalize_path

__all__ = ["DEFAULT_PROTECTED", "ProtectedPaths", "ProtectedRule"]


@dataclass(frozen=True, slots=True)
class ProtectedRule:
    """One protected glob (the project's glob dialect) and why the host runs or trusts it."""

    glob: str
    reason: str


def _rules(reason: str, *globs: str) -> tuple[ProtectedRule, ...]:
    return tuple(ProtectedRule(glob, reason) for glob in globs)


_GIT_RUNS: Final = "git runs commands it names (core.fsmonitor, hooks, filters, aliases)"

#: The default protected set, with the reason for each. ``**/`` covers nested repositories
#: and submodules checked out inside the workspace.
DEFAULT_PROTECTED: Final[tuple[ProtectedRule, ...]] = (
    *_rules(
        "a .git file or directory decides which repository (and so which config and hooks) "
        "git uses",
        "**/.git",
    ),
    *_rules(_GIT_RUNS, "**/.git/config", "**/.git/config.worktree", "**/.git/commondir"),
    *_rules("git runs hooks on commit, checkout, merge and push", "**/.git/hooks/**"),
    *_rules("git reads attributes and excludes here (filter and diff drivers)", "**/.git/info/**"),
    *_rules(
        "submodules' and linked worktrees' own config and hooks",
        "**/.git/modules/**/config",
        "**/.git/modules/**/hooks/**",
        "**/.git/modules/**/info/**",
        "**/.git/worktrees/**/config.worktree",
        "**/.git/worktrees/**/commondir",
        "**/.git/worktrees/**/gitdir",
    ),
    *_rules(
        "git hook managers run these scripts and configs on commit",
        "**/.husky/**",
        "**/.pre-commit-config.yaml",
        "**/lefthook.yml",
        "**/lefthook.yaml",
        "**/.lefthook.yml",
        "**/.lefthook.yaml",
        "**/lefthook-local.yml",
        "**/.lefthook/**",
    ),
    *_rules(
        "direnv and mise evaluate these when a shell enters the directory",
        "**/.envrc",
        "**/.mise.toml",
        "**/mise.toml",
        "**/.mise/**",
        "**/.config/mise/**",
    ),
    *_rules(
        "editors run tasks, launch configurations and local settings from these on open",
        "**/.vscode/**",
        "**/.idea/**",
        "**/*.code-workspace",
        "**/.exrc",
        "**/.nvimrc",
        "**/.nvim.lua",
        "**/.dir-locals.el",
        "**/.dir-locals-2.el",
    ),
    *_rules(
        "dev containers run initializeCommand on the host",
        "**/.devcontainer/**",
        "**/.devcontainer.json",
    ),
    *_rules(
        "package managers and debuggers run code these name (yarnPath, node-options, cargo "
        "runners, pdb commands)",
        "**/.npmrc",
        "**/.yarnrc",
        "**/.yarnrc.yml",
        "**/.cargo/config",
        "**/.cargo/config.toml",
        "**/.pdbrc",
    ),
)

_warned: set[str] = set()
_warned_lock = threading.Lock()


def _regex(globs: Iterable[str]) -> re.Pattern[str] | None:
    """One case-insensitive regex matching any of ``globs`` (and ``X`` for ``X/**``)."""
    parts: list[str] = []
    for glob in globs:
        segments = normalize_path(glob.lower()).split("/")
        parts.append(_translate(segments, glob))
        if len(segments) > 1 and segments[-1] == "**":
            parts.append(_translate(segments[:-1], glob))
    if not parts:
        return None
    return re.compile("|".join(f"(?:{part})" for part in parts), re.DOTALL)


class ProtectedPaths:
    """The protected globs one workspace enforces; :meth:`match` says whether a path is one.

    Build it with :meth:`configured`; the default is :data:`DEFAULT_PROTECTED`.
    """

    __slots__ = ("_each", "_regex", "rules")

    def __init__(self, rules: Iterable[ProtectedRule] = DEFAULT_PROTECTED) -> None:
        self.rules: tuple[ProtectedRule, ...] = tuple(rules)
        # One combined regex for the common miss; the per-rule ones only name a hit's rule.
        self._regex = _regex(rule.glob for rule in self.rules)
        self._each = [(rule, _regex((rule.glob,))) for rule in self.rules]

    @classmethod
    def configured(
        cls, *, protect: Iterable[str] = (), unprotect: Iterable[str] = ()
    ) -> ProtectedPaths:
        """The default set plus the ``protect`` globs, minus the ``unprotect`` ones.

        ``unprotect`` must name default globs exactly (a typo would otherwise leave the path
        protected while the user believes it is not, or the reverse): an unknown one raises
        ``ValueError`` naming the closest. Each removal warns once per process, because it lets
        the model plant code that the host runs.
        """
        rules = list(DEFAULT_PROTECTED)
        known = [rule.glob for rule in rules]
        for glob in unprotect:
            if glob not in known:
                close = difflib.get_close_matches(glob, known, n=3, cutoff=0.5)
                hint = f" Did you mean {', '.join(map(repr, close))}?" if close else ""
                raise ValueError(
                    f"unprotect names {glob!r}, which is not a default protected glob.{hint} "
                    f"The defaults are: {', '.join(known)}."
                )
            rules = [rule for rule in rules if rule.glob != glob]
            _warn_once(glob)
        for glob in protect:
            normalize_path(glob)  # a malformed glob is the user's error, said now
            rules.append(ProtectedRule(glob, "protected by the configuration"))
        return cls(rules)

    def match(self, path: str) -> ProtectedRule | None:
        """The rule protecting the normalised relative ``path``, or ``None``."""
        if self._regex is None or not path:
            return None
        lowered = path.lower()
        if self._regex.fullmatch(lowered) is None:
            return None
        for rule, regex in self._each:
            if regex is not None and regex.fullmatch(lowered):
                return rule
        return None  # pragma: no cover - the combined regex matched one of them

    def summary(self) -> str:
        """The protected set in one paragraph, for a section's instructions."""
        if not self.rules:
            return "No workspace path is protected."
        anywhere = [r.glob[3:] for r in self.rules if r.glob.startswith("**/")]
        rooted = [r.glob for r in self.rules if not r.glob.startswith("**/")]
        groups = []
        if anywhere:
            groups.append("in any directory " + ", ".join(f"`{g}`" for g in anywhere))
        if rooted:
            groups.append("and " * bool(anywhere) + ", ".join(f"`{g}`" for g in rooted))
        return (
            "Protected paths: the user's own tools (git, direnv, editors) later run or trust "
            "what they hold, so read them freely but no change to them is accepted: "
            f"{'; '.join(groups)}."
        )

    def __repr__(self) -> str:
        return f"ProtectedPaths({len(self.rules)} rules)"


def _warn_once(glob: str) -> None:
    import warnings

    with _warned_lock:
        if glob in _warned:
            return
        _warned.add(glob)
    warnings.warn(
        f"The protected path {glob!r} was unprotected by the configuration: the model can now "
        "change it, and the host's tools may run what it writes there.",
        stacklevel=3,
    )

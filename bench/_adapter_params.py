"""Twenty tool params dataclasses shaped like an agent's tools, shared by both sides of the
adapter benchmark (our adapters and the reference library's); standard library only, so the
reference's own environment can import it too."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal


def _d(text: str) -> dict[str, str]:
    return {"description": text}


@dataclass(frozen=True)
class ReadFile:
    path: str = field(metadata=_d("Workspace-relative path of the file."))
    offset: int = field(default=0, metadata=_d("First line to return (0-based)."))
    limit: int = field(default=2000, metadata=_d("Largest number of lines to return."))


@dataclass(frozen=True)
class WriteFile:
    path: str = field(metadata=_d("Workspace-relative path of the file."))
    content: str = field(metadata=_d("The whole new content."))
    mode: Literal["create", "overwrite", "append"] = field(
        default="create", metadata=_d("What to do when the file exists.")
    )


@dataclass(frozen=True)
class Edit:
    old: str = field(metadata=_d("Exact text to replace."))
    new: str = field(metadata=_d("Replacement text."))


@dataclass(frozen=True)
class EditFile:
    path: str = field(metadata=_d("Workspace-relative path of the file."))
    edits: list[Edit] = field(metadata=_d("Edits applied in order."))
    replace_all: bool = field(default=False, metadata=_d("Replace every occurrence."))


@dataclass(frozen=True)
class ListDir:
    path: str = field(default=".", metadata=_d("Directory to list."))
    depth: int = field(default=1, metadata=_d("How many levels to descend."))


@dataclass(frozen=True)
class Glob:
    pattern: str = field(metadata=_d("Glob pattern, e.g. src/**/*.py."))
    root: str = field(default=".", metadata=_d("Directory the pattern is relative to."))


@dataclass(frozen=True)
class Grep:
    pattern: str = field(metadata=_d("Regular expression to search for."))
    path: str = field(default=".", metadata=_d("File or directory to search."))
    glob: str | None = field(default=None, metadata=_d("Only files matching this glob."))
    ignore_case: bool = field(default=False, metadata=_d("Case-insensitive matching."))
    max_matches: int = field(default=100, metadata=_d("Stop after this many matches."))


@dataclass(frozen=True)
class Remove:
    path: str = field(metadata=_d("File or directory to remove."))
    recursive: bool = field(default=False, metadata=_d("Remove directories and contents."))


@dataclass(frozen=True)
class Step:
    title: str = field(metadata=_d("What the step does, in a few words."))
    details: str = field(default="", metadata=_d("How, if it is not obvious."))


@dataclass(frozen=True)
class SetupPlan:
    objective: str = field(metadata=_d("What the plan achieves."))
    steps: list[Step] = field(default_factory=list, metadata=_d("Initial steps, in order."))


@dataclass(frozen=True)
class AddStep:
    step: Step = field(metadata=_d("The step to append."))
    after: int | None = field(default=None, metadata=_d("Insert after this step id."))


@dataclass(frozen=True)
class UpdateStep:
    step_id: int = field(metadata=_d("Id of the step to update."))
    status: Literal["pending", "in_progress", "done", "blocked"] = field(
        metadata=_d("The step's new status.")
    )
    note: str = field(default="", metadata=_d("Why, when it is blocked."))


@dataclass(frozen=True)
class ReadPlan:
    include_done: bool = field(default=True, metadata=_d("List finished steps too."))


@dataclass(frozen=True)
class Shell:
    command: list[str] = field(metadata=_d("Program and arguments (no shell expansion)."))
    cwd: str = field(default="/workspace", metadata=_d("Working directory."))
    timeout_s: float = field(default=30.0, metadata=_d("Seconds before the command is killed."))
    env: dict[str, str] = field(default_factory=dict, metadata=_d("Extra environment."))
    stdin: str = field(default="", metadata=_d("Text sent to standard input."))


@dataclass(frozen=True)
class EvaluatePython:
    code: str = field(metadata=_d("Python source to run."))
    timeout_s: float = field(default=10.0, metadata=_d("Seconds before it is stopped."))


@dataclass(frozen=True)
class Fetch:
    url: str = field(metadata=_d("http(s) URL to fetch."))
    max_bytes: int = field(default=100_000, metadata=_d("Truncate the body after this."))
    headers: dict[str, str] = field(default_factory=dict, metadata=_d("Request headers."))


@dataclass(frozen=True)
class Range:
    start: int = field(metadata=_d("First line (1-based)."))
    end: int = field(metadata=_d("Last line (inclusive)."))


@dataclass(frozen=True)
class Annotate:
    path: str = field(metadata=_d("File to annotate."))
    ranges: list[Range] = field(metadata=_d("Line ranges the note applies to."))
    note: str = field(metadata=_d("The note."))
    severity: Literal["info", "warning", "error"] = field(
        default="info", metadata=_d("How serious it is.")
    )


@dataclass(frozen=True)
class Search:
    query: str = field(metadata=_d("Words to search for."))
    kinds: list[Literal["code", "docs", "issues"]] = field(
        default_factory=lambda: ["code"], metadata=_d("Where to search.")
    )
    limit: int = field(default=10, metadata=_d("Largest number of hits."))


@dataclass(frozen=True)
class AskUser:
    question: str = field(metadata=_d("The question, self-contained."))
    choices: list[str] = field(default_factory=list, metadata=_d("Answers to offer, if any."))


@dataclass(frozen=True)
class Finish:
    summary: str = field(metadata=_d("What was done, for the user."))
    success: bool = field(default=True, metadata=_d("Whether the objective was met."))


#: ``(tool name, description, params type)`` of the benchmark prompt's twenty tools.
TOOLS: list[tuple[str, str, type]] = [
    ("read_file", "Read a window of a text file.", ReadFile),
    ("write_file", "Create or overwrite a text file.", WriteFile),
    ("edit_file", "Replace exact text in a file.", EditFile),
    ("ls", "List a directory.", ListDir),
    ("glob", "Find files by glob pattern.", Glob),
    ("grep", "Search file contents with a regular expression.", Grep),
    ("rm", "Remove a file or directory.", Remove),
    ("setup_plan", "Start a plan with an objective and steps.", SetupPlan),
    ("add_step", "Add a step to the plan.", AddStep),
    ("update_step", "Change a step's status.", UpdateStep),
    ("read_plan", "Show the plan.", ReadPlan),
    ("shell_execute", "Run a command in the sandbox.", Shell),
    ("evaluate_python", "Run Python code in the sandbox.", EvaluatePython),
    ("fetch", "Fetch a web page.", Fetch),
    ("annotate", "Attach a review note to lines of a file.", Annotate),
    ("search", "Search the knowledge base.", Search),
    ("ask_user", "Ask the user a question.", AskUser),
    ("finish", "End the task with a summary.", Finish),
    ("read_plan_summary", "Show only the plan's open steps.", ReadPlan),
    ("list_tree", "List a directory tree.", ListDir),
]

"""The demo's script: a model adds a tested module to a small project (data only)."""

from __future__ import annotations

from typing import Final

from ._model import Act, Scenario, Seed, Step

__all__ = ["SCENARIO"]

_README = """\
# weather-tools

Small helpers for the weather station.

Nothing here yet.
"""

_MODULE = '''\
"""Temperature conversions."""


def c_to_f(celsius: float) -> float:
    return round(celsius * 9 / 5 + 32, 1)


def f_to_c(fahrenheit: float) -> float:
    return round(fahrenheit - 32 * 5 / 9, 1)
'''

_TESTS = """\
import unittest

from tempconv import c_to_f, f_to_c


class ConversionTest(unittest.TestCase):
    def test_boiling_point(self) -> None:
        self.assertEqual(c_to_f(100), 212.0)

    def test_round_trip(self) -> None:
        self.assertEqual(f_to_c(c_to_f(37)), 37.0)


if __name__ == "__main__":
    unittest.main()
"""

_BUG = "fahrenheit - 32 * 5 / 9"
_FIX = "(fahrenheit - 32) * 5 / 9"

_PLANNING = ("planning_setup_plan", "planning_add_step", "planning_update_step")
_VFS = ("ls", "read_file", "write_file", "edit_file", "glob", "grep", "rm")
_PODMAN = ("shell_execute", "evaluate_python")

_PLAN: Final = Act(
    "Plan the work",
    (
        Step(
            "planning_read_plan",
            {},
            "Reading the plan before there is one: the planning policy denies it.",
            expect=("denied",),
            contains=("planning_setup_plan",),
        ),
        Step(
            "planning_setup_plan",
            {
                "objective": "Add a tested temperature-conversion module to weather-tools",
                "steps": [
                    "Look around the workspace",
                    "Write tempconv.py and its tests",
                    "Fix the Fahrenheit conversion",
                    "Run the tests in the sandbox",
                ],
            },
            "Set up a plan with four steps.",
        ),
        Step(
            "planning_update_step",
            {"step_id": 1, "status": "in_progress"},
            "Start step 1.",
        ),
    ),
)

_FILES: Final = Act(
    "Explore and edit files",
    (
        Step("ls", {"path": ""}, "List the workspace.", contains=("README.md",)),
        Step(
            "edit_file",
            {"path": "README.md", "old_string": "Nothing here yet.", "new_string": "- tempconv"},
            "Edit README.md without reading it: the read-before-write policy denies it.",
            expect=("denied",),
            contains=("read_file",),
        ),
        Step(
            "read_file",
            {"path": "README.md"},
            "Read it first.",
            contains=("Nothing here yet.",),
        ),
        Step(
            "edit_file",
            {
                "path": "README.md",
                "old_string": "Nothing here yet.",
                "new_string": "- `tempconv`: Celsius/Fahrenheit conversions.",
            },
            "Now the same edit is allowed.",
        ),
        Step("planning_update_step", {"step_id": 1, "status": "done"}, "Step 1 is done."),
        Step(
            "write_file",
            {"path": "tempconv.py", "content": _MODULE},
            "Write the module (it has a precedence bug).",
        ),
        Step(
            "write_file",
            {"path": "test_tempconv.py", "content": _TESTS},
            "Write its tests.",
        ),
        Step(
            "glob",
            {"pattern": "**/*.py"},
            "Find the Python files.",
            contains=("tempconv.py", "test_tempconv.py"),
        ),
        Step(
            "grep",
            {"pattern": r"^def \w+", "glob": "*.py"},
            "Find the function definitions.",
            contains=("c_to_f", "f_to_c"),
        ),
        Step("planning_update_step", {"step_id": 2, "status": "done"}, "Step 2 is done."),
        Step(
            "edit_file",
            {"path": "tempconv.py", "old_string": ", 1)", "new_string": ", 2)"},
            "An edit whose text occurs twice: the call fails and is rolled back.",
            expect=("error", "failed"),
        ),
        Step(
            "read_file",
            {"path": "tempconv.py"},
            "The file is unchanged.",
            contains=(", 1)",),
            absent=(", 2)",),
        ),
        Step(
            "edit_file",
            {"path": "tempconv.py", "old_string": _BUG, "new_string": _FIX},
            "Fix the bug with a unique match.",
        ),
        Step(
            "grep",
            {"pattern": "fahrenheit - 32", "path": "tempconv.py"},
            "Check the fix.",
            contains=(_FIX,),
        ),
        Step("planning_update_step", {"step_id": 3, "status": "done"}, "Step 3 is done."),
    ),
)

_SANDBOX: Final = Act(
    "Run commands in the sandbox",
    (
        Step(
            "planning_update_step",
            {"step_id": 4, "status": "in_progress"},
            "Start step 4.",
            needs=("shell_execute",),
        ),
        Step(
            "shell_execute",
            {"command": "ls && head -n 3 tempconv.py"},
            "The shell sees the files the file tools wrote.",
            contains=("test_tempconv.py", "Temperature conversions"),
            needs=("write_file",),
        ),
        Step(
            "shell_execute",
            {"command": "python3 -B -m unittest -v", "timeout": 60},
            "Run the tests.",
            contains=("Ran 2 tests", "OK"),
            needs=("write_file",),
        ),
        Step(
            "shell_execute",
            {"command": "echo half-written > build.log && echo 'build failed' >&2 && exit 3"},
            "A command writes a file, then exits 3: the call fails (its exit code and output "
            "are still shown) and is rolled back.",
            expect=("failed", "error"),
            contains=("exit code 3", "build failed"),
        ),
        Step(
            "ls",
            {"path": ""},
            "build.log is gone.",
            contains=("tempconv.py",),
            absent=("build.log",),
            needs=("shell_execute",),
        ),
        Step(
            "evaluate_python",
            {
                "code": "import os, sys\nsys.path[:0] = ['/workspace', os.getcwd()]\n"
                "from tempconv import c_to_f, f_to_c\nprint(c_to_f(21.5), f_to_c(70.7))"
            },
            "Evaluate Python against the module.",
            contains=("70.7 21.5",),
            needs=("write_file",),
        ),
        Step(
            "planning_update_step",
            {"step_id": 4, "status": "done"},
            "Step 4 is done.",
            needs=("shell_execute",),
        ),
    ),
    sandbox=True,
)

_WRAP_UP: Final = Act(
    "Wrap up",
    (Step("planning_read_plan", {}, "Read the plan."),),
)

#: The scripted session ``haversack demo`` plays.
SCENARIO: Final = Scenario(
    title="Add a tested temperature-conversion module to a small project",
    seeds=(Seed("README.md", _README),),
    acts=(_PLAN, _FILES, _SANDBOX, _WRAP_UP),
    providers={
        **dict.fromkeys((*_PLANNING, "planning_read_plan"), "planning"),
        **dict.fromkeys(_VFS, "vfs"),
        **dict.fromkeys(_PODMAN, "podman"),
    },
)

"""``haversack.errors``: the tree drawn in its docstring, and messages that carry context."""

from __future__ import annotations

import pytest

from haversack import errors
from haversack.errors import (
    DeadlineExceededError,
    FilesystemError,
    FilesystemLimitError,
    HaversackError,
    InvalidPathError,
    NameConflictError,
    PackConfigError,
    PackError,
    PackLoadError,
    PathExistsError,
    PathKindError,
    PathNotFoundError,
    PromptError,
    PromptEvaluationError,
    PromptRenderError,
    PromptValidationError,
    ReadOnlyFilesystemError,
    ResourceError,
    ToolValidationError,
)

TREE: list[tuple[type[BaseException], type[BaseException]]] = [
    (PromptError, HaversackError),
    (PromptValidationError, PromptError),
    (PromptValidationError, ValueError),
    (NameConflictError, PromptValidationError),
    (PromptRenderError, PromptError),
    (ToolValidationError, HaversackError),
    (ToolValidationError, ValueError),
    (FilesystemError, ToolValidationError),
    (InvalidPathError, FilesystemError),
    (PathNotFoundError, FilesystemError),
    (PathNotFoundError, FileNotFoundError),
    (PathExistsError, FilesystemError),
    (PathExistsError, FileExistsError),
    (PathKindError, FilesystemError),
    (FilesystemLimitError, FilesystemError),
    (ReadOnlyFilesystemError, FilesystemError),
    (ReadOnlyFilesystemError, PermissionError),
    (PromptEvaluationError, HaversackError),
    (PromptEvaluationError, RuntimeError),
    (DeadlineExceededError, PromptEvaluationError),
    (ResourceError, HaversackError),
    (ResourceError, LookupError),
    (PackError, HaversackError),
    (PackLoadError, PackError),
    (PackConfigError, PackError),
    (PackConfigError, ValueError),
]


@pytest.mark.parametrize(("child", "parent"), TREE)
def test_inheritance(child: type, parent: type) -> None:
    assert issubclass(child, parent)


def test_prompt_render_error_is_not_a_value_error() -> None:
    assert not issubclass(PromptRenderError, ValueError)
    assert not issubclass(PromptEvaluationError, ValueError)


def test_every_class_is_in_the_docstring_tree_and_in_all() -> None:
    doc = errors.__doc__ or ""
    for name in errors.__all__:
        assert f" {name}" in doc, name
        if name != "ToolCallCancelled":
            assert issubclass(getattr(errors, name), HaversackError)
    assert errors.__all__ == sorted(errors.__all__)


def test_a_cancellation_is_outside_the_tree_so_except_exception_does_not_swallow_it() -> None:
    assert issubclass(errors.ToolCallCancelled, BaseException)
    assert not issubclass(errors.ToolCallCancelled, Exception)


def test_haversack_error_message() -> None:
    error = HaversackError("Something is wrong.")
    assert error.message == "Something is wrong."
    assert str(error) == "Something is wrong."


def test_prompt_error_str_includes_its_context() -> None:
    class Params:
        pass

    error = PromptValidationError(
        "Bad placeholder.",
        section_path=["root", "child"],
        tool_name="search",
        dataclass_type=Params,
        placeholder="nmae",
    )
    assert str(error) == (
        "Bad placeholder. [section 'root.child', tool 'search', "
        "dataclass test_prompt_error_str_includes_its_context.<locals>.Params, "
        "placeholder 'nmae']"
    )
    assert error.message == "Bad placeholder."
    assert error.section_path == ("root", "child")


def test_prompt_error_without_context_is_just_the_message() -> None:
    error = PromptRenderError("Missing params.")
    assert str(error) == "Missing params."
    assert (error.section_path, error.tool_name, error.dataclass_type, error.placeholder) == (
        (),
        None,
        None,
        None,
    )


def test_name_conflict_error_fields() -> None:
    error = NameConflictError(
        "Tool 'read' is claimed twice.",
        kind="tool",
        name="read",
        contributors=["haversack-vfs 1.0", "haversack-podman 1.0"],
    )
    assert (error.kind, error.name) == ("tool", "read")
    assert error.contributors == ("haversack-vfs 1.0", "haversack-podman 1.0")


def test_tool_validation_error_field_path() -> None:
    error = ToolValidationError("Invalid arguments.", field_path="steps.0.title")
    assert error.field_path == "steps.0.title"
    assert ToolValidationError("x").field_path is None


def test_filesystem_error_path_and_os_error_compatibility() -> None:
    error = PathNotFoundError("No such file: a.txt", path="a.txt")
    assert error.path == "a.txt"
    assert str(error) == "No such file: a.txt"
    with pytest.raises(FileNotFoundError, match=r"a\.txt"):
        raise error


def test_pack_error_names_the_pack() -> None:
    assert PackLoadError("Import failed.", pack="vfs").pack == "vfs"
    assert PackConfigError("Bad key.").pack is None


def test_catching_by_stdlib_base() -> None:
    with pytest.raises(ValueError, match="bad section"):
        raise PromptValidationError("bad section")
    with pytest.raises(RuntimeError, match="late"):
        raise DeadlineExceededError("late")
    with pytest.raises(LookupError, match="unbound"):
        raise ResourceError("unbound")

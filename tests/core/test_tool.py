"""``Tool[P, R]``: names, descriptions, types, handler shape, examples and ``is_async``."""

from __future__ import annotations

import functools
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import pytest

from haversack import Tool, ToolAnnotations, ToolExample, ToolResult
from haversack.errors import PromptValidationError


@dataclass(frozen=True)
class Params:
    path: str


@dataclass(frozen=True)
class Result:
    size: int


@dataclass(frozen=True)
class Other:
    x: int = 0


def handler(params: Any, *, context: Any) -> ToolResult[Any]:
    return ToolResult.ok()


async def async_handler(params: Any, *, context: Any) -> ToolResult[Any]:
    return ToolResult.ok()


def make(name: str = "read", description: str = "Read a file.", **kwargs: Any) -> Tool[Any, Any]:
    kwargs.setdefault("handler", handler)
    return Tool[Params, Result](name=name, description=description, **kwargs)


def test_fields_and_defaults() -> None:
    tool = make()
    assert tool.name == "read"
    assert tool.original_name == "read"
    assert tool.description == "Read a file."
    assert tool.handler is handler
    assert tool.examples == ()
    assert tool.annotations == ToolAnnotations()
    assert tool.params_type is Params
    assert tool.result_type is Result
    assert tool.result_is_sequence is False
    assert tool.is_async is False


def test_tool_is_frozen() -> None:
    tool = make()
    with pytest.raises(AttributeError):
        tool.name = "other"  # type: ignore[misc]


def test_tool_without_type_arguments_is_rejected() -> None:
    with pytest.raises(PromptValidationError, match=r"Tool\[ParamsType, ResultType\]") as info:
        Tool(name="bare", description="d", handler=handler)
    assert info.value.tool_name == "bare"


def test_tool_with_one_type_argument_is_rejected() -> None:
    with pytest.raises(PromptValidationError, match="needs its type arguments"):
        Tool[Params](name="one", description="d", handler=handler)  # type: ignore[misc]


@pytest.mark.parametrize("name", ["a", "read", "read_file", "read-file", "r2", "9", "a" * 64])
def test_valid_names(name: str) -> None:
    assert make(name=name).name == name


@pytest.mark.parametrize("name", ["", "Read", "read file", "read.file", "a" * 65, "é", "a\n"])
def test_invalid_names_raise(name: str) -> None:
    with pytest.raises(PromptValidationError, match="Tool name") as info:
        make(name=name)
    assert repr(name) in str(info.value)
    assert info.value.tool_name == name


def test_non_string_name_raises() -> None:
    with pytest.raises(PromptValidationError, match="Tool name 3 is invalid"):
        make(name=3)  # type: ignore[arg-type]


def test_description_is_stripped() -> None:
    assert make(description="  Read a file.\n").description == "Read a file."


@pytest.mark.parametrize(
    ("description", "match"),
    [
        ("", "1-1024 characters after stripping, got 0"),
        ("   ", "1-1024 characters after stripping, got 0"),
        ("x" * 1025, "got 1025; 1024 is OpenAI's limit"),
        ("Read\x00 a file", r"control character '\\x00' at 4"),
        (None, "description must be a string"),
    ],
)
def test_invalid_descriptions_raise(description: Any, match: str) -> None:
    with pytest.raises(PromptValidationError, match=match) as info:
        make(name="bad_desc", description=description)
    assert info.value.tool_name == "bad_desc"


def test_description_of_1024_characters_is_allowed() -> None:
    assert len(make(description="x" * 1024).description) == 1024


def test_non_ascii_descriptions_newlines_and_tabs_are_allowed() -> None:
    text = "Lire un fichier \u00e9crit en UTF-8 \u2014 \u8aad\u3080.\n\tLigne deux."
    assert make(description=text).description == text


def test_the_description_limit_is_a_setting(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HAVERSACK_MAX_DESCRIPTION", "4096")
    assert len(make(description="x" * 4096).description) == 4096
    with pytest.raises(PromptValidationError, match=r"1-4096 characters .* got 4097\. \["):
        make(description="x" * 4097)
    monkeypatch.setenv("HAVERSACK_MAX_DESCRIPTION", "lots")
    with pytest.raises(PromptValidationError, match="HAVERSACK_MAX_DESCRIPTION='lots'"):
        make(description="ok")


class Handlers:
    def method(self, params: Any, *, context: Any) -> ToolResult[Any]:
        return ToolResult.ok()

    async def async_method(self, params: Any, *, context: Any) -> ToolResult[Any]:
        return ToolResult.ok()


class CallableObject:
    def __call__(self, params: Any, *, context: Any) -> ToolResult[Any]:
        return ToolResult.ok()


class AsyncCallableObject:
    async def __call__(self, params: Any, *, context: Any) -> ToolResult[Any]:
        return ToolResult.ok()


def two_positional(config: Any, params: Any, *, context: Any) -> ToolResult[Any]:
    return ToolResult.ok()


async def async_two_positional(config: Any, params: Any, *, context: Any) -> ToolResult[Any]:
    return ToolResult.ok()


def positional_only(params: Any, /, *, context: Any) -> ToolResult[Any]:
    return ToolResult.ok()


@pytest.mark.parametrize(
    ("shape", "is_async"),
    [
        (handler, False),
        (async_handler, True),
        (positional_only, False),
        (Handlers().method, False),
        (Handlers().async_method, True),
        (CallableObject(), False),
        (AsyncCallableObject(), True),
        (functools.partial(two_positional, "cfg"), False),
        (functools.partial(async_two_positional, "cfg"), True),
        (lambda params, *, context: ToolResult.ok(), False),
    ],
)
def test_accepted_handler_shapes(shape: Any, is_async: bool) -> None:
    assert make(handler=shape).is_async is is_async


def no_params(*, context: Any) -> None: ...
def context_positional(params: Any, context: Any) -> None: ...
def wrong_keyword(params: Any, *, ctx: Any) -> None: ...
def extra_keyword(params: Any, *, context: Any, verbose: bool = False) -> None: ...
def extra_positional(params: Any, other: Any, *, context: Any) -> None: ...
def defaulted_positional(params: Any, other: Any = 1, *, context: Any) -> None: ...
def var_args(params: Any, *args: Any, context: Any) -> None: ...
def var_kwargs(params: Any, *, context: Any, **kwargs: Any) -> None: ...


@pytest.mark.parametrize(
    "shape",
    [
        no_params,
        context_positional,
        wrong_keyword,
        extra_keyword,
        extra_positional,
        defaulted_positional,
        var_args,
        var_kwargs,
        functools.partial(two_positional),
    ],
)
def test_rejected_handler_shapes(shape: Any) -> None:
    with pytest.raises(PromptValidationError, match="exactly one positional parameter") as info:
        make(name="shaped", handler=shape)
    assert info.value.tool_name == "shaped"
    assert "handler(params, *, context) -> ToolResult" in str(info.value)


def test_non_callable_handler_raises() -> None:
    with pytest.raises(PromptValidationError, match="handler must be callable, got int") as info:
        make(name="nc", handler=3)
    assert info.value.tool_name == "nc"


def test_handler_whose_signature_cannot_be_read_raises() -> None:
    with pytest.raises(PromptValidationError, match="Cannot read the handler's signature"):
        make(handler=max)  # a builtin without a signature


def test_handler_may_be_none_for_declared_only_tools() -> None:
    tool = make(handler=None)
    assert tool.handler is None
    assert tool.is_async is False


@pytest.mark.parametrize("tp", [int, str, list[Params], "Params", Any])
def test_params_type_must_be_a_dataclass_or_none(tp: Any) -> None:
    with pytest.raises(PromptValidationError, match="params type must be a dataclass or None") as i:
        Tool[tp, None](name="pt", description="d", handler=handler)
    assert i.value.tool_name == "pt"


@pytest.mark.parametrize("tp", [None, type(None)])
def test_params_type_none(tp: Any) -> None:
    assert Tool[tp, None](name="x", description="d", handler=handler).params_type is None


@pytest.mark.parametrize(
    ("tp", "is_sequence"),
    [
        (Result, False),
        (list[Result], True),
        (tuple[Result, ...], True),
        (Sequence[Result], True),
    ],
)
def test_result_types(tp: Any, is_sequence: bool) -> None:
    tool = Tool[None, tp](name="x", description="d", handler=handler)
    assert tool.result_type is Result
    assert tool.result_is_sequence is is_sequence


def test_result_type_none() -> None:
    tool = Tool[None, None](name="x", description="d", handler=handler)
    assert tool.result_type is None
    assert tool.result_is_sequence is False


@pytest.mark.parametrize(
    "tp",
    [int, list[int], tuple[Result], tuple[Result, Result], dict[str, Result], list, set[Result]],
)
def test_invalid_result_types_raise(tp: Any) -> None:
    with pytest.raises(PromptValidationError, match="result type must be a dataclass, None") as i:
        Tool[None, tp](name="rt", description="d", handler=handler)
    assert i.value.tool_name == "rt"


def test_annotations_must_be_tool_annotations() -> None:
    with pytest.raises(PromptValidationError, match="ToolAnnotations instance") as info:
        make(name="ann", annotations={"read_only": True})
    assert info.value.tool_name == "ann"


def test_annotations_are_kept() -> None:
    annotations = ToolAnnotations(read_only=True, idempotent=True)
    assert make(annotations=annotations).annotations.read_only is True


def test_valid_examples_are_kept_as_a_tuple() -> None:
    example = ToolExample("Read one file.", Params("a.txt"), Result(3))
    tool = make(examples=[example])
    assert tool.examples == (example,)


def test_example_input_must_be_the_params_type() -> None:
    with pytest.raises(PromptValidationError, match="input must be a Params, got Other") as info:
        make(name="ex", examples=[ToolExample("Wrong.", Other(), Result(1))])
    assert info.value.tool_name == "ex"
    assert info.value.dataclass_type is Params


def test_example_output_must_be_the_result_type() -> None:
    with pytest.raises(PromptValidationError, match="output must be Result, got Other") as info:
        make(name="ex", examples=[ToolExample("Wrong.", Params("a"), Other())])
    assert info.value.tool_name == "ex"
    assert info.value.dataclass_type is Result


def test_sequence_result_examples_need_a_sequence_of_instances() -> None:
    tool = Tool[Params, list[Result]](
        name="many",
        description="d",
        handler=handler,
        examples=[ToolExample("Two.", Params("a"), [Result(1), Result(2)])],
    )
    assert len(tool.examples) == 1
    bad: Any
    for bad in (Result(1), [Result(1), Other()], "text"):
        with pytest.raises(PromptValidationError, match="a sequence of Result") as info:
            Tool[Params, list[Result]](
                name="many",
                description="d",
                handler=handler,
                examples=[ToolExample("B.", Params("a"), bad)],
            )
        assert info.value.tool_name == "many"


def test_none_types_need_none_in_examples() -> None:
    ok = Tool[None, None](
        name="nothing",
        description="d",
        handler=handler,
        examples=[ToolExample("No-op.", None, None)],
    )
    assert len(ok.examples) == 1
    with pytest.raises(PromptValidationError, match="input must be None"):
        Tool[None, None](
            name="nothing",
            description="d",
            handler=handler,
            examples=[ToolExample[Any, None]("x", Params("a"), None)],
        )
    with pytest.raises(PromptValidationError, match="output must be None, got Result"):
        Tool[None, None](
            name="nothing",
            description="d",
            handler=handler,
            examples=[ToolExample[None, Any]("x", None, Result(1))],
        )


def test_examples_must_be_tool_examples() -> None:
    with pytest.raises(PromptValidationError, match="ToolExample instances, got tuple"):
        make(examples=[("d", Params("a"), Result(1))])


def test_example_description_is_checked() -> None:
    with pytest.raises(PromptValidationError, match="Tool example description must be 1-1024"):
        make(examples=[ToolExample("  ", Params("a"), Result(1))])


def test_original_name_survives_renaming() -> None:
    tool = make(name="fs_read", original_name="read")
    assert (tool.name, tool.original_name) == ("fs_read", "read")


def test_subscripted_tool_is_a_tool() -> None:
    assert isinstance(make(), Tool)
    assert Tool[Params, Result] is Tool[Params, Result]


def test_subscripted_tool_example_can_be_constructed() -> None:
    # Regression: a slotted frozen generic dataclass raised TypeError here on Python 3.11.
    example = ToolExample[Params, Result]("Read one file.", Params("a"), Result(1))
    assert make(examples=[example]).examples == (example,)

"""OpenAI providers: Chat Completions (any OpenAI-compatible server) and Responses."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, ClassVar

from haversack.adapters import openai as fmt

from ._chat_stream import ChatStream, chat_reply
from ._clients import TOOL_CHOICES, SdkClients
from ._provider import Conversation, OnText, Reply
from ._records import Usage

if TYPE_CHECKING:
    from haversack._deadline import Deadline
    from haversack._prompt import RenderedPrompt
    from haversack._result import ToolResult
    from haversack.adapters import ToolCall

__all__ = ["OpenAIChat", "OpenAIResponses"]


class _OpenAIBase(SdkClients):
    """Clients (built on first use from ``OPENAI_API_KEY``) and options shared by both APIs.
    A ``base_url`` (any OpenAI-compatible server, or ``$OPENAI_BASE_URL``) needs no key."""

    package = "openai"
    sync_class = "OpenAI"
    async_class = "AsyncOpenAI"
    key_env = "OPENAI_API_KEY"
    base_url_env = "OPENAI_BASE_URL"
    error_class: ClassVar[str] = "OpenAIError"
    label: ClassVar[str] = "OpenAI"


class OpenAIChat(_OpenAIBase):
    """OpenAI Chat Completions; ``base_url`` points it at any OpenAI-compatible server.

    ``tool_choice`` is ``auto``, ``required``, ``none`` or a tool's name (``required`` and a
    name hold until a tool was called). A streamed reply is assembled here from its chunks,
    tool-call names repeated in every chunk included (llama.cpp's server sends them so).
    ``options`` go to every ``chat.completions.create`` call (``temperature=...``).
    """

    @property
    def name(self) -> str:
        """``openai``."""
        return "openai"

    def tools(self, rendered: RenderedPrompt) -> list[dict[str, Any]]:
        """The prompt's tools as Chat Completions function tools."""
        return fmt.chat_tools(rendered)

    def start(self, system: str, task: str) -> Conversation:
        """System and user messages."""
        messages: list[Any] = [{"role": "system", "content": system}] if system else []
        messages.append({"role": "user", "content": task})
        return Conversation(system, messages)

    def _request(self, conversation: Conversation, tools: list[dict[str, Any]]) -> dict[str, Any]:
        request: dict[str, Any] = {"model": self._model, "messages": conversation.messages}
        if tools:
            request["tools"] = tools
        answered = any(_field(m, "role") == "tool" for m in conversation.messages)
        return request | self._tool_choice(tools, _names(tools), answered) | self.options

    def _tool_choice_value(self, choice: str) -> Any:
        if choice in TOOL_CHOICES:
            return choice
        return {"type": "function", "function": {"name": choice}}

    def _advice(self, exc: Exception) -> str:
        # llama-cpp-python's chatml-function-calling handler asserts on "required" and
        # answers a bare 500: say what the server may not take.
        if self.tool_choice == "required" and getattr(exc, "status_code", None) == 500:
            return (
                " (the server may not support tool_choice 'required': llama.cpp's "
                "chatml-function-calling takes 'auto' or a tool's name)"
            )
        return ""

    def complete(
        self,
        conversation: Conversation,
        tools: list[dict[str, Any]],
        on_text: OnText | None,
        deadline: Deadline | None = None,
    ) -> Reply:
        """One ``chat.completions`` call (streamed when ``stream`` is set), bounded by
        ``deadline``."""
        request = self._request(conversation, tools)

        def attempt(client: Any, text: OnText | None, tick: Callable[[], None]) -> Reply:
            if not self.stream:
                return chat_reply(client.chat.completions.create(**request))
            assembled = ChatStream()
            with client.chat.completions.create(**_streamed(request)) as stream:
                for chunk in stream:
                    tick()
                    piece = assembled.add(chunk)
                    if piece and text is not None:
                        text(piece)
            return assembled.reply(_names(tools))

        return self._call("chat completions", deadline, on_text, attempt)

    async def acomplete(
        self,
        conversation: Conversation,
        tools: list[dict[str, Any]],
        on_text: OnText | None,
        deadline: Deadline | None = None,
    ) -> Reply:
        """:meth:`complete` with the async client."""
        request = self._request(conversation, tools)

        async def attempt(client: Any, text: OnText | None, tick: Callable[[], None]) -> Reply:
            if not self.stream:
                return chat_reply(await client.chat.completions.create(**request))
            assembled = ChatStream()
            async with await client.chat.completions.create(**_streamed(request)) as stream:
                async for chunk in stream:
                    tick()
                    piece = assembled.add(chunk)
                    if piece and text is not None:
                        text(piece)
            return assembled.reply(_names(tools))

        return await self._acall("chat completions", deadline, on_text, attempt)

    def add_reply(self, conversation: Conversation, reply: Reply) -> None:
        """The assistant message, with its tool calls as the model sent them."""
        # A string even beside tool calls: llama.cpp's server (and others that validate the
        # message) answer 500 to ``"content": null``; the OpenAI API takes ``""`` as well.
        message: dict[str, Any] = {"role": "assistant", "content": reply.text}
        if reply.calls:
            message["tool_calls"] = [
                {
                    "id": call.call_id,
                    "type": "function",
                    "function": {"name": call.name, "arguments": _text(call.arguments)},
                }
                for call in reply.calls
            ]
        conversation.messages.append(message)

    def add_results(
        self, conversation: Conversation, results: list[tuple[ToolCall, ToolResult[Any]]]
    ) -> None:
        """One ``tool`` message per call."""
        conversation.messages.extend(
            fmt.chat_tool_message(call.call_id, result.render()) for call, result in results
        )


def _streamed(request: dict[str, Any]) -> dict[str, Any]:
    return {"stream_options": {"include_usage": True}} | request | {"stream": True}


def _names(tools: list[dict[str, Any]]) -> set[str]:
    return {str(tool.get("function", {}).get("name")) for tool in tools}


def _field(message: object, name: str) -> object:
    return message.get(name) if isinstance(message, dict) else getattr(message, name, None)


class OpenAIResponses(_OpenAIBase):
    """OpenAI Responses API (stateless: the whole input is sent each turn).

    ``options`` go to every ``responses.create`` call.
    """

    @property
    def name(self) -> str:
        """``openai-responses``."""
        return "openai-responses"

    def tools(self, rendered: RenderedPrompt) -> list[dict[str, Any]]:
        """The prompt's tools as Responses function tools."""
        return fmt.response_tools(rendered)

    def start(self, system: str, task: str) -> Conversation:
        """The user's task as the first input item; the system text goes in ``instructions``."""
        return Conversation(system, [{"role": "user", "content": task}])

    def _request(self, conversation: Conversation, tools: list[dict[str, Any]]) -> dict[str, Any]:
        request: dict[str, Any] = {"model": self._model, "input": conversation.messages}
        if conversation.system:
            request["instructions"] = conversation.system
        if tools:
            request["tools"] = tools
        names = {str(tool.get("name")) for tool in tools}
        answered = any(_field(m, "type") == "function_call_output" for m in conversation.messages)
        return request | self._tool_choice(tools, names, answered) | self.options

    def _tool_choice_value(self, choice: str) -> Any:
        if choice in TOOL_CHOICES:
            return choice
        return {"type": "function", "name": choice}

    def _advice(self, exc: Exception) -> str:
        # OpenAI-compatible servers (llama.cpp, vLLM, Ollama...) mostly serve Chat
        # Completions only: their 404 here says nothing of that.
        import os

        base = self._base_url or os.environ.get(self.base_url_env)
        if base and getattr(exc, "status_code", None) in (404, 405):
            return (
                f" (the server at {base} has no Responses API: "
                f"use the model 'openai:{self._model}', Chat Completions, which "
                "OpenAI-compatible servers serve)"
            )
        return ""

    def complete(
        self,
        conversation: Conversation,
        tools: list[dict[str, Any]],
        on_text: OnText | None,
        deadline: Deadline | None = None,
    ) -> Reply:
        """One ``responses`` call (streamed when ``stream`` is set), bounded by ``deadline``."""
        request = self._request(conversation, tools)

        def attempt(client: Any, text: OnText | None, tick: Callable[[], None]) -> Reply:
            if not self.stream:
                return _response_reply(client.responses.create(**request))
            with client.responses.stream(**request) as stream:
                for event in stream:
                    tick()
                    if event.type == "response.output_text.delta" and text is not None:
                        text(event.delta)
                return _response_reply(stream.get_final_response())

        return self._call("responses", deadline, on_text, attempt)

    async def acomplete(
        self,
        conversation: Conversation,
        tools: list[dict[str, Any]],
        on_text: OnText | None,
        deadline: Deadline | None = None,
    ) -> Reply:
        """:meth:`complete` with the async client."""
        request = self._request(conversation, tools)

        async def attempt(client: Any, text: OnText | None, tick: Callable[[], None]) -> Reply:
            if not self.stream:
                return _response_reply(await client.responses.create(**request))
            async with client.responses.stream(**request) as stream:
                async for event in stream:
                    tick()
                    if event.type == "response.output_text.delta" and text is not None:
                        text(event.delta)
                return _response_reply(await stream.get_final_response())

        return await self._acall("responses", deadline, on_text, attempt)

    def add_reply(self, conversation: Conversation, reply: Reply) -> None:
        """The model's text as an assistant message, then its function calls as items."""
        if reply.text:
            conversation.messages.append({"role": "assistant", "content": reply.text})
        conversation.messages.extend(
            {
                "type": "function_call",
                "call_id": call.call_id,
                "name": call.name,
                "arguments": _text(call.arguments),
            }
            for call in reply.calls
        )

    def add_results(
        self, conversation: Conversation, results: list[tuple[ToolCall, ToolResult[Any]]]
    ) -> None:
        """One ``function_call_output`` item per call."""
        conversation.messages.extend(
            fmt.response_function_output(call.call_id, result.render()) for call, result in results
        )


def _response_reply(response: Any) -> Reply:
    usage = response.usage
    return Reply(
        text=response.output_text or "",
        calls=tuple(
            fmt.read_response_function_call(item)
            for item in response.output
            if item.type == "function_call"
        ),
        usage=Usage(usage.input_tokens, usage.output_tokens) if usage else Usage(),
        stop=str(response.status),
        truncated=response.status == "incomplete",
        raw=response,
    )


def _text(arguments: object) -> str:
    if isinstance(arguments, str):
        return arguments
    import json

    return json.dumps(arguments if arguments is not None else {})

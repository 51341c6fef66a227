"""Anthropic Messages provider."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, ClassVar

from haversack.adapters import anthropic as fmt

from ._clients import SdkClients
from ._provider import Conversation, OnText, Reply
from ._records import Usage

if TYPE_CHECKING:
    from haversack._deadline import Deadline
    from haversack._prompt import RenderedPrompt
    from haversack._result import ToolResult
    from haversack.adapters import ToolCall

__all__ = ["AnthropicMessages"]


class AnthropicMessages(SdkClients):
    """Anthropic Messages; the client is built on first use from ``ANTHROPIC_API_KEY``
    (optional with a ``base_url`` or ``$ANTHROPIC_BASE_URL``: a local or proxy server).

    ``max_tokens`` is required by the API; ``options`` go to every ``messages.create``.
    """

    package = "anthropic"
    sync_class = "Anthropic"
    async_class = "AsyncAnthropic"
    key_env = "ANTHROPIC_API_KEY"
    base_url_env = "ANTHROPIC_BASE_URL"
    error_class: ClassVar[str] = "AnthropicError"
    label: ClassVar[str] = "Anthropic"

    def __init__(
        self,
        model: str,
        *,
        max_tokens: int = 4096,
        client: Any = None,
        async_client: Any = None,
        base_url: str | None = None,
        api_key: str | None = None,
        stream: bool = False,
        tool_choice: str | None = None,
        **options: Any,
    ) -> None:
        super().__init__(
            model,
            client=client,
            async_client=async_client,
            base_url=base_url,
            api_key=api_key,
            stream=stream,
            tool_choice=tool_choice,
            **options,
        )
        self.max_tokens = max_tokens

    @property
    def name(self) -> str:
        """``anthropic``."""
        return "anthropic"

    def tools(self, rendered: RenderedPrompt) -> list[dict[str, Any]]:
        """The prompt's tools as Anthropic tools."""
        return fmt.tools(rendered)

    def start(self, system: str, task: str) -> Conversation:
        """The user's task; the system text goes in ``system``."""
        return Conversation(system, [{"role": "user", "content": task}])

    def _request(self, conversation: Conversation, tools: list[dict[str, Any]]) -> dict[str, Any]:
        request: dict[str, Any] = {
            "model": self._model,
            "max_tokens": self.max_tokens,
            "messages": conversation.messages,
        }
        if conversation.system:
            request["system"] = conversation.system
        if tools:
            request["tools"] = tools
        names = {str(tool.get("name")) for tool in tools}
        answered = any(_has_result(m) for m in conversation.messages)
        return request | self._tool_choice(tools, names, answered) | self.options

    def _tool_choice_value(self, choice: str) -> Any:
        named = {"auto": "auto", "required": "any", "none": "none"}
        if choice in named:
            return {"type": named[choice]}
        return {"type": "tool", "name": choice}

    def complete(
        self,
        conversation: Conversation,
        tools: list[dict[str, Any]],
        on_text: OnText | None,
        deadline: Deadline | None = None,
    ) -> Reply:
        """One ``messages`` call (streamed when ``stream`` is set), bounded by ``deadline``."""
        request = self._request(conversation, tools)

        def attempt(client: Any, text: OnText | None, tick: Callable[[], None]) -> Reply:
            if not self.stream:
                return _reply(client.messages.create(**request))
            with client.messages.stream(**request) as stream:
                for piece in stream.text_stream:
                    tick()
                    if text is not None:
                        text(piece)
                return _reply(stream.get_final_message())

        return self._call("messages", deadline, on_text, attempt)

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
                return _reply(await client.messages.create(**request))
            async with client.messages.stream(**request) as stream:
                async for piece in stream.text_stream:
                    tick()
                    if text is not None:
                        text(piece)
                return _reply(await stream.get_final_message())

        return await self._acall("messages", deadline, on_text, attempt)

    def add_reply(self, conversation: Conversation, reply: Reply) -> None:
        """The assistant message: its text block and its ``tool_use`` blocks."""
        content: list[dict[str, Any]] = []
        if reply.text:
            content.append({"type": "text", "text": reply.text})
        content.extend(
            {"type": "tool_use", "id": call.call_id, "name": call.name, "input": call.arguments}
            for call in reply.calls
        )
        if content:
            conversation.messages.append({"role": "assistant", "content": content})

    def add_results(
        self, conversation: Conversation, results: list[tuple[ToolCall, ToolResult[Any]]]
    ) -> None:
        """One user message holding a ``tool_result`` block per call."""
        blocks = [fmt.tool_result_block(call.call_id, result) for call, result in results]
        conversation.messages.append({"role": "user", "content": blocks})


def _has_result(message: object) -> bool:
    content = message.get("content") if isinstance(message, dict) else None
    return isinstance(content, list) and any(
        isinstance(block, dict) and block.get("type") == "tool_result" for block in content
    )


def _reply(message: Any) -> Reply:
    text = "".join(block.text for block in message.content if block.type == "text")
    usage = message.usage
    return Reply(
        text=text,
        calls=tuple(
            fmt.read_tool_use(block) for block in message.content if block.type == "tool_use"
        ),
        usage=Usage(usage.input_tokens, usage.output_tokens) if usage else Usage(),
        stop=str(message.stop_reason),
        truncated=message.stop_reason == "max_tokens",
        raw=message,
    )

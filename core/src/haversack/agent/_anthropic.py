"""Anthropic Messages provider."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from haversack.adapters import anthropic as fmt
from haversack.errors import ProviderError

from ._clients import SdkClients
from ._provider import Conversation, OnText, Reply
from ._records import Usage

if TYPE_CHECKING:
    from haversack._prompt import RenderedPrompt
    from haversack._result import ToolResult
    from haversack.adapters import ToolCall

__all__ = ["AnthropicMessages"]


class AnthropicMessages(SdkClients):
    """Anthropic Messages; the client is built on first use from ``ANTHROPIC_API_KEY``.

    ``max_tokens`` is required by the API; ``options`` go to every ``messages.create``.
    """

    package = "anthropic"
    sync_class = "Anthropic"
    async_class = "AsyncAnthropic"
    key_env = "ANTHROPIC_API_KEY"

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
        **options: Any,
    ) -> None:
        super().__init__(
            model,
            client=client,
            async_client=async_client,
            base_url=base_url,
            api_key=api_key,
            stream=stream,
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
        return request | self.options

    def _failed(self, exc: Exception) -> ProviderError:
        return ProviderError(
            f"The Anthropic messages request for model {self._model!r} failed: {exc}"
        )

    def complete(
        self, conversation: Conversation, tools: list[dict[str, Any]], on_text: OnText | None
    ) -> Reply:
        """One ``messages`` call (streamed when ``stream`` is set)."""
        import anthropic

        request = self._request(conversation, tools)
        try:
            if not self.stream:
                return _reply(self.client.messages.create(**request))
            with self.client.messages.stream(**request) as stream:
                for text in stream.text_stream:
                    if on_text is not None:
                        on_text(text)
                return _reply(stream.get_final_message())
        except anthropic.AnthropicError as exc:
            raise self._failed(exc) from exc

    async def acomplete(
        self, conversation: Conversation, tools: list[dict[str, Any]], on_text: OnText | None
    ) -> Reply:
        """:meth:`complete` with the async client."""
        import anthropic

        request = self._request(conversation, tools)
        try:
            if not self.stream:
                return _reply(await self.async_client.messages.create(**request))
            async with self.async_client.messages.stream(**request) as stream:
                async for text in stream.text_stream:
                    if on_text is not None:
                        on_text(text)
                return _reply(await stream.get_final_message())
        except anthropic.AnthropicError as exc:
            raise self._failed(exc) from exc

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

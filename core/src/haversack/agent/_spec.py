"""``model("provider:name")``: a provider from a one-word spec, as the CLI takes it."""

from __future__ import annotations

from typing import Any

from haversack.errors import ProviderError

from ._provider import Provider

__all__ = ["PROVIDERS", "model"]

#: Spec prefix -> what it selects.
PROVIDERS = {
    "openai": "OpenAI Chat Completions (any OpenAI-compatible server with base_url)",
    "openai-responses": "OpenAI Responses",
    "anthropic": "Anthropic Messages",
}


def model(spec: str, **options: Any) -> Provider:
    """The provider for ``spec`` (``openai:gpt-4o-mini``, ``openai-responses:gpt-4.1``,
    ``anthropic:claude-sonnet-5``); ``options`` go to its constructor (``base_url``,
    ``api_key``, ``stream``...)."""
    provider, sep, name = spec.partition(":")
    if not sep or not name.strip() or provider not in PROVIDERS:
        known = ", ".join(f"{key}:MODEL" for key in PROVIDERS)
        raise ProviderError(f"Cannot read the model {spec!r}: write it as one of {known}.")
    name = name.strip()
    if provider == "anthropic":
        from ._anthropic import AnthropicMessages

        return AnthropicMessages(name, **options)
    from ._openai import OpenAIChat, OpenAIResponses

    if provider == "openai":
        return OpenAIChat(name, **options)
    return OpenAIResponses(name, **options)

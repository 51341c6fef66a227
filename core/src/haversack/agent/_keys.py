"""API keys from the environment, and the precise error when one is missing."""

from __future__ import annotations

import os

from haversack.errors import ProviderError

__all__ = ["api_key", "sdk"]


def api_key(explicit: str | None, variable: str, provider: str, *, base_url: str | None) -> str:
    """``explicit``, else ``$variable``; a custom ``base_url`` (a local or proxy server,
    given or from the SDK's base-URL variable) needs none."""
    if explicit:
        return explicit
    found = os.environ.get(variable, "").strip()
    if found:
        return found
    if base_url:
        return "unused"  # local servers (vLLM, llama.cpp, Ollama) ignore it
    raise ProviderError(
        f"No API key for the {provider} provider: set the environment variable {variable} "
        "or pass api_key=... (--api-key on the command line)."
    )


def sdk(module: str, extra: str) -> None:
    """Fail with the install command when the provider's SDK is missing."""
    import importlib.util

    if importlib.util.find_spec(module) is None:
        raise ProviderError(
            f"The {module!r} package is not installed; install it with "
            f"`pip install 'haversack[{extra}]'`."
        )

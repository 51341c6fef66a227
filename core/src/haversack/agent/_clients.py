"""A provider's SDK clients: the caller's, or built on first use and closed after each run."""

from __future__ import annotations

from typing import Any, ClassVar

from ._keys import api_key, sdk

__all__ = ["SdkClients"]


class SdkClients:
    """The sync and async clients of one provider SDK, and the options every request shares.

    Clients passed in are the caller's (never closed here); clients built here from the API
    key (``key_env`` unless ``api_key`` is given) are closed by :meth:`close` /
    :meth:`aclose` after each run. A subclass names its SDK in the class variables.
    """

    #: The SDK's import name and distribution (for the "install it" message).
    package: ClassVar[str]
    #: The SDK's sync and async client classes.
    sync_class: ClassVar[str]
    async_class: ClassVar[str]
    #: The environment variable holding the API key.
    key_env: ClassVar[str]
    #: Whether a ``base_url`` (an OpenAI-compatible server) makes the key optional.
    keyless_base_url: ClassVar[bool] = False

    def __init__(
        self,
        model: str,
        *,
        client: Any = None,
        async_client: Any = None,
        base_url: str | None = None,
        api_key: str | None = None,
        stream: bool = False,
        **options: Any,
    ) -> None:
        self._model = model
        self._client = client
        self._async_client = async_client
        # Clients passed in are the caller's; those built here are closed after each run.
        self._own_client = client is None
        self._own_async_client = async_client is None
        self._base_url = base_url
        self._api_key = api_key
        self.stream = stream
        self.options = options

    @property
    def model(self) -> str:
        """The model name sent to the API."""
        return self._model

    def _kwargs(self) -> dict[str, Any]:
        sdk(self.package, self.package)
        key = api_key(
            self._api_key,
            self.key_env,
            self.package,
            base_url=self._base_url if self.keyless_base_url else None,
        )
        return {"api_key": key, "base_url": self._base_url}

    def close(self) -> None:
        """Close the sync client this provider built (the next run builds a new one)."""
        client = self._client
        if client is not None and self._own_client:
            self._client = None
            client.close()

    async def aclose(self) -> None:
        """Close the async client this provider built: it belongs to the run's event loop."""
        client = self._async_client
        if client is not None and self._own_async_client:
            self._async_client = None
            await client.close()

    @property
    def client(self) -> Any:
        """The SDK's sync client."""
        if self._client is None:
            self._client = getattr(_module(self.package), self.sync_class)(**self._kwargs())
        return self._client

    @property
    def async_client(self) -> Any:
        """The SDK's async client."""
        if self._async_client is None:
            module = _module(self.package)
            self._async_client = getattr(module, self.async_class)(**self._kwargs())
        return self._async_client


def _module(name: str) -> Any:
    from importlib import import_module

    return import_module(name)

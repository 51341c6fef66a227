"""A provider's SDK clients: the caller's, or built on first use and closed after each run."""

from __future__ import annotations

import os
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any, ClassVar, TypeVar

from haversack.errors import ProviderError

from ._bounds import Sockets, abounded, bounded
from ._keys import api_key, sdk

if TYPE_CHECKING:
    from haversack._deadline import Deadline

    from ._provider import OnText

__all__ = ["TOOL_CHOICES", "Attempt", "SdkClients"]

#: What ``tool_choice`` takes besides a tool's name.
TOOL_CHOICES = ("auto", "required", "none")

T = TypeVar("T")

#: One try of a request: ``(client, on_text, tick)``; ``tick()`` is called per stream event.
Attempt = Callable[[Any, "OnText | None", Callable[[], None]], T]


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
    #: The environment variable the SDK reads a base URL from (a key is optional with one).
    base_url_env: ClassVar[str]
    #: The SDK's root error class and the label that starts this provider's messages.
    error_class: ClassVar[str]
    label: ClassVar[str]

    def __init__(
        self,
        model: str,
        *,
        client: Any = None,
        async_client: Any = None,
        base_url: str | None = None,
        api_key: str | None = None,
        stream: bool = False,
        tool_choice: str | None = None,
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
        self.tool_choice = tool_choice
        self.options = options
        self._sockets = Sockets()

    def _tool_choice(
        self, tools: list[dict[str, Any]], names: set[str], answered: bool
    ) -> dict[str, Any]:
        """The request's tool choice, in this provider's format (``{}`` for none).

        ``required`` and a tool's name hold until the model has called a tool, then the
        model chooses again (``auto``): forced every turn, it could never answer.
        """
        choice = self.tool_choice
        if choice is None or not tools:
            return {}
        if choice not in TOOL_CHOICES and choice not in names:
            shown = ", ".join(sorted(names)[:20])
            raise ProviderError(
                f"tool_choice {choice!r} is neither {', '.join(TOOL_CHOICES)} nor the name of "
                f"one of the tools: {shown}"
            )
        if answered and choice not in ("auto", "none"):
            choice = "auto"
        return {"tool_choice": self._tool_choice_value(choice)}

    def _advice(self, exc: Exception) -> str:
        """What to do about ``exc``, when this provider knows (added to the error)."""
        return ""

    def _tool_choice_value(self, choice: str) -> Any:
        """``auto``, ``required``, ``none`` or a tool's name in this provider's format."""
        raise NotImplementedError

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
            base_url=self._base_url or os.environ.get(self.base_url_env),
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
            module = _module(self.package)
            # The provider's own HTTP client reports its sockets, so a deadline can cut them.
            http = module.DefaultHttpxClient(event_hooks=self._sockets.hooks())
            self._client = getattr(module, self.sync_class)(**self._kwargs(), http_client=http)
        return self._client

    @property
    def async_client(self) -> Any:
        """The SDK's async client."""
        if self._async_client is None:
            module = _module(self.package)
            self._async_client = getattr(module, self.async_class)(**self._kwargs())
        return self._async_client

    def _call(
        self, api: str, deadline: Deadline | None, on_text: OnText | None, attempt: Attempt[T]
    ) -> T:
        """``attempt`` bounded by ``deadline`` (see :func:`bounded`); any failure, an
        unreadable reply included, becomes a ``ProviderError`` naming the request."""
        sent = False

        def text(piece: str) -> None:
            nonlocal sent
            sent = True  # text already shown: a retry would show it twice
            if on_text is not None:
                on_text(piece)

        what = f"the {self.label} {api} request for model {self._model!r}"
        tick = (lambda: None) if deadline is None else (lambda: deadline.check(what))

        def run(bound: bool) -> T:
            client = self._limited(self.client, deadline if bound else None)
            return attempt(client, text if on_text is not None else None, tick)

        return bounded(
            run,
            deadline=deadline,
            sockets=self._sockets,
            what=what,
            failed=lambda exc: self._failed(api, exc),
            retryable=lambda exc: not sent and self._retryable(exc),
        )

    async def _acall(
        self,
        api: str,
        deadline: Deadline | None,
        on_text: OnText | None,
        attempt: Attempt[Awaitable[T]],
    ) -> T:
        """:meth:`_call` with the async client."""
        sent = False

        def text(piece: str) -> None:
            nonlocal sent
            sent = True
            if on_text is not None:
                on_text(piece)

        what = f"the {self.label} {api} request for model {self._model!r}"
        tick = (lambda: None) if deadline is None else (lambda: deadline.check(what))

        async def run(bound: bool) -> T:
            client = self._limited(self.async_client, deadline if bound else None)
            return await attempt(client, text if on_text is not None else None, tick)

        return await abounded(
            run,
            deadline=deadline,
            what=what,
            failed=lambda exc: self._failed(api, exc),
            retryable=lambda exc: not sent and self._retryable(exc),
        )

    @staticmethod
    def _limited(client: Any, deadline: Deadline | None) -> Any:
        # Under a deadline the SDK neither retries (its back-off ignores the deadline) nor
        # waits longer than the time left for any connect, read or write.
        if deadline is None:
            return client
        return client.with_options(max_retries=0, timeout=max(deadline.remaining(), 0.001))

    def _retryable(self, exc: Exception) -> bool:
        module = _module(self.package)
        if isinstance(exc, module.APIConnectionError):
            return True
        status = (
            getattr(exc, "status_code", None) if isinstance(exc, module.APIStatusError) else None
        )
        return status is not None and (status in (408, 409, 429) or status >= 500)

    def _failed(self, api: str, exc: Exception) -> ProviderError:
        from ._chat_stream import UnreadableReplyError

        if isinstance(exc, UnreadableReplyError):
            check = f"; check that the base URL points at the {self.label} API"
            detail = f"{exc}{check if exc.format else ''}"
        elif isinstance(exc, getattr(_module(self.package), self.error_class)):
            detail = str(exc)
        else:
            # The SDK read something that is not the API's format (an HTML page, an empty
            # stream, a JSON object without the fields): say so rather than show a traceback.
            detail = (
                f"the reply cannot be read as a {api} response ({type(exc).__name__}: "
                f"{exc}); check that the base URL points at the {self.label} API"
            )
        if len(detail) > _DETAIL:
            detail = detail[: _DETAIL - 3] + "..."
        detail += self._advice(exc)
        return ProviderError(
            f"The {self.label} {api} request for model {self._model!r} failed: {detail}"
        )


#: How much of an SDK's error text a ProviderError keeps (a server can send megabytes).
_DETAIL = 1000


def _module(name: str) -> Any:
    from importlib import import_module

    return import_module(name)

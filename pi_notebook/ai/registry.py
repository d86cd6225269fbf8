"""The API-provider registry and the two entry points, ``stream`` and ``complete``.

A provider registers one stream function per wire API (``model.api``): ``openai-completions``,
``anthropic-messages``, ``faux``... ``stream`` dispatches on ``model.api``; the returned stream
never raises for request, model or runtime failures (they arrive as an ``error`` event).
"""

from __future__ import annotations

import importlib
from collections.abc import Awaitable, Callable
from typing import TypeAlias

from .awaitables import maybe_await
from .event_stream import AssistantMessageEventStream
from .types import AssistantMessage, Context, Model, StreamOptions

StreamFunction: TypeAlias = Callable[
    [Model, Context, StreamOptions | None],
    AssistantMessageEventStream | Awaitable[AssistantMessageEventStream],
]

_providers: dict[str, StreamFunction] = {}


def register_api_provider(api: str, stream_fn: StreamFunction) -> None:
    _providers[api] = stream_fn


def unregister_api_provider(api: str) -> None:
    _providers.pop(api, None)


def get_api_provider(api: str) -> StreamFunction | None:
    return _providers.get(api)


def _ensure_builtin_providers() -> None:
    # Real HTTP providers register themselves on import; importing lazily keeps the
    # model layer usable without them and avoids an import cycle.
    try:
        importlib.import_module(f"{__package__}.providers")
    except ImportError:  # pragma: no cover - the providers package ships with pi_notebook
        pass


def stream(
    model: Model, context: Context, options: StreamOptions | None = None
) -> AssistantMessageEventStream | Awaitable[AssistantMessageEventStream]:
    """Start a streamed request on the provider registered for ``model.api``.

    A stream function may return the stream or an awaitable of it: ``await maybe_await(...)``."""
    fn = _providers.get(model.api)
    if fn is None:
        _ensure_builtin_providers()
        fn = _providers.get(model.api)
    if fn is None:
        raise ValueError(f"No API provider registered for api: {model.api}")
    return fn(model, context, options)


async def complete(
    model: Model, context: Context, options: StreamOptions | None = None
) -> AssistantMessage:
    """Run a request to the end and return the final assistant message."""
    response = await maybe_await(stream(model, context, options))
    return await response.result()

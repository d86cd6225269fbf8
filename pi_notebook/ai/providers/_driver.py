"""Driving one provider request: the request's task, its decoder and its event stream.

:func:`run_provider` turns a provider's request builder and event decoder into an
:class:`AssistantMessageEventStream`: ``start`` once the response is there, the decoder's
events, then ``done`` or ``error``.

A reply that is not an event stream (a redirect, a 200 HTML login page) is an error naming
its status and content type. The body is read decoded (gzip and deflate replies work) and
through :class:`SSEDecoder`'s event-size cap, and a reply streaming far past the output limit
its request asked for is cut as stop reason ``length`` (:mod:`._runaway`).

What it must never do: put an API key into an exception text, a repr, a log line or an
``error_message`` (every error text passes through :func:`redact`, including the texts of
errors raised by httpx and h11); replay a request once the response has started streaming;
raise out of a provider stream (every failure becomes an ``error`` event); or copy the whole
message per chunk.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Sequence
from typing import Any, Literal, Protocol

import httpx

from ..awaitables import maybe_await
from ..event_stream import AssistantMessageEventStream, terminal_event
from ..events import AssistantMessageEvent, ErrorEvent, StartEvent
from ..partial import REQUEST_ABORTED
from ..schema_warm_up import warm_schema_validator
from ..secrets import redact as redact_secrets
from ..types import AssistantMessage, Model, ProviderResponse, StreamOptions, empty_reply
from ._errors import ProviderError, describe_exception, media_type, not_an_event_stream
from ._request import PreparedRequest
from ._retry import Aborted, send_with_retries
from ._runaway import OutputMeter, requested_tokens, runaway_chars
from ._sse import MAX_EVENT_BYTES, SSEDecoder


def redact(text: str, secrets: Sequence[str]) -> str:
    """``text`` with every secret (``secrets`` in every form a library might print one, the
    environment's keys, key shapes) masked: ``pi_notebook.ai.redact``, the one redaction."""
    return redact_secrets(text, also=secrets)


Push = Callable[[AssistantMessageEvent], None]


class EventDecoder(Protocol):
    """A provider's per-request state: SSE events in, assistant-message events out."""

    def on_event(self, event: str, data: bytes) -> None: ...

    def finish(self) -> None:
        """The upstream stream ended: close blocks, raise ProviderError on a failed stop."""
        ...


DecoderFactory = Callable[[AssistantMessage, Push], EventDecoder]
Prepare = Callable[[], Awaitable[PreparedRequest]]

_running: set[asyncio.Task[None]] = set()


def run_provider(
    model: Model,
    options: StreamOptions | None,
    prepare: Prepare,
    decoder_factory: DecoderFactory,
) -> AssistantMessageEventStream:
    """Start the request in a task of the running loop and return its event stream."""
    try:
        loop = asyncio.get_running_loop()
    except RuntimeError:
        return _deferred(model, options, prepare, decoder_factory)
    stream = AssistantMessageEventStream()
    task = loop.create_task(_drive(stream, model, options, prepare, decoder_factory))
    _running.add(task)
    task.add_done_callback(_running.discard)
    return stream


def _deferred(
    model: Model, options: StreamOptions | None, prepare: Prepare, decoder_factory: DecoderFactory
) -> AssistantMessageEventStream:
    # Called outside a running loop: start the request once someone iterates.
    async def relay() -> Any:
        inner = run_provider(model, options, prepare, decoder_factory)
        async for event in inner:
            yield event

    return AssistantMessageEventStream.from_events(relay())


async def _drive(
    stream: AssistantMessageEventStream,
    model: Model,
    options: StreamOptions | None,
    prepare: Prepare,
    decoder_factory: DecoderFactory,
) -> None:
    output = empty_reply(model)
    signal = options.signal if options is not None else None
    secrets: list[str] = []
    if options is not None and options.api_key:
        secrets.append(options.api_key)
    response: httpx.Response | None = None
    remove_listener: Callable[[], None] | None = None
    task = asyncio.current_task()
    push = stream.push
    try:
        if signal is not None:
            if signal.aborted:
                raise Aborted
            assert task is not None
            remove_listener = signal.add_listener(task.cancel)
        prepared = await prepare()
        secrets.extend(s for s in prepared.secrets if s not in secrets)
        offers_tools = isinstance(prepared.body, dict) and bool(prepared.body.get("tools"))
        # A reply may call a tool: import its validator while the model is awaited.
        on_sent = warm_schema_validator if offers_tools else None
        response = await send_with_retries(prepared, options, on_sent)
        if options is not None and options.on_response is not None:
            await maybe_await(
                options.on_response(
                    ProviderResponse(
                        status=response.status_code, headers=dict(response.headers.items())
                    ),
                    model,
                )
            )
        if not _is_event_stream(response):
            raise ProviderError(await not_an_event_stream(response), response.status_code)
        push(StartEvent(output))
        tokens = requested_tokens(prepared.body)
        meter = OutputMeter(push, runaway_chars(tokens)) if tokens is not None else None
        decoder = decoder_factory(output, push if meter is None else meter)
        max_event_bytes = options.max_event_bytes if options is not None else None
        sse = SSEDecoder(max_event_bytes or MAX_EVENT_BYTES)
        feed = sse.feed
        on_event = decoder.on_event
        try:
            async for chunk in response.aiter_bytes():  # decoded: gzip / deflate replies work
                if meter is not None and meter.over:
                    break  # more after the cap: the server ignores the limit (closed below)
                for name, data in feed(chunk):
                    on_event(name, data)
        except httpx.DecodingError as exc:
            encoding = response.headers.get("content-encoding", "").strip() or "encoded"
            raise ProviderError(f"Could not decode the {encoding} reply: {exc}") from None
        if meter is not None and meter.over and tokens is not None:
            meter.cut(output, tokens)
        else:
            for name, data in sse.flush():
                on_event(name, data)
            decoder.finish()
        if signal is not None and signal.aborted:
            raise Aborted
        push(terminal_event(output))
    except asyncio.CancelledError:
        aborted = signal is not None and signal.aborted
        if aborted and task is not None:
            task.uncancel()
        _fail(stream, output, "aborted", REQUEST_ABORTED)
        if not aborted:
            raise
    except Aborted:
        _fail(stream, output, "aborted", REQUEST_ABORTED)
    except Exception as exc:
        if signal is not None and signal.aborted:
            _fail(stream, output, "aborted", REQUEST_ABORTED)
        else:
            _fail(stream, output, "error", redact(describe_exception(exc), secrets) or "Error")
    finally:
        if remove_listener is not None:
            remove_listener()
        if response is not None:
            try:
                await response.aclose()
            except Exception:  # closing a broken connection must not mask the outcome
                pass
        stream.end()


def _is_event_stream(response: httpx.Response) -> bool:
    """A 2xx whose content type is ``text/event-stream``, or is not given (read as one)."""
    return response.is_success and media_type(response) in ("text/event-stream", "")


def _fail(
    stream: AssistantMessageEventStream,
    output: AssistantMessage,
    reason: Literal["aborted", "error"],
    message: str,
) -> None:
    output.stop_reason = "aborted" if reason == "aborted" else "error"
    output.error_message = message
    stream.push(ErrorEvent(reason, output))

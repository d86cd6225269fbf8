"""Shared HTTP plumbing for the real model providers.

What lives here: one pooled ``httpx.AsyncClient`` per event loop (HTTP/1.1), an incremental
SSE decoder, the request driver (retries before the first streamed byte, timeouts, abort,
readable error texts) and :func:`run_provider`, which turns a provider's request builder and
event decoder into an :class:`AssistantMessageEventStream`.

What it must never do: put an API key into an exception text, a repr, a log line or an
``error_message`` (every error text passes through :func:`redact`, including the texts of
errors raised by httpx and h11); replay a request once the response has started streaming;
raise out of a provider stream (every failure becomes an ``error`` event); or copy the whole
message per chunk.
"""

from __future__ import annotations

import asyncio
import email.utils
import json
import math
import os
import random
import time
import weakref
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

import httpx
from pydantic_core import from_json

from .._base import camel, trusted
from ..event_stream import AssistantMessageEventStream
from ..events import AssistantMessageEvent, DoneEvent, ErrorEvent, StartEvent
from ..partial import REQUEST_ABORTED
from ..registry import maybe_await
from ..secrets import redact as redact_secrets
from ..secrets import redact_url
from ..types import AssistantMessage, Model, ProviderResponse, StreamOptions, empty_reply

DEFAULT_MAX_RETRIES = 2
DEFAULT_MAX_RETRY_DELAY_MS = 60_000
MAX_ERROR_BODY_CHARS = 4000
DEFAULT_TIMEOUT = httpx.Timeout(connect=30.0, read=600.0, write=60.0, pool=60.0)

# --------------------------------------------------------------------------------------------
# The pooled client


_clients: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, httpx.AsyncClient] = (
    weakref.WeakKeyDictionary()
)


def get_client() -> httpx.AsyncClient:
    """The shared client of the running event loop (created on first use)."""
    loop = asyncio.get_running_loop()
    client = _clients.get(loop)
    if client is None or client.is_closed:
        client = httpx.AsyncClient(
            http1=True,
            http2=False,
            timeout=DEFAULT_TIMEOUT,
            limits=httpx.Limits(
                max_connections=100, max_keepalive_connections=20, keepalive_expiry=30.0
            ),
            follow_redirects=False,
        )
        _clients[loop] = client
    return client


async def aclose_client() -> None:
    """Close the running loop's shared client (a new one is made on next use)."""
    client = _clients.pop(asyncio.get_running_loop(), None)
    if client is not None:
        await client.aclose()


# --------------------------------------------------------------------------------------------
# Secrets


def redact(text: str, secrets: Sequence[str]) -> str:
    """``text`` with every secret (``secrets`` in every form a library might print one, the
    environment's keys, key shapes) masked: ``pi_notebook.ai.redact``, the one redaction."""
    return redact_secrets(text, also=secrets)


# --------------------------------------------------------------------------------------------
# SSE


class SSEDecoder:
    """Incremental Server-Sent Events decoder.

    Feed raw bytes as they arrive; get back complete ``(event, data)`` pairs, ``data`` as the
    UTF-8 bytes of the field (JSON parsers take bytes; error texts decode them). Handles LF,
    CRLF and lone CR line ends (also split across reads), ``:`` comments (keep-alives) and
    multi-line ``data:`` fields (joined with newlines). An event always ends at an ASCII
    newline, so it never splits a UTF-8 sequence.

    Works on bytes: complete events are cut at blank lines with ``bytes.split``; a run of
    one-line ``data: ...`` events (what OpenAI-compatible servers send) is cut out whole, and
    an ``event: ...`` + ``data: ...`` pair (Anthropic's shape) takes one partition. Anything
    else goes through the general field rules.
    """

    __slots__ = ("_buffer", "_held_cr")

    def __init__(self) -> None:
        self._buffer = bytearray()
        self._held_cr = False

    def feed(self, chunk: bytes) -> list[tuple[str, bytes]]:
        if self._held_cr:
            chunk = b"\r" + chunk
            self._held_cr = False
        if b"\r" in chunk:
            if chunk[-1:] == b"\r":  # a CRLF may be split across reads: decide on the next one
                chunk = chunk[:-1]
                self._held_cr = True
            chunk = chunk.replace(b"\r\n", b"\n").replace(b"\r", b"\n")
        buffer = self._buffer
        searched = max(0, len(buffer) - 1)  # the old part holds no blank line
        buffer += chunk
        end = buffer.rfind(b"\n\n", searched)
        if end < 0:
            return []
        complete = bytes(buffer[:end])
        del buffer[: end + 2]
        if complete[:6] == b"data: " and complete.count(b"\n") == 2 * complete.count(b"\n\ndata: "):
            return [("message", data) for data in complete[6:].split(b"\n\ndata: ")]
        out: list[tuple[str, bytes]] = []
        for block in complete.split(b"\n\n"):
            if block[:7] == b"event: ":
                name, _, data = block.partition(b"\n")
                if data[:6] == b"data: " and b"\n" not in data:  # Anthropic's event shape
                    out.append((name[7:].decode("utf-8", "replace") or "message", data[6:]))
                    continue
            if block:
                _parse_block(block, out)
        return out

    def flush(self) -> list[tuple[str, bytes]]:
        """End of stream: the last unterminated line and event are delivered."""
        rest = bytes(self._buffer)
        self._buffer.clear()
        self._held_cr = False
        out: list[tuple[str, bytes]] = []
        if rest:
            _parse_block(rest, out)
        return out


def _parse_block(block: bytes, out: list[tuple[str, bytes]]) -> None:
    """The general SSE field rules for the lines of one event (blank lines dispatch)."""
    event = ""
    data: list[bytes] = []
    for line in [*block.split(b"\n"), b""]:
        if not line:
            if data:
                out.append((event or "message", b"\n".join(data)))
                data = []
            event = ""
            continue
        if line[:1] == b":":
            continue
        name, _, value = line.partition(b":")
        if value[:1] == b" ":
            value = value[1:]
        if name == b"event":
            event = value.decode("utf-8", "replace")
        elif name == b"data":
            data.append(value)


# --------------------------------------------------------------------------------------------
# JSON on the per-chunk path


def loads(data: bytes) -> Any:
    """``json.loads`` for stream chunks, through pydantic-core's parser (jiter), which is faster.

    Anything jiter refuses goes through ``json.loads`` (after a UTF-8 decode that replaces
    invalid bytes), so results and the ValueError on bad input are the standard library's.
    """
    try:
        return from_json(data)
    except ValueError:
        return json.loads(data.decode("utf-8", "replace"))


def event_text(data: bytes, limit: int = 500) -> str:
    """The start of an event's data, for an error text."""
    return data[:limit].decode("utf-8", "replace")


def error_event_text(data: bytes) -> str:
    """The readable text of an SSE ``error`` event."""
    try:
        return error_payload_text(loads(data))
    except ValueError:
        return event_text(data, MAX_ERROR_BODY_CHARS) or "Provider sent an error event"


# --------------------------------------------------------------------------------------------
# Errors


async def apply_on_payload(body: Any, model: Model, options: StreamOptions | None) -> Any:
    """Let ``options.on_payload`` inspect or replace the request body (None keeps it)."""
    if options is None or options.on_payload is None:
        return body
    replaced = await maybe_await(options.on_payload(body, model))
    return body if replaced is None else replaced


class ProviderError(Exception):
    """A failure with a readable, already-redacted message."""

    def __init__(self, message: str, status: int | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.status = status


class _Aborted(Exception):
    pass


def _truncate(text: str, limit: int = MAX_ERROR_BODY_CHARS) -> str:
    if len(text) <= limit:
        return text
    return f"{text[:limit]}... [truncated {len(text) - limit} chars]"


def error_payload_text(payload: Any) -> str:
    """A readable text for a JSON error object (``{"error": {"message": ...}}`` and friends)."""
    err = payload.get("error", payload) if isinstance(payload, dict) else payload
    if isinstance(err, str):
        return err
    if isinstance(err, dict):
        message = err.get("message") or err.get("detail") or err.get("msg")
        if isinstance(message, str) and message:
            kind = err.get("type") or err.get("code")
            if isinstance(kind, str) and kind and kind not in message:
                return f"{message} ({kind})"
            return message
    return json.dumps(payload, ensure_ascii=False)


def format_http_error(status: int, body: bytes, reason: str) -> str:
    """``"429: rate limit exceeded (rate_limit_error)"``; the raw body when it is not JSON."""
    text = body.decode("utf-8", "replace").strip()
    if not text:
        return f"{status}: {reason or 'no body'}"
    try:
        payload = json.loads(text)
    except ValueError:
        return f"{status}: {_truncate(text)}"
    return f"{status}: {_truncate(error_payload_text(payload))}"


def describe_exception(exc: BaseException) -> str:
    if isinstance(exc, ProviderError):
        return exc.message
    if isinstance(exc, httpx.TimeoutException):
        return f"Request timed out ({type(exc).__name__})"
    if isinstance(exc, httpx.RemoteProtocolError):
        return f"Connection lost: {exc}" if str(exc) else "Connection lost"
    if isinstance(exc, httpx.ConnectError):
        return f"Connection error: {exc}" if str(exc) else "Connection error"
    if isinstance(exc, httpx.TransportError):
        return f"Network error: {exc}" if str(exc) else f"Network error ({type(exc).__name__})"
    text = str(exc)
    return text if text else type(exc).__name__


# --------------------------------------------------------------------------------------------
# Requests with retries


@dataclass
class PreparedRequest:
    url: str
    headers: dict[str, str]
    body: Any
    secrets: list[str] = field(default_factory=list)


def _timeout(options: StreamOptions | None) -> httpx.Timeout:
    if options is not None and options.timeout_ms is not None:
        return httpx.Timeout(max(options.timeout_ms, 1) / 1000)
    return DEFAULT_TIMEOUT


def _retryable(response: httpx.Response) -> bool:
    should = response.headers.get("x-should-retry")
    if should == "true":
        return True
    if should == "false":
        return False
    status = response.status_code
    return status in (408, 409, 429) or status >= 500


def _server_delay_ms(headers: httpx.Headers) -> float | None:
    value = headers.get("retry-after-ms")
    if value:
        try:
            return float(value)
        except ValueError:
            pass
    value = headers.get("retry-after")
    if value:
        try:
            return float(value) * 1000
        except ValueError:
            try:
                when = email.utils.parsedate_to_datetime(value)
            except (TypeError, ValueError):
                return None
            return max(0.0, when.timestamp() - time.time()) * 1000
    return None


def _retry_delay_s(
    response: httpx.Response | None, attempt: int, options: StreamOptions | None, message: str
) -> float:
    if response is not None:
        server = _server_delay_ms(response.headers)
        if server is not None:
            cap = DEFAULT_MAX_RETRY_DELAY_MS
            if options is not None and options.max_retry_delay_ms is not None:
                cap = options.max_retry_delay_ms
            if cap > 0 and server > cap:
                raise ProviderError(
                    f"Server requested {math.ceil(server / 1000)}s retry delay "
                    f"(max: {math.ceil(cap / 1000)}s). {message}",
                    response.status_code,
                )
            return max(0.0, server / 1000)
    backoff: float = min(0.5 * 2**attempt, 8.0)
    return backoff * (1 - random.random() * 0.25)


async def send_with_retries(
    prepared: PreparedRequest, options: StreamOptions | None
) -> httpx.Response:
    """POST and return a streaming 2xx response; retry 408/409/429/5xx and connection errors.

    Retries happen only here, before any byte of the body has been handed to a decoder.
    """
    client = get_client()
    signal = options.signal if options is not None else None
    max_retries = DEFAULT_MAX_RETRIES
    if options is not None and options.max_retries is not None:
        max_retries = max(0, options.max_retries)
    content = json.dumps(prepared.body, ensure_ascii=False, separators=(",", ":")).encode()
    timeout = _timeout(options)
    attempt = 0
    while True:
        request = client.build_request(
            "POST", prepared.url, headers=prepared.headers, content=content, timeout=timeout
        )
        response: httpx.Response | None = None
        try:
            response = await client.send(request, stream=True)
        except httpx.TransportError as exc:  # name the server (never its credentials)
            message = f"{describe_exception(exc)} (server: {redact_url(prepared.url)})"
            if attempt >= max_retries:
                raise ProviderError(message) from None
        else:
            if response.status_code < 400:
                return response
            try:
                body = await response.aread()
            except httpx.HTTPError:
                body = b""
            finally:
                await response.aclose()
            message = format_http_error(response.status_code, body, response.reason_phrase)
            if attempt >= max_retries or not _retryable(response):
                raise ProviderError(message, response.status_code)
        delay = _retry_delay_s(response, attempt, options, message)
        attempt += 1
        if signal is not None:
            if await signal.sleep(delay):
                raise _Aborted
        else:
            await asyncio.sleep(delay)


# --------------------------------------------------------------------------------------------
# Driving one provider request


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
                raise _Aborted
            assert task is not None
            remove_listener = signal.add_listener(task.cancel)
        prepared = await prepare()
        secrets.extend(s for s in prepared.secrets if s not in secrets)
        response = await send_with_retries(prepared, options)
        if options is not None and options.on_response is not None:
            await maybe_await(
                options.on_response(
                    ProviderResponse(
                        status=response.status_code, headers=dict(response.headers.items())
                    ),
                    model,
                )
            )
        push(trusted(StartEvent, {"type": "start", "partial": output}))
        decoder = decoder_factory(output, push)
        sse = SSEDecoder()
        feed = sse.feed
        on_event = decoder.on_event
        async for chunk in response.aiter_raw():
            for name, data in feed(chunk):
                on_event(name, data)
        for name, data in sse.flush():
            on_event(name, data)
        decoder.finish()
        if signal is not None and signal.aborted:
            raise _Aborted
        reason = output.stop_reason
        push(trusted(DoneEvent, {"type": "done", "reason": reason, "message": output}))
    except asyncio.CancelledError:
        aborted = signal is not None and signal.aborted
        if aborted and task is not None:
            task.uncancel()
        _fail(stream, output, "aborted", REQUEST_ABORTED)
        if not aborted:
            raise
    except _Aborted:
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


def _fail(
    stream: AssistantMessageEventStream, output: AssistantMessage, reason: str, message: str
) -> None:
    output.stop_reason = "aborted" if reason == "aborted" else "error"
    output.error_message = message
    stream.push(trusted(ErrorEvent, {"type": "error", "reason": reason, "error": output}))


# --------------------------------------------------------------------------------------------
# Small helpers shared by the providers


def sanitize_surrogates(text: str) -> str:
    """Drop lone surrogates (they cannot be encoded as UTF-8 JSON)."""
    for ch in text:
        if "\ud800" <= ch <= "\udfff":
            return "".join(c for c in text if not ("\ud800" <= c <= "\udfff"))
    return text


def compat_value(compat: dict[str, Any] | None, snake: str, default: Any) -> Any:
    """A compat switch by its snake_case name or Pi's camelCase name."""
    if not compat:
        return default
    if snake in compat and compat[snake] is not None:
        return compat[snake]
    value = compat.get(camel(snake))
    return default if value is None else value


def cache_retention(options: StreamOptions | None) -> str:
    """``options.cache_retention``, else ``long`` if ``PI_CACHE_RETENTION=long``, else ``short``."""
    if options is not None and options.cache_retention:
        return options.cache_retention
    return "long" if os.environ.get("PI_CACHE_RETENTION") == "long" else "short"


def merge_headers(*sources: dict[str, str] | dict[str, str | None] | None) -> dict[str, str]:
    """Later sources win (case-insensitively); a ``None`` value removes the header."""
    merged: dict[str, tuple[str, str]] = {}
    for source in sources:
        if not source:
            continue
        for key, value in source.items():
            if value is None:
                merged.pop(key.lower(), None)
            else:
                merged[key.lower()] = (key, value)
    return dict(merged.values())


__all__ = [
    "REQUEST_ABORTED",
    "PreparedRequest",
    "ProviderError",
    "SSEDecoder",
    "aclose_client",
    "cache_retention",
    "compat_value",
    "describe_exception",
    "error_event_text",
    "error_payload_text",
    "event_text",
    "format_http_error",
    "get_client",
    "loads",
    "merge_headers",
    "redact",
    "run_provider",
    "sanitize_surrogates",
]

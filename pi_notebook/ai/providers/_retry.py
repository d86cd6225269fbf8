"""Sending a request with retries: 408/409/429/5xx and connection errors, before any byte.

Backoff is exponential with jitter unless the server asks for a delay (``retry-after-ms``,
``retry-after``, or the ``RetryInfo.retryDelay`` of Google's error JSON); a server delay above
``max_retry_delay_ms`` fails at once. It must never
retry once a response has started streaming to a decoder, and an abort ends the wait.
"""

from __future__ import annotations

import asyncio
import email.utils
import json
import math
import random
import re
import time
from collections.abc import Awaitable, Callable
from typing import Any

import httpx

from ..types import StreamOptions
from ._client import get_client, request_timeout
from ._errors import ProviderError, connection_error_text, format_http_error, read_error_body
from ._request import PreparedRequest

DEFAULT_MAX_RETRIES = 2
DEFAULT_MAX_RETRY_DELAY_MS = 60_000


class Aborted(Exception):
    """The signal fired while waiting to retry."""


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


_GOOGLE_DELAY = re.compile(r"^(\d+(?:\.\d+)?)s$")


def _body_delay_ms(body: bytes) -> float | None:
    """Google's ``{"error": {"details": [{"@type": "...RetryInfo", "retryDelay": "37s"}]}}``."""
    if b"RetryInfo" not in body:
        return None
    try:
        payload = json.loads(body)
    except ValueError:
        return None
    error = payload.get("error") if isinstance(payload, dict) else None
    details = error.get("details") if isinstance(error, dict) else None
    for detail in details if isinstance(details, list) else []:
        if isinstance(detail, dict) and str(detail.get("@type", "")).endswith("RetryInfo"):
            match = _GOOGLE_DELAY.match(str(detail.get("retryDelay", "")))
            if match:
                return float(match.group(1)) * 1000
    return None


def _retry_delay_s(
    response: httpx.Response | None,
    attempt: int,
    options: StreamOptions | None,
    message: str,
    body: bytes = b"",
) -> float:
    if response is not None:
        server = _server_delay_ms(response.headers)
        if server is None:
            server = _body_delay_ms(body)
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
    prepared: PreparedRequest,
    options: StreamOptions | None,
    on_sent: Callable[[], object] | None = None,
) -> httpx.Response:
    """POST and return a streaming 2xx response; retry 408/409/429/5xx and connection errors.

    Retries happen only here, before any byte of the body has been handed to a decoder.
    ``on_sent`` is called when a request has been written and its response is awaited (from
    httpcore's ``trace`` extension; never, through a transport that does not trace).
    """
    client = get_client()
    signal = options.signal if options is not None else None
    max_retries = DEFAULT_MAX_RETRIES
    if options is not None and options.max_retries is not None:
        max_retries = max(0, options.max_retries)
    content = json.dumps(prepared.body, ensure_ascii=False, separators=(",", ":")).encode()
    timeout = request_timeout(options)
    attempt = 0
    while True:
        request = client.build_request(
            "POST",
            prepared.url,
            headers=prepared.headers,
            content=content,
            timeout=timeout,
            extensions={} if on_sent is None else {"trace": _on_sent_trace(on_sent)},
        )
        response: httpx.Response | None = None
        body = b""
        try:
            response = await client.send(request, stream=True)
        except httpx.TransportError as exc:  # name the server (never its credentials)
            message = connection_error_text(exc, prepared.url)
            if attempt >= max_retries:
                raise ProviderError(message) from None
        else:
            if response.status_code < 400:
                return response
            try:
                body, cut = await read_error_body(response)
            finally:
                await response.aclose()
            message = format_http_error(response.status_code, body, response.reason_phrase, cut=cut)
            if attempt >= max_retries or not _retryable(response):
                raise ProviderError(message, response.status_code)
        delay = _retry_delay_s(response, attempt, options, message, body)
        attempt += 1
        if signal is not None:
            if await signal.sleep(delay):
                raise Aborted
        else:
            await asyncio.sleep(delay)


def _on_sent_trace(on_sent: Callable[[], object]) -> Callable[[str, Any], Awaitable[None]]:
    """An httpcore ``trace`` callback calling ``on_sent`` once the response is being awaited
    (``http11.`` or ``http2.receive_response_headers.started``)."""

    async def trace(event_name: str, info: Any) -> None:
        if event_name.endswith(".receive_response_headers.started"):
            on_sent()

    return trace

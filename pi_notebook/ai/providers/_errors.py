"""Readable error texts for provider failures: HTTP errors, error events, transport errors.

Texts are one line where the server's allows, cut at :data:`MAX_ERROR_BODY_CHARS`. This module
only formats; redacting secrets is the request driver's job, done on every text it reports. The
one URL it names (a connection error's server) is shown without credentials or secret-looking
query values (:func:`redact_url`).
"""

from __future__ import annotations

import json
from typing import Any

import httpx

from ..secrets import redact_url
from ._json import loads

MAX_ERROR_BODY_CHARS = 4000


class ProviderError(Exception):
    """A failure with a readable, already-redacted message."""

    def __init__(self, message: str, status: int | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.status = status


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


def connection_error_text(exc: httpx.TransportError, url: str) -> str:
    """A transport failure naming the server it was for, never its credentials."""
    return f"{describe_exception(exc)} (server: {redact_url(url)})"


def event_text(data: bytes, limit: int = 500) -> str:
    """The start of an event's data, for an error text."""
    return data[:limit].decode("utf-8", "replace")


def error_event_text(data: bytes) -> str:
    """The readable text of an SSE ``error`` event."""
    try:
        return error_payload_text(loads(data))
    except ValueError:
        return event_text(data, MAX_ERROR_BODY_CHARS) or "Provider sent an error event"

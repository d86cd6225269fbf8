"""Readable error texts for provider failures: HTTP errors, error events, transport errors.

Texts are one line where the server's allows, cut at :data:`MAX_ERROR_BODY_CHARS`. An error
body is read once and never beyond :data:`MAX_ERROR_BODY_BYTES` (:func:`read_error_body`), so
a server's 20 MB error page costs 64 KiB. This module only reads and formats; redacting
secrets is the request driver's job, done on every text it reports. The one URL it names (a
connection error's server) is shown without credentials or secret-looking query values
(:func:`redact_url`).
"""

from __future__ import annotations

import json
import re
from typing import Any

import httpx

from ..secrets import redact_url
from ._json import loads

MAX_ERROR_BODY_CHARS = 4000
#: The most of an error body that is read (decoded bytes); the rest is never fetched.
MAX_ERROR_BODY_BYTES = 64 * 1024


class ProviderError(Exception):
    """A failure with a readable, already-redacted message."""

    def __init__(self, message: str, status: int | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.status = status


# A key-like run of characters at the end of a cut text (short enough to be a key's start).
_PARTIAL_TOKEN = re.compile(r"(?<![A-Za-z0-9_\-.+/=~])[A-Za-z0-9_\-.+/=~]{1,256}\Z")


def _head(text: str, limit: int, *, cut: bool = False) -> str:
    """``text[:limit]`` without a key-like run the cut goes through: a secret cut in half is
    not recognised by the redaction, so its start must not be shown."""
    head = text[:limit]
    if cut or len(text) > limit:
        match = _PARTIAL_TOKEN.search(head)
        if match is not None:
            return head[: match.start()]
    return head


def _truncate(text: str, limit: int = MAX_ERROR_BODY_CHARS, *, cut: bool = False) -> str:
    """``text`` up to ``limit`` chars; ``cut``: the body it came from was not read whole."""
    if cut:
        return f"{_head(text, limit, cut=True)}... [truncated]"
    if len(text) <= limit:
        return text
    head = _head(text, limit)
    return f"{head}... [truncated {len(text) - len(head)} chars]"


async def read_error_body(
    response: httpx.Response, limit: int = MAX_ERROR_BODY_BYTES
) -> tuple[bytes, bool]:
    """The start of ``response``'s (decoded) body, at most ``limit`` bytes, read once, and
    whether more was left unread. A failing read keeps what came; the caller closes."""
    parts: list[bytes] = []
    size = 0
    try:
        async for part in response.aiter_bytes():
            parts.append(part)
            size += len(part)
            if size > limit:
                break
    except httpx.HTTPError:
        pass
    body = b"".join(parts)
    return body[:limit], size > limit


def error_payload_text(payload: Any) -> str:
    """A readable text for a JSON error object (``{"error": {"message": ...}}`` and friends).

    The kind in brackets is ``type`` or a string ``code`` (OpenAI, Anthropic), else Google's
    ``status`` (``INVALID_ARGUMENT``); a one-element list (Google's array framing) is unwrapped.
    """
    if isinstance(payload, list) and len(payload) == 1 and isinstance(payload[0], dict):
        payload = payload[0]
    err = payload.get("error", payload) if isinstance(payload, dict) else payload
    if isinstance(err, str):
        return err
    if isinstance(err, dict):
        message = err.get("message") or err.get("detail") or err.get("msg")
        if isinstance(message, str) and message:
            kind = err.get("type") or err.get("code")
            if not isinstance(kind, str):
                kind = err.get("status")
            if isinstance(kind, str) and kind and kind not in message:
                return f"{message} ({kind})"
            return message
    return json.dumps(payload, ensure_ascii=False)


def body_text(body: bytes, *, cut: bool = False) -> str:
    """A readable text for an error body: the JSON error's message, else the body on one line
    (whitespace runs made one space), cut at :data:`MAX_ERROR_BODY_CHARS`; ``""`` if empty."""
    text = body.decode("utf-8", "replace").strip()
    if not text:
        return ""
    if not cut:
        try:
            payload = json.loads(text)
        except ValueError:
            pass
        else:
            return _truncate(error_payload_text(payload))
    return _truncate(" ".join(text.split()), cut=cut)


def format_http_error(status: int, body: bytes, reason: str, *, cut: bool = False) -> str:
    """``"429: rate limit exceeded (rate_limit_error)"``; the raw body when it is not JSON
    (``cut``: the body was read only up to :data:`MAX_ERROR_BODY_BYTES`)."""
    text = body_text(body, cut=cut)
    return f"{status}: {text or reason or 'no body'}"


def media_type(response: httpx.Response) -> str:
    """``text/event-stream`` for ``Content-Type: text/event-stream; charset=utf-8``."""
    content_type: str = response.headers.get("content-type", "")
    return content_type.partition(";")[0].strip().lower()


async def not_an_event_stream(response: httpx.Response) -> str:
    """``"Expected an event stream, got 200 text/html"``, with a JSON error's message (read
    up to the cap), or the redirect's target (never followed: a key must not travel)."""
    media_type_ = media_type(response)
    text = (
        f"Expected an event stream, got {response.status_code} {media_type_ or 'no content type'}"
    )
    if response.is_redirect:
        location = " ".join(response.headers.get("location", "").split())
        target = f" to {_truncate(location, 500)}" if location else ""
        return f"{text} (a redirect{target}, not followed)"
    if media_type_.endswith("json"):
        body, cut = await read_error_body(response)
        if cut:
            return text
        try:
            payload = json.loads(body)
        except ValueError:
            return text
        if isinstance(payload, dict) and {"error", "message", "detail"} & payload.keys():
            return f"{text}: {_truncate(error_payload_text(payload))}"
    return text


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
    """The start of an event's data, for an error text (a key-like run cut at the end is
    left out, as in :func:`_truncate`)."""
    head = data[:limit].decode("utf-8", "replace")
    return _head(head, len(head), cut=True) if len(data) > limit else head


def error_event_text(data: bytes) -> str:
    """The readable text of an SSE ``error`` event."""
    try:
        return error_payload_text(loads(data))
    except ValueError:
        return event_text(data, MAX_ERROR_BODY_CHARS) or "Provider sent an error event"

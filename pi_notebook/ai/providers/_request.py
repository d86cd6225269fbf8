"""Building a provider request: the prepared request, headers, compat switches, payload hook.

Helpers every provider's request builder shares. They never send anything and never log; a
key goes only into the headers the provider names, and into ``PreparedRequest.secrets`` so
the driver can keep it out of every error text.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ...settings import CACHE_RETENTION
from .._base import camel
from ..awaitables import maybe_await
from ..types import Model, StreamOptions


@dataclass
class PreparedRequest:
    url: str
    headers: dict[str, str]
    body: Any
    secrets: list[str] = field(default_factory=list)


async def apply_on_payload(body: Any, model: Model, options: StreamOptions | None) -> Any:
    """Let ``options.on_payload`` inspect or replace the request body (None keeps it)."""
    if options is None or options.on_payload is None:
        return body
    replaced = await maybe_await(options.on_payload(body, model))
    return body if replaced is None else replaced


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
    return CACHE_RETENTION.value()


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

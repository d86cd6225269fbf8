"""Turning what a tool function returns into an :class:`AgentToolResult`.

``str`` becomes text; ``dict`` / ``list`` / numbers become JSON text; a matplotlib figure, a PIL
image or PNG/JPEG/GIF/WebP bytes become image content; pandas and numpy objects become a
bounded text summary; an :class:`AgentToolResult` or content blocks pass through; anything else
is its (bounded) ``repr``. Matplotlib, PIL, pandas and numpy are never imported here: values are
recognised by their type's module and duck-typed methods.
"""

from __future__ import annotations

import base64
import io
import json
from typing import Any

from ..agent import AgentToolResult
from ..ai import ImageContent, TextContent
from .summary import DEFAULT_MAX_CHARS, bounded, is_dataframe, is_ndarray, is_series, summarize

NO_VALUE = "(no return value)"

_MAGIC: tuple[tuple[bytes, str], ...] = (
    (b"\x89PNG\r\n\x1a\n", "image/png"),
    (b"\xff\xd8\xff", "image/jpeg"),
    (b"GIF87a", "image/gif"),
    (b"GIF89a", "image/gif"),
)


def image_mime(data: bytes) -> str | None:
    """The MIME type of image bytes by their magic number, or ``None``."""
    for magic, mime in _MAGIC:
        if data.startswith(magic):
            return mime
    if data[:4] == b"RIFF" and data[8:12] == b"WEBP":
        return "image/webp"
    return None


def _image(data: bytes, mime: str) -> ImageContent:
    return ImageContent(data=base64.b64encode(data).decode("ascii"), mime_type=mime)


def _is_figure(value: Any) -> bool:
    module = type(value).__module__ or ""
    return module.startswith("matplotlib") and callable(getattr(value, "savefig", None))


def _is_pil_image(value: Any) -> bool:
    module = type(value).__module__ or ""
    return module.startswith("PIL") and callable(getattr(value, "save", None))


def figure_png(figure: Any) -> bytes:
    buffer = io.BytesIO()
    figure.savefig(buffer, format="png", bbox_inches="tight")
    return buffer.getvalue()


def pil_png(image: Any) -> bytes:
    buffer = io.BytesIO()
    image.save(buffer, format="PNG")
    return buffer.getvalue()


def to_content(value: Any, max_chars: int = DEFAULT_MAX_CHARS) -> list[TextContent | ImageContent]:
    """The content blocks for one returned value."""
    if value is None:
        return [TextContent(text=NO_VALUE)]
    if isinstance(value, TextContent | ImageContent):
        return [value]
    if isinstance(value, str):
        return [TextContent(text=value)]
    if isinstance(value, bytes | bytearray | memoryview):
        data = bytes(value)
        mime = image_mime(data)
        if mime is not None:
            return [_image(data, mime)]
        return [TextContent(text=bounded(repr(data), max_chars))]
    if _is_figure(value):
        return [_image(figure_png(value), "image/png")]
    if _is_pil_image(value):
        return [_image(pil_png(value), "image/png")]
    if is_dataframe(value) or is_series(value) or is_ndarray(value):
        return [TextContent(text=summarize(value, max_chars))]
    if (
        isinstance(value, list)
        and value
        and all(isinstance(item, TextContent | ImageContent) for item in value)
    ):
        return list(value)
    if isinstance(value, dict | list | tuple | int | float | bool):
        try:
            text = json.dumps(value, ensure_ascii=False, default=_json_default)
        except (TypeError, ValueError):
            text = repr(value)
        return [TextContent(text=bounded(text, max_chars))]
    return [TextContent(text=summarize(value, max_chars))]


def _json_default(value: Any) -> Any:
    if is_dataframe(value) or is_series(value) or is_ndarray(value):
        return summarize(value, 1000)
    item = getattr(value, "item", None)  # numpy scalars
    if callable(item):
        try:
            return item()
        except Exception:
            pass
    return str(value)


def to_result(value: Any, max_chars: int = DEFAULT_MAX_CHARS) -> AgentToolResult:
    """The tool result for a returned value (an ``AgentToolResult`` passes through)."""
    if isinstance(value, AgentToolResult):
        return value
    return AgentToolResult(content=to_content(value, max_chars))


__all__ = ["NO_VALUE", "figure_png", "image_mime", "pil_png", "to_content", "to_result"]

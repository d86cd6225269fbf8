"""llama.cpp's server rejecting a small model's output, as it answers a streamed chat
completion: a tool call streamed as it was parsed, then an error chunk (``data:
{"error": {...}}``) when the whole output does not parse; or HTTP 500 before any chunk.

Shared by the panel's unit tests and the kernel tests (served by :class:`.server.ScriptServer`).
"""

from __future__ import annotations

import json
from typing import Any

from pi_notebook.ai.providers._retry import DEFAULT_MAX_RETRIES

from .server import Handler, error, sse, stream_bytes

PARSE_ERROR = "Failed to parse input at pos 12: ```\n<tool_call>"
"""The server's message (llama.cpp's peg parser, after a stray code fence)."""
ERROR_BODY = {"error": {"code": 500, "message": PARSE_ERROR, "type": "server_error"}}
CODE = "print(40 + 2)"


def _chunk(delta: dict[str, Any]) -> dict[str, Any]:
    return {
        "id": "chatcmpl-1",
        "object": "chat.completion.chunk",
        "model": "qwen2.5-coder-1.5b",
        "choices": [{"index": 0, "delta": delta, "finish_reason": None}],
    }


def unparsed_tool_call(call_id: str = "call_1", *, fence: bool = True) -> Handler:
    """200, a stray "```" (``fence``), a ``run_python`` call streamed whole, then the error."""
    args = json.dumps({"code": CODE})
    frames: list[Any] = [_chunk({"role": "assistant", "content": None})]
    if fence:
        frames.append(_chunk({"content": "```"}))
    frames += [
        _chunk({"tool_calls": [{"index": 0, "id": call_id, "type": "function",
                                "function": {"name": "run_python", "arguments": ""}}]}),
        _chunk({"tool_calls": [{"index": 0, "function": {"arguments": args[:10]}}]}),
        _chunk({"tool_calls": [{"index": 0, "function": {"arguments": args[10:]}}]}),
        ERROR_BODY,
    ]  # fmt: skip
    return stream_bytes(sse(*frames, end=False))


def unparsed_up_front() -> list[Handler]:
    """HTTP 500 with the error body, nothing streamed: once per attempt (a 500 is retried;
    ``retry-after-ms: 0`` so the test does not wait out the backoff)."""
    return [error(500, ERROR_BODY, {"retry-after-ms": "0"}) for _ in range(DEFAULT_MAX_RETRIES + 1)]


def dropped_tool_call(call_id: str = "call_1") -> Handler:
    """200, part of a ``run_python`` call, then the connection drops (not a parse error)."""
    frames = [
        _chunk({"role": "assistant", "content": None}),
        _chunk({"tool_calls": [{"index": 0, "id": call_id, "type": "function",
                                "function": {"name": "run_python", "arguments": '{"code": '}}]}),
    ]  # fmt: skip
    return stream_bytes(sse(*frames, end=False), drop=True)


__all__ = [
    "CODE",
    "ERROR_BODY",
    "PARSE_ERROR",
    "dropped_tool_call",
    "unparsed_tool_call",
    "unparsed_up_front",
]

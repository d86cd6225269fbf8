"""The ``anthropic-messages`` API: Anthropic's Messages endpoint (and compatible servers) over SSE.

``POST {base_url}/v1/messages`` with ``stream: true``; thinking budgets from the thinking level,
signatures kept so thinking replays, prompt caching (``cache_control`` on the system prompt, the
last tool and the last user message) with cache read/write tokens in Usage.

The stream function never raises: failures arrive as an ``error`` event. It must never put the
API key anywhere but the ``x-api-key`` header, never copy the message per chunk, and never
leave scratch state on content blocks.
"""

from __future__ import annotations

import re
from typing import Any

from ..event_stream import AssistantMessageEventStream
from ..events import TextStartEvent, ThinkingStartEvent, ToolCallStartEvent
from ..partial import RawArguments, end_event, grow_text, grow_thinking, grow_tool_call
from ..transform import transform_messages
from ..types import (
    AssistantMessage,
    Context,
    Model,
    StreamOptions,
    TextContent,
    ThinkingContent,
    ToolCall,
)
from ..usage import finalize_usage
from ._driver import Push, run_provider
from ._errors import ProviderError, error_event_text, error_payload_text, event_text
from ._json import loads
from ._request import (
    PreparedRequest,
    apply_on_payload,
    cache_retention,
    compat_value,
    merge_headers,
    sanitize_surrogates,
)
from .keys import request_api_key

API = "anthropic-messages"
ANTHROPIC_VERSION = "2023-06-01"
INTERLEAVED_THINKING_BETA = "interleaved-thinking-2025-05-14"
DEFAULT_THINKING_BUDGETS = {"minimal": 1024, "low": 2048, "medium": 8192, "high": 16384}
_MESSAGE_EVENTS = frozenset(
    {
        "message_start",
        "message_delta",
        "message_stop",
        "content_block_start",
        "content_block_delta",
        "content_block_stop",
    }
)
_BAD_ID_CHARS = re.compile(r"[^a-zA-Z0-9_-]")


def normalize_tool_call_id(call_id: str) -> str:
    """Anthropic tool-use ids: ``[a-zA-Z0-9_-]{1,64}``."""
    return _BAD_ID_CHARS.sub("_", call_id)[:64]


# --------------------------------------------------------------------------------------------
# Request


def _cache_control(model: Model, options: StreamOptions | None) -> dict[str, Any] | None:
    retention = cache_retention(options)
    if retention == "none":
        return None
    control: dict[str, Any] = {"type": "ephemeral"}
    if retention == "long" and compat_value(model.compat, "supports_long_cache_retention", True):
        control["ttl"] = "1h"
    return control


def _tool_result_content(blocks: list[Any]) -> Any:
    if not any(b.type == "image" for b in blocks):
        return sanitize_surrogates("\n".join(b.text for b in blocks if b.type == "text"))
    out: list[dict[str, Any]] = []
    for b in blocks:
        if b.type == "text":
            out.append({"type": "text", "text": sanitize_surrogates(b.text)})
        else:
            out.append(_image(b))
    if not any(part["type"] == "text" for part in out):
        out.insert(0, {"type": "text", "text": "(see attached image)"})
    return out


def _image(block: Any) -> dict[str, Any]:
    return {
        "type": "image",
        "source": {"type": "base64", "media_type": block.mime_type, "data": block.data},
    }


def convert_messages(
    model: Model, context: Context, cache_control: dict[str, Any] | None
) -> list[dict[str, Any]]:
    """Our transcript as Messages-API ``messages``."""
    messages = transform_messages(context.messages, model, normalize_tool_call_id)
    allow_empty_signature = compat_value(model.compat, "allow_empty_signature", False)
    out: list[dict[str, Any]] = []
    i = 0
    while i < len(messages):
        msg = messages[i]
        role = getattr(msg, "role", None)
        if role == "user":
            if isinstance(msg.content, str):
                if msg.content.strip():
                    out.append({"role": "user", "content": sanitize_surrogates(msg.content)})
            else:
                parts: list[dict[str, Any]] = []
                for block in msg.content:
                    if block.type == "text":
                        if block.text.strip():
                            parts.append({"type": "text", "text": sanitize_surrogates(block.text)})
                    else:
                        parts.append(_image(block))
                if parts:
                    out.append({"role": "user", "content": parts})
        elif role == "assistant":
            blocks: list[dict[str, Any]] = []
            for block in msg.content:
                if block.type == "text":
                    if block.text.strip():
                        blocks.append({"type": "text", "text": sanitize_surrogates(block.text)})
                elif block.type == "thinking":
                    if block.redacted:
                        blocks.append(
                            {"type": "redacted_thinking", "data": block.thinking_signature or ""}
                        )
                        continue
                    signature = block.thinking_signature or ""
                    if not block.thinking.strip() and not signature.strip():
                        continue
                    thinking = sanitize_surrogates(block.thinking)
                    if signature.strip():
                        blocks.append(
                            {"type": "thinking", "thinking": thinking, "signature": signature}
                        )
                    elif allow_empty_signature:
                        blocks.append({"type": "thinking", "thinking": thinking, "signature": ""})
                    else:
                        blocks.append({"type": "text", "text": thinking})
                elif block.type == "toolCall":
                    blocks.append(
                        {
                            "type": "tool_use",
                            "id": block.id,
                            "name": block.name,
                            "input": block.arguments or {},
                        }
                    )
            if blocks:
                out.append({"role": "assistant", "content": blocks})
        elif role == "toolResult":
            results: list[dict[str, Any]] = []
            while i < len(messages) and getattr(messages[i], "role", None) == "toolResult":
                result = messages[i]
                results.append(
                    {
                        "type": "tool_result",
                        "tool_use_id": result.tool_call_id,
                        "content": _tool_result_content(result.content),
                        "is_error": result.is_error,
                    }
                )
                i += 1
            out.append({"role": "user", "content": results})
            continue
        i += 1
    if cache_control and out and out[-1]["role"] == "user":
        last = out[-1]
        if isinstance(last["content"], str):
            last["content"] = [
                {"type": "text", "text": last["content"], "cache_control": cache_control}
            ]
        elif last["content"] and last["content"][-1]["type"] in ("text", "image", "tool_result"):
            last["content"][-1]["cache_control"] = cache_control
    return out


def thinking_budget(
    level: str, model_max_tokens: int, max_tokens: int | None, budgets: dict[str, int] | None
) -> tuple[int, int]:
    """``(max_tokens, budget_tokens)`` for a thinking level (Pi's budget arithmetic)."""
    table = {**DEFAULT_THINKING_BUDGETS, **(budgets or {})}
    clamped = "high" if level in ("xhigh", "max") else level
    budget = table.get(clamped, table["medium"])
    total = model_max_tokens if max_tokens is None else min(max_tokens + budget, model_max_tokens)
    if total <= budget:
        budget = max(0, total - 1024)
    return total, budget


def _effort(model: Model, level: str) -> str:
    mapped = (model.thinking_level_map or {}).get(level)
    if isinstance(mapped, str):
        return mapped
    return {"minimal": "low", "low": "low", "medium": "medium"}.get(level, "high")


def build_body(model: Model, context: Context, options: StreamOptions | None) -> dict[str, Any]:
    """The JSON body of the request."""
    control = _cache_control(model, options)
    level = options.reasoning if options is not None else None
    max_tokens = options.max_tokens if options is not None else None
    body: dict[str, Any] = {
        "model": model.id,
        "messages": convert_messages(model, context, control),
        "max_tokens": max_tokens or model.max_tokens or 4096,
        "stream": True,
    }
    if context.system_prompt:
        system: dict[str, Any] = {
            "type": "text",
            "text": sanitize_surrogates(context.system_prompt),
        }
        if control:
            system["cache_control"] = control
        body["system"] = [system]
    thinking_on = bool(model.reasoning and level)
    if (
        options is not None
        and options.temperature is not None
        and not thinking_on
        and compat_value(model.compat, "supports_temperature", True)
    ):
        body["temperature"] = options.temperature
    if context.tools:
        first_party = "api.anthropic.com" in model.base_url
        eager = compat_value(model.compat, "supports_eager_tool_input_streaming", first_party)
        tools = []
        for tool in context.tools:
            schema = tool.json_schema()
            entry: dict[str, Any] = {
                "name": tool.name,
                "description": tool.description,
                "input_schema": {
                    "type": "object",
                    "properties": schema.get("properties", {}),
                    "required": schema.get("required", []),
                },
            }
            if eager:
                entry["eager_input_streaming"] = True
            tools.append(entry)
        if control and compat_value(model.compat, "supports_cache_control_on_tools", True):
            tools[-1]["cache_control"] = control
        body["tools"] = tools
    if model.reasoning:
        if thinking_on and level is not None:
            if compat_value(model.compat, "force_adaptive_thinking", False):
                body["thinking"] = {"type": "adaptive"}
                body["output_config"] = {"effort": _effort(model, level)}
            else:
                total, budget = thinking_budget(
                    level,
                    model.max_tokens or body["max_tokens"],
                    max_tokens,
                    options.thinking_budgets if options is not None else None,
                )
                body["max_tokens"] = total
                body["thinking"] = {
                    "type": "enabled",
                    "budget_tokens": min(budget, max(0, total - 1024)) or 1024,
                }
        elif (model.thinking_level_map or {}).get("off", "disabled") is not None:
            body["thinking"] = {"type": "disabled"}
    if options is not None and options.metadata:
        user_id = options.metadata.get("user_id")
        if isinstance(user_id, str):
            body["metadata"] = {"user_id": user_id}
    return body


def _prepare(model: Model, context: Context, options: StreamOptions | None) -> Any:
    async def prepare() -> PreparedRequest:
        extra = options.headers if options is not None else None
        explicit = options.api_key if options is not None else None
        key = request_api_key(
            model.provider, model.base_url, explicit, extra, ("authorization", "x-api-key")
        )
        body = await apply_on_payload(build_body(model, context, options), model, options)
        base: dict[str, str] = {
            "content-type": "application/json",
            "accept": "text/event-stream",
            "anthropic-version": ANTHROPIC_VERSION,
        }
        if not compat_value(model.compat, "force_adaptive_thinking", False):
            base["anthropic-beta"] = INTERLEAVED_THINKING_BETA
        headers = merge_headers(base, {"x-api-key": key} if key else None, model.headers, extra)
        url = model.base_url.rstrip("/") + "/v1/messages"
        return PreparedRequest(url=url, headers=headers, body=body, secrets=[key] if key else [])

    return prepare


# --------------------------------------------------------------------------------------------
# Response


def map_stop_reason(reason: str, details: Any = None) -> tuple[str, str | None]:
    if reason in ("end_turn", "pause_turn", "stop_sequence"):
        return "stop", None
    if reason == "max_tokens":
        return "length", None
    if reason == "tool_use":
        return "toolUse", None
    if reason == "refusal":
        explanation = details.get("explanation") if isinstance(details, dict) else None
        return "error", explanation or "The model refused to complete the request"
    if reason == "sensitive":
        return "error", "Provider stop_reason: sensitive"
    raise ProviderError(f"Unhandled stop reason: {reason}")


class AnthropicMessagesDecoder:
    """Messages-API stream events -> assistant-message events on the live ``output``."""

    def __init__(self, model: Model, output: AssistantMessage, push: Push) -> None:
        self.model = model
        self.output = output
        self.push = push
        self.content = output.content
        self.blocks: dict[int, int] = {}  # upstream block index -> content index
        self.raw_args: RawArguments = {}  # content index -> raw JSON
        self.stopped = False

    def on_event(self, event: str, data: bytes) -> None:
        if event == "error":
            raise ProviderError(error_event_text(data))
        if event not in _MESSAGE_EVENTS and event != "message":
            return  # ping and unknown events
        try:
            payload = loads(data)
        except ValueError:
            raise ProviderError(
                f"Could not parse Anthropic SSE event {event}: {event_text(data)}"
            ) from None
        if not isinstance(payload, dict):
            return
        kind = payload.get("type") or event
        if kind == "content_block_delta":
            self._delta(payload)
        elif kind == "content_block_start":
            self._start(payload)
        elif kind == "content_block_stop":
            self._stop(payload)
        elif kind == "message_start":
            message = payload.get("message") or {}
            self.output.response_id = message.get("id")
            self._usage(message.get("usage") or {}, initial=True)
        elif kind == "message_delta":
            delta = payload.get("delta") or {}
            reason = delta.get("stop_reason")
            if reason:
                stop, text = map_stop_reason(reason, delta.get("stop_details"))
                self.output.stop_reason = stop  # type: ignore[assignment]
                if text:
                    self.output.error_message = text
            if payload.get("usage"):
                self._usage(payload["usage"], initial=False)
        elif kind == "message_stop":
            self.stopped = True
        elif kind == "error":
            raise ProviderError(error_payload_text(payload))

    def _usage(self, raw: dict[str, Any], initial: bool) -> None:
        usage = self.output.usage
        if initial:
            usage.input = raw.get("input_tokens") or 0
            usage.output = raw.get("output_tokens") or 0
            usage.cache_read = raw.get("cache_read_input_tokens") or 0
            usage.cache_write = raw.get("cache_creation_input_tokens") or 0
            usage.cache_write_1h = (raw.get("cache_creation") or {}).get(
                "ephemeral_1h_input_tokens"
            ) or 0
        else:
            if raw.get("input_tokens") is not None:
                usage.input = raw["input_tokens"]
            if raw.get("output_tokens") is not None:
                usage.output = raw["output_tokens"]
            if raw.get("cache_read_input_tokens") is not None:
                usage.cache_read = raw["cache_read_input_tokens"]
            if raw.get("cache_creation_input_tokens") is not None:
                usage.cache_write = raw["cache_creation_input_tokens"]
            thinking = (raw.get("output_tokens_details") or {}).get("thinking_tokens")
            if thinking is not None:
                usage.reasoning = thinking
        finalize_usage(self.model, usage)

    def _start(self, payload: dict[str, Any]) -> None:
        block = payload.get("content_block") or {}
        kind = block.get("type")
        index = len(self.content)
        output = self.output
        event: TextStartEvent | ThinkingStartEvent | ToolCallStartEvent
        if kind == "text":
            self.content.append(TextContent(text=""))
            event = TextStartEvent(index, output)
        elif kind == "thinking":
            self.content.append(ThinkingContent(thinking="", thinking_signature=""))
            event = ThinkingStartEvent(index, output)
        elif kind == "redacted_thinking":
            signature = block.get("data", "")
            self.content.append(
                ThinkingContent(
                    thinking="[Reasoning redacted]", thinking_signature=signature, redacted=True
                )
            )
            event = ThinkingStartEvent(index, output)
        elif kind == "tool_use":
            initial = block.get("input")
            self.content.append(
                ToolCall(
                    id=block.get("id") or "",
                    name=block.get("name") or "",
                    arguments=initial if isinstance(initial, dict) else {},
                )
            )
            event = ToolCallStartEvent(index, output)
        else:
            return
        self.blocks[payload.get("index", index)] = index
        self.push(event)

    def _delta(self, payload: dict[str, Any]) -> None:
        index = self.blocks.get(payload.get("index", -1))
        if index is None:
            return
        delta = payload.get("delta") or {}
        kind = delta.get("type")
        block: Any = self.content[index]
        if kind == "text_delta" and block.type == "text":
            self.push(grow_text(self.output, index, delta.get("text") or ""))
        elif kind == "thinking_delta" and block.type == "thinking":
            self.push(grow_thinking(self.output, index, delta.get("thinking") or ""))
        elif kind == "input_json_delta" and block.type == "toolCall":
            fragment = delta.get("partial_json") or ""
            self.push(grow_tool_call(self.output, index, self.raw_args, fragment))
        elif kind == "signature_delta" and block.type == "thinking":
            block.thinking_signature = (block.thinking_signature or "") + (
                delta.get("signature") or ""
            )

    def _stop(self, payload: dict[str, Any]) -> None:
        index = self.blocks.pop(payload.get("index", -1), None)
        if index is None:
            return
        # A tool call's arguments are already the parse of its whole raw JSON (the last delta).
        self.raw_args.pop(index, None)
        self.push(end_event(self.output, index))

    def finish(self) -> None:
        self.raw_args.clear()
        if not self.stopped:
            raise ProviderError("Anthropic stream ended before message_stop")
        if self.output.stop_reason in ("error", "aborted"):
            raise ProviderError(self.output.error_message or "An unknown error occurred")


def stream_anthropic_messages(
    model: Model, context: Context, options: StreamOptions | None = None
) -> AssistantMessageEventStream:
    """Stream one Messages-API response as assistant-message events."""
    return run_provider(
        model,
        options,
        _prepare(model, context, options),
        lambda output, push: AnthropicMessagesDecoder(model, output, push),
    )


__all__ = [
    "API",
    "AnthropicMessagesDecoder",
    "build_body",
    "convert_messages",
    "map_stop_reason",
    "normalize_tool_call_id",
    "stream_anthropic_messages",
    "thinking_budget",
]

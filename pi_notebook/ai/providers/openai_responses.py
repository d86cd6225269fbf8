"""The ``openai-responses`` API: OpenAI's Responses endpoint over SSE, as Pi 0.82 speaks it.

``POST {base_url}/responses`` with ``stream: true`` and ``store: false``: the transcript goes as
Responses input items every time (nothing is kept server-side). Reasoning summaries stream as
thinking; each reasoning item, with its ``encrypted_content`` (``include:
["reasoning.encrypted_content"]``), is kept whole as the thinking block's signature and sent
back on the next request, so multi-turn tool use works on reasoning models. Tool-call ids are
``call_id|item_id``; text blocks keep their message item id as ``text_signature``
(``{"v":1,"id":...}``), as Pi does, so transcripts move between Pi and us unchanged.

Hand-written on the shared httpx driver rather than the ``openai`` SDK: the driver gives every
provider the same retries, abort, key redaction and in-place block growth, and the SDK's
Responses stream costs about 15x ours per event (``bench/bench_responses.py``).

The stream function never raises: failures arrive as an ``error`` event. It must never put the
API key anywhere but the Authorization header, never copy the message per event, and never
leave scratch state on content blocks.
"""

from __future__ import annotations

import json
import re
from typing import Any

from ..event_stream import AssistantMessageEventStream
from ..events import (
    TextEndEvent,
    TextStartEvent,
    ThinkingEndEvent,
    ThinkingStartEvent,
    ToolCallEndEvent,
    ToolCallStartEvent,
)
from ..json_incremental import IncrementalJsonObject
from ..json_parse import parse_json_object
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
    Usage,
)
from ..usage import calculate_cost
from ._driver import Push, run_provider
from ._errors import ProviderError, error_payload_text, event_text
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

API = "openai-responses"
MIN_OUTPUT_TOKENS = 16
"""OpenAI rejects ``max_output_tokens`` below 16 (Pi raises smaller values to it)."""
PROMPT_CACHE_KEY_MAX_CHARS = 64
THINKING_LEVELS = ("off", "minimal", "low", "medium", "high", "xhigh", "max")
_TOOL_CALL_PROVIDERS = frozenset({"openai", "openai-codex", "opencode"})
"""Providers whose ``call_id|item_id`` tool-call ids keep their item part (Pi's list)."""
_BAD_ID_CHARS = re.compile(r"[^a-zA-Z0-9_-]")


def _compact(value: Any) -> str:
    """``JSON.stringify``'s spelling, so signatures and arguments read the same as Pi's."""
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


# --------------------------------------------------------------------------------------------
# Compatibility switches


def get_compat(model: Model) -> dict[str, Any]:
    """Pi's switches for this API (``model.compat`` by snake_case or camelCase name wins)."""
    openrouter = model.provider == "openrouter" or "openrouter.ai" in model.base_url
    detected: dict[str, Any] = {
        "supports_developer_role": True,
        "session_affinity_format": "openrouter" if openrouter else "openai",
        "supports_long_cache_retention": True,
        "supports_strict_mode": False,
        "supports_explicit_prompt_cache_mode": False,
    }
    return {name: compat_value(model.compat, name, value) for name, value in detected.items()}


# --------------------------------------------------------------------------------------------
# Ids


def short_hash(text: str) -> str:
    """Pi's ``shortHash`` (two 32-bit multiply-xor lanes over UTF-16 code units, base 36), so
    ids we shorten are the ids Pi would send for the same transcript."""

    def imul(a: int, b: int) -> int:
        return (a * b) & 0xFFFFFFFF

    h1, h2 = 0xDEADBEEF, 0x41C6CE57
    units = text.encode("utf-16-le", "surrogatepass")
    for i in range(0, len(units), 2):
        ch = units[i] | (units[i + 1] << 8)
        h1 = imul(h1 ^ ch, 2654435761)
        h2 = imul(h2 ^ ch, 1597334677)
    h1 = imul(h1 ^ (h1 >> 16), 2246822507) ^ imul(h2 ^ (h2 >> 13), 3266489909)
    h2 = imul(h2 ^ (h2 >> 16), 2246822507) ^ imul(h1 ^ (h1 >> 13), 3266489909)
    return _base36(h2 & 0xFFFFFFFF) + _base36(h1 & 0xFFFFFFFF)


def _base36(value: int) -> str:
    digits = "0123456789abcdefghijklmnopqrstuvwxyz"
    out = ""
    while True:
        value, rest = divmod(value, 36)
        out = digits[rest] + out
        if not value:
            return out


def _id_part(part: str) -> str:
    return _BAD_ID_CHARS.sub("_", part)[:64].rstrip("_")


def normalize_tool_call_id(model: Model) -> Any:
    """Ids of tool calls made by another model, as this API accepts them.

    A ``call_id|item_id`` id keeps a hashed ``fc_`` item part on OpenAI's own providers
    (Responses item ids must start with ``fc``); anything else keeps ``[a-zA-Z0-9_-]{1,64}``.
    """

    def normalize(call_id: str) -> str:
        if model.provider not in _TOOL_CALL_PROVIDERS or "|" not in call_id:
            return _id_part(call_id)
        head, item = call_id.split("|")[:2]
        item_id = f"fc_{short_hash(item)}"[:64]
        return f"{_id_part(head)}|{item_id}"

    return normalize


def encode_text_signature(item_id: str, phase: str | None = None) -> str:
    payload: dict[str, Any] = {"v": 1, "id": item_id}
    if phase:
        payload["phase"] = phase
    return _compact(payload)


def parse_text_signature(signature: str | None) -> tuple[str, str | None] | None:
    """``(message item id, phase)`` from a text block's signature (v1 JSON or a bare id)."""
    if not signature:
        return None
    if signature.startswith("{"):
        try:
            parsed = json.loads(signature)
        except ValueError:
            parsed = None
        if isinstance(parsed, dict) and parsed.get("v") == 1 and isinstance(parsed.get("id"), str):
            phase = parsed.get("phase")
            return parsed["id"], phase if phase in ("commentary", "final_answer") else None
    return signature, None


# --------------------------------------------------------------------------------------------
# Request


def _tool_result_output(model: Model, content: list[Any]) -> str | list[dict[str, Any]]:
    text = "\n".join(b.text for b in content if b.type == "text")
    images = [b for b in content if b.type == "image"]
    if not images or "image" not in model.input:
        if not text:
            text = "(see attached image)" if images else "(no tool output)"
        return sanitize_surrogates(text)
    output: list[dict[str, Any]] = []
    if text:
        output.append({"type": "input_text", "text": sanitize_surrogates(text)})
    output.extend(_input_image(image) for image in images)
    return output


def _input_image(block: Any) -> dict[str, Any]:
    return {
        "type": "input_image",
        "detail": "auto",
        "image_url": f"data:{block.mime_type};base64,{block.data}",
    }


def _reasoning_item(signature: str | None) -> dict[str, Any] | None:
    """The reasoning item a thinking block came from (None if its signature is not one)."""
    if not signature:
        return None
    try:
        item = json.loads(signature)
    except ValueError:
        return None
    return item if isinstance(item, dict) and item.get("type") == "reasoning" else None


def convert_messages(model: Model, context: Context) -> list[dict[str, Any]]:
    """Our transcript as Responses ``input`` items."""
    messages = transform_messages(context.messages, model, normalize_tool_call_id(model))
    items: list[dict[str, Any]] = []
    if context.system_prompt:
        developer = model.reasoning and compat_value(model.compat, "supports_developer_role", True)
        items.append(
            {
                "role": "developer" if developer else "system",
                "content": sanitize_surrogates(context.system_prompt),
            }
        )
    message_index = 0
    for msg in messages:
        role = getattr(msg, "role", None)
        if role == "user":
            if isinstance(msg.content, str):
                parts = [{"type": "input_text", "text": sanitize_surrogates(msg.content)}]
            else:
                parts = [
                    {"type": "input_text", "text": sanitize_surrogates(block.text)}
                    if block.type == "text"
                    else _input_image(block)
                    for block in msg.content
                ]
                if not parts:
                    continue
            items.append({"role": "user", "content": parts})
        elif role == "assistant":
            output = _assistant_items(msg, model, message_index)
            if not output:
                continue
            items.extend(output)
        elif role == "toolResult":
            items.append(
                {
                    "type": "function_call_output",
                    "call_id": msg.tool_call_id.split("|")[0],
                    "output": _tool_result_output(model, msg.content),
                }
            )
        message_index += 1
    return items


def _assistant_items(
    msg: AssistantMessage, model: Model, message_index: int
) -> list[dict[str, Any]]:
    other_model = msg.model != model.id and msg.provider == model.provider and msg.api == model.api
    output: list[dict[str, Any]] = []
    text_index = 0
    for block in msg.content:
        if block.type == "thinking":
            item = _reasoning_item(block.thinking_signature)
            if item is not None:
                output.append(item)
        elif block.type == "text":
            signature = parse_text_signature(block.text_signature)
            fallback = f"msg_pi_{message_index}" + (f"_{text_index}" if text_index else "")
            text_index += 1
            item_id, phase = signature if signature is not None else (fallback, None)
            if not item_id:
                item_id = fallback
            elif len(item_id) > 64:
                item_id = f"msg_{short_hash(item_id)}"
            message: dict[str, Any] = {
                "type": "message",
                "role": "assistant",
                "content": [
                    {
                        "type": "output_text",
                        "text": sanitize_surrogates(block.text),
                        "annotations": [],
                    }
                ],
                "status": "completed",
                "id": item_id,
            }
            if phase:
                message["phase"] = phase
            output.append(message)
        elif block.type == "toolCall":
            parts = block.id.split("|")
            call: dict[str, Any] = {"type": "function_call"}
            fc_id = parts[1] if len(parts) > 1 else None
            # A call of another model of this API goes without its item id: OpenAI pairs fc_
            # ids with the reasoning items they came with and rejects them elsewhere.
            if fc_id is not None and fc_id.startswith("fc_") and not other_model:
                call["id"] = fc_id
            call["call_id"] = parts[0]
            call["name"] = block.name
            call["arguments"] = _compact(block.arguments)
            output.append(call)
    return output


def convert_tools(context: Context, compat: dict[str, Any]) -> list[dict[str, Any]]:
    """Our tools as Responses function tools (``strict: false`` where the model knows it)."""
    tools = []
    for tool in context.tools or []:
        entry: dict[str, Any] = {
            "type": "function",
            "name": tool.name,
            "description": tool.description,
            "parameters": tool.json_schema(),
        }
        if compat["supports_strict_mode"]:
            entry["strict"] = False
        tools.append(entry)
    return tools


def supported_thinking_levels(model: Model) -> list[str]:
    """Pi's ``getSupportedThinkingLevels``: what the model's thinking-level map allows."""
    if not model.reasoning:
        return ["off"]
    mapping = model.thinking_level_map or {}
    levels = []
    for level in THINKING_LEVELS:
        if level in mapping and mapping[level] is None:
            continue
        if level in ("xhigh", "max") and mapping.get(level) is None:
            continue
        levels.append(level)
    return levels


def clamp_thinking_level(model: Model, level: str) -> str:
    """Pi's ``clampThinkingLevel``: the level, else the next supported one up, else down."""
    available = supported_thinking_levels(model)
    if level in available:
        return level
    if level not in THINKING_LEVELS:
        return available[0] if available else "off"
    at = THINKING_LEVELS.index(level)
    for candidate in (*THINKING_LEVELS[at:], *reversed(THINKING_LEVELS[:at])):
        if candidate in available:
            return candidate
    return available[0] if available else "off"


def _reasoning(model: Model, options: StreamOptions | None) -> dict[str, Any]:
    """The ``reasoning`` (and ``include``) fields for a reasoning model."""
    level = options.reasoning if options is not None else None
    clamped = clamp_thinking_level(model, level) if level else None
    mapping = model.thinking_level_map or {}
    if clamped and clamped != "off":
        effort = mapping.get(clamped) or clamped
        return {
            "reasoning": {"effort": effort, "summary": "auto"},
            "include": ["reasoning.encrypted_content"],
        }
    if "off" not in mapping or mapping["off"] is not None:
        return {"reasoning": {"effort": mapping.get("off") or "none"}}
    return {}


def build_body(model: Model, context: Context, options: StreamOptions | None) -> dict[str, Any]:
    """The JSON body of the request."""
    compat = get_compat(model)
    retention = cache_retention(options)
    body: dict[str, Any] = {
        "model": model.id,
        "input": convert_messages(model, context),
        "stream": True,
    }
    session_id = options.session_id if options is not None else None
    if session_id and retention != "none":
        body["prompt_cache_key"] = session_id[:PROMPT_CACHE_KEY_MAX_CHARS]
    if retention == "long" and compat["supports_long_cache_retention"]:
        body["prompt_cache_retention"] = "24h"
    if retention == "none" and compat["supports_explicit_prompt_cache_mode"]:
        body["prompt_cache_options"] = {"mode": "explicit"}
    body["store"] = False
    if options is not None and options.max_tokens:
        body["max_output_tokens"] = max(options.max_tokens, MIN_OUTPUT_TOKENS)
    if options is not None and options.temperature is not None:
        body["temperature"] = options.temperature
    tools = convert_tools(context, compat)
    if tools:
        body["tools"] = tools
    if model.reasoning:
        body.update(_reasoning(model, options))
    return body


def _session_headers(model: Model, options: StreamOptions | None) -> dict[str, str]:
    session_id = options.session_id if options is not None else None
    if not session_id or cache_retention(options) == "none":
        return {}
    if get_compat(model)["session_affinity_format"] == "openrouter":
        return {"x-session-id": session_id}
    return {"session_id": session_id, "x-client-request-id": session_id}


def _prepare(model: Model, context: Context, options: StreamOptions | None) -> Any:
    async def prepare() -> PreparedRequest:
        extra = options.headers if options is not None else None
        explicit = options.api_key if options is not None else None
        key = request_api_key(
            model.provider,
            model.base_url,
            explicit,
            extra,
            ("authorization", "cf-aig-authorization"),
        )
        body = await apply_on_payload(build_body(model, context, options), model, options)
        headers = merge_headers(
            {"content-type": "application/json", "accept": "text/event-stream"},
            {"authorization": f"Bearer {key}"} if key else None,
            model.headers,
            _session_headers(model, options),
            extra,
        )
        url = model.base_url.rstrip("/") + "/responses"
        return PreparedRequest(url=url, headers=headers, body=body, secrets=[key] if key else [])

    return prepare


# --------------------------------------------------------------------------------------------
# Response


def parse_usage(raw: dict[str, Any], model: Model) -> Usage:
    """Responses usage -> our Usage (input excludes cached and cache-write tokens) with cost."""
    details = raw.get("input_tokens_details") or {}
    cached = details.get("cached_tokens") or 0
    written = details.get("cache_write_tokens") or 0
    usage = Usage(
        input=max(0, (raw.get("input_tokens") or 0) - cached - written),
        output=raw.get("output_tokens") or 0,
        cache_read=cached,
        cache_write=written,
        reasoning=(raw.get("output_tokens_details") or {}).get("reasoning_tokens") or 0,
    )
    usage.total_tokens = raw.get("total_tokens") or (
        usage.input + usage.output + usage.cache_read + usage.cache_write
    )
    calculate_cost(model, usage)
    return usage


def map_status(status: Any) -> str:
    """A response's ``status`` as our stop reason (Pi's mapping)."""
    if not status or status in ("completed", "in_progress", "queued"):
        return "stop"
    if status == "incomplete":
        return "length"
    if status in ("failed", "cancelled"):
        return "error"
    raise ProviderError(f"Unhandled stop reason: {status}")


def failure_text(response: Any) -> str:
    """The error text of a ``response.failed`` event."""
    response = response if isinstance(response, dict) else {}
    error = response.get("error")
    if isinstance(error, dict) and error:
        return f"{error.get('code') or 'unknown'}: {error.get('message') or 'no message'}"
    details = response.get("incomplete_details")
    if isinstance(details, dict) and details.get("reason"):
        return f"incomplete: {details['reason']}"
    return "Unknown error (no error details in response)"


def _key(payload: dict[str, Any]) -> Any:
    """An event's ``output_index`` as a slot key (anything unhashable is no index)."""
    index = payload.get("output_index")
    return index if isinstance(index, int | str) else None


def _texts(parts: Any, field: str) -> list[str]:
    if not isinstance(parts, list):
        return []
    values = (part.get(field) for part in parts if isinstance(part, dict))
    return [value if isinstance(value, str) else "" for value in values]


class OpenAIResponsesDecoder:
    """Responses stream events -> assistant-message events on the live ``output``.

    Each output item (``output_index``) opens one content block at ``output_item.added`` and
    closes it at ``output_item.done``, which also brings the item's final form (the reasoning
    item for the signature, the message's id, the call's whole arguments).
    """

    def __init__(self, model: Model, output: AssistantMessage, push: Push) -> None:
        self.model = model
        self.output = output
        self.push = push
        self.content = output.content
        self.slots: dict[Any, tuple[str, int]] = {}  # output_index -> (block type, index)
        self.raw_args: RawArguments = {}
        self.reasoning_by_id: dict[str, int] = {}
        self.terminal = False
        self.done = False

    def on_event(self, event: str, data: bytes) -> None:
        if self.done:
            return
        if data == b"[DONE]":
            self.done = True
            return
        try:
            payload = loads(data)
        except ValueError:
            raise ProviderError(
                f"Could not parse stream chunk as JSON: {event_text(data)}"
            ) from None
        if type(payload) is not dict:
            return
        if payload.get("error"):
            raise ProviderError(error_payload_text(payload))
        kind = payload.get("type")
        if kind == "response.output_text.delta" or kind == "response.refusal.delta":
            slot = self._slot(payload, "text")
            if slot is not None:
                self.push(grow_text(self.output, slot, payload.get("delta") or ""))
        elif kind == "response.function_call_arguments.delta":
            slot = self._slot(payload, "toolCall")
            if slot is not None:
                fragment = payload.get("delta") or ""
                self.push(grow_tool_call(self.output, slot, self.raw_args, fragment))
        elif (
            kind == "response.reasoning_summary_text.delta"
            or kind == "response.reasoning_text.delta"
        ):
            slot = self._slot(payload, "thinking")
            if slot is not None:
                self.push(grow_thinking(self.output, slot, payload.get("delta") or ""))
        elif kind == "response.reasoning_summary_part.done":
            slot = self._slot(payload, "thinking")
            if slot is not None:
                self.push(grow_thinking(self.output, slot, "\n\n"))
        elif kind == "response.output_item.added":
            self._open(_key(payload), payload.get("item"))
        elif kind == "response.output_item.done":
            self._item_done(_key(payload), payload.get("item"))
        elif kind == "response.function_call_arguments.done":
            self._arguments_done(payload)
        elif kind == "response.created":
            response = payload.get("response")
            if isinstance(response, dict) and response.get("id"):
                self.output.response_id = response["id"]
        elif kind == "response.completed" or kind == "response.incomplete":
            self._finalize(payload.get("response"))
        elif kind == "response.failed":
            self.terminal = True
            raise ProviderError(failure_text(payload.get("response")))
        elif kind == "error":
            raise ProviderError(f"Error Code {payload.get('code')}: {payload.get('message')}")

    # -- blocks ------------------------------------------------------------------------------

    def _slot(self, payload: dict[str, Any], block_type: str) -> int | None:
        slot = self.slots.get(_key(payload))
        return slot[1] if slot is not None and slot[0] == block_type else None

    def _open(self, output_index: Any, item: Any) -> tuple[str, int] | None:
        if not isinstance(item, dict):
            return None
        item_type = item.get("type")
        index = len(self.content)
        if item_type == "reasoning":
            self.content.append(ThinkingContent(thinking=""))
            slot = ("thinking", index)
            self.push(ThinkingStartEvent(index, self.output))
        elif item_type == "message":
            self.content.append(TextContent(text=""))
            slot = ("text", index)
            self.push(TextStartEvent(index, self.output))
        elif item_type == "function_call":
            call_id = f"{item.get('call_id')}|{item.get('id')}"
            self.content.append(ToolCall(id=call_id, name=item.get("name") or ""))
            slot = ("toolCall", index)
            self.push(ToolCallStartEvent(index, self.output))
            if item.get("arguments"):
                grow_tool_call(self.output, index, self.raw_args, item["arguments"])
        else:
            return None
        self.slots[output_index] = slot
        return slot

    def _arguments_done(self, payload: dict[str, Any]) -> None:
        index = self._slot(payload, "toolCall")
        arguments = payload.get("arguments")
        if index is None or not isinstance(arguments, str):
            return
        raw = self.raw_args.get(index)
        sent = raw.text if raw is not None else ""
        if arguments.startswith(sent):
            if len(arguments) > len(sent):
                self.push(grow_tool_call(self.output, index, self.raw_args, arguments[len(sent) :]))
        else:  # the server's final text is not what it streamed: it wins, with no delta
            fresh = self.raw_args[index] = IncrementalJsonObject()
            block: Any = self.content[index]
            block.arguments = fresh.feed(arguments)

    def _item_done(self, output_index: Any, item: Any) -> None:
        slot = self.slots.get(output_index) or self._open(output_index, item)
        if slot is None or not isinstance(item, dict):
            return
        block_type, index = slot
        block: Any = self.content[index]
        item_type = item.get("type")
        if item_type == "reasoning" and block_type == "thinking":
            summary = "\n\n".join(_texts(item.get("summary"), "text"))
            text = "\n\n".join(_texts(item.get("content"), "text"))
            block.thinking = summary or text or block.thinking
            block.thinking_signature = _compact(item)
            if isinstance(item.get("id"), str):
                self.reasoning_by_id[item["id"]] = index
            self.push(ThinkingEndEvent(index, block.thinking, self.output))
        elif item_type == "message" and block_type == "text":
            parts = item.get("content")
            texts = (
                part.get("text") if part.get("type") == "output_text" else part.get("refusal")
                for part in (parts if isinstance(parts, list) else [])
                if isinstance(part, dict)
            )
            block.text = "".join(text for text in texts if isinstance(text, str))
            if isinstance(item.get("id"), str) and item["id"]:
                block.text_signature = encode_text_signature(item["id"], item.get("phase"))
            self.push(TextEndEvent(index, block.text, self.output))
        elif item_type == "function_call" and block_type == "toolCall":
            raw = self.raw_args.pop(index, None)
            final = item.get("arguments") or (raw.text if raw is not None else "") or "{}"
            block.arguments = parse_json_object(final)
            self.push(ToolCallEndEvent(index, block, self.output))
        else:
            return
        del self.slots[output_index]

    # -- the end -----------------------------------------------------------------------------

    def _finalize(self, response: Any) -> None:
        self.terminal = True
        if not isinstance(response, dict):
            response = {}
        self._backfill_signatures(response.get("output") or [])
        output = self.output
        if response.get("id"):
            output.response_id = response["id"]
        usage = response.get("usage")
        if isinstance(usage, dict):
            output.usage = parse_usage(usage, self.model)
        else:
            calculate_cost(self.model, output.usage)
        stop = map_status(response.get("status"))
        if stop == "stop" and any(b.type == "toolCall" for b in self.content):
            stop = "toolUse"
        output.stop_reason = stop  # type: ignore[assignment]

    def _backfill_signatures(self, items: list[Any]) -> None:
        # Some servers (Azure) send encrypted_content only in the final response's output.
        for item in items:
            if not isinstance(item, dict) or item.get("type") != "reasoning":
                continue
            encrypted = item.get("encrypted_content")
            index = self.reasoning_by_id.get(item.get("id"))  # type: ignore[arg-type]
            if not encrypted or index is None:
                continue
            block: Any = self.content[index]
            stored = _reasoning_item(block.thinking_signature)
            if stored is None or stored.get("encrypted_content"):
                continue
            stored["encrypted_content"] = encrypted
            block.thinking_signature = _compact(stored)

    def finish(self) -> None:
        self.raw_args.clear()
        if not self.terminal:
            raise ProviderError("OpenAI Responses stream ended before a terminal response event")
        if self.output.stop_reason in ("error", "aborted"):
            raise ProviderError(self.output.error_message or "An unknown error occurred")
        # Items the server never closed are closed as they stand, so every block ends.
        for _, index in sorted(self.slots.values(), key=lambda slot: slot[1]):
            self.push(end_event(self.output, index))
        self.slots.clear()


def stream_openai_responses(
    model: Model, context: Context, options: StreamOptions | None = None
) -> AssistantMessageEventStream:
    """Stream one Responses-API response as assistant-message events."""
    return run_provider(
        model,
        options,
        _prepare(model, context, options),
        lambda output, push: OpenAIResponsesDecoder(model, output, push),
    )


__all__ = [
    "API",
    "OpenAIResponsesDecoder",
    "build_body",
    "clamp_thinking_level",
    "convert_messages",
    "convert_tools",
    "encode_text_signature",
    "failure_text",
    "get_compat",
    "map_status",
    "normalize_tool_call_id",
    "parse_text_signature",
    "parse_usage",
    "short_hash",
    "stream_openai_responses",
    "supported_thinking_levels",
]

"""The ``openai-completions`` API: OpenAI-compatible chat completions over SSE.

Serves OpenAI, OpenRouter, Groq, DeepSeek, Ollama, vLLM, llama.cpp and any other server that
speaks ``POST {base_url}/chat/completions`` with ``stream: true``. Server differences are
per-model compatibility switches (``Model.compat``, snake_case or Pi's camelCase names),
auto-detected from the provider and base_url.

The stream function never raises: failures arrive as an ``error`` event. It must never put the
API key anywhere but the Authorization header, never copy the message per chunk, and never
leave scratch state on content blocks.
"""

from __future__ import annotations

import json
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
    Usage,
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
from .chunk_shape import TextChunkShape
from .keys import is_local_url, request_api_key

API = "openai-completions"
MAX_SHAPE_ATTEMPTS = 8
"""How many text chunks a stream may study for its envelope (see chunk_shape); a shape that
still misses after that is dropped."""
_REASONING_FIELDS = ("reasoning_content", "reasoning", "reasoning_text")

# --------------------------------------------------------------------------------------------
# Compatibility switches


def detect_compat(model: Model) -> dict[str, Any]:
    """Switches detected from the provider and base_url (explicit ``model.compat`` wins)."""
    provider, url = model.provider, model.base_url
    openrouter = provider == "openrouter" or "openrouter.ai" in url
    deepseek = provider == "deepseek" or "deepseek.com" in url
    grok = provider == "xai" or "api.x.ai" in url
    local = provider in ("ollama", "llamacpp", "vllm", "lmstudio") or is_local_url(url)
    nonstandard = deepseek or grok or local or provider == "cerebras" or "cerebras.ai" in url
    openrouter_dev = openrouter and model.id.startswith(("anthropic/", "openai/"))
    if deepseek:
        thinking_format = "deepseek"
    elif openrouter:
        thinking_format = "openrouter"
    else:
        thinking_format = "openai"
    return {
        "supports_store": not nonstandard and not openrouter,
        "supports_developer_role": openrouter_dev or (not nonstandard and not openrouter),
        "supports_reasoning_effort": not grok,
        "supports_usage_in_streaming": True,
        "max_tokens_field": "max_tokens" if local else "max_completion_tokens",
        "requires_tool_result_name": False,
        "requires_assistant_after_tool_result": False,
        "requires_thinking_as_text": False,
        "requires_reasoning_content_on_assistant_messages": deepseek,
        "supports_null_assistant_content": True,
        "thinking_format": thinking_format,
        "supports_strict_mode": not local,
        "cache_control_format": (
            "anthropic" if openrouter and model.id.startswith("anthropic/") else None
        ),
        "supports_long_cache_retention": True,
    }


def get_compat(model: Model) -> dict[str, Any]:
    detected = detect_compat(model)
    return {name: compat_value(model.compat, name, value) for name, value in detected.items()}


# --------------------------------------------------------------------------------------------
# Request


def normalize_tool_call_id(model: Model) -> Any:
    def normalize(call_id: str) -> str:
        if "|" in call_id:
            head, _, tail = call_id.partition("|")
            clean = "".join(c if c.isalnum() or c in "_-" else "_" for c in f"{head}_{tail}")
            return clean[:40]
        if model.provider == "openai" and len(call_id) > 40:
            return call_id[:40]
        return call_id

    return normalize


def _text_of(blocks: list[Any]) -> str:
    return "\n".join(b.text for b in blocks if b.type == "text")


def convert_messages(model: Model, context: Context, compat: dict[str, Any]) -> list[Any]:
    """Our transcript as chat-completions ``messages``."""
    messages = transform_messages(context.messages, model, normalize_tool_call_id(model))
    out: list[dict[str, Any]] = []
    if context.system_prompt:
        system_role = (
            "developer" if model.reasoning and compat["supports_developer_role"] else "system"
        )
        out.append({"role": system_role, "content": sanitize_surrogates(context.system_prompt)})
    vision = "image" in model.input
    last_role: str | None = None
    i = 0
    while i < len(messages):
        msg = messages[i]
        role = getattr(msg, "role", None)
        if (
            compat["requires_assistant_after_tool_result"]
            and last_role == "toolResult"
            and role == "user"
        ):
            out.append({"role": "assistant", "content": "I have processed the tool results."})
        if role == "user":
            if isinstance(msg.content, str):
                out.append({"role": "user", "content": sanitize_surrogates(msg.content)})
            else:
                parts: list[dict[str, Any]] = []
                for block in msg.content:
                    if block.type == "text":
                        parts.append({"type": "text", "text": sanitize_surrogates(block.text)})
                    else:
                        url = f"data:{block.mime_type};base64,{block.data}"
                        parts.append({"type": "image_url", "image_url": {"url": url}})
                if not parts:
                    i += 1
                    continue
                out.append({"role": "user", "content": parts})
        elif role == "assistant":
            entry = _convert_assistant(msg, model, compat)
            if entry is None:
                i += 1
                continue
            out.append(entry)
        elif role == "toolResult":
            images: list[dict[str, Any]] = []
            while i < len(messages) and getattr(messages[i], "role", None) == "toolResult":
                result = messages[i]
                text = _text_of(result.content)
                has_images = any(b.type == "image" for b in result.content)
                if not text:
                    text = "(see attached image)" if has_images else "(no tool output)"
                tool_msg: dict[str, Any] = {
                    "role": "tool",
                    "content": sanitize_surrogates(text),
                    "tool_call_id": result.tool_call_id,
                }
                if compat["requires_tool_result_name"] and result.tool_name:
                    tool_msg["name"] = result.tool_name
                out.append(tool_msg)
                if has_images and vision:
                    for block in result.content:
                        if block.type == "image":
                            url = f"data:{block.mime_type};base64,{block.data}"
                            images.append({"type": "image_url", "image_url": {"url": url}})
                i += 1
            if images:
                if compat["requires_assistant_after_tool_result"]:
                    out.append(
                        {"role": "assistant", "content": "I have processed the tool results."}
                    )
                out.append(
                    {
                        "role": "user",
                        "content": [
                            {"type": "text", "text": "Attached image(s) from tool result:"},
                            *images,
                        ],
                    }
                )
                last_role = "user"
            else:
                last_role = "toolResult"
            continue
        last_role = role
        i += 1
    return out


def _convert_assistant(
    msg: AssistantMessage, model: Model, compat: dict[str, Any]
) -> dict[str, Any] | None:
    null_ok = (
        compat["supports_null_assistant_content"]
        and not compat["requires_assistant_after_tool_result"]
    )
    entry: dict[str, Any] = {"role": "assistant", "content": None if null_ok else ""}
    texts = [
        sanitize_surrogates(b.text) for b in msg.content if b.type == "text" and b.text.strip()
    ]
    text = "".join(texts)
    thinking = [b for b in msg.content if b.type == "thinking" and b.thinking.strip()]
    if thinking and compat["requires_thinking_as_text"]:
        joined = "\n\n".join(sanitize_surrogates(b.thinking) for b in thinking)
        entry["content"] = [{"type": "text", "text": joined}] + [
            {"type": "text", "text": t} for t in texts
        ]
    else:
        if text:
            entry["content"] = text
        if thinking:
            signature = thinking[0].thinking_signature
            if signature and signature in _REASONING_FIELDS:
                entry[signature] = "\n".join(b.thinking for b in thinking)
    calls = [b for b in msg.content if b.type == "toolCall"]
    if calls:
        entry["tool_calls"] = [
            {
                "id": c.id,
                "type": "function",
                "function": {
                    "name": c.name,
                    "arguments": json.dumps(c.arguments, ensure_ascii=False),
                },
            }
            for c in calls
        ]
    if (
        compat["requires_reasoning_content_on_assistant_messages"]
        and model.reasoning
        and "reasoning_content" not in entry
    ):
        entry["reasoning_content"] = ""
    content = entry["content"]
    if not content and not calls:
        return None
    return entry


def _convert_tools(context: Context, compat: dict[str, Any]) -> list[dict[str, Any]]:
    tools = []
    for tool in context.tools or []:
        function: dict[str, Any] = {
            "name": tool.name,
            "description": tool.description,
            "parameters": tool.json_schema(),
        }
        if compat["supports_strict_mode"]:
            function["strict"] = False
        tools.append({"type": "function", "function": function})
    return tools


def _has_tool_history(messages: list[Any]) -> bool:
    for msg in messages:
        role = getattr(msg, "role", None)
        if role == "toolResult":
            return True
        if role == "assistant" and any(b.type == "toolCall" for b in msg.content):
            return True
    return False


def _reasoning_effort(model: Model, options: StreamOptions | None) -> str | None:
    level = options.reasoning if options is not None else None
    if level is None:
        return None
    mapping = model.thinking_level_map or {}
    if level in mapping:
        return mapping[level]
    return "high" if level in ("xhigh", "max") else level


def build_body(model: Model, context: Context, options: StreamOptions | None) -> dict[str, Any]:
    """The JSON body of the request."""
    compat = get_compat(model)
    messages = convert_messages(model, context, compat)
    body: dict[str, Any] = {"model": model.id, "messages": messages, "stream": True}
    if compat["supports_usage_in_streaming"]:
        body["stream_options"] = {"include_usage": True}
    if compat["supports_store"]:
        body["store"] = False
    retention = cache_retention(options)
    if (
        options is not None
        and options.session_id
        and retention != "none"
        and "api.openai.com" in model.base_url
    ):
        body["prompt_cache_key"] = options.session_id[:64]
    if options is not None and options.max_tokens:
        body[compat["max_tokens_field"]] = options.max_tokens
    if options is not None and options.temperature is not None:
        body["temperature"] = options.temperature
    tools = _convert_tools(context, compat)
    if tools:
        body["tools"] = tools
    elif _has_tool_history(context.messages):
        body["tools"] = []
    if compat["cache_control_format"] == "anthropic" and retention != "none":
        _apply_cache_control(messages, body.get("tools"), retention)
    if model.reasoning:
        effort = _reasoning_effort(model, options)
        fmt = compat["thinking_format"]
        off = (model.thinking_level_map or {}).get("off", "none")
        if fmt == "deepseek":
            if effort:
                body["thinking"] = {"type": "enabled"}
                if compat["supports_reasoning_effort"]:
                    body["reasoning_effort"] = effort
            elif off is not None:
                body["thinking"] = {"type": "disabled"}
        elif fmt == "openrouter":
            if effort:
                body["reasoning"] = {"effort": effort}
            elif off is not None:
                body["reasoning"] = {"effort": off}
        elif fmt == "qwen":
            body["enable_thinking"] = bool(effort)
        elif fmt == "qwen-chat-template":
            body["chat_template_kwargs"] = {
                "enable_thinking": bool(effort),
                "preserve_thinking": True,
            }
        elif compat["supports_reasoning_effort"]:
            if effort:
                body["reasoning_effort"] = effort
            elif isinstance((model.thinking_level_map or {}).get("off"), str):
                body["reasoning_effort"] = (model.thinking_level_map or {})["off"]
    return body


def _apply_cache_control(
    messages: list[dict[str, Any]], tools: list[dict[str, Any]] | None, retention: str
) -> None:
    control: dict[str, Any] = {"type": "ephemeral"}
    if retention == "long":
        control["ttl"] = "1h"

    def mark(message: dict[str, Any]) -> bool:
        content = message.get("content")
        if isinstance(content, str) and content:
            message["content"] = [{"type": "text", "text": content, "cache_control": control}]
            return True
        if isinstance(content, list):
            for part in reversed(content):
                if isinstance(part, dict) and part.get("type") == "text":
                    part["cache_control"] = control
                    return True
        return False

    for message in messages:
        if message["role"] in ("system", "developer"):
            mark(message)
            break
    if tools:
        tools[-1]["cache_control"] = control
    for message in reversed(messages):
        if message["role"] in ("user", "assistant", "tool") and mark(message):
            break


def _prepare(model: Model, context: Context, options: StreamOptions | None) -> Any:
    async def prepare() -> PreparedRequest:
        extra = options.headers if options is not None else None
        explicit = options.api_key if options is not None else None
        key = request_api_key(model.provider, model.base_url, explicit, extra, ("authorization",))
        body = await apply_on_payload(build_body(model, context, options), model, options)
        headers = merge_headers(
            {"content-type": "application/json", "accept": "text/event-stream"},
            {"authorization": f"Bearer {key}"} if key else None,
            model.headers,
            extra,
        )
        url = model.base_url.rstrip("/") + "/chat/completions"
        return PreparedRequest(url=url, headers=headers, body=body, secrets=[key] if key else [])

    return prepare


# --------------------------------------------------------------------------------------------
# Response


def parse_usage(raw: dict[str, Any], model: Model) -> Usage:
    """Chat-completions usage -> our Usage (input excludes cached tokens) with cost."""
    prompt = raw.get("prompt_tokens") or 0
    details = raw.get("prompt_tokens_details") or {}
    cache_read = details.get("cached_tokens")
    if cache_read is None:
        cache_read = raw.get("prompt_cache_hit_tokens") or 0
    cache_write = details.get("cache_write_tokens") or 0
    output = raw.get("completion_tokens") or 0
    reasoning = (raw.get("completion_tokens_details") or {}).get("reasoning_tokens") or 0
    fresh = max(0, prompt - cache_read - cache_write)
    usage = Usage(
        input=fresh,
        output=output,
        cache_read=cache_read,
        cache_write=cache_write,
        reasoning=reasoning,
    )
    return finalize_usage(model, usage)


def map_finish_reason(reason: str) -> tuple[str, str | None]:
    if reason in ("stop", "end"):
        return "stop", None
    if reason == "length":
        return "length", None
    if reason in ("tool_calls", "function_call"):
        return "toolUse", None
    return "error", f"Provider finish_reason: {reason}"


class OpenAICompletionsDecoder:
    """Chat-completion chunks -> assistant-message events on the live ``output``."""

    def __init__(self, model: Model, output: AssistantMessage, push: Push) -> None:
        self.model = model
        self.output = output
        self.push = push
        self.content = output.content
        self.text_index = -1
        self.thinking_index = -1
        self.tool_by_stream_index: dict[int, int] = {}
        self.tool_by_id: dict[str, int] = {}
        self.raw_args: RawArguments = {}
        self.finished = False
        self.done = False
        self.first = True
        self.text_shape: TextChunkShape | None = None
        self.shape_attempts = MAX_SHAPE_ATTEMPTS
        self.studying = True  # False once the envelope is given up on

    def on_event(self, event: str, data: bytes) -> None:
        if self.done:
            return
        if event == "error":
            raise ProviderError(error_event_text(data))
        if self.text_shape is not None:  # the per-token path: no JSON parse of the envelope
            text = self.text_shape.text_of(data)
            if text is not None:
                if text:
                    self._text(text)
                return
        if data == b"[DONE]":
            self.done = True
            return
        try:
            chunk = loads(data)
        except ValueError:
            raise ProviderError(
                f"Could not parse stream chunk as JSON: {event_text(data)}"
            ) from None
        if type(chunk) is not dict:
            return
        if chunk.get("error"):
            raise ProviderError(error_payload_text(chunk))
        if self.first:
            self._first_chunk(chunk)
        usage = chunk.get("usage")
        if usage:
            self.output.usage = parse_usage(usage, self.model)
        choices = chunk.get("choices")
        if not choices:
            return
        choice = choices[0]
        reason = choice.get("finish_reason")
        if reason:
            self._finish_reason(reason, choice, usage)
        delta = choice.get("delta")
        if not delta:
            return
        text = delta.get("content")
        if text:
            self._text(text)
            if len(delta) == 1 and self.studying:  # a plain text chunk the shape missed
                self._learn_shape(data, chunk)
            if len(delta) <= 2 and ("role" in delta or len(delta) == 1):
                return  # the common case: a text-only delta
        for name in _REASONING_FIELDS:
            value = delta.get(name)
            if value and isinstance(value, str):
                self._thinking(value, name)
                break
        calls = delta.get("tool_calls")
        if calls:
            for call in calls:
                self._tool_call(call)

    def _learn_shape(self, data: bytes, chunk: dict[str, Any]) -> None:
        # Bounded: a server whose envelope changes on every chunk (OpenAI's own ``obfuscation``
        # field) stops being studied, and its last shape, which would only miss, is dropped.
        if self.shape_attempts > 0:
            self.shape_attempts -= 1
            self.text_shape = TextChunkShape.learn(data, chunk) or self.text_shape
        else:
            self.text_shape = None
            self.studying = False

    def _first_chunk(self, chunk: dict[str, Any]) -> None:
        chunk_id = chunk.get("id")
        if not chunk_id:
            return
        self.first = False
        self.output.response_id = chunk_id
        name = chunk.get("model")
        if isinstance(name, str) and name and name != self.model.id:
            self.output.response_model = name

    def _finish_reason(self, reason: str, choice: dict[str, Any], usage: Any) -> None:
        output = self.output
        if not usage and choice.get("usage"):
            output.usage = parse_usage(choice["usage"], self.model)
        stop, message = map_finish_reason(reason)
        output.stop_reason = stop  # type: ignore[assignment]
        if message:
            output.error_message = message
        self.finished = True

    def _text(self, text: str) -> None:
        index = self.text_index
        if index < 0:
            index = self.text_index = len(self.content)
            self.content.append(TextContent(text=""))
            self.push(TextStartEvent(index, self.output))
        self.push(grow_text(self.output, index, text))

    def _thinking(self, text: str, field_name: str) -> None:
        index = self.thinking_index
        if index < 0:
            index = self.thinking_index = len(self.content)
            self.content.append(ThinkingContent(thinking="", thinking_signature=field_name))
            self.push(ThinkingStartEvent(index, self.output))
        self.push(grow_thinking(self.output, index, text))

    def _tool_call(self, call: dict[str, Any]) -> None:
        stream_index = call.get("index")
        call_id = call.get("id") or ""
        function = call.get("function") or {}
        name = function.get("name") or ""
        index: int | None = None
        if isinstance(stream_index, int):
            index = self.tool_by_stream_index.get(stream_index)
        if index is None and call_id:
            index = self.tool_by_id.get(call_id)
        if index is None:
            index = len(self.content)
            self.content.append(ToolCall(id=call_id, name=name))
            self.push(ToolCallStartEvent(index, self.output))
        if isinstance(stream_index, int):
            self.tool_by_stream_index.setdefault(stream_index, index)
        block: Any = self.content[index]
        if call_id:
            self.tool_by_id[call_id] = index
            if not block.id:
                block.id = call_id
        if name and not block.name:
            block.name = name
        self.push(
            grow_tool_call(self.output, index, self.raw_args, function.get("arguments") or "")
        )

    def finish(self) -> None:
        push, output = self.push, self.output
        # A tool call's arguments are already the parse of its whole raw JSON (the last delta).
        for index in range(len(self.content)):
            push(end_event(output, index))
        self.raw_args.clear()
        if output.stop_reason in ("error", "aborted"):
            raise ProviderError(output.error_message or "Provider returned an error stop reason")
        if not self.finished:
            raise ProviderError("Stream ended without finish_reason")


def stream_openai_completions(
    model: Model, context: Context, options: StreamOptions | None = None
) -> AssistantMessageEventStream:
    """Stream one chat completion as assistant-message events."""
    return run_provider(
        model,
        options,
        _prepare(model, context, options),
        lambda output, push: OpenAICompletionsDecoder(model, output, push),
    )


__all__ = [
    "API",
    "OpenAICompletionsDecoder",
    "build_body",
    "convert_messages",
    "detect_compat",
    "get_compat",
    "map_finish_reason",
    "parse_usage",
    "stream_openai_completions",
]

"""The ``google-generative-ai`` API: Google's Gemini API over SSE, as Pi 0.82 speaks it.

``POST {base_url}/models/{model}:streamGenerateContent?alt=sse`` with the key in the
``x-goog-api-key`` header. The body is Gemini's ``contents`` (roles ``user`` / ``model``, text,
``thought`` parts, ``functionCall`` / ``functionResponse`` parts), ``systemInstruction``,
``tools`` as ``functionDeclarations`` (the JSON schema as ``parametersJsonSchema``) and
``generationConfig`` (``maxOutputTokens``, ``temperature``, ``thinkingConfig`` from the
thinking level: a level for Gemini 3 and Gemma 4, a token budget for Gemini 2.x).

Gemini streams whole parts: text and thought text arrive in pieces, a function call arrives
whole, so its ``toolcall_start`` / ``toolcall_delta`` / ``toolcall_end`` come together with the
complete JSON. ``thoughtSignature`` is kept on the block it came with and sent back to the same
model. Two deliberate differences from Pi, which ends both cases with an empty ``stop`` reply or
"An unknown error occurred": a blocked prompt (``promptFeedback.blockReason``) and a
``finishReason`` such as ``SAFETY`` end in an ``error`` whose text names the reason, and a
stream that ends without any ``finishReason`` is an error, as for the other APIs.

The stream function never raises: failures arrive as an ``error`` event. It must never put the
API key anywhere but the ``x-goog-api-key`` header (never in the URL, which servers log),
never copy the message per chunk, and never leave scratch state on content blocks.
"""

from __future__ import annotations

import itertools
import json
import re
from typing import Any
from urllib.parse import quote

from ..event_stream import AssistantMessageEventStream
from ..events import (
    TextStartEvent,
    ThinkingStartEvent,
    ToolCallDeltaEvent,
    ToolCallEndEvent,
    ToolCallStartEvent,
)
from ..partial import end_event, grow_text, grow_thinking
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
    now_ms,
)
from ..usage import calculate_cost
from ._driver import Push, run_provider
from ._errors import ProviderError, error_event_text, error_payload_text, event_text
from ._json import loads
from ._request import PreparedRequest, apply_on_payload, merge_headers, sanitize_surrogates
from .keys import request_api_key

API = "google-generative-ai"
THINKING_LEVELS = ("off", "minimal", "low", "medium", "high", "xhigh", "max")
_BAD_ID_CHARS = re.compile(r"[^a-zA-Z0-9_-]")
_BASE64 = re.compile(r"^[A-Za-z0-9+/]+={0,2}$")
_GEMINI_MAJOR = re.compile(r"^gemini(?:-live)?-(\d+)")
_tool_call_counter = itertools.count(1)

# --------------------------------------------------------------------------------------------
# Model families (Pi's tests on the model id)


def _gemini_major(model_id: str) -> int | None:
    match = _GEMINI_MAJOR.match(model_id.lower())
    return int(match.group(1)) if match else None


def is_gemini3_pro(model_id: str) -> bool:
    return re.search(r"gemini-3(?:\.\d+)?-pro", model_id.lower()) is not None


def is_gemini3_flash(model_id: str) -> bool:
    lowered = model_id.lower()
    return re.search(r"gemini-3(?:\.\d+)?-flash", lowered) is not None or lowered in (
        "gemini-flash-latest",
        "gemini-flash-lite-latest",
    )


def is_gemma4(model_id: str) -> bool:
    return re.search(r"gemma-?4", model_id.lower()) is not None


def requires_tool_call_id(model_id: str) -> bool:
    """Models behind Google's API that need ids on function calls and responses."""
    return model_id.startswith(("claude-", "gpt-oss-"))


def _multimodal_function_response(model_id: str) -> bool:
    major = _gemini_major(model_id)
    return major is None or major >= 3


# --------------------------------------------------------------------------------------------
# Request


def _valid_signature(signature: str | None) -> bool:
    """Thought signatures are base64 bytes; anything else would be refused."""
    if not signature or len(signature) % 4:
        return False
    return _BASE64.match(signature) is not None


def _inline(block: Any) -> dict[str, Any]:
    return {"inlineData": {"mimeType": block.mime_type, "data": block.data}}


def convert_messages(model: Model, context: Context) -> list[dict[str, Any]]:
    """Our transcript as Gemini ``contents``."""
    needs_id = requires_tool_call_id(model.id)

    def normalize(call_id: str) -> str:
        return _BAD_ID_CHARS.sub("_", call_id)[:64] if needs_id else call_id

    messages = transform_messages(context.messages, model, normalize)
    vision = "image" in model.input
    multimodal_response = _multimodal_function_response(model.id)
    contents: list[dict[str, Any]] = []
    for msg in messages:
        role = getattr(msg, "role", None)
        if role == "user":
            if isinstance(msg.content, str):
                contents.append(
                    {"role": "user", "parts": [{"text": sanitize_surrogates(msg.content)}]}
                )
                continue
            parts = [
                {"text": sanitize_surrogates(b.text)} if b.type == "text" else _inline(b)
                for b in msg.content
            ]
            if parts:
                contents.append({"role": "user", "parts": parts})
        elif role == "assistant":
            same = msg.provider == model.provider and msg.model == model.id
            out: list[dict[str, Any]] = []
            for block in msg.content:
                if block.type == "text":
                    if not block.text.strip():
                        continue
                    part: dict[str, Any] = {"text": sanitize_surrogates(block.text)}
                    if same and _valid_signature(block.text_signature):
                        part["thoughtSignature"] = block.text_signature
                    out.append(part)
                elif block.type == "thinking":
                    if not block.thinking.strip():
                        continue
                    if same:
                        part = {"thought": True, "text": sanitize_surrogates(block.thinking)}
                        if _valid_signature(block.thinking_signature):
                            part["thoughtSignature"] = block.thinking_signature
                    else:
                        part = {"text": sanitize_surrogates(block.thinking)}
                    out.append(part)
                elif block.type == "toolCall":
                    call: dict[str, Any] = {"name": block.name, "args": block.arguments or {}}
                    if needs_id:
                        call["id"] = block.id
                    part = {"functionCall": call}
                    if same and _valid_signature(block.thought_signature):
                        part["thoughtSignature"] = block.thought_signature
                    out.append(part)
            if out:
                contents.append({"role": "model", "parts": out})
        elif role == "toolResult":
            text = "\n".join(b.text for b in msg.content if b.type == "text")
            images = [_inline(b) for b in msg.content if b.type == "image"] if vision else []
            value = (
                sanitize_surrogates(text) if text else ("(see attached image)" if images else "")
            )
            response: dict[str, Any] = {
                "name": msg.tool_name,
                "response": {"error": value} if msg.is_error else {"output": value},
            }
            if images and multimodal_response:
                response["parts"] = images
            if needs_id:
                response["id"] = msg.tool_call_id
            result_part = {"functionResponse": response}
            last = contents[-1] if contents else None
            if (
                last is not None
                and last["role"] == "user"
                and any("functionResponse" in p for p in last["parts"])
            ):
                last["parts"].append(result_part)  # all results of one turn in one user turn
            else:
                contents.append({"role": "user", "parts": [result_part]})
            if images and not multimodal_response:
                contents.append(
                    {"role": "user", "parts": [{"text": "Tool result image:"}, *images]}
                )
    return contents


def convert_tools(context: Context) -> list[dict[str, Any]] | None:
    """Tools as one ``functionDeclarations`` entry, the JSON schema as ``parametersJsonSchema``."""
    if not context.tools:
        return None
    declarations = [
        {
            "name": tool.name,
            "description": tool.description,
            "parametersJsonSchema": tool.json_schema(),
        }
        for tool in context.tools
    ]
    return [{"functionDeclarations": declarations}]


def clamp_thinking_level(model: Model, level: str) -> str:
    """Pi's ``clampThinkingLevel``: the level, or the nearest one the model supports (up first)."""
    if not model.reasoning:
        return "off"
    mapping = model.thinking_level_map or {}

    def supported(name: str) -> bool:
        if name in mapping and mapping[name] is None:
            return False
        return name in mapping if name in ("xhigh", "max") else True

    available = [name for name in THINKING_LEVELS if supported(name)]
    if level in available:
        return level
    if level not in THINKING_LEVELS:
        return available[0] if available else "off"
    index = THINKING_LEVELS.index(level)
    for name in (*THINKING_LEVELS[index:], *reversed(THINKING_LEVELS[:index])):
        if name in available:
            return name
    return available[0] if available else "off"


def _thinking_level(effort: str, model_id: str) -> str:
    if is_gemini3_pro(model_id):
        return "LOW" if effort in ("minimal", "low") else "HIGH"
    if is_gemma4(model_id):
        return "MINIMAL" if effort in ("minimal", "low") else "HIGH"
    return effort.upper()


_BUDGETS = {
    "2.5-pro": {"minimal": 128, "low": 2048, "medium": 8192, "high": 32768},
    "2.5-flash-lite": {"minimal": 512, "low": 2048, "medium": 8192, "high": 24576},
    "2.5-flash": {"minimal": 128, "low": 2048, "medium": 8192, "high": 24576},
}


def thinking_budget(model_id: str, effort: str, custom: dict[str, int] | None) -> int:
    """Pi's Gemini 2.x thinking budgets; ``-1`` (dynamic) for other models."""
    if custom and effort in custom:
        return custom[effort]
    for family, budgets in _BUDGETS.items():  # Pi's order: 2.5-flash-lite before 2.5-flash
        if family in model_id:
            return budgets[effort]
    return -1


def thinking_config(model: Model, options: StreamOptions | None) -> dict[str, Any] | None:
    """``generationConfig.thinkingConfig`` for the requested thinking level (None: none sent)."""
    if not model.reasoning:
        return None
    level = options.reasoning if options is not None else None
    if level is None:  # thinking off: the lowest setting each family accepts, thoughts hidden
        if is_gemini3_pro(model.id):
            return {"thinkingLevel": "LOW"}
        if is_gemini3_flash(model.id) or is_gemma4(model.id):
            return {"thinkingLevel": "MINIMAL"}
        return {"thinkingBudget": 0}
    clamped = clamp_thinking_level(model, level)
    effort = "high" if clamped in ("off", "xhigh", "max") else clamped
    if is_gemini3_pro(model.id) or is_gemini3_flash(model.id) or is_gemma4(model.id):
        return {"includeThoughts": True, "thinkingLevel": _thinking_level(effort, model.id)}
    budgets = options.thinking_budgets if options is not None else None
    return {"includeThoughts": True, "thinkingBudget": thinking_budget(model.id, effort, budgets)}


def build_body(model: Model, context: Context, options: StreamOptions | None) -> dict[str, Any]:
    """The JSON body of the request."""
    body: dict[str, Any] = {"contents": convert_messages(model, context)}
    if context.system_prompt:
        body["systemInstruction"] = {
            "role": "user",
            "parts": [{"text": sanitize_surrogates(context.system_prompt)}],
        }
    tools = convert_tools(context)
    if tools:
        body["tools"] = tools
    config: dict[str, Any] = {}
    if options is not None and options.temperature is not None:
        config["temperature"] = options.temperature
    max_tokens = options.max_tokens if options is not None else None
    if max_tokens is None and model.max_tokens > 0:
        max_tokens = model.max_tokens  # Pi's default (streamSimple): the model's output limit
    if max_tokens is not None:
        config["maxOutputTokens"] = max_tokens
    thinking = thinking_config(model, options)
    if thinking is not None:
        config["thinkingConfig"] = thinking
    if config:
        body["generationConfig"] = config
    return body


def request_url(model: Model) -> str:
    """``{base_url}/models/{id}:streamGenerateContent?alt=sse``: never a key in it."""
    name = model.id if model.id.startswith(("models/", "tunedModels/")) else f"models/{model.id}"
    base = model.base_url.rstrip("/")
    return f"{base}/{quote(name, safe='/-_.')}:streamGenerateContent?alt=sse"


def _prepare(model: Model, context: Context, options: StreamOptions | None) -> Any:
    async def prepare() -> PreparedRequest:
        extra = options.headers if options is not None else None
        explicit = options.api_key if options is not None else None
        key = request_api_key(
            model.provider, model.base_url, explicit, extra, ("authorization", "x-goog-api-key")
        )
        body = await apply_on_payload(build_body(model, context, options), model, options)
        headers = merge_headers(
            {"content-type": "application/json", "accept": "text/event-stream"},
            {"x-goog-api-key": key} if key else None,
            model.headers,
            extra,
        )
        return PreparedRequest(
            url=request_url(model), headers=headers, body=body, secrets=[key] if key else []
        )

    return prepare


# --------------------------------------------------------------------------------------------
# Response

_FINISH_TEXTS = {
    "SAFETY": "the response was blocked by Gemini's safety filters",
    "RECITATION": "the response was blocked because it recited protected material",
    "BLOCKLIST": "the response contained a blocked term",
    "PROHIBITED_CONTENT": "the response was blocked as prohibited content",
    "SPII": "the response was blocked for sensitive personal information",
    "LANGUAGE": "the response is in a language Gemini does not support",
    "MALFORMED_FUNCTION_CALL": "the model produced a malformed function call",
    "UNEXPECTED_TOOL_CALL": "the model called a tool that was not offered",
    "TOO_MANY_TOOL_CALLS": "the model made too many tool calls",
    "IMAGE_SAFETY": "the generated image was blocked by Gemini's safety filters",
    "IMAGE_PROHIBITED_CONTENT": "the generated image was blocked as prohibited content",
    "IMAGE_RECITATION": "the generated image was blocked because it recited protected material",
    "IMAGE_OTHER": "the generated image was blocked",
    "NO_IMAGE": "no image was generated",
    "OTHER": "the response stopped for an unspecified reason",
    "FINISH_REASON_UNSPECIFIED": "the response stopped for an unspecified reason",
}


def map_finish_reason(reason: str) -> str:
    """Pi's ``mapStopReasonString``: STOP -> stop, MAX_TOKENS -> length, anything else -> error."""
    if reason == "STOP":
        return "stop"
    if reason == "MAX_TOKENS":
        return "length"
    return "error"


def _blocked_categories(ratings: Any) -> str:
    if not isinstance(ratings, list):
        return ""
    names = [
        str(r.get("category", "")).removeprefix("HARM_CATEGORY_")
        for r in ratings
        if isinstance(r, dict) and r.get("blocked")
    ]
    return f" [{', '.join(n for n in names if n)}]" if any(names) else ""


def finish_error_text(reason: str, candidate: dict[str, Any]) -> str:
    """A one-line text for a finishReason that ends in an error."""
    text = _FINISH_TEXTS.get(reason, "the response stopped")
    message = (
        f"Gemini finishReason {reason}: {text}{_blocked_categories(candidate.get('safetyRatings'))}"
    )
    detail = candidate.get("finishMessage")
    if isinstance(detail, str) and detail:
        message += f" ({detail})"
    return message


def prompt_blocked_text(feedback: dict[str, Any]) -> str:
    reason = feedback.get("blockReason")
    message = (
        f"Gemini blocked the prompt: {reason}{_blocked_categories(feedback.get('safetyRatings'))}"
    )
    detail = feedback.get("blockReasonMessage")
    if isinstance(detail, str) and detail:
        message += f" ({detail})"
    return message


def parse_usage(raw: dict[str, Any], model: Model) -> Usage:
    """``usageMetadata`` -> Usage: input excludes cached tokens, output includes thoughts."""
    prompt = raw.get("promptTokenCount") or 0
    cached = raw.get("cachedContentTokenCount") or 0
    thoughts = raw.get("thoughtsTokenCount") or 0
    usage = Usage(
        input=prompt - cached,
        output=(raw.get("candidatesTokenCount") or 0) + thoughts,
        cache_read=cached,
        cache_write=0,
        reasoning=thoughts,
        total_tokens=raw.get("totalTokenCount") or 0,
    )
    calculate_cost(model, usage)
    return usage


def _mid_stream_error(chunk: dict[str, Any]) -> str:
    err = chunk.get("error")
    code = err.get("code") if isinstance(err, dict) else None
    text = error_payload_text(chunk)
    return f"{code}: {text}" if isinstance(code, int) else text


class GoogleGenerativeAIDecoder:
    """Gemini's ``GenerateContentResponse`` chunks -> assistant-message events on ``output``."""

    def __init__(self, model: Model, output: AssistantMessage, push: Push) -> None:
        self.model = model
        self.output = output
        self.push = push
        self.content = output.content
        self.current = -1  # index of the open text or thinking block, -1 when none
        self.finished = False

    def on_event(self, event: str, data: bytes) -> None:
        if event == "error":
            raise ProviderError(error_event_text(data))
        try:
            chunk = loads(data)
        except ValueError:
            raise ProviderError(
                f"Could not parse Gemini stream chunk as JSON: {event_text(data)}"
            ) from None
        if isinstance(chunk, list) and len(chunk) == 1:  # a proxy's JSON-array framing
            chunk = chunk[0]
        if type(chunk) is not dict:
            return
        if chunk.get("error"):
            raise ProviderError(_mid_stream_error(chunk))
        output = self.output
        if not output.response_id and chunk.get("responseId"):
            output.response_id = chunk["responseId"]
        candidates = chunk.get("candidates")
        candidate = candidates[0] if isinstance(candidates, list) and candidates else None
        if isinstance(candidate, dict):
            parts = (candidate.get("content") or {}).get("parts")
            if parts:
                for part in parts:
                    if isinstance(part, dict):
                        self._part(part)
            reason = candidate.get("finishReason")
            if reason:
                self._finish(reason, candidate)
        usage = chunk.get("usageMetadata")
        if usage:
            output.usage = parse_usage(usage, self.model)
        feedback = chunk.get("promptFeedback")
        if isinstance(feedback, dict) and feedback.get("blockReason") and not candidates:
            output.stop_reason = "error"
            output.error_message = prompt_blocked_text(feedback)
            self.finished = True

    def _part(self, part: dict[str, Any]) -> None:
        text = part.get("text")
        if isinstance(text, str):
            self._text(text, part.get("thought") is True, part.get("thoughtSignature"))
        call = part.get("functionCall")
        if isinstance(call, dict):
            self._function_call(call, part.get("thoughtSignature"))

    def _close_current(self) -> None:
        if self.current >= 0:
            self.push(end_event(self.output, self.current))
            self.current = -1

    def _text(self, text: str, thinking: bool, signature: Any) -> None:
        output, content = self.output, self.content
        index = self.current
        kind = "thinking" if thinking else "text"
        if index < 0 or content[index].type != kind:
            self._close_current()
            index = self.current = len(content)
            if thinking:
                content.append(ThinkingContent(thinking=""))
                self.push(ThinkingStartEvent(index, output))
            else:
                content.append(TextContent(text=""))
                self.push(TextStartEvent(index, output))
        block: Any = content[index]
        if isinstance(signature, str) and signature:  # keep the last one the block was given
            if thinking:
                block.thinking_signature = signature
            else:
                block.text_signature = signature
        self.push(
            grow_thinking(output, index, text) if thinking else grow_text(output, index, text)
        )

    def _function_call(self, call: dict[str, Any], signature: Any) -> None:
        self._close_current()
        output, content = self.output, self.content
        name = call.get("name") or ""
        given = call.get("id")
        duplicate = any(b.type == "toolCall" and b.id == given for b in content)
        call_id = (
            given
            if isinstance(given, str) and given and not duplicate
            else (f"{name}_{now_ms()}_{next(_tool_call_counter)}")
        )
        args = call.get("args")
        arguments: dict[str, Any] = args if isinstance(args, dict) else {}
        block = ToolCall(
            id=call_id,
            name=name,
            arguments=arguments,
            thought_signature=signature if isinstance(signature, str) and signature else None,
        )
        index = len(content)
        content.append(block)
        push = self.push
        push(ToolCallStartEvent(index, output))
        delta = json.dumps(arguments, ensure_ascii=False, separators=(",", ":"))
        push(ToolCallDeltaEvent(index, delta, output))
        push(ToolCallEndEvent(index, block, output))

    def _finish(self, reason: str, candidate: dict[str, Any]) -> None:
        output = self.output
        stop = map_finish_reason(reason)
        if any(b.type == "toolCall" for b in self.content):
            stop = "toolUse"  # as Pi: a reply with calls is a tool-use turn whatever the reason
        output.stop_reason = stop  # type: ignore[assignment]
        output.error_message = finish_error_text(reason, candidate) if stop == "error" else None
        self.finished = True

    def finish(self) -> None:
        self._close_current()
        output = self.output
        if output.stop_reason in ("error", "aborted"):
            raise ProviderError(output.error_message or "An unknown error occurred")
        if not self.finished:
            raise ProviderError("Gemini stream ended without a finishReason")


def stream_google_generative_ai(
    model: Model, context: Context, options: StreamOptions | None = None
) -> AssistantMessageEventStream:
    """Stream one ``streamGenerateContent`` response as assistant-message events."""
    return run_provider(
        model,
        options,
        _prepare(model, context, options),
        lambda output, push: GoogleGenerativeAIDecoder(model, output, push),
    )


__all__ = [
    "API",
    "GoogleGenerativeAIDecoder",
    "build_body",
    "clamp_thinking_level",
    "convert_messages",
    "convert_tools",
    "map_finish_reason",
    "parse_usage",
    "request_url",
    "stream_google_generative_ai",
    "thinking_budget",
    "thinking_config",
]

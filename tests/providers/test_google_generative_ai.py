"""google-generative-ai against a real local HTTP server speaking Gemini's SSE.

The chunks follow Google's documentation of ``streamGenerateContent?alt=sse``
(https://ai.google.dev/api/generate-content, .../docs/thinking, .../docs/function-calling,
.../docs/thought-signatures): ``data: <GenerateContentResponse>`` frames ending in CRLF CRLF,
text and ``thought`` parts in pieces, whole ``functionCall`` parts, cumulative
``usageMetadata``, the ``finishReason`` on the last chunk, and Google's error JSON.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest

from pi_notebook.agent import Agent, AgentTool, AgentToolResult
from pi_notebook.ai import (
    AbortController,
    AssistantMessage,
    Context,
    ImageContent,
    StreamOptions,
    TextContent,
    Tool,
    ToolResultMessage,
    UserMessage,
    maybe_await,
    parse_message,
)
from pi_notebook.ai.providers import resolve_model
from pi_notebook.ai.registry import stream

from .helpers import GEMINI_KEY, collect, gemini_model, squash, types_of
from .server import ScriptServer, error, gemini_sse, stall, stream_bytes

IMG = ImageContent(data="aGVsbG8=", mime_type="image/png")
SIG_A = "CiQB0e2Kb7Zd" + "A" * 20  # base64, as Gemini's thought signatures are
SIG_B = "Ej8KPQHR7Ypv" + "B" * 20
WEATHER = Tool(
    name="get_weather",
    description="Weather for a city",
    parameters={
        "type": "object",
        "properties": {"city": {"type": "string"}, "days": {"type": "integer"}},
        "required": ["city"],
    },
)


def ctx(**kw: Any) -> Context:
    return Context(system_prompt="Be brief.", messages=[UserMessage(content="hi")], **kw)


def opts(**kw: Any) -> StreamOptions:
    return StreamOptions(api_key=GEMINI_KEY, **kw)


def chunk(
    *parts: dict[str, Any],
    finish: str | None = None,
    usage: dict[str, Any] | None = None,
    **candidate: Any,
) -> dict[str, Any]:
    """One GenerateContentResponse as the API streams it."""
    cand: dict[str, Any] = {"index": 0, **candidate}
    if parts:
        cand["content"] = {"parts": list(parts), "role": "model"}
    if finish:
        cand["finishReason"] = finish
    out: dict[str, Any] = {
        "candidates": [cand],
        "usageMetadata": usage or {"promptTokenCount": 9, "totalTokenCount": 9},
        "modelVersion": "gemini-2.5-flash",
        "responseId": "resp-1",
    }
    return out


USAGE = {
    "promptTokenCount": 120,
    "candidatesTokenCount": 30,
    "thoughtsTokenCount": 50,
    "cachedContentTokenCount": 100,
    "totalTokenCount": 200,
}


def final(*parts: dict[str, Any], finish: str = "STOP", **kw: Any) -> dict[str, Any]:
    return chunk(*parts, finish=finish, usage=USAGE, **kw)


# --------------------------------------------------------------------------------------------
# Streams


async def test_text_stream_usage_url_header_and_body(server: ScriptServer) -> None:
    body = gemini_sse(
        chunk({"text": "Once upon"}),
        chunk({"text": " a time, "}),
        final({"text": "in Zürich."}),
    )
    server.queue(stream_bytes(body, split=7))
    events, result = await collect(
        gemini_model(server.url), ctx(), opts(max_tokens=300, temperature=0.2)
    )
    assert squash(types_of(events)) == ["start", "text_start", "text_delta", "text_end", "done"]
    assert [e.delta for e in events if e.type == "text_delta"] == [
        "Once upon",
        " a time, ",
        "in Zürich.",
    ]
    assert result.content[0].text == "Once upon a time, in Zürich."
    assert result.stop_reason == "stop" and result.response_id == "resp-1"
    assert result.api == "google-generative-ai" and result.provider == "google"
    u = result.usage
    assert (u.input, u.output, u.cache_read, u.cache_write, u.reasoning) == (20, 80, 100, 0, 50)
    assert u.total_tokens == 200
    assert u.cost.total == pytest.approx((20 * 0.3 + 80 * 2.5 + 100 * 0.03) / 1e6)

    req = server.requests[0]
    assert req.method == "POST"
    assert req.path == "/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse"
    assert req.headers["x-goog-api-key"] == GEMINI_KEY
    assert GEMINI_KEY not in req.path and "key=" not in req.path
    assert "authorization" not in req.headers
    sent = req.json()
    assert sent["contents"] == [{"role": "user", "parts": [{"text": "hi"}]}]
    assert sent["systemInstruction"] == {"role": "user", "parts": [{"text": "Be brief."}]}
    assert sent["generationConfig"] == {
        "temperature": 0.2,
        "maxOutputTokens": 300,
        "thinkingConfig": {"thinkingBudget": 0},  # thinking off on Gemini 2.5
    }
    assert "tools" not in sent


async def test_thought_parts_are_thinking_with_their_signature(server: ScriptServer) -> None:
    body = gemini_sse(
        chunk({"text": "**Weighing** the", "thought": True}),
        chunk({"text": " options.", "thought": True, "thoughtSignature": SIG_A}),
        chunk({"text": "The answer"}),
        final({"text": " is 42.", "thoughtSignature": SIG_B}),
    )
    server.queue(stream_bytes(body))
    events, result = await collect(gemini_model(server.url), ctx(), opts(reasoning="medium"))
    assert squash(types_of(events)) == [
        "start",
        "thinking_start",
        "thinking_delta",
        "thinking_end",
        "text_start",
        "text_delta",
        "text_end",
        "done",
    ]
    # the thinking block closes when the text starts, not at the end of the stream
    ends = [i for i, e in enumerate(events) if e.type == "thinking_end"]
    starts = [i for i, e in enumerate(events) if e.type == "text_start"]
    assert ends[0] < starts[0]
    thinking, text = result.content
    assert thinking.thinking == "**Weighing** the options."
    assert thinking.thinking_signature == SIG_A
    assert text.text == "The answer is 42." and text.text_signature == SIG_B
    assert result.usage.reasoning == 50
    config = server.requests[0].json()["generationConfig"]
    assert config == {
        "maxOutputTokens": 65536,  # Pi's default: the model's limit
        "thinkingConfig": {"includeThoughts": True, "thinkingBudget": 8192},
    }


@pytest.mark.parametrize(
    ("model_id", "level", "expected"),
    [
        ("gemini-2.5-flash", "minimal", {"includeThoughts": True, "thinkingBudget": 128}),
        ("gemini-2.5-pro", "high", {"includeThoughts": True, "thinkingBudget": 32768}),
        ("gemini-2.5-flash-lite", "minimal", {"includeThoughts": True, "thinkingBudget": 512}),
        ("gemini-3-pro-preview", "medium", {"includeThoughts": True, "thinkingLevel": "HIGH"}),
        ("gemini-3-pro-preview", None, {"thinkingLevel": "LOW"}),
        ("gemini-3-flash-preview", "low", {"includeThoughts": True, "thinkingLevel": "LOW"}),
        ("gemini-3-flash-preview", None, {"thinkingLevel": "MINIMAL"}),
        ("gemma-4-31b-it", "low", {"includeThoughts": True, "thinkingLevel": "HIGH"}),  # low: None
        ("gemini-2.5-flash", "xhigh", {"includeThoughts": True, "thinkingBudget": 24576}),
    ],
)
async def test_thinking_config_from_the_thinking_level(
    server: ScriptServer, model_id: str, level: str | None, expected: dict[str, Any]
) -> None:
    """Pi's choices: a thinkingLevel for Gemini 3 / Gemma 4 (levels clamped to the model's
    map), a budget for Gemini 2.5, the lowest setting without thoughts when thinking is off."""
    server.queue(stream_bytes(gemini_sse(final({"text": "ok"}))))
    model = resolve_model(f"google/{model_id}", base_url=server.url + "/v1beta")
    _, result = await collect(model, ctx(), opts(reasoning=level))
    assert result.stop_reason == "stop", result.error_message
    assert server.requests[0].json()["generationConfig"]["thinkingConfig"] == expected


async def test_whole_function_calls_with_generated_ids(server: ScriptServer) -> None:
    body = gemini_sse(
        chunk({"text": "Let me check."}),
        chunk(
            {"functionCall": {"name": "get_weather", "args": {"city": "Zürich", "days": 3}}},
            {"functionCall": {"name": "get_weather", "args": {"city": "Oslo"}}},
        ),
        final({"functionCall": {"id": "call-x", "name": "get_time", "args": {}}}),
    )
    server.queue(stream_bytes(body))
    events, result = await collect(gemini_model(server.url), ctx(tools=[WEATHER]), opts())
    assert types_of(events) == [
        "start",
        "text_start",
        "text_delta",
        "text_end",
        *["toolcall_start", "toolcall_delta", "toolcall_end"] * 3,
        "done",
    ]
    assert result.stop_reason == "toolUse"  # Gemini says STOP; the calls make it a tool turn
    text, first, second, third = result.content
    assert text.text == "Let me check."
    assert (first.name, first.arguments) == ("get_weather", {"city": "Zürich", "days": 3})
    assert (second.name, second.arguments) == ("get_weather", {"city": "Oslo"})
    assert first.id.startswith("get_weather_") and second.id.startswith("get_weather_")
    assert first.id != second.id
    assert third.id == "call-x"
    deltas = [e.delta for e in events if e.type == "toolcall_delta"]
    assert [json.loads(d) for d in deltas] == [b.arguments for b in (first, second, third)]
    ends = [e for e in events if e.type == "toolcall_end"]
    assert [e.tool_call.id for e in ends] == [first.id, second.id, third.id]
    sent = server.requests[0].json()
    assert sent["tools"] == [
        {
            "functionDeclarations": [
                {
                    "name": "get_weather",
                    "description": "Weather for a city",
                    "parametersJsonSchema": WEATHER.parameters,
                }
            ]
        }
    ]


async def test_a_repeated_call_id_is_replaced(server: ScriptServer) -> None:
    call = {"functionCall": {"id": "dup", "name": "get_weather", "args": {"city": "A"}}}
    server.queue(stream_bytes(gemini_sse(chunk(call), final(call))))
    _, result = await collect(gemini_model(server.url), ctx(tools=[WEATHER]), opts())
    first, second = result.content
    assert first.id == "dup" and second.id.startswith("get_weather_")


async def test_function_call_keeps_its_thought_signature(server: ScriptServer) -> None:
    call = {
        "functionCall": {"name": "get_weather", "args": {"city": "Paris"}},
        "thoughtSignature": SIG_A,
    }
    server.queue(stream_bytes(gemini_sse(final(call))))
    _, result = await collect(gemini_model(server.url), ctx(tools=[WEATHER]), opts())
    assert result.content[0].thought_signature == SIG_A


async def test_max_tokens_is_length(server: ScriptServer) -> None:
    server.queue(stream_bytes(gemini_sse(chunk({"text": "Once"}), final(finish="MAX_TOKENS"))))
    events, result = await collect(gemini_model(server.url), ctx(), opts())
    assert events[-1].type == "done" and result.stop_reason == "length"
    assert result.content[0].text == "Once" and result.error_message is None


async def test_safety_block_is_an_error_naming_the_reason(server: ScriptServer) -> None:
    ratings = [
        {"category": "HARM_CATEGORY_SEXUALLY_EXPLICIT", "probability": "NEGLIGIBLE"},
        {"category": "HARM_CATEGORY_DANGEROUS_CONTENT", "probability": "HIGH", "blocked": True},
    ]
    body = gemini_sse(chunk({"text": "Here is how"}), final(finish="SAFETY", safetyRatings=ratings))
    server.queue(stream_bytes(body))
    events, result = await collect(gemini_model(server.url), ctx(), opts())
    assert types_of(events)[-1] == "error" and result.stop_reason == "error"
    assert result.error_message == (
        "Gemini finishReason SAFETY: the response was blocked by Gemini's safety filters"
        " [DANGEROUS_CONTENT]"
    )
    assert result.content[0].text == "Here is how"  # the partial reply is kept
    assert "text_end" in types_of(events)


@pytest.mark.parametrize("reason", ["RECITATION", "MALFORMED_FUNCTION_CALL", "OTHER", "NEW_ONE"])
async def test_other_finish_reasons_are_errors(server: ScriptServer, reason: str) -> None:
    server.queue(stream_bytes(gemini_sse(final(finish=reason, finishMessage="details here"))))
    _, result = await collect(gemini_model(server.url), ctx(), opts())
    assert result.stop_reason == "error"
    assert result.error_message.startswith(f"Gemini finishReason {reason}: ")
    assert result.error_message.endswith("(details here)")


async def test_blocked_prompt_is_an_error(server: ScriptServer) -> None:
    blocked = {
        "promptFeedback": {
            "blockReason": "SAFETY",
            "safetyRatings": [
                {"category": "HARM_CATEGORY_HARASSMENT", "probability": "HIGH", "blocked": True}
            ],
        },
        "usageMetadata": {"promptTokenCount": 8, "totalTokenCount": 8},
        "modelVersion": "gemini-2.5-flash",
    }
    server.queue(stream_bytes(gemini_sse(blocked)))
    events, result = await collect(gemini_model(server.url), ctx(), opts())
    assert types_of(events) == ["start", "error"]
    assert result.error_message == "Gemini blocked the prompt: SAFETY [HARASSMENT]"
    assert result.usage.input == 8


async def test_stream_ending_without_finish_reason_is_an_error(server: ScriptServer) -> None:
    server.queue(stream_bytes(gemini_sse(chunk({"text": "cut"}))))
    _, result = await collect(gemini_model(server.url), ctx(), opts())
    assert result.stop_reason == "error"
    assert result.error_message == "Gemini stream ended without a finishReason"
    assert result.content[0].text == "cut"


# --------------------------------------------------------------------------------------------
# Errors, retries, drops, abort, keys


async def test_400_error_json_is_readable_and_not_retried(server: ScriptServer) -> None:
    server.queue(
        error(
            400,
            {
                "error": {
                    "code": 400,
                    "message": "API key not valid. Please pass a valid API key.",
                    "status": "INVALID_ARGUMENT",
                    "details": [
                        {
                            "@type": "type.googleapis.com/google.rpc.ErrorInfo",
                            "reason": "API_KEY_INVALID",
                            "domain": "googleapis.com",
                        }
                    ],
                }
            },
        )
    )
    events, result = await collect(gemini_model(server.url), ctx(), opts(max_retries=3))
    assert types_of(events) == ["error"]
    assert result.error_message == (
        "400: API key not valid. Please pass a valid API key. (INVALID_ARGUMENT)"
    )
    assert len(server.requests) == 1


async def test_429_and_503_are_retried(server: ScriptServer) -> None:
    exhausted = {
        "error": {
            "code": 429,
            "message": "Resource has been exhausted (e.g. check quota).",
            "status": "RESOURCE_EXHAUSTED",
        }
    }
    overloaded = {
        "error": {
            "code": 503,
            "message": "The model is overloaded. Please try again later.",
            "status": "UNAVAILABLE",
        }
    }
    server.queue(
        error(429, exhausted, {"retry-after": "0.01"}),
        error(503, overloaded, {"retry-after": "0.01"}),
        stream_bytes(gemini_sse(final({"text": "fine"}))),
    )
    _, result = await collect(gemini_model(server.url), ctx(), opts(max_retries=2))
    assert result.stop_reason == "stop" and result.content[0].text == "fine"
    assert len(server.requests) == 3

    server.queue(error(429, exhausted))
    _, result = await collect(gemini_model(server.url), ctx(), opts(max_retries=0))
    assert result.error_message == (
        "429: Resource has been exhausted (e.g. check quota). (RESOURCE_EXHAUSTED)"
    )


def _quota(delay: str) -> dict[str, Any]:
    return {
        "error": {
            "code": 429,
            "message": "You exceeded your current quota.",
            "status": "RESOURCE_EXHAUSTED",
            "details": [
                {"@type": "type.googleapis.com/google.rpc.QuotaFailure", "violations": []},
                {"@type": "type.googleapis.com/google.rpc.RetryInfo", "retryDelay": delay},
            ],
        }
    }


async def test_the_retry_delay_in_google_s_error_json_is_honoured(server: ScriptServer) -> None:
    server.queue(error(429, _quota("120s")))
    _, result = await asyncio.wait_for(
        collect(gemini_model(server.url), ctx(), opts(max_retries=2, max_retry_delay_ms=1000)), 5
    )
    assert result.error_message == (
        "Server requested 120s retry delay (max: 1s). "
        "429: You exceeded your current quota. (RESOURCE_EXHAUSTED)"
    )
    assert len(server.requests) == 1

    server.queue(error(429, _quota("0.01s")), stream_bytes(gemini_sse(final({"text": "ok"}))))
    _, result = await collect(gemini_model(server.url), ctx(), opts(max_retries=1))
    assert result.stop_reason == "stop" and len(server.requests) == 3


async def test_error_json_mid_stream(server: ScriptServer) -> None:
    body = gemini_sse(
        chunk({"text": "Partial"}),
        {
            "error": {
                "code": 500,
                "message": "An internal error has occurred.",
                "status": "INTERNAL",
            }
        },
    )
    server.queue(stream_bytes(body))
    _, result = await collect(gemini_model(server.url), ctx(), opts())
    assert result.stop_reason == "error"
    assert result.error_message == "500: An internal error has occurred. (INTERNAL)"
    assert result.content[0].text == "Partial"


async def test_dropped_mid_stream_keeps_partial_and_is_not_replayed(server: ScriptServer) -> None:
    partial = gemini_sse(chunk({"text": "Hel"}), chunk({"text": "lo"}))
    server.queue(stream_bytes(partial, drop=True), stream_bytes(gemini_sse(final())))
    events, result = await collect(gemini_model(server.url), ctx(), opts(max_retries=3))
    assert events[0].type == "start" and events[-1].type == "error"
    assert result.stop_reason == "error" and result.content[0].text == "Hello"
    assert result.error_message.startswith("Connection lost")
    assert len(server.requests) == 1


async def test_abort_while_stalled(server: ScriptServer) -> None:
    started = asyncio.Event()
    server.queue(stall(server, gemini_sse(chunk({"text": "partial"})), started))
    controller = AbortController()
    s = await maybe_await(stream(gemini_model(server.url), ctx(), opts(signal=controller.signal)))
    got_text = asyncio.Event()
    events: list[Any] = []

    async def consume() -> None:
        async for event in s:
            events.append(event)
            if event.type == "text_delta":
                got_text.set()

    consumer = asyncio.create_task(consume())
    await asyncio.wait_for(got_text.wait(), 5)
    controller.abort()
    result = await asyncio.wait_for(s.result(), 2)
    await asyncio.wait_for(consumer, 2)
    await asyncio.wait_for(server.disconnected.wait(), 2)
    assert result.stop_reason == "aborted" and result.error_message == "Request was aborted"
    assert result.content[0].text == "partial"
    assert events[-1].type == "error" and events[-1].reason == "aborted"


async def test_key_from_gemini_api_key_never_in_url_or_error_texts(
    server: ScriptServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("GEMINI_API_KEY", GEMINI_KEY)
    echo = {
        "error": {
            "code": 403,
            "message": f"Method doesn't allow unregistered callers (key {GEMINI_KEY}).",
            "status": "PERMISSION_DENIED",
        }
    }
    server.queue(error(403, echo))
    events, result = await collect(gemini_model(server.url), ctx(), StreamOptions())
    req = server.requests[0]
    assert req.headers["x-goog-api-key"] == GEMINI_KEY
    assert GEMINI_KEY not in req.path and "key" not in req.path
    assert result.error_message.startswith("403: Method doesn't allow unregistered callers")
    for text in (result.error_message, json.dumps(result.to_json_dict()), repr(events)):
        assert GEMINI_KEY not in text


async def test_missing_key_is_an_error_event(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("GEMINI_API_KEY", raising=False)
    model = resolve_model("google/gemini-2.5-flash")
    events, result = await collect(model, ctx(), StreamOptions())
    assert types_of(events) == ["error"]
    assert result.error_message == "No API key for provider: google"


def test_resolve_model_picks_the_gemini_api() -> None:
    model = resolve_model("google/gemini-2.5-flash")
    assert model.api == "google-generative-ai"
    assert model.base_url == "https://generativelanguage.googleapis.com/v1beta"
    assert model.reasoning and model.context_window == 1048576
    assert resolve_model("google/gemini-3-pro-preview").api == "google-generative-ai"


# --------------------------------------------------------------------------------------------
# Transcripts: request bodies, a Pi-JSON round trip, a tool loop through the Agent


def test_request_body_for_images_tool_results_and_history() -> None:
    from pi_notebook.ai.providers.google_generative_ai import build_body

    model = gemini_model("http://x")
    reply = AssistantMessage(
        api="google-generative-ai",
        provider="google",
        model="gemini-2.5-flash",
        stop_reason="toolUse",
        content=[
            {"type": "thinking", "thinking": "Two files.", "thinkingSignature": SIG_A},
            {"type": "text", "text": "Reading."},
            {"type": "text", "text": "  "},
            {"type": "toolCall", "id": "c1", "name": "read", "arguments": {"path": "a"}},
            {"type": "toolCall", "id": "c2", "name": "read", "arguments": {"path": "b.png"}},
        ],
    )
    context = Context(
        messages=[
            UserMessage(content=[TextContent(text="Look"), IMG]),
            reply,
            ToolResultMessage(tool_call_id="c1", tool_name="read", content=[TextContent(text="A")]),
            ToolResultMessage(tool_call_id="c2", tool_name="read", content=[IMG], is_error=True),
        ]
    )
    contents = build_body(model, context, None)["contents"]
    assert contents[0] == {
        "role": "user",
        "parts": [{"text": "Look"}, {"inlineData": {"mimeType": "image/png", "data": "aGVsbG8="}}],
    }
    assert contents[1] == {
        "role": "model",
        "parts": [
            {"thought": True, "text": "Two files.", "thoughtSignature": SIG_A},
            {"text": "Reading."},
            {"functionCall": {"name": "read", "args": {"path": "a"}}},
            {"functionCall": {"name": "read", "args": {"path": "b.png"}}},
        ],
    }
    # both results in one user turn; Gemini 2.x gets the image in a turn of its own
    assert contents[2] == {
        "role": "user",
        "parts": [
            {"functionResponse": {"name": "read", "response": {"output": "A"}}},
            {"functionResponse": {"name": "read", "response": {"error": "(see attached image)"}}},
        ],
    }
    assert contents[3] == {
        "role": "user",
        "parts": [
            {"text": "Tool result image:"},
            {"inlineData": {"mimeType": "image/png", "data": "aGVsbG8="}},
        ],
    }
    # Gemini 3 takes the image inside the function response
    gemini3 = gemini_model("http://x", id="gemini-3-pro-preview")
    contents3 = build_body(gemini3, context, None)["contents"]
    assert len(contents3) == 3
    assert contents3[2]["parts"][1]["functionResponse"]["parts"] == [
        {"inlineData": {"mimeType": "image/png", "data": "aGVsbG8="}}
    ]


async def test_pi_json_round_trip_goes_back_to_the_same_api(server: ScriptServer) -> None:
    first = gemini_sse(
        chunk({"text": "Need the weather.", "thought": True, "thoughtSignature": SIG_A}),
        final(
            {
                "functionCall": {"name": "get_weather", "args": {"city": "Rome"}},
                "thoughtSignature": SIG_B,
            }
        ),
    )
    server.queue(stream_bytes(first), stream_bytes(gemini_sse(final({"text": "Sunny."}))))
    model = gemini_model(server.url)
    context = ctx(tools=[WEATHER])
    _, reply = await collect(model, context, opts(reasoning="low"))
    call = reply.content[1]
    result = ToolResultMessage(
        tool_call_id=call.id, tool_name="get_weather", content=[TextContent(text="18°C, sunny")]
    )
    saved = json.dumps([m.to_json_dict() for m in [*context.messages, reply, result]])
    restored = [parse_message(m) for m in json.loads(saved)]
    assert restored[1] == reply
    _, second = await collect(
        model, Context(system_prompt="Be brief.", tools=[WEATHER], messages=restored), opts()
    )
    assert second.content[0].text == "Sunny."
    contents = server.requests[1].json()["contents"]
    assert contents[1] == {
        "role": "model",
        "parts": [
            {"thought": True, "text": "Need the weather.", "thoughtSignature": SIG_A},
            {
                "functionCall": {"name": "get_weather", "args": {"city": "Rome"}},
                "thoughtSignature": SIG_B,
            },
        ],
    }
    assert contents[2] == {
        "role": "user",
        "parts": [
            {"functionResponse": {"name": "get_weather", "response": {"output": "18°C, sunny"}}}
        ],
    }


async def test_tool_loop_through_the_agent(server: ScriptServer) -> None:
    calls: list[dict[str, Any]] = []

    async def execute(call_id: str, params: dict[str, Any], signal: Any, on_update: Any) -> Any:
        calls.append(params)
        return AgentToolResult(content=[TextContent(text=f"{params['city']}: 21°C")])

    tool = AgentTool(
        name="get_weather",
        description="Weather for a city",
        parameters=WEATHER.parameters,
        execute=execute,
    )
    server.queue(
        stream_bytes(
            gemini_sse(
                final(
                    {"functionCall": {"name": "get_weather", "args": {"city": "Lima", "days": "2"}}}
                )
            )
        ),
        stream_bytes(gemini_sse(chunk({"text": "Lima is "}), final({"text": "21°C."}))),
    )
    agent = Agent(model=gemini_model(server.url), tools=[tool], api_key=GEMINI_KEY)
    seen: list[str] = []
    agent.subscribe(lambda event: seen.append(event.type))
    await asyncio.wait_for(agent.prompt("Weather in Lima?"), 10)
    assert calls == [{"city": "Lima", "days": 2}]  # coerced by the tool's schema
    roles = [m.role for m in agent.state.messages]
    assert roles == ["user", "assistant", "toolResult", "assistant"]
    assert agent.state.messages[-1].content[0].text == "Lima is 21°C."
    assert seen[0] == "agent_start" and seen[-1] == "agent_end"
    sent = server.requests[1].json()["contents"]
    assert sent[1]["parts"][0]["functionCall"]["name"] == "get_weather"
    assert sent[2]["parts"][0]["functionResponse"] == {
        "name": "get_weather",
        "response": {"output": "Lima: 21°C"},
    }

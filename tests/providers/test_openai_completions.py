"""openai-completions against a real local HTTP server replaying chat-completion SSE."""

from __future__ import annotations

import asyncio
import json

import pytest

from pi_notebook.ai import (
    AssistantMessage,
    Context,
    StreamOptions,
    Tool,
    UserMessage,
    maybe_await,
)
from pi_notebook.ai.registry import stream

from .helpers import KEY, collect, openai_model, squash, types_of
from .server import Conn, Request, ScriptServer, error, sse, stream_bytes


def chunk(delta: dict | None = None, finish: str | None = None, **extra: object) -> dict:
    choice: dict = {"index": 0, "delta": delta or {}, "finish_reason": finish}
    return {"id": "chatcmpl-1", "model": "test-model", "choices": [choice], **extra}


USAGE = {
    "id": "chatcmpl-1",
    "choices": [],
    "usage": {
        "prompt_tokens": 100,
        "completion_tokens": 20,
        "prompt_tokens_details": {"cached_tokens": 40},
        "completion_tokens_details": {"reasoning_tokens": 5},
    },
}

CTX = Context(system_prompt="Be brief.", messages=[{"role": "user", "content": "hi"}])


def ctx() -> Context:
    from pi_notebook.ai import UserMessage

    return Context(system_prompt="Be brief.", messages=[UserMessage(content="hi")])


def opts(**kw: object) -> StreamOptions:
    return StreamOptions(api_key=KEY, **kw)


TEXT_STREAM = sse(
    chunk({"role": "assistant", "content": ""}),
    chunk({"content": "Hello"}),
    chunk({"content": ", wörld"}),
    chunk({"content": " 🙂"}),
    chunk({}, "stop"),
    USAGE,
)


async def test_text_stream_events_usage_and_cost(server: ScriptServer) -> None:
    server.queue(stream_bytes(TEXT_STREAM))
    events, result = await collect(openai_model(server.url), ctx(), opts())
    assert squash(types_of(events)) == ["start", "text_start", "text_delta", "text_end", "done"]
    assert result.content[0].text == "Hello, wörld 🙂"
    assert events[-2].content == "Hello, wörld 🙂"
    assert result.stop_reason == "stop" and result.error_message is None
    assert result.response_id == "chatcmpl-1"
    usage = result.usage
    assert (usage.input, usage.output, usage.cache_read, usage.reasoning) == (60, 20, 40, 5)
    assert usage.total_tokens == 120
    assert usage.cost.input == pytest.approx(60 * 2 / 1e6)
    assert usage.cost.output == pytest.approx(20 * 8 / 1e6)
    assert usage.cost.cache_read == pytest.approx(40 * 1 / 1e6)
    assert usage.cost.total == pytest.approx(
        usage.cost.input + usage.cost.output + usage.cost.cache_read
    )
    # every partial event carries the live message object
    assert all(e.partial is events[0].partial for e in events[:-1])
    assert events[-1].message is events[0].partial
    req = server.requests[0]
    assert req.path == "/v1/chat/completions"
    assert req.headers["authorization"] == f"Bearer {KEY}"


async def test_thinking_then_text_closes_blocks_after_stream(server: ScriptServer) -> None:
    server.queue(
        stream_bytes(
            sse(
                chunk({"reasoning_content": "Let me "}),
                chunk({"reasoning_content": "think."}),
                chunk({"content": "Answer"}),
                chunk({}, "stop"),
            )
        )
    )
    events, result = await collect(openai_model(server.url, reasoning=True), ctx(), opts())
    assert squash(types_of(events)) == [
        "start",
        "thinking_start",
        "thinking_delta",
        "text_start",
        "text_delta",
        "thinking_end",
        "text_end",
        "done",
    ]
    assert result.content[0].type == "thinking"
    assert result.content[0].thinking == "Let me think."
    assert result.content[0].thinking_signature == "reasoning_content"
    assert result.content[1].text == "Answer"


async def test_a_streamed_reply_is_a_full_message_the_next_request_can_send(
    server: ScriptServer,
) -> None:
    """Blocks built while streaming carry every field (defaults included), like validated ones."""
    call = {"index": 0, "id": "call_1", "type": "function"}
    server.queue(
        stream_bytes(
            sse(
                chunk({"reasoning_content": "Think."}),
                chunk({"content": "Calling."}),
                chunk({"tool_calls": [{**call, "function": {"name": "f", "arguments": "{}"}}]}),
                chunk({}, "tool_calls"),
            )
        ),
        stream_bytes(sse(chunk({"content": "ok"}), chunk({}, "stop"))),
    )
    model = openai_model(server.url, reasoning=True)
    _, reply = await collect(model, ctx(), opts())
    assert [block.type for block in reply.content] == ["thinking", "text", "toolCall"]
    assert AssistantMessage.model_validate(reply.to_json_dict()) == reply
    follow_up = Context(messages=[*ctx().messages, reply, UserMessage(content="go on")])
    _, second = await collect(model, follow_up, opts())
    assert second.stop_reason == "stop", second.error_message
    (sent,) = [m for m in server.requests[1].json()["messages"] if m["role"] == "assistant"]
    assert sent["tool_calls"][0]["id"] == "call_1"


async def test_reasoning_field_variant(server: ScriptServer) -> None:
    server.queue(stream_bytes(sse(chunk({"reasoning": "hmm"}), chunk({}, "stop"))))
    _, result = await collect(openai_model(server.url), ctx(), opts())
    assert result.content[0].thinking == "hmm"
    assert result.content[0].thinking_signature == "reasoning"


def _tool_chunks(index: int, call_id: str, name: str, args: str, repeat: bool) -> list[dict]:
    pieces = [args[i : i + 3] for i in range(0, len(args), 3)]
    out = []
    for n, piece in enumerate(pieces):
        call: dict = {"index": index, "function": {"arguments": piece}}
        if n == 0 or repeat:
            call["id"] = call_id
            call["type"] = "function"
            call["function"]["name"] = name
        out.append(chunk({"tool_calls": [call]}))
    return out


async def test_single_tool_call_split_args_and_repeated_name(server: ScriptServer) -> None:
    args = json.dumps({"path": "/tmp/ä.txt", "lines": [1, 2, 3], "deep": {"x": True}})
    server.queue(
        stream_bytes(
            sse(*_tool_chunks(0, "call_1", "read_file", args, repeat=True), chunk({}, "tool_calls"))
        )
    )
    events, result = await collect(openai_model(server.url), ctx(), opts())
    assert squash(types_of(events)) == [
        "start",
        "toolcall_start",
        "toolcall_delta",
        "toolcall_end",
        "done",
    ]
    assert result.stop_reason == "toolUse"
    call = result.content[0]
    assert call.name == "read_file"  # not "read_fileread_file..."
    assert call.id == "call_1"
    assert call.arguments == json.loads(args)
    deltas = [e for e in events if e.type == "toolcall_delta"]
    assert len(deltas) > 5
    assert "".join(d.delta for d in deltas) == args
    end = next(e for e in events if e.type == "toolcall_end")
    assert end.tool_call is call
    # no scratch state on the finished block
    assert set(call.__dict__) <= {"type", "id", "name", "arguments", "thought_signature"}
    assert not call.__pydantic_extra__
    assert set(call.to_json_dict()) == {"type", "id", "name", "arguments"}


async def test_partial_arguments_are_parsed_while_streaming(server: ScriptServer) -> None:
    frames = _tool_chunks(0, "c", "f", '{"query": "hello world", "n": 5}', repeat=False)
    consumed = asyncio.Event()

    async def lock_step(request: Request, conn: Conn) -> None:
        # one frame at a time: the next is sent only once the client has seen this one's delta,
        # so each recorded partial is the parse of exactly the arguments received so far
        await conn.head(200)
        for frame in frames:
            consumed.clear()
            await conn.chunk(sse(frame, end=False))
            await asyncio.wait_for(consumed.wait(), 5)
        await conn.chunk(sse(chunk({}, "tool_calls")))
        await conn.end()

    server.queue(lock_step)
    s = await maybe_await(stream(openai_model(server.url), ctx(), opts()))
    seen = []
    async for event in s:
        if event.type == "toolcall_delta":
            seen.append(dict(event.partial.content[0].arguments))
            consumed.set()
    assert seen == [
        {},
        {},
        {},
        {"query": "h"},
        {"query": "hell"},
        {"query": "hello w"},
        {"query": "hello worl"},
        {"query": "hello world"},
        {"query": "hello world"},
        {"query": "hello world"},
        {"query": "hello world", "n": 5},
    ]


async def test_parallel_tool_calls_by_index(server: ScriptServer) -> None:
    a = _tool_chunks(0, "call_a", "alpha", '{"a": 1}', repeat=False)
    b = _tool_chunks(1, "call_b", "beta", '{"b": "two"}', repeat=False)
    interleaved = [x for pair in zip(a, b, strict=False) for x in pair] + a[len(b) :] + b[len(a) :]
    server.queue(
        stream_bytes(sse(chunk({"content": "Calling."}), *interleaved, chunk({}, "tool_calls")))
    )
    events, result = await collect(openai_model(server.url), ctx(), opts())
    assert [b.type for b in result.content] == ["text", "toolCall", "toolCall"]
    assert [(c.id, c.name, c.arguments) for c in result.content[1:]] == [
        ("call_a", "alpha", {"a": 1}),
        ("call_b", "beta", {"b": "two"}),
    ]
    ends = [e.content_index for e in events if e.type.endswith("_end")]
    assert ends == [0, 1, 2]


async def test_keepalives_crlf_multiline_data_and_split_utf8(server: ScriptServer) -> None:
    first = json.dumps(chunk({"content": "Grüße 🌍"}), ensure_ascii=False)
    # a JSON object split over two data: lines is still one event (joined by "\n")
    half = first.index('"choices"')
    body = (
        ": keep-alive\r\n\r\n"
        + f"data: {first[:half]}\r\ndata: {first[half:]}\r\n\r\n"
        + ":ping\r\n"
        + f"data:{json.dumps(chunk({'content': ' — ok'}), ensure_ascii=False)}\r\n\r\n"
        + f"data: {json.dumps(chunk({}, 'stop'))}\r\n\r\n"
        + "data: [DONE]\r\n\r\n"
    ).encode()
    server.queue(stream_bytes(body, split=1))  # every byte its own network chunk
    _events, result = await collect(openai_model(server.url), ctx(), opts())
    assert result.stop_reason == "stop", result.error_message
    assert result.content[0].text == "Grüße 🌍 — ok"


async def test_lone_cr_line_endings(server: ScriptServer) -> None:
    body = sse(chunk({"content": "a"}), chunk({}, "stop")).replace(b"\n", b"\r")
    server.queue(stream_bytes(body, split=7))
    _, result = await collect(openai_model(server.url), ctx(), opts())
    assert result.content[0].text == "a" and result.stop_reason == "stop"


async def test_content_filter_and_length(server: ScriptServer) -> None:
    server.queue(stream_bytes(sse(chunk({"content": "x"}), chunk({}, "content_filter"))))
    events, result = await collect(openai_model(server.url), ctx(), opts())
    assert events[-1].type == "error" and events[-1].reason == "error"
    assert result.stop_reason == "error"
    assert result.error_message == "Provider finish_reason: content_filter"
    assert result.content[0].text == "x"

    server.queue(stream_bytes(sse(chunk({"content": "x"}), chunk({}, "length"))))
    events, result = await collect(openai_model(server.url), ctx(), opts())
    assert events[-1].type == "done" and result.stop_reason == "length"


async def test_stream_ending_without_done_marker(server: ScriptServer) -> None:
    server.queue(stream_bytes(sse(chunk({"content": "x"}), chunk({}, "stop"), end=False)))
    events, result = await collect(openai_model(server.url), ctx(), opts())
    assert events[-1].type == "done" and result.content[0].text == "x"

    server.queue(stream_bytes(sse(chunk({"content": "x"}), end=False)))
    events, result = await collect(openai_model(server.url), ctx(), opts())
    assert events[-1].type == "error"
    assert result.error_message == "Stream ended without finish_reason"
    assert result.content[0].text == "x"


async def test_registry_dispatch_imports_providers(server: ScriptServer) -> None:
    from pi_notebook.ai import complete

    server.queue(stream_bytes(TEXT_STREAM))
    message = await complete(openai_model(server.url), ctx(), opts())
    assert message.content[0].text == "Hello, wörld 🙂"


async def test_tools_are_sent(server: ScriptServer) -> None:
    server.queue(stream_bytes(TEXT_STREAM))
    tool = Tool(
        name="read",
        description="Read a file",
        parameters={
            "type": "object",
            "properties": {"path": {"type": "string"}},
            "required": ["path"],
        },
    )
    context = ctx()
    context.tools = [tool]
    await collect(openai_model(server.url), context, opts(max_tokens=77, temperature=0.3))
    body = server.requests[0].json()
    assert body["tools"] == [
        {
            "type": "function",
            "function": {
                "name": "read",
                "description": "Read a file",
                "parameters": tool.parameters,
            },
        }
    ]
    assert body["max_tokens"] == 77  # local server: max_tokens, no store, no strict
    assert body["temperature"] == 0.3
    assert body["stream"] is True
    assert body["stream_options"] == {"include_usage": True}
    assert "store" not in body


async def test_error_status_401_gives_only_error_event(server: ScriptServer) -> None:
    server.queue(
        error(
            401,
            {"error": {"message": "Incorrect API key provided", "type": "invalid_request_error"}},
        )
    )
    events, result = await collect(openai_model(server.url), ctx(), opts(max_retries=3))
    assert types_of(events) == ["error"]
    assert result.stop_reason == "error"
    assert result.error_message.startswith("401: Incorrect API key provided")
    assert len(server.requests) == 1  # 401 is not retried

"""anthropic-messages against a real local HTTP server replaying Messages-API SSE."""

from __future__ import annotations

import json

import pytest

from pi_notebook.ai import AssistantMessage, Context, StreamOptions, UserMessage

from .helpers import KEY, anthropic_model, collect, squash, types_of
from .server import ScriptServer, named_sse, stream_bytes


def ctx() -> Context:
    return Context(system_prompt="Be brief.", messages=[UserMessage(content="hi")])


def opts(**kw: object) -> StreamOptions:
    return StreamOptions(api_key=KEY, **kw)


def start(usage: dict | None = None) -> tuple[str, dict]:
    return (
        "message_start",
        {
            "type": "message_start",
            "message": {
                "id": "msg_1",
                "type": "message",
                "role": "assistant",
                "content": [],
                "usage": usage
                or {
                    "input_tokens": 10,
                    "output_tokens": 1,
                    "cache_read_input_tokens": 100,
                    "cache_creation_input_tokens": 50,
                },
            },
        },
    )


def block_start(index: int, block: dict) -> tuple[str, dict]:
    return (
        "content_block_start",
        {"type": "content_block_start", "index": index, "content_block": block},
    )


def delta(index: int, d: dict) -> tuple[str, dict]:
    return ("content_block_delta", {"type": "content_block_delta", "index": index, "delta": d})


def stop(index: int) -> tuple[str, dict]:
    return ("content_block_stop", {"type": "content_block_stop", "index": index})


def message_delta(reason: str, output_tokens: int = 42, **extra: object) -> tuple[str, dict]:
    return (
        "message_delta",
        {
            "type": "message_delta",
            "delta": {"stop_reason": reason, **extra},
            "usage": {"output_tokens": output_tokens},
        },
    )


END = ("message_stop", {"type": "message_stop"})
PING = ("ping", {"type": "ping"})


async def test_text_with_thinking_signature_and_usage(server: ScriptServer) -> None:
    body = named_sse(
        start(),
        PING,
        block_start(0, {"type": "thinking", "thinking": ""}),
        delta(0, {"type": "thinking_delta", "thinking": "Pondering"}),
        delta(0, {"type": "thinking_delta", "thinking": " deeply."}),
        delta(0, {"type": "signature_delta", "signature": "sig-abc"}),
        stop(0),
        block_start(1, {"type": "text", "text": ""}),
        delta(1, {"type": "text_delta", "text": "Hi "}),
        PING,
        delta(1, {"type": "text_delta", "text": "thére"}),
        stop(1),
        message_delta("end_turn"),
        END,
    )
    server.queue(stream_bytes(body, split=5))
    events, result = await collect(anthropic_model(server.url), ctx(), opts())
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
    thinking, text = result.content
    assert thinking.thinking == "Pondering deeply." and thinking.thinking_signature == "sig-abc"
    assert text.text == "Hi thére"
    assert result.response_id == "msg_1" and result.stop_reason == "stop"
    u = result.usage
    assert (u.input, u.output, u.cache_read, u.cache_write) == (10, 42, 100, 50)
    assert u.total_tokens == 202
    assert u.cost.total == pytest.approx((10 * 3 + 42 * 15 + 100 * 0.3 + 50 * 3.75) / 1e6)
    req = server.requests[0]
    assert req.path == "/v1/messages"
    assert req.headers["x-api-key"] == KEY
    assert req.headers["anthropic-version"] == "2023-06-01"


async def test_a_streamed_reply_is_a_full_message_the_next_request_can_send(
    server: ScriptServer,
) -> None:
    """Blocks built while streaming carry every field (defaults included), like validated ones."""
    body = named_sse(
        start(),
        block_start(0, {"type": "thinking", "thinking": ""}),
        delta(0, {"type": "thinking_delta", "thinking": "Hmm."}),
        delta(0, {"type": "signature_delta", "signature": "sig-1"}),
        stop(0),
        block_start(1, {"type": "redacted_thinking", "data": "opaque=="}),
        stop(1),
        block_start(2, {"type": "text", "text": ""}),
        delta(2, {"type": "text_delta", "text": "Calling."}),
        stop(2),
        block_start(3, {"type": "tool_use", "id": "toolu_1", "name": "lookup", "input": {}}),
        delta(3, {"type": "input_json_delta", "partial_json": '{"q": 1}'}),
        stop(3),
        message_delta("tool_use"),
        END,
    )
    again = named_sse(start(), block_start(0, {"type": "text", "text": ""}), stop(0), END)
    server.queue(stream_bytes(body), stream_bytes(again))
    model = anthropic_model(server.url)
    _, reply = await collect(model, ctx(), opts())
    assert reply.stop_reason == "toolUse"
    assert AssistantMessage.model_validate(reply.to_json_dict()) == reply
    follow_up = Context(messages=[*ctx().messages, reply, UserMessage(content="go on")])
    _, second = await collect(model, follow_up, opts())
    assert second.stop_reason == "stop", second.error_message
    sent = server.requests[1].json()["messages"][1]["content"]
    assert [block["type"] for block in sent] == [
        "thinking",
        "redacted_thinking",
        "text",
        "tool_use",
    ]
    assert sent[0]["signature"] == "sig-1" and sent[1]["data"] == "opaque=="


async def test_redacted_thinking(server: ScriptServer) -> None:
    body = named_sse(
        start(),
        block_start(0, {"type": "redacted_thinking", "data": "opaque=="}),
        stop(0),
        message_delta("end_turn"),
        END,
    )
    server.queue(stream_bytes(body))
    _, result = await collect(anthropic_model(server.url), ctx(), opts())
    block = result.content[0]
    assert block.redacted is True and block.thinking == "[Reasoning redacted]"
    assert block.thinking_signature == "opaque=="


async def test_parallel_tool_use_with_split_json(server: ScriptServer) -> None:
    args1 = json.dumps({"city": "Zürich", "days": 3})
    args2 = json.dumps({"q": "x" * 50})
    events_in = [
        start(),
        block_start(0, {"type": "tool_use", "id": "toolu_1", "name": "weather", "input": {}}),
    ]
    events_in += [
        delta(0, {"type": "input_json_delta", "partial_json": args1[i : i + 4]})
        for i in range(0, len(args1), 4)
    ]
    events_in += [
        stop(0),
        block_start(1, {"type": "tool_use", "id": "toolu_2", "name": "search", "input": {}}),
    ]
    events_in += [
        delta(1, {"type": "input_json_delta", "partial_json": args2[i : i + 7]})
        for i in range(0, len(args2), 7)
    ]
    events_in += [stop(1), message_delta("tool_use"), END]
    server.queue(stream_bytes(named_sse(*events_in), split=13))
    events, result = await collect(anthropic_model(server.url), ctx(), opts())
    assert result.stop_reason == "toolUse"
    assert [(b.id, b.name, b.arguments) for b in result.content] == [
        ("toolu_1", "weather", {"city": "Zürich", "days": 3}),
        ("toolu_2", "search", {"q": "x" * 50}),
    ]
    # Anthropic closes each block at content_block_stop: end of block 0 precedes start of block 1
    order = [(e.type, getattr(e, "content_index", None)) for e in events]
    assert order.index(("toolcall_end", 0)) < order.index(("toolcall_start", 1))
    partials = [
        dict(e.partial.content[0].arguments)
        for e in events
        if e.type == "toolcall_delta" and e.content_index == 0
    ]
    assert partials[-1] == {"city": "Zürich", "days": 3}
    for block in result.content:
        assert not block.__pydantic_extra__
        assert set(block.to_json_dict()) == {"type", "id", "name", "arguments"}


@pytest.mark.parametrize(
    ("reason", "stop_reason", "message"),
    [
        ("max_tokens", "length", None),
        ("stop_sequence", "stop", None),
        ("refusal", "error", "The model refused to complete the request"),
        ("something_new", "error", "Unhandled stop reason: something_new"),
    ],
)
async def test_stop_reason_mapping(
    server: ScriptServer, reason: str, stop_reason: str, message: str | None
) -> None:
    body = named_sse(
        start(),
        block_start(0, {"type": "text", "text": ""}),
        delta(0, {"type": "text_delta", "text": "x"}),
        stop(0),
        message_delta(reason),
        END,
    )
    server.queue(stream_bytes(body))
    events, result = await collect(anthropic_model(server.url), ctx(), opts())
    assert result.stop_reason == stop_reason
    assert result.error_message == message
    assert events[-1].type == ("done" if message is None else "error")
    assert result.content[0].text == "x"


async def test_error_event_mid_stream(server: ScriptServer) -> None:
    body = named_sse(
        start(),
        block_start(0, {"type": "text", "text": ""}),
        delta(0, {"type": "text_delta", "text": "par"}),
        (
            "error",
            {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}},
        ),
    )
    server.queue(stream_bytes(body))
    events, result = await collect(anthropic_model(server.url), ctx(), opts())
    assert events[-1].type == "error"
    assert result.error_message == "Overloaded (overloaded_error)"
    assert result.content[0].text == "par"


async def test_stream_without_message_stop(server: ScriptServer) -> None:
    body = named_sse(
        start(),
        block_start(0, {"type": "text", "text": ""}),
        delta(0, {"type": "text_delta", "text": "a"}),
    )
    server.queue(stream_bytes(body))
    _, result = await collect(anthropic_model(server.url), ctx(), opts())
    assert result.stop_reason == "error"
    assert result.error_message == "Anthropic stream ended before message_stop"


async def test_malformed_event_data(server: ScriptServer) -> None:
    body = named_sse(start()) + b"event: content_block_start\ndata: {oops\n\n"
    server.queue(stream_bytes(body))
    _, result = await collect(anthropic_model(server.url), ctx(), opts())
    assert result.error_message.startswith(
        "Could not parse Anthropic SSE event content_block_start"
    )


async def test_crlf_and_multiline_data(server: ScriptServer) -> None:
    text_delta = json.dumps(
        {"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": "ünï"}},
        ensure_ascii=False,
    )
    cut = text_delta.index('"delta"')
    body = named_sse(start(), block_start(0, {"type": "text", "text": ""})).replace(b"\n", b"\r\n")
    body += (
        ": comment\r\nevent: content_block_delta\r\n"
        f"data: {text_delta[:cut]}\r\ndata: {text_delta[cut:]}\r\n\r\n"
    ).encode()
    body += named_sse(stop(0), message_delta("end_turn"), END).replace(b"\n", b"\r\n")
    server.queue(stream_bytes(body, split=1))
    _, result = await collect(anthropic_model(server.url), ctx(), opts())
    assert result.stop_reason == "stop", result.error_message
    assert result.content[0].text == "ünï"


async def test_401_only_error_event(server: ScriptServer) -> None:
    from .server import error

    server.queue(
        error(
            401,
            {
                "type": "error",
                "error": {"type": "authentication_error", "message": "invalid x-api-key"},
            },
        )
    )
    events, result = await collect(anthropic_model(server.url), ctx(), opts())
    assert types_of(events) == ["error"]
    assert result.error_message == "401: invalid x-api-key (authentication_error)"

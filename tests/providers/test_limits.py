"""What a server sends, bounded and decoded: compressed streams, the event-size cap, bounded
error bodies, replies that are not an event stream, and the read timeout set through ``Agent``.

Every test runs against the real scripted server on 127.0.0.1 (``server.py``).
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest

from pi_notebook.agent import Agent
from pi_notebook.ai import AssistantMessage, Context, StreamOptions, UserMessage
from pi_notebook.ai.providers import MAX_ERROR_BODY_BYTES, MAX_EVENT_BYTES

from .helpers import KEY, anthropic_model, collect, openai_model, types_of
from .server import (
    BodyTally,
    Conn,
    Request,
    ScriptServer,
    big_body,
    error,
    named_sse,
    sse,
    stall,
    stream_bytes,
    stream_compressed,
)


def ctx() -> Context:
    return Context(messages=[UserMessage(content="hi")])


def chunk(delta: dict | None = None, finish: str | None = None) -> dict:
    return {"id": "c1", "choices": [{"index": 0, "delta": delta or {}, "finish_reason": finish}]}


OPENAI_OK = sse(chunk({"content": "Hello, "}), chunk({"content": "wörld"}), chunk({}, "stop"))

ANTHROPIC_OK = named_sse(
    ("message_start", {"type": "message_start", "message": {"id": "m", "usage": {}}}),
    (
        "content_block_start",
        {"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}},
    ),
    (
        "content_block_delta",
        {
            "type": "content_block_delta",
            "index": 0,
            "delta": {"type": "text_delta", "text": "Hello, "},
        },
    ),
    (
        "content_block_delta",
        {
            "type": "content_block_delta",
            "index": 0,
            "delta": {"type": "text_delta", "text": "wörld"},
        },
    ),
    ("content_block_stop", {"type": "content_block_stop", "index": 0}),
    (
        "message_delta",
        {
            "type": "message_delta",
            "delta": {"stop_reason": "end_turn"},
            "usage": {"output_tokens": 2},
        },
    ),
    ("message_stop", {"type": "message_stop"}),
)

MODELS = {
    "openai": (openai_model, OPENAI_OK),
    "anthropic": (anthropic_model, ANTHROPIC_OK),
}


def _assert_clean_error(events: list[Any], result: AssistantMessage) -> str:
    """The run closed with one error event; returns its one-line, key-free text."""
    assert events[-1].type == "error" and result.stop_reason == "error"
    message = result.error_message or ""
    assert "\n" not in message and KEY not in message
    assert "Stream ended without" not in message
    return message


# --------------------------------------------------------------------------------------------
# Compressed streams (issue 18.1): what the server sends is decoded


@pytest.mark.parametrize("encoding", ["gzip", "deflate"])
@pytest.mark.parametrize("provider", sorted(MODELS))
async def test_a_compressed_event_stream_is_decoded(
    server: ScriptServer, provider: str, encoding: str
) -> None:
    make_model, body = MODELS[provider]
    server.queue(stream_compressed(body, encoding, split=17))
    events, result = await collect(make_model(server.url), ctx(), StreamOptions(api_key=KEY))
    assert result.stop_reason == "stop", result.error_message
    assert result.content[0].text == "Hello, wörld"
    assert types_of(events)[0] == "start" and events[-1].type == "done"
    # httpx offers compression; the reply may use it.
    assert "gzip" in server.requests[0].headers.get("accept-encoding", "")


async def test_a_compressed_error_body_is_decoded(server: ScriptServer) -> None:
    import gzip

    body = gzip.compress(json.dumps({"error": {"message": "quota exceeded"}}).encode())
    server.queue(error(429, body, {"content-encoding": "gzip"}))
    _, result = await collect(
        openai_model(server.url), ctx(), StreamOptions(api_key=KEY, max_retries=0)
    )
    assert result.error_message == "429: quota exceeded"


async def test_a_reply_that_is_not_what_its_encoding_says_is_a_clear_error(
    server: ScriptServer,
) -> None:
    server.queue(stream_bytes(OPENAI_OK, headers={"content-encoding": "gzip"}))
    events, result = await collect(openai_model(server.url), ctx(), StreamOptions(api_key=KEY))
    message = _assert_clean_error(events, result)
    assert message.startswith("Could not decode the gzip reply: ")


# --------------------------------------------------------------------------------------------
# The event-size cap (issue 14.8)


def test_the_default_event_cap_is_16_mib() -> None:
    assert MAX_EVENT_BYTES == 16 * 1024 * 1024
    assert StreamOptions().max_event_bytes is None  # None: the module's default


@pytest.mark.parametrize("provider", sorted(MODELS))
async def test_an_endless_data_line_stops_at_the_cap(server: ScriptServer, provider: str) -> None:
    make_model, _ = MODELS[provider]
    prefix = b"event: content_block_delta\n" if provider == "anthropic" else b""
    endless = [prefix + b"data: {" + b'"x": "' + b"y" * 4000] + [b"y" * 4096] * 200
    server.queue(stream_bytes(endless))
    events, result = await collect(
        make_model(server.url), ctx(), StreamOptions(api_key=KEY, max_event_bytes=64 * 1024)
    )
    message = _assert_clean_error(events, result)
    assert message == "Server-sent event larger than the 64 KiB limit; the stream was stopped"


async def test_many_small_events_in_one_read_pass_a_cap_below_their_sum(
    server: ScriptServer,
) -> None:
    many = sse(*[chunk({"content": "x" * 100}) for _ in range(2000)], chunk({}, "stop"))
    assert len(many) > 16 * 16 * 1024
    server.queue(stream_compressed(many, "gzip"))  # decodes to all of it in one read
    _, result = await collect(
        openai_model(server.url), ctx(), StreamOptions(api_key=KEY, max_event_bytes=16 * 1024)
    )
    assert result.stop_reason == "stop", result.error_message
    assert len(result.content[0].text) == 200_000


async def test_one_big_event_inside_one_read_is_caught(server: ScriptServer) -> None:
    # A complete event over the cap that arrives whole (a compressed frame expands at once).
    big = sse(chunk({"content": "ok"}), chunk({"content": "z" * 200_000}), chunk({}, "stop"))
    server.queue(stream_compressed(big, "gzip"))
    events, result = await collect(
        openai_model(server.url), ctx(), StreamOptions(api_key=KEY, max_event_bytes=100_000)
    )
    message = _assert_clean_error(events, result)
    assert message.startswith("Server-sent event larger than the 97.7 KiB limit")


async def test_an_agent_run_stopped_by_the_cap_ends_cleanly_and_can_continue(
    server: ScriptServer,
) -> None:
    endless = [b"data: " + b"y" * 4096] + [b"y" * 4096] * 100
    server.queue(stream_bytes(endless), stream_bytes(OPENAI_OK))
    agent = Agent(
        model=openai_model(server.url), api_key=KEY, max_event_bytes=32 * 1024, max_retries=0
    )
    seen: list[str] = []
    agent.subscribe(lambda event: seen.append(event.type))
    await asyncio.wait_for(agent.prompt("hi"), 10)
    assert seen[-1] == "agent_end"
    failed = agent.state.messages[-1]
    assert isinstance(failed, AssistantMessage) and failed.stop_reason == "error"
    assert failed.error_message == (
        "Server-sent event larger than the 32 KiB limit; the stream was stopped"
    )
    await asyncio.wait_for(agent.prompt("again"), 10)
    reply = agent.state.messages[-1]
    assert isinstance(reply, AssistantMessage) and reply.stop_reason == "stop"
    assert reply.content[0].text == "Hello, wörld"


# --------------------------------------------------------------------------------------------
# Error bodies are read up to a cap, once


async def test_a_huge_error_body_is_not_read_whole(server: ScriptServer) -> None:
    tally = BodyTally()
    size = 48 * 1024 * 1024  # far beyond what socket buffers absorb
    server.queue(big_body(502, size, tally))
    events, result = await collect(
        openai_model(server.url), ctx(), StreamOptions(api_key=KEY, max_retries=0)
    )
    message = _assert_clean_error(events, result)
    assert message.startswith("502: <p>bad gateway</p> <p>bad gateway</p>")
    assert len(message) < 4200 and message.endswith("[truncated]")
    await asyncio.wait_for(tally.client_closed.wait(), 5)
    assert tally.sent < size // 2
    assert MAX_ERROR_BODY_BYTES == 64 * 1024


async def test_each_retry_reads_a_bounded_error_body(server: ScriptServer) -> None:
    tallies = [BodyTally(), BodyTally()]
    size = 48 * 1024 * 1024
    server.queue(*(big_body(502, size, t) for t in tallies))
    _, result = await collect(
        openai_model(server.url),
        ctx(),
        StreamOptions(api_key=KEY, max_retries=1, max_retry_delay_ms=1000),
    )
    assert len(server.requests) == 2
    assert (result.error_message or "").startswith("502: <p>bad gateway</p>")
    for tally in tallies:
        await asyncio.wait_for(tally.client_closed.wait(), 5)
        assert tally.sent < size // 2


async def test_a_capped_json_error_body_keeps_its_start_and_hides_the_key(
    server: ScriptServer,
) -> None:
    body = json.dumps({"error": {"message": f"bad key {KEY}; " + "detail " * 50_000}})
    server.queue(error(400, body))
    _, result = await collect(
        openai_model(server.url), ctx(), StreamOptions(api_key=KEY, max_retries=0)
    )
    message = result.error_message or ""
    assert message.startswith('400: {"error": {"message": "bad key [redacted: api key]; detail')
    assert KEY not in message and len(message) < 4200


# --------------------------------------------------------------------------------------------
# A reply that is not an event stream is reported as what it is


@pytest.mark.parametrize("provider", sorted(MODELS))
async def test_a_200_html_page_is_reported_with_status_and_content_type(
    server: ScriptServer, provider: str
) -> None:
    make_model, _ = MODELS[provider]
    page = "<!doctype html><html><body>Sign in to the proxy</body></html>"
    server.queue(error(200, page, {"content-type": "text/html; charset=utf-8"}))
    events, result = await collect(make_model(server.url), ctx(), StreamOptions(api_key=KEY))
    message = _assert_clean_error(events, result)
    assert message == "Expected an event stream, got 200 text/html"
    assert types_of(events) == ["error"]


async def test_a_200_json_error_is_reported_with_its_message(server: ScriptServer) -> None:
    body = {"error": {"message": f"stream not supported for key {KEY}"}}
    server.queue(error(200, body))
    events, result = await collect(openai_model(server.url), ctx(), StreamOptions(api_key=KEY))
    message = _assert_clean_error(events, result)
    assert message == (
        "Expected an event stream, got 200 application/json: "
        "stream not supported for key [redacted: api key]"
    )


@pytest.mark.parametrize("provider", sorted(MODELS))
async def test_a_redirect_is_reported_not_followed(server: ScriptServer, provider: str) -> None:
    make_model, _ = MODELS[provider]
    target = f"https://login.example/next?token={KEY}"
    server.queue(error(302, "", {"location": target, "content-type": "text/html"}))
    events, result = await collect(make_model(server.url), ctx(), StreamOptions(api_key=KEY))
    message = _assert_clean_error(events, result)
    assert message == (
        "Expected an event stream, got 302 text/html "
        "(a redirect to https://login.example/next?token=[redacted: api key], not followed)"
    )
    assert len(server.requests) == 1


async def test_an_event_stream_with_parameters_or_no_content_type_is_read(
    server: ScriptServer,
) -> None:
    server.queue(
        stream_bytes(OPENAI_OK, headers={"content-type": "text/event-stream; charset=utf-8"})
    )
    _, result = await collect(openai_model(server.url), ctx(), StreamOptions(api_key=KEY))
    assert result.stop_reason == "stop", result.error_message

    async def bare(request: Request, conn: Conn) -> None:
        conn.writer.write(b"HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n")
        await conn.chunk(OPENAI_OK)
        await conn.end()

    server.queue(bare)
    _, result = await collect(openai_model(server.url), ctx(), StreamOptions(api_key=KEY))
    assert result.stop_reason == "stop", result.error_message


# --------------------------------------------------------------------------------------------
# The read timeout and max_tokens, set through Agent


async def test_agent_timeout_and_max_tokens_reach_the_request(server: ScriptServer) -> None:
    started = asyncio.Event()
    server.queue(stall(server, sse(chunk({"content": "partial"}), end=False), started))
    agent = Agent(
        model=openai_model(server.url), api_key=KEY, timeout_ms=300, max_tokens=77, max_retries=0
    )
    seen: list[str] = []
    agent.subscribe(lambda event: seen.append(event.type))
    await asyncio.wait_for(agent.prompt("hi"), 10)  # the default (600 s) would hang here
    assert started.is_set() and seen[-1] == "agent_end"
    body = server.requests[0].json()
    assert body.get("max_completion_tokens", body.get("max_tokens")) == 77
    failed = agent.state.messages[-1]
    assert isinstance(failed, AssistantMessage) and failed.stop_reason == "error"
    assert failed.error_message == "Request timed out (ReadTimeout)"
    assert failed.content[0].text == "partial"
    await asyncio.wait_for(server.disconnected.wait(), 5)

    server.queue(stream_bytes(OPENAI_OK))
    await asyncio.wait_for(agent.prompt("again"), 10)
    reply = agent.state.messages[-1]
    assert isinstance(reply, AssistantMessage) and reply.stop_reason == "stop"

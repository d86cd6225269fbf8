"""Faults over real HTTP: status errors, retries, drops, bad data, stalls, abort, key redaction."""

from __future__ import annotations

import asyncio
import json
import socket

from pi_notebook.ai import AbortController, Context, StreamOptions, UserMessage, maybe_await
from pi_notebook.ai.registry import stream

from .helpers import KEY, anthropic_model, collect, openai_model, types_of
from .server import Conn, Request, ScriptServer, error, named_sse, sse, stall, stream_bytes


def ctx() -> Context:
    return Context(messages=[UserMessage(content="hi")])


def chunk(delta: dict | None = None, finish: str | None = None) -> dict:
    return {"id": "c1", "choices": [{"index": 0, "delta": delta or {}, "finish_reason": finish}]}


OK = sse(chunk({"content": "fine"}), chunk({}, "stop"))


async def test_400_is_readable_and_not_retried(server: ScriptServer) -> None:
    server.queue(
        error(
            400, {"error": {"message": "messages: field required", "type": "invalid_request_error"}}
        )
    )
    events, result = await collect(
        openai_model(server.url), ctx(), StreamOptions(api_key=KEY, max_retries=3)
    )
    assert types_of(events) == ["error"]
    assert result.error_message == "400: messages: field required (invalid_request_error)"
    assert len(server.requests) == 1


async def test_429_with_retry_after_then_success(server: ScriptServer) -> None:
    server.queue(
        error(429, {"error": {"message": "rate limit exceeded"}}, {"retry-after": "0.05"}),
        stream_bytes(OK),
    )
    events, result = await collect(
        openai_model(server.url), ctx(), StreamOptions(api_key=KEY, max_retries=2)
    )
    assert result.stop_reason == "stop" and result.content[0].text == "fine"
    assert types_of(events)[0] == "start"
    assert len(server.requests) == 2


async def test_429_exhausted_message(server: ScriptServer) -> None:
    server.queue(error(429, {"error": {"message": "rate limit exceeded"}}, {"retry-after-ms": "1"}))
    _, result = await collect(
        openai_model(server.url), ctx(), StreamOptions(api_key=KEY, max_retries=0)
    )
    assert result.error_message == "429: rate limit exceeded"


async def test_retry_after_beyond_cap_fails_fast(server: ScriptServer) -> None:
    server.queue(error(429, {"error": {"message": "slow down"}}, {"retry-after": "120"}))
    _, result = await asyncio.wait_for(
        collect(
            openai_model(server.url),
            ctx(),
            StreamOptions(api_key=KEY, max_retries=2, max_retry_delay_ms=1000),
        ),
        5,
    )
    assert result.error_message == "Server requested 120s retry delay (max: 1s). 429: slow down"
    assert len(server.requests) == 1


async def test_500_then_success_and_plain_text_body(server: ScriptServer) -> None:
    server.queue(error(500, "upstream exploded"), error(503, ""), stream_bytes(OK))
    _, result = await collect(
        openai_model(server.url),
        ctx(),
        StreamOptions(api_key=KEY, max_retries=2, max_retry_delay_ms=5000),
    )
    assert result.stop_reason == "stop"
    assert len(server.requests) == 3

    server.queue(error(500, "upstream exploded"))
    _, result = await collect(
        openai_model(server.url), ctx(), StreamOptions(api_key=KEY, max_retries=0)
    )
    assert result.error_message == "500: upstream exploded"


async def test_connection_refused_is_retried_then_reported() -> None:
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    sock.close()
    model = openai_model(f"http://127.0.0.1:{port}")
    events, result = await collect(model, ctx(), StreamOptions(api_key=KEY, max_retries=1))
    assert types_of(events) == ["error"]
    assert result.error_message.startswith("Connection error")
    # It names the server it could not reach.
    assert result.error_message.endswith(f"(server: http://127.0.0.1:{port}/v1/chat/completions)")


async def test_a_connection_error_names_the_server_without_its_credentials() -> None:
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    sock.close()
    model = openai_model(f"http://admin:hunter2secret@127.0.0.1:{port}")
    _, result = await collect(model, ctx(), StreamOptions(api_key=KEY, max_retries=0))
    message = result.error_message
    assert message.endswith(f"(server: http://127.0.0.1:{port}/v1/chat/completions)")
    assert "hunter2secret" not in message and "admin" not in message


async def test_dropped_mid_stream_keeps_partial_and_is_not_replayed(server: ScriptServer) -> None:
    partial = sse(chunk({"content": "Hel"}), chunk({"content": "lo"}), end=False)
    server.queue(stream_bytes(partial, drop=True), stream_bytes(OK))
    events, result = await collect(
        openai_model(server.url), ctx(), StreamOptions(api_key=KEY, max_retries=3)
    )
    assert events[0].type == "start" and events[-1].type == "error"
    assert result.stop_reason == "error"
    assert result.content[0].text == "Hello"
    assert result.error_message.startswith("Connection lost")
    assert len(server.requests) == 1


async def test_malformed_json_line(server: ScriptServer) -> None:
    body = (
        sse(chunk({"content": "ok"}), end=False) + b"data: {not json\n\n" + sse(chunk({}, "stop"))
    )
    server.queue(stream_bytes(body))
    events, result = await collect(openai_model(server.url), ctx(), StreamOptions(api_key=KEY))
    assert events[-1].type == "error"
    assert result.error_message.startswith("Could not parse stream chunk as JSON: {not json")
    assert result.content[0].text == "ok"


async def test_error_object_mid_stream(server: ScriptServer) -> None:
    body = sse(
        chunk({"content": "ok"}), {"error": {"message": "model overloaded", "code": "overloaded"}}
    )
    server.queue(stream_bytes(body))
    _, result = await collect(openai_model(server.url), ctx(), StreamOptions(api_key=KEY))
    assert result.stop_reason == "error"
    assert result.error_message == "model overloaded"


async def test_read_timeout_before_headers(server: ScriptServer) -> None:
    async def slow(request: Request, conn: Conn) -> None:
        await conn.wait_client_gone()

    server.queue(slow)
    _, result = await collect(
        openai_model(server.url), ctx(), StreamOptions(api_key=KEY, timeout_ms=200, max_retries=0)
    )
    assert result.stop_reason == "error"
    assert "timed out" in result.error_message


async def _abort_while_stalled(server: ScriptServer, model, first: bytes) -> None:
    started = asyncio.Event()
    server.queue(stall(server, first, started))
    controller = AbortController()
    s = await maybe_await(
        stream(model, ctx(), StreamOptions(api_key=KEY, signal=controller.signal))
    )
    events = []
    got_text = asyncio.Event()

    async def consume() -> None:
        async for event in s:
            events.append(event)
            if event.type == "text_delta":
                got_text.set()

    consumer = asyncio.create_task(consume())
    await asyncio.wait_for(got_text.wait(), 5)
    loop = asyncio.get_running_loop()
    t0 = loop.time()
    controller.abort()
    result = await asyncio.wait_for(s.result(), 2)  # abort returns promptly
    await asyncio.wait_for(consumer, 2)
    await asyncio.wait_for(server.disconnected.wait(), 2)
    assert server.disconnect_time is not None
    # The stalled server would hold the connection open for good: that it saw the client go
    # (waited for above) is the check; how fast is printed, never asserted.
    print(f"abort -> server saw the disconnect: {(server.disconnect_time - t0) * 1000:.1f} ms")
    assert result.stop_reason == "aborted"
    assert result.error_message == "Request was aborted"
    assert result.content[0].text == "partial"
    assert events[-1].type == "error" and events[-1].reason == "aborted"


async def test_abort_stalled_openai_stream(server: ScriptServer) -> None:
    await _abort_while_stalled(
        server, openai_model(server.url), sse(chunk({"content": "partial"}), end=False)
    )


async def test_abort_stalled_anthropic_stream(server: ScriptServer) -> None:
    first = named_sse(
        (
            "message_start",
            {"type": "message_start", "message": {"id": "m", "usage": {"input_tokens": 3}}},
        ),
        (
            "content_block_start",
            {
                "type": "content_block_start",
                "index": 0,
                "content_block": {"type": "text", "text": ""},
            },
        ),
        (
            "content_block_delta",
            {
                "type": "content_block_delta",
                "index": 0,
                "delta": {"type": "text_delta", "text": "partial"},
            },
        ),
    )
    await _abort_while_stalled(server, anthropic_model(server.url), first)


async def test_pre_aborted_signal_sends_nothing(server: ScriptServer) -> None:
    controller = AbortController()
    controller.abort()
    events, result = await collect(
        openai_model(server.url), ctx(), StreamOptions(api_key=KEY, signal=controller.signal)
    )
    assert types_of(events) == ["error"]
    assert result.stop_reason == "aborted"
    assert server.requests == []


async def test_abort_during_retry_backoff(server: ScriptServer) -> None:
    server.queue(error(429, {"error": {"message": "busy"}}, {"retry-after": "30"}))
    controller = AbortController()
    s = await maybe_await(
        stream(
            openai_model(server.url),
            ctx(),
            StreamOptions(api_key=KEY, signal=controller.signal, max_retries=2),
        )
    )
    await asyncio.wait_for(server.request_seen.wait(), 5)
    controller.abort()
    result = await asyncio.wait_for(s.result(), 2)
    assert result.stop_reason == "aborted"


# --------------------------------------------------------------------------------------------
# Keys never leak


def _assert_no_key(text: str, key: str = KEY) -> None:
    assert key not in text
    assert key.strip() not in text


async def test_key_not_in_error_body_echo_or_serialised_message(server: ScriptServer) -> None:
    server.queue(error(401, {"error": {"message": f"Incorrect API key provided: {KEY}"}}))
    options = StreamOptions(api_key=KEY)
    events, result = await collect(openai_model(server.url), ctx(), options)
    assert result.error_message.startswith("401: Incorrect API key provided: [redacted: api key]")
    _assert_no_key(result.error_message)
    _assert_no_key(json.dumps(result.to_json_dict()))
    _assert_no_key(repr(result))
    _assert_no_key(repr(options))
    _assert_no_key(repr(events))


async def test_an_error_body_echoing_other_secrets_is_redacted(
    server: ScriptServer, monkeypatch
) -> None:
    # A proxy's error page dumping its environment and the forwarded headers: secrets that are
    # not this request's key are named, not shown (the one redaction, pi_notebook.ai.redact).
    monkeypatch.setenv("HF_TOKEN", "hf_" + "proxy" * 6)
    body = (
        f"upstream failed; env HF_TOKEN={'hf_' + 'proxy' * 6}; "
        "forwarded Authorization: Bearer eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0.c2lnbmF0dXJl"
    )
    server.queue(error(502, {"error": {"message": body}}))
    _, result = await collect(
        openai_model(server.url), ctx(), StreamOptions(api_key=KEY, max_retries=0)
    )
    message = result.error_message or ""
    assert message.startswith("502: upstream failed; env HF_TOKEN=[redacted: HF_TOKEN]; ")
    assert "proxyproxy" not in message and "eyJzdWIiOiIxIn0" not in message
    _assert_no_key(message)


async def test_key_not_in_httpx_or_h11_errors(server: ScriptServer) -> None:
    # An illegal header value: h11/httpx put the offending value into their exception text.
    for bad_key in ("sk-bad-key-with-newline-0123456789\n", "sk-bäd-ünicode-key-0123456789"):
        for model in (openai_model(server.url), anthropic_model(server.url)):
            server.queue(stream_bytes(OK))
            _, result = await collect(model, ctx(), StreamOptions(api_key=bad_key, max_retries=0))
            assert result.stop_reason == "error"
            _assert_no_key(result.error_message, bad_key)
            _assert_no_key(json.dumps(result.to_json_dict()), bad_key)
            for piece in bad_key.replace("ä", "\n").replace("ü", "\n").split("\n"):
                if len(piece) >= 6:
                    assert piece not in result.error_message


async def test_missing_key_is_an_error_event_not_an_exception(monkeypatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    model = openai_model("https://api.openai.example")
    events, result = await collect(model, ctx(), StreamOptions())
    assert types_of(events) == ["error"]
    assert result.error_message == "No API key for provider: openai"


async def test_key_from_environment(server: ScriptServer, monkeypatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-from-env-123456")
    server.queue(stream_bytes(OK))
    _, result = await collect(openai_model(server.url), ctx(), StreamOptions())
    assert result.stop_reason == "stop"
    assert server.requests[0].headers["authorization"] == "Bearer sk-from-env-123456"


async def test_one_pooled_client_per_loop(server: ScriptServer) -> None:
    from pi_notebook.ai.providers._client import get_client

    assert get_client() is get_client()
    server.queue(stream_bytes(OK), stream_bytes(OK))
    await collect(openai_model(server.url), ctx(), StreamOptions(api_key=KEY))
    await collect(openai_model(server.url), ctx(), StreamOptions(api_key=KEY))
    assert len(server.requests) == 2

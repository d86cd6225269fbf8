"""openai-responses against a real local HTTP server replaying Responses-API SSE."""

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
    StreamOptions,
    TextContent,
    UserMessage,
    dump_transcript,
    empty_reply,
    maybe_await,
    parse_transcript,
    stream,
)
from pi_notebook.ai.providers import resolve_model
from pi_notebook.ai.providers._sse import SSEDecoder
from pi_notebook.ai.providers.openai_responses import OpenAIResponsesDecoder

from .helpers import KEY, collect, squash, types_of
from .responses_sse import ENCRYPTED, Stream, reasoning_item, responses_model
from .server import ScriptServer, error, stall, stream_bytes


def ctx() -> Context:
    return Context(system_prompt="Be brief.", messages=[UserMessage(content="hi")])


def opts(**kw: Any) -> StreamOptions:
    return StreamOptions(api_key=KEY, **kw)


async def test_text_usage_cost_and_request(server: ScriptServer) -> None:
    body = Stream().created().message(0, "Hello there, thé end.").completed().body()
    server.queue(stream_bytes(body, split=37))
    events, result = await collect(responses_model(server.url), ctx(), opts())
    assert squash(types_of(events)) == ["start", "text_start", "text_delta", "text_end", "done"]
    (text,) = result.content
    assert text.text == "Hello there, thé end."
    assert text.text_signature == '{"v":1,"id":"msg_1"}'
    assert result.stop_reason == "stop" and result.response_id == "resp_1"
    u = result.usage
    assert (u.input, u.output, u.cache_read, u.cache_write, u.reasoning) == (20, 40, 100, 0, 25)
    assert u.total_tokens == 160
    assert u.cost.total == pytest.approx((20 * 1.1 + 40 * 4.4 + 100 * 0.275) / 1e6)
    request = server.requests[0]
    assert request.path == "/v1/responses"
    assert request.headers["authorization"] == f"Bearer {KEY}"
    sent = request.json()
    assert sent["stream"] is True and sent["store"] is False and sent["model"] == "o4-test"
    assert sent["input"] == [
        {"role": "developer", "content": "Be brief."},
        {"role": "user", "content": [{"type": "input_text", "text": "hi"}]},
    ]


async def test_reasoning_summary_is_thinking_with_the_item_as_signature(
    server: ScriptServer,
) -> None:
    body = (
        Stream()
        .created()
        .reasoning(0, "**Planning** the reply.", "Then answering.")
        .message(1, "Done.")
        .completed()
        .body()
    )
    server.queue(stream_bytes(body, split=11))
    events, result = await collect(responses_model(server.url), ctx(), opts(reasoning="high"))
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
    streamed = "".join(e.delta for e in events if e.type == "thinking_delta")
    assert streamed == "**Planning** the reply.\n\nThen answering.\n\n"
    assert thinking.thinking == "**Planning** the reply.\n\nThen answering."  # the item's text
    assert thinking.thinking_signature == reasoning_item(
        "**Planning** the reply.", "Then answering."
    )
    assert json.loads(thinking.thinking_signature)["encrypted_content"] == ENCRYPTED
    assert text.text == "Done."
    sent = server.requests[0].json()
    assert sent["reasoning"] == {"effort": "high", "summary": "auto"}
    assert sent["include"] == ["reasoning.encrypted_content"]


async def test_function_call_with_streamed_arguments(server: ScriptServer) -> None:
    arguments = json.dumps({"city": "Zürich", "days": [1, 2, 3]}, ensure_ascii=False)
    body = (
        Stream()
        .created()
        .reasoning(0, "Need the weather.")
        .function_call(1, "weather", arguments, call_id="call_abc", item_id="fc_abc")
        .completed()
        .body()
    )
    server.queue(stream_bytes(body, split=23))
    events, result = await collect(responses_model(server.url), ctx(), opts())
    assert result.stop_reason == "toolUse"
    call = result.content[1]
    assert call.id == "call_abc|fc_abc" and call.name == "weather"
    assert call.arguments == {"city": "Zürich", "days": [1, 2, 3]}
    deltas = [e for e in events if e.type == "toolcall_delta"]
    assert "".join(e.delta for e in deltas) == arguments
    assert len(deltas) > 5  # streamed, not one block at the end
    assert [e.type for e in events if e.type.startswith("toolcall")][-1] == "toolcall_end"
    assert set(call.to_json_dict()) == {"type", "id", "name", "arguments"}  # no scratch left


def test_arguments_are_parsed_while_they_stream() -> None:
    arguments = json.dumps({"city": "Zürich", "days": [1, 2, 3]}, ensure_ascii=False)
    body = Stream().created().function_call(0, "weather", arguments).completed().body()
    model = responses_model("http://127.0.0.1:9")
    output = empty_reply(model)
    partials: list[dict[str, Any]] = []  # the arguments as each delta left them

    def push(event: Any) -> None:
        if event.type == "toolcall_delta":
            partials.append(dict(event.partial.content[0].arguments))

    decoder = OpenAIResponsesDecoder(model, output, push)
    sse = SSEDecoder()
    for name, data in sse.feed(body):
        decoder.on_event(name, data)
    decoder.finish()
    assert {"city": "Zürich"} in partials and {"city": "Zürich", "days": [1]} in partials
    assert partials[-1] == {"city": "Zürich", "days": [1, 2, 3]}


async def test_arguments_done_brings_what_the_deltas_missed(server: ScriptServer) -> None:
    s = Stream().created()
    item = {"id": "fc_9", "type": "function_call", "call_id": "call_9", "name": "f"}
    s.add("response.output_item.added", output_index=0, item={**item, "arguments": ""})
    s.add("response.function_call_arguments.delta", output_index=0, item_id="fc_9", delta='{"a"')
    s.add("response.function_call_arguments.done", output_index=0, arguments='{"a": 1}')
    s.add("response.output_item.done", output_index=0, item={**item, "arguments": '{"a": 1}'})
    server.queue(stream_bytes(s.completed().body()))
    events, result = await collect(responses_model(server.url), ctx(), opts())
    assert [e.delta for e in events if e.type == "toolcall_delta"] == ['{"a"', ": 1}"]
    assert result.content[0].arguments == {"a": 1}


async def test_refusal_is_text(server: ScriptServer) -> None:
    refusal = "I'm sorry, I can't help with that."
    server.queue(
        stream_bytes(Stream().created().message(0, refusal, refusal=True).completed().body())
    )
    events, result = await collect(responses_model(server.url), ctx(), opts())
    assert result.stop_reason == "stop"
    assert result.content[0].text == refusal
    assert "".join(e.delta for e in events if e.type == "text_delta") == refusal


async def test_response_failed_is_an_error_keeping_the_partial(server: ScriptServer) -> None:
    s = Stream().created()
    s.add(
        "response.output_item.added",
        output_index=0,
        item={"id": "msg_1", "type": "message", "role": "assistant", "content": []},
    )
    s.add("response.output_text.delta", output_index=0, item_id="msg_1", delta="Par")
    s.failed("server_error", "The model failed to generate a response.")
    server.queue(stream_bytes(s.body()))
    events, result = await collect(responses_model(server.url), ctx(), opts())
    assert events[-1].type == "error" and events[-1].reason == "error"
    assert result.stop_reason == "error"
    assert result.error_message == "server_error: The model failed to generate a response."
    assert result.content[0].text == "Par"


async def test_incomplete_for_max_output_tokens_is_length(server: ScriptServer) -> None:
    body = Stream().created().message(0, "Cut sh").incomplete("max_output_tokens").body()
    server.queue(stream_bytes(body))
    events, result = await collect(responses_model(server.url), ctx(), opts(max_tokens=5))
    assert events[-1].type == "done" and events[-1].reason == "length"
    assert result.stop_reason == "length" and result.content[0].text == "Cut sh"
    assert result.usage.output == 40
    assert server.requests[0].json()["max_output_tokens"] == 16  # OpenAI's minimum


async def test_error_event(server: ScriptServer) -> None:
    s = Stream().created()
    s.add("error", code="ERR_SOMETHING", message="Something went wrong", param=None)
    server.queue(stream_bytes(s.body()))
    _, result = await collect(responses_model(server.url), ctx(), opts())
    assert result.stop_reason == "error"
    assert result.error_message == "Error Code ERR_SOMETHING: Something went wrong"


async def test_stream_without_a_terminal_event(server: ScriptServer) -> None:
    server.queue(stream_bytes(Stream().created().message(0, "dangling").body()))
    _, result = await collect(responses_model(server.url), ctx(), opts())
    assert result.stop_reason == "error"
    assert result.error_message == (
        "OpenAI Responses stream ended before a terminal response event"
    )
    assert result.content[0].text == "dangling"


async def test_malformed_event_data(server: ScriptServer) -> None:
    body = Stream().created().body() + b"event: response.output_item.added\ndata: {oops\n\n"
    server.queue(stream_bytes(body))
    _, result = await collect(responses_model(server.url), ctx(), opts())
    assert result.error_message.startswith("Could not parse stream chunk as JSON: {oops")


async def test_429_then_success(server: ScriptServer) -> None:
    server.queue(
        error(
            429,
            {"error": {"message": "Rate limit reached", "type": "requests"}},
            {"retry-after-ms": "10"},
        ),
        stream_bytes(Stream().created().message(0, "ok").completed().body()),
    )
    events, result = await collect(responses_model(server.url), ctx(), opts())
    assert result.stop_reason == "stop" and result.content[0].text == "ok"
    assert types_of(events)[0] == "start"
    assert len(server.requests) == 2


async def test_401_is_one_readable_error_event(server: ScriptServer) -> None:
    message = "Incorrect API key provided: sk-test-***cdef."
    server.queue(error(401, {"error": {"message": message, "type": "invalid_request_error"}}))
    events, result = await collect(responses_model(server.url), ctx(), opts())
    assert types_of(events) == ["error"]
    assert result.error_message == f"401: {message} (invalid_request_error)"
    assert KEY not in result.error_message
    assert len(server.requests) == 1


async def test_dropped_mid_stream_keeps_the_partial_and_is_not_replayed(
    server: ScriptServer,
) -> None:
    partial = Stream().created()
    partial.add(
        "response.output_item.added",
        output_index=0,
        item={"id": "msg_1", "type": "message", "role": "assistant", "content": []},
    )
    partial.add("response.output_text.delta", output_index=0, item_id="msg_1", delta="Hel")
    partial.add("response.output_text.delta", output_index=0, item_id="msg_1", delta="lo")
    ok = Stream().created().message(0, "fine").completed().body()
    server.queue(stream_bytes(partial.body(), drop=True), stream_bytes(ok))
    events, result = await collect(responses_model(server.url), ctx(), opts(max_retries=3))
    assert events[0].type == "start" and events[-1].type == "error"
    assert result.stop_reason == "error" and result.content[0].text == "Hello"
    assert result.error_message.startswith("Connection lost")
    assert len(server.requests) == 1


async def test_abort_while_streaming(server: ScriptServer) -> None:
    first = Stream().created()
    first.add(
        "response.output_item.added",
        output_index=0,
        item={"id": "msg_1", "type": "message", "role": "assistant", "content": []},
    )
    first.add("response.output_text.delta", output_index=0, item_id="msg_1", delta="partial")
    started = asyncio.Event()
    server.queue(stall(server, first.body(), started))
    controller = AbortController()
    s = await maybe_await(
        stream(responses_model(server.url), ctx(), opts(signal=controller.signal))
    )
    events: list[Any] = []
    got_text = asyncio.Event()

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


async def test_openai_models_resolve_to_this_api(server: ScriptServer) -> None:
    for spec in ("openai/o4-mini", "openai/gpt-5", "openai/gpt-4.1-mini", "openai/gpt-next"):
        assert resolve_model(spec).api == "openai-responses", spec
    model = resolve_model("openai/o4-mini", base_url=server.url + "/v1")
    server.queue(stream_bytes(Stream().created().message(0, "hi").completed().body()))
    _, result = await collect(model, ctx(), opts(reasoning="minimal"))
    assert result.stop_reason == "stop", result.error_message
    assert result.api == "openai-responses" and result.model == "o4-mini"
    sent = server.requests[0].json()
    assert sent["reasoning"] == {"effort": "low", "summary": "auto"}  # o4-mini has no minimal


# --------------------------------------------------------------------------------------------
# A tool loop through the Agent, then the transcript through Pi's JSON and back to the API


async def add(tool_call_id: str, params: dict[str, int], signal: object, on_update: object) -> Any:
    return AgentToolResult(content=[TextContent(text=str(params["a"] + params["b"]))])


ADD = AgentTool(
    name="add",
    description="Add two numbers.",
    parameters={
        "type": "object",
        "properties": {"a": {"type": "number"}, "b": {"type": "number"}},
        "required": ["a", "b"],
    },
    execute=add,
)


async def test_tool_loop_then_pi_json_round_trip_goes_back_to_the_api(
    server: ScriptServer,
) -> None:
    first = (
        Stream("resp_1")
        .created()
        .reasoning(0, "I should add them.")
        .function_call(1, "add", '{"a": 19, "b": 23}', call_id="call_add", item_id="fc_add")
        .completed()
        .body()
    )
    second = Stream("resp_2").created().message(0, "19 + 23 = 42.", item_id="msg_2").completed()
    third = Stream("resp_3").created().message(0, "Still 42.", item_id="msg_3").completed()
    server.queue(
        stream_bytes(first, split=17),
        stream_bytes(second.body(), split=9),
        stream_bytes(third.body()),
    )
    model = responses_model(server.url)
    agent = Agent(model=model, tools=[ADD], system_prompt="Be exact.", api_key=KEY)
    agent.state.thinking_level = "medium"
    await agent.prompt("What is 19 + 23?")
    assert [m.role for m in agent.state.messages] == [
        "user",
        "assistant",
        "toolResult",
        "assistant",
    ]
    assert agent.state.messages[-1].content[0].text == "19 + 23 = 42."
    assert len(server.requests) == 2
    sent = server.requests[1].json()["input"]
    reasoning = json.loads(reasoning_item("I should add them."))
    assert sent == [
        {"role": "developer", "content": "Be exact."},
        {"role": "user", "content": [{"type": "input_text", "text": "What is 19 + 23?"}]},
        reasoning,
        {
            "type": "function_call",
            "id": "fc_add",
            "call_id": "call_add",
            "name": "add",
            "arguments": '{"a":19,"b":23}',
        },
        {"type": "function_call_output", "call_id": "call_add", "output": "42"},
    ]

    saved = json.dumps(dump_transcript(agent.state.messages))
    restored = parse_transcript(json.loads(saved))
    assert [m.to_json_dict() for m in restored] == [m.to_json_dict() for m in agent.state.messages]
    follow_up = Context(
        system_prompt="Be exact.",
        tools=[ADD],
        messages=[*restored, UserMessage(content="And again?")],
    )
    _, reply = await collect(model, follow_up, opts(reasoning="medium"))
    assert reply.stop_reason == "stop", reply.error_message
    again = server.requests[2].json()["input"]
    assert again[: len(sent)] == sent  # the reasoning item and the call output went back
    assert again[len(sent) :] == [
        {
            "type": "message",
            "role": "assistant",
            "content": [{"type": "output_text", "text": "19 + 23 = 42.", "annotations": []}],
            "status": "completed",
            "id": "msg_2",
        },
        {"role": "user", "content": [{"type": "input_text", "text": "And again?"}]},
    ]


async def test_a_streamed_reply_is_a_full_message(server: ScriptServer) -> None:
    body = (
        Stream()
        .created()
        .reasoning(0, "Hmm.")
        .message(1, "Calling.")
        .function_call(2, "add", '{"a": 1, "b": 2}')
        .completed()
        .body()
    )
    server.queue(stream_bytes(body))
    _, reply = await collect(responses_model(server.url), ctx(), opts())
    assert AssistantMessage.model_validate(reply.to_json_dict()) == reply
    assert [b.type for b in reply.content] == ["thinking", "text", "toolCall"]


async def test_odd_item_shapes_do_not_break_the_stream(server: ScriptServer) -> None:
    s = Stream().created()
    s.add("response.output_item.added", output_index=[0], item={"type": "message"})
    s.add("response.output_item.added", output_index=0, item={"type": "web_search_call"})
    s.add("response.output_item.added", output_index=1, item={"id": "rs", "type": "reasoning"})
    s.add("response.output_item.done", output_index=1, item={"type": "reasoning", "summary": "x"})
    s.add("response.output_item.added", output_index=2, item={"id": "m", "type": "message"})
    s.add("response.output_text.delta", output_index=2, delta="kept")
    done = {"id": "m", "type": "message", "content": [7, {"type": "output_text", "text": 5}]}
    s.add("response.output_item.done", output_index=2, item=done)
    server.queue(stream_bytes(s.completed().body()))
    _, result = await collect(responses_model(server.url), ctx(), opts())
    assert result.stop_reason == "stop", result.error_message
    assert [b.type for b in result.content] == ["text", "thinking", "text"]
    assert result.content[2].text == ""  # the item's final text wins, and it has none

"""Tests for the faux provider: behaviour matched against Pi's providers/faux.js (0.82.1)."""

from __future__ import annotations

import asyncio
import math
from collections.abc import Iterator
from typing import Any

import pytest

from pi_notebook.ai import (
    AbortController,
    AssistantMessage,
    AssistantMessageEventStream,
    Context,
    FauxProvider,
    FauxState,
    Model,
    StreamOptions,
    TextContent,
    ToolCall,
    ToolResultMessage,
    UserMessage,
    complete,
    faux_assistant_message,
    faux_text,
    faux_thinking,
    faux_tool_call,
    get_api_provider,
    maybe_await,
    register_faux_provider,
    stream,
)

TIMEOUT = 2.0


@pytest.fixture
def faux() -> Iterator[FauxProvider]:
    handle = register_faux_provider(token_size=(1, 1))
    yield handle
    handle.unregister()


def ctx(text: str = "hi", system_prompt: str | None = None) -> Context:
    return Context(system_prompt=system_prompt, messages=[UserMessage(content=text, timestamp=1)])


async def open_stream(
    model: Model, context: Context, options: StreamOptions | None = None
) -> AssistantMessageEventStream:
    return await maybe_await(stream(model, context, options))


async def events_of(
    model: Model, context: Context | None = None, options: StreamOptions | None = None
) -> list[Any]:
    response = await open_stream(model, context or ctx(), options)
    return await asyncio.wait_for(_collect(response), TIMEOUT)


async def _collect(response: AssistantMessageEventStream) -> list[Any]:
    return [event async for event in response]


# --------------------------------------------------------------------------------------------
# Chunking and the event sequence


async def test_text_streams_in_four_character_chunks_with_token_size_one(
    faux: FauxProvider,
) -> None:
    faux.set_responses([faux_assistant_message("Hello, world!")])
    events = await events_of(faux.get_model())
    deltas = [e.delta for e in events if e.type == "text_delta"]
    assert deltas == ["Hell", "o, w", "orld", "!"]


async def test_token_size_two_streams_eight_character_chunks() -> None:
    handle = register_faux_provider(token_size=(2, 2))
    try:
        handle.set_responses([faux_assistant_message("abcdefghijklmnopqrs")])
        events = await events_of(handle.get_model())
        assert [e.delta for e in events if e.type == "text_delta"] == [
            "abcdefgh",
            "ijklmnop",
            "qrs",
        ]
    finally:
        handle.unregister()


async def test_empty_text_streams_a_single_empty_delta(faux: FauxProvider) -> None:
    faux.set_responses([faux_assistant_message("")])
    events = await events_of(faux.get_model())
    assert [e.type for e in events] == ["start", "text_start", "text_delta", "text_end", "done"]
    assert events[2].delta == ""


async def test_thinking_text_tool_call_event_sequence_is_exact(faux: FauxProvider) -> None:
    call = faux_tool_call("calc", {"x": 1}, id="call_1")
    faux.set_responses(
        [
            faux_assistant_message(
                [faux_thinking("Let me think"), faux_text("Answer: 42"), call],
                stop_reason="toolUse",
            )
        ]
    )
    events = await events_of(faux.get_model())
    assert [(e.type, getattr(e, "content_index", None)) for e in events] == [
        ("start", None),
        ("thinking_start", 0),
        ("thinking_delta", 0),
        ("thinking_delta", 0),
        ("thinking_delta", 0),
        ("thinking_end", 0),
        ("text_start", 1),
        ("text_delta", 1),
        ("text_delta", 1),
        ("text_delta", 1),
        ("text_end", 1),
        ("toolcall_start", 2),
        ("toolcall_delta", 2),
        ("toolcall_delta", 2),
        ("toolcall_end", 2),
        ("done", None),
    ]
    assert [e.delta for e in events if e.type == "thinking_delta"] == ["Let ", "me t", "hink"]
    assert [e.delta for e in events if e.type == "text_delta"] == ["Answ", "er: ", "42"]
    assert [e.delta for e in events if e.type == "toolcall_delta"] == ['{"x"', ":1}"]


async def test_end_events_carry_the_full_block_content(faux: FauxProvider) -> None:
    call = faux_tool_call("calc", {"x": 1, "y": [2, 3]}, id="call_1")
    faux.set_responses(
        [faux_assistant_message([faux_thinking("hmm, okay"), faux_text("Answer: 42"), call])]
    )
    events = await events_of(faux.get_model())
    by_type = {e.type: e for e in events}
    assert by_type["thinking_end"].content == "hmm, okay"
    assert by_type["text_end"].content == "Answer: 42"
    tool_call = by_type["toolcall_end"].tool_call
    assert isinstance(tool_call, ToolCall)
    assert (tool_call.id, tool_call.name, tool_call.arguments) == (
        "call_1",
        "calc",
        {"x": 1, "y": [2, 3]},
    )


async def test_done_reason_is_the_scripted_stop_reason(faux: FauxProvider) -> None:
    faux.set_responses(
        [faux_assistant_message([faux_tool_call("ls", {}, id="c")], stop_reason="toolUse")]
    )
    events = await events_of(faux.get_model())
    assert events[-1].type == "done"
    assert events[-1].reason == "toolUse"
    assert events[-1].message.stop_reason == "toolUse"


async def test_partial_accumulates_the_streamed_text(faux: FauxProvider) -> None:
    faux.set_responses([faux_assistant_message("abcdefghij")])
    response = await open_stream(faux.get_model(), ctx())
    seen: list[str] = []
    async for event in response:
        if event.type == "text_delta":
            seen.append(event.partial.content[0].text)
    assert seen == ["abcd", "abcdefgh", "abcdefghij"]


async def test_an_unpaced_reply_is_one_run_grown_only_as_its_events_are_taken(
    faux: FauxProvider,
) -> None:
    faux.set_responses([faux_assistant_message("abcdefghij")])
    response = await open_stream(faux.get_model(), ctx())
    runs = [run async for run in _lazy_runs(response)]
    assert len(runs) == 1
    assert runs[0] == [
        ("start", ""),
        ("text_start", ""),
        ("text_delta", "abcd"),
        ("text_delta", "abcdefgh"),
        ("text_delta", "abcdefghij"),
        ("text_end", "abcdefghij"),
        ("done", "abcdefghij"),
    ]


async def test_a_paced_reply_is_one_run_per_event() -> None:
    paced = register_faux_provider(token_size=(1, 1), tokens_per_second=1e6)
    try:
        paced.set_responses([faux_assistant_message("abcdefgh")])
        response = await open_stream(paced.get_model(), ctx())
        runs = [run async for run in _lazy_runs(response)]
        assert [len(run) for run in runs] == [1] * 6
    finally:
        paced.unregister()


async def _lazy_runs(response: AssistantMessageEventStream) -> Any:
    """Each run as (event type, partial text when the event was taken)."""
    async for run in response.runs():
        taken = []
        for event in run:
            partial = event.partial if hasattr(event, "partial") else event.message
            text = partial.content[0].text if partial.content else ""
            taken.append((event.type, text))
        yield taken


async def test_tool_call_arguments_stay_empty_in_the_partial_until_toolcall_end(
    faux: FauxProvider,
) -> None:
    faux.set_responses(
        [faux_assistant_message([faux_tool_call("write", {"path": "a.txt", "n": 12345}, id="c")])]
    )
    response = await open_stream(faux.get_model(), ctx())
    during: list[dict[str, Any]] = []
    at_end: dict[str, Any] | None = None
    async for event in response:
        if event.type in ("toolcall_start", "toolcall_delta"):
            during.append(dict(event.partial.content[0].arguments))
        elif event.type == "toolcall_end":
            at_end = dict(event.partial.content[0].arguments)
    assert len(during) >= 3
    assert all(args == {} for args in during)
    assert at_end == {"path": "a.txt", "n": 12345}


async def test_partial_tool_call_keeps_id_and_name_from_toolcall_start(
    faux: FauxProvider,
) -> None:
    faux.set_responses([faux_assistant_message([faux_tool_call("grep", {"q": "x"}, id="c9")])])
    response = await open_stream(faux.get_model(), ctx())
    async for event in response:
        if event.type == "toolcall_start":
            block = event.partial.content[0]
            assert (block.id, block.name, block.arguments) == ("c9", "grep", {})
            break


# --------------------------------------------------------------------------------------------
# The final message


async def test_final_message_api_provider_model_come_from_the_registration() -> None:
    handle = register_faux_provider(
        token_size=(1, 1), provider="acme", models=[{"id": "m-a"}, {"id": "m-b", "name": "B"}]
    )
    try:
        scripted = faux_assistant_message("hello")
        assert (scripted.api, scripted.provider, scripted.model) == ("faux", "faux", "faux-1")
        handle.set_responses([scripted])
        model = handle.get_model("m-b")
        message = await asyncio.wait_for(complete(model, ctx()), TIMEOUT)
        assert (message.api, message.provider, message.model) == (handle.api, "acme", "m-b")
        assert model.name == "B"
        assert handle.get_model("m-a").name == "m-a"
        assert handle.get_model().id == "m-a"
    finally:
        handle.unregister()


async def test_default_model_matches_pi_faux_defaults(faux: FauxProvider) -> None:
    model = faux.get_model()
    assert model.id == "faux-1"
    assert model.name == "Faux Model"
    assert model.api == faux.api
    assert model.provider == "faux"
    assert model.base_url == "http://localhost:0"
    assert model.input == ["text", "image"]
    assert model.reasoning is False
    assert model.context_window == 128000
    assert model.max_tokens == 16384


async def test_final_message_keeps_scripted_timestamp_and_response_id(faux: FauxProvider) -> None:
    faux.set_responses([faux_assistant_message("x", response_id="resp_1", timestamp=1234)])
    message = await asyncio.wait_for(complete(faux.get_model(), ctx()), TIMEOUT)
    assert message.timestamp == 1234
    assert message.response_id == "resp_1"
    assert message.content == [TextContent(text="x")]


async def test_scripted_message_is_not_mutated_and_can_be_reused(faux: FauxProvider) -> None:
    scripted = faux_assistant_message("again")
    before = scripted.model_dump()
    faux.set_responses([scripted, scripted])
    first = await asyncio.wait_for(complete(faux.get_model(), ctx()), TIMEOUT)
    second = await asyncio.wait_for(complete(faux.get_model(), ctx()), TIMEOUT)
    assert scripted.model_dump() == before
    assert first is not scripted and second is not scripted
    assert first.content[0].text == second.content[0].text == "again"


async def test_complete_returns_the_final_message(faux: FauxProvider) -> None:
    faux.set_responses([faux_assistant_message("The answer")])
    message = await asyncio.wait_for(complete(faux.get_model(), ctx()), TIMEOUT)
    assert isinstance(message, AssistantMessage)
    assert message.stop_reason == "stop"
    assert message.content[0].text == "The answer"


async def test_result_equals_the_done_message(faux: FauxProvider) -> None:
    faux.set_responses([faux_assistant_message("abc")])
    response = await open_stream(faux.get_model(), ctx())
    events = await asyncio.wait_for(_collect(response), TIMEOUT)
    assert await response.result() is events[-1].message


# --------------------------------------------------------------------------------------------
# Usage estimate (Pi: ceil(len/4) over the serialised context)

SYSTEM = "Be brief."
USAGE_MESSAGES: list[Any] = [
    UserMessage(content="Hello there", timestamp=1),
    AssistantMessage(
        content=[TextContent(text="Sure"), ToolCall(id="c1", name="ls", arguments={"path": "."})],
        api="faux",
        provider="faux",
        model="faux-1",
        stop_reason="toolUse",
        timestamp=2,
    ),
    ToolResultMessage(
        tool_call_id="c1", tool_name="ls", content=[TextContent(text="a.txt")], timestamp=3
    ),
]
# Pi's serializeContext for the context above, written out by hand:
USAGE_PROMPT = (
    "system:Be brief."
    "\n\nuser:Hello there"
    '\n\nassistant:Sure\nls:{"path":"."}'
    "\n\ntoolResult:ls\na.txt"
)


def test_hand_written_prompt_has_the_expected_length() -> None:
    assert len(USAGE_PROMPT) == 16 + 2 + 16 + 2 + 30 + 2 + 19 == 87


async def test_usage_estimate_follows_pi_formula(faux: FauxProvider) -> None:
    faux.set_responses([faux_assistant_message("Done: 3 files")])  # 13 chars -> 4 tokens
    context = Context(system_prompt=SYSTEM, messages=list(USAGE_MESSAGES))
    message = await asyncio.wait_for(complete(faux.get_model(), context), TIMEOUT)
    usage = message.usage
    assert usage.input == math.ceil(87 / 4) == 22
    assert usage.output == 4
    assert (usage.cache_read, usage.cache_write) == (0, 0)
    assert usage.total_tokens == 26
    assert usage.cost.total == 0


async def test_output_estimate_counts_thinking_text_and_tool_calls(faux: FauxProvider) -> None:
    # assistantContentToText: "abc" + "\n" + "defgh" + "\n" + 'f:{"a":1}' = 3+1+5+1+9 = 19 chars
    faux.set_responses(
        [
            faux_assistant_message(
                [faux_thinking("abc"), faux_text("defgh"), faux_tool_call("f", {"a": 1}, id="i")]
            )
        ]
    )
    message = await asyncio.wait_for(complete(faux.get_model(), ctx("")), TIMEOUT)
    assert message.usage.output == math.ceil(19 / 4) == 5
    # "user:" only
    assert message.usage.input == math.ceil(5 / 4) == 2


async def test_usage_estimate_renders_images_as_placeholders(faux: FauxProvider) -> None:
    from pi_notebook.ai import ImageContent

    # "user:" + "look" + "\n" + "[image:image/png:8]" = 5 + 4 + 1 + 19 = 29 chars
    context = Context(
        messages=[
            UserMessage(
                content=[
                    TextContent(text="look"),
                    ImageContent(data="AAAAAAAA", mime_type="image/png"),
                ],
                timestamp=1,
            )
        ]
    )
    faux.set_responses([faux_assistant_message("ok")])
    message = await asyncio.wait_for(complete(faux.get_model(), context), TIMEOUT)
    assert message.usage.input == math.ceil(29 / 4) == 8


async def test_usage_estimate_includes_tools_as_compact_json(faux: FauxProvider) -> None:
    from pi_notebook.ai import Tool

    tool = Tool(name="ls", description="List", parameters={"type": "object", "properties": {}})
    prompt = (
        "user:hi\n\n"
        'tools:[{"name":"ls","description":"List",'
        '"parameters":{"type":"object","properties":{}}}]'
    )
    assert len(prompt) == 7 + 2 + 6 + 83  # "user:hi", "\n\n", "tools:", the JSON
    faux.set_responses([faux_assistant_message("ok")])
    context = Context(messages=[UserMessage(content="hi", timestamp=1)], tools=[tool])
    message = await asyncio.wait_for(complete(faux.get_model(), context), TIMEOUT)
    assert message.usage.input == math.ceil(98 / 4) == 25


async def test_usage_estimate_counts_utf16_code_units_like_pi(faux: FauxProvider) -> None:
    # JS: "user:".length + "😀😀😀😀".length = 5 + 8 = 13 -> ceil(13/4) = 4 tokens
    faux.set_responses([faux_assistant_message("ok")])
    message = await asyncio.wait_for(complete(faux.get_model(), ctx("😀😀😀😀")), TIMEOUT)
    assert message.usage.input == 4


async def test_session_cache_first_call_writes_and_second_call_reads(faux: FauxProvider) -> None:
    model = faux.get_model()
    options = StreamOptions(session_id="sess-1")
    faux.set_responses([faux_assistant_message("Hi!"), faux_assistant_message("OK")])

    # prompt 1 = "system:Be brief.\n\nuser:Hello there" = 34 chars -> 9 tokens
    messages: list[Any] = [UserMessage(content="Hello there", timestamp=1)]
    first = await asyncio.wait_for(
        complete(model, Context(system_prompt=SYSTEM, messages=list(messages)), options), TIMEOUT
    )
    assert (first.usage.input, first.usage.cache_read, first.usage.cache_write) == (9, 0, 9)
    assert first.usage.output == 1
    assert first.usage.total_tokens == 9 + 1 + 0 + 9

    # prompt 2 = prompt 1 + "\n\nassistant:Hi!\n\nuser:More" (26 more chars, 60 total)
    messages += [first, UserMessage(content="More", timestamp=2)]
    second = await asyncio.wait_for(
        complete(model, Context(system_prompt=SYSTEM, messages=messages), options), TIMEOUT
    )
    cache_read = math.ceil(34 / 4)  # 9
    cache_write = math.ceil(26 / 4)  # 7
    prompt_tokens = math.ceil(60 / 4)  # 15
    assert second.usage.cache_read == cache_read == 9
    assert second.usage.cache_write == cache_write == 7
    assert second.usage.input == prompt_tokens - cache_read == 6
    assert second.usage.output == 1
    assert second.usage.total_tokens == 6 + 1 + 9 + 7


async def test_session_cache_is_off_with_cache_retention_none(faux: FauxProvider) -> None:
    options = StreamOptions(session_id="sess-2", cache_retention="none")
    faux.set_responses([faux_assistant_message("a"), faux_assistant_message("b")])
    for _ in range(2):
        message = await asyncio.wait_for(
            complete(faux.get_model(), ctx("Hello there", SYSTEM), options), TIMEOUT
        )
        assert (message.usage.input, message.usage.cache_read, message.usage.cache_write) == (
            9,
            0,
            0,
        )


async def test_no_session_id_means_no_cache_accounting(faux: FauxProvider) -> None:
    faux.set_responses([faux_assistant_message("a"), faux_assistant_message("b")])
    for _ in range(2):
        message = await asyncio.wait_for(
            complete(faux.get_model(), ctx("Hello there", SYSTEM)), TIMEOUT
        )
        assert (message.usage.cache_read, message.usage.cache_write) == (0, 0)


# --------------------------------------------------------------------------------------------
# Scripting


async def test_call_count_counts_every_stream_call(faux: FauxProvider) -> None:
    faux.set_responses([faux_assistant_message("a")])
    assert faux.call_count == 0
    await asyncio.wait_for(complete(faux.get_model(), ctx()), TIMEOUT)
    assert faux.call_count == 1
    await asyncio.wait_for(complete(faux.get_model(), ctx()), TIMEOUT)  # exhausted: still counted
    assert faux.call_count == 2
    assert faux.state.call_count == 2


async def test_set_responses_replaces_the_queue(faux: FauxProvider) -> None:
    faux.set_responses([faux_assistant_message("old1"), faux_assistant_message("old2")])
    faux.set_responses([faux_assistant_message("new")])
    assert faux.pending_response_count() == 1
    message = await asyncio.wait_for(complete(faux.get_model(), ctx()), TIMEOUT)
    assert message.content[0].text == "new"


async def test_append_responses_adds_to_the_queue_in_order(faux: FauxProvider) -> None:
    faux.set_responses([faux_assistant_message("one")])
    faux.append_responses([faux_assistant_message("two"), faux_assistant_message("three")])
    assert faux.pending_response_count() == 3
    texts = []
    for _ in range(3):
        message = await asyncio.wait_for(complete(faux.get_model(), ctx()), TIMEOUT)
        texts.append(message.content[0].text)
    assert texts == ["one", "two", "three"]
    assert faux.pending_response_count() == 0


async def test_set_responses_copies_the_given_list(faux: FauxProvider) -> None:
    script = [faux_assistant_message("a")]
    faux.set_responses(script)
    script.append(faux_assistant_message("b"))
    assert faux.pending_response_count() == 1


async def test_stream_call_takes_its_response_immediately(faux: FauxProvider) -> None:
    faux.set_responses([faux_assistant_message("first"), faux_assistant_message("second")])
    first = await open_stream(faux.get_model(), ctx())
    second = await open_stream(faux.get_model(), ctx())
    assert faux.pending_response_count() == 0
    assert faux.call_count == 2
    # consumed in reverse order, each still gets the response it took
    assert (await asyncio.wait_for(second.result(), TIMEOUT)).content[0].text == "second"
    assert (await asyncio.wait_for(first.result(), TIMEOUT)).content[0].text == "first"


async def test_exhausted_script_yields_only_an_error_event(faux: FauxProvider) -> None:
    events = await events_of(faux.get_model(), ctx("Hello there", SYSTEM))
    assert [e.type for e in events] == ["error"]
    error = events[0]
    assert error.reason == "error"
    assert error.error.stop_reason == "error"
    assert error.error.error_message == "No more faux responses queued"
    assert error.error.content == []
    assert (error.error.api, error.error.provider, error.error.model) == (
        faux.api,
        "faux",
        "faux-1",
    )
    # Pi applies the usage estimate to this message too
    assert error.error.usage.input == 9


async def test_sync_factory_receives_context_options_state_and_model(faux: FauxProvider) -> None:
    received: list[Any] = []

    def factory(context: Context, options: Any, state: FauxState, model: Model) -> Any:
        received.extend([context, options, state, model, state.call_count])
        return faux_assistant_message(f"seen {len(context.messages)}")

    faux.set_responses([factory])
    context, options, model = ctx(), StreamOptions(session_id="s"), faux.get_model()
    message = await asyncio.wait_for(complete(model, context, options), TIMEOUT)
    assert received == [context, options, faux.state, model, 1]
    assert received[0] is context and received[1] is options and received[2] is faux.state
    assert message.content[0].text == "seen 1"
    assert message.api == faux.api


async def test_async_factory_is_awaited(faux: FauxProvider) -> None:
    async def factory(context: Context, options: Any, state: FauxState, model: Model) -> Any:
        await asyncio.sleep(0)
        return faux_assistant_message(f"async for {model.id}")

    faux.set_responses([factory])
    message = await asyncio.wait_for(complete(faux.get_model(), ctx()), TIMEOUT)
    assert message.content[0].text == "async for faux-1"


@pytest.mark.parametrize("is_async", [False, True])
async def test_raising_factory_becomes_an_error_event_with_its_text(
    faux: FauxProvider, is_async: bool
) -> None:
    def sync_factory(*_: Any) -> Any:
        raise ValueError("factory exploded")

    async def async_factory(*_: Any) -> Any:
        raise ValueError("factory exploded")

    faux.set_responses([async_factory if is_async else sync_factory])
    events = await events_of(faux.get_model())
    assert [e.type for e in events] == ["error"]
    assert events[0].reason == "error"
    assert events[0].error.stop_reason == "error"
    assert events[0].error.error_message == "factory exploded"
    assert events[0].error.usage.total_tokens == 0


async def test_scripted_error_stop_reason_ends_with_an_error_event(faux: FauxProvider) -> None:
    faux.set_responses(
        [faux_assistant_message("partial", stop_reason="error", error_message="upstream 500")]
    )
    events = await events_of(faux.get_model())
    types = [e.type for e in events]
    assert types[0] == "start"
    assert "text_end" in types
    assert types[-1] == "error"
    assert "done" not in types
    assert events[-1].reason == "error"
    assert events[-1].error.error_message == "upstream 500"
    assert events[-1].error.content[0].text == "partial"


async def test_scripted_aborted_stop_reason_ends_with_aborted_error(faux: FauxProvider) -> None:
    faux.set_responses([faux_assistant_message("x", stop_reason="aborted", error_message="stop")])
    events = await events_of(faux.get_model())
    assert events[-1].type == "error"
    assert events[-1].reason == "aborted"


async def test_on_response_is_called_with_status_200(faux: FauxProvider) -> None:
    seen: list[tuple[int, str]] = []

    async def on_response(response: Any, model: Model) -> None:
        seen.append((response.status, model.id))

    faux.set_responses([faux_assistant_message("x")])
    await asyncio.wait_for(
        complete(faux.get_model(), ctx(), StreamOptions(on_response=on_response)), TIMEOUT
    )
    assert seen == [(200, "faux-1")]


# --------------------------------------------------------------------------------------------
# Abort


async def test_abort_before_request_yields_only_an_aborted_error(faux: FauxProvider) -> None:
    faux.set_responses([faux_assistant_message("never streamed")])
    controller = AbortController()
    controller.abort()
    events = await events_of(faux.get_model(), ctx(), StreamOptions(signal=controller.signal))
    assert [e.type for e in events] == ["error"]
    assert events[0].reason == "aborted"
    assert events[0].error.stop_reason == "aborted"
    assert events[0].error.error_message == "Request was aborted"
    assert events[0].error.content == []


async def test_abort_mid_text_keeps_the_partial_text(faux: FauxProvider) -> None:
    faux.set_responses([faux_assistant_message("aaaabbbbccccdddd")])
    controller = AbortController()
    response = await open_stream(faux.get_model(), ctx(), StreamOptions(signal=controller.signal))
    events: list[Any] = []
    deltas = 0

    async def consume() -> None:
        nonlocal deltas
        async for event in response:
            events.append(event)
            if event.type == "text_delta":
                deltas += 1
                if deltas == 2:
                    controller.abort()

    await asyncio.wait_for(consume(), TIMEOUT)
    assert [e.type for e in events] == ["start", "text_start", "text_delta", "text_delta", "error"]
    final = events[-1].error
    assert events[-1].reason == "aborted"
    assert final.stop_reason == "aborted"
    assert final.error_message == "Request was aborted"
    assert final.content == [TextContent(text="aaaabbbb")]
    assert await response.result() is final


async def test_abort_between_blocks_stops_before_the_next_block(faux: FauxProvider) -> None:
    faux.set_responses([faux_assistant_message([faux_text("one"), faux_text("two")])])
    controller = AbortController()
    response = await open_stream(faux.get_model(), ctx(), StreamOptions(signal=controller.signal))
    events: list[Any] = []

    async def consume() -> None:
        async for event in response:
            events.append(event)
            if event.type == "text_end":
                controller.abort()

    await asyncio.wait_for(consume(), TIMEOUT)
    assert [e.type for e in events][-2:] == ["text_end", "error"]
    assert events[-1].error.content == [TextContent(text="one")]


async def test_paced_stream_abort_after_first_delta_returns_promptly() -> None:
    handle = register_faux_provider(token_size=(1, 1), tokens_per_second=20)
    try:
        handle.set_responses([faux_assistant_message("x" * 4000)])  # 1000 tokens: ~50 s paced
        controller = AbortController()
        response = await open_stream(
            handle.get_model(), ctx(), StreamOptions(signal=controller.signal)
        )
        types: list[str] = []

        async def consume() -> None:
            async for event in response:
                types.append(event.type)
                if event.type == "text_delta":
                    controller.abort()

        await asyncio.wait_for(consume(), TIMEOUT)
        assert types == ["start", "text_start", "text_delta", "error"]
        assert (await response.result()).content[0].text == "xxxx"
    finally:
        handle.unregister()


async def test_paced_stream_abort_from_another_task_wakes_the_pacing_sleep() -> None:
    # the first (empty) block streams at once; every later chunk would wait 100 s
    handle = register_faux_provider(token_size=(1, 1), tokens_per_second=0.01)
    try:
        handle.set_responses([faux_assistant_message([faux_text(""), faux_text("y" * 400)])])
        controller = AbortController()
        response = await open_stream(
            handle.get_model(), ctx(), StreamOptions(signal=controller.signal)
        )
        first_delta = asyncio.Event()
        types: list[str] = []

        async def consume() -> None:
            async for event in response:
                types.append(event.type)
                if event.type == "text_delta":
                    first_delta.set()

        task = asyncio.create_task(consume())
        await asyncio.wait_for(first_delta.wait(), TIMEOUT)
        controller.abort()  # the consumer is now parked in the pacing sleep of block 2
        await asyncio.wait_for(task, TIMEOUT)
        assert types[-1] == "error"
        final = await response.result()
        assert final.stop_reason == "aborted"
        assert [b.text for b in final.content] == ["", ""]
    finally:
        handle.unregister()


# --------------------------------------------------------------------------------------------
# Registration and dispatch


async def test_two_registrations_get_distinct_api_names_and_both_work() -> None:
    first = register_faux_provider(token_size=(1, 1))
    second = register_faux_provider(token_size=(1, 1))
    try:
        assert first.api != second.api
        assert first.get_model().api == first.api
        assert second.get_model().api == second.api
        first.set_responses([faux_assistant_message("from first")])
        second.set_responses([faux_assistant_message("from second")])
        a = await asyncio.wait_for(complete(second.get_model(), ctx()), TIMEOUT)
        b = await asyncio.wait_for(complete(first.get_model(), ctx()), TIMEOUT)
        assert (a.content[0].text, a.api) == ("from second", second.api)
        assert (b.content[0].text, b.api) == ("from first", first.api)
        assert first.call_count == second.call_count == 1
    finally:
        first.unregister()
        second.unregister()


async def test_explicit_api_name_is_used() -> None:
    handle = register_faux_provider(api="faux-explicit-test")
    try:
        assert handle.api == "faux-explicit-test"
        assert get_api_provider("faux-explicit-test") is not None
    finally:
        handle.unregister()
    assert get_api_provider("faux-explicit-test") is None


def test_stream_on_unknown_api_raises_value_error() -> None:
    model = Model(id="x", api="no-such-api-registered", provider="nobody")
    with pytest.raises(ValueError, match="no-such-api-registered"):
        stream(model, ctx())


def test_get_model_with_unknown_id_raises(faux: FauxProvider) -> None:
    with pytest.raises(KeyError):
        faux.get_model("nope")

"""Record a real HTTP provider run, replay it without the server, and catch divergence.

The recording side talks to a real HTTP server on 127.0.0.1 speaking the OpenAI-compatible
chat-completions SSE format (``tests/providers/server.py``); the replay side runs after that
server is stopped, so any network use would fail.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from jupyter_client.manager import KernelManager

from pi_notebook.agent import Agent, AgentTool, AgentToolResult
from pi_notebook.ai import (
    AbortController,
    Context,
    StreamOptions,
    TextContent,
    UserMessage,
    maybe_await,
    parse_transcript,
    stream,
)
from pi_notebook.ai.providers import aclose_client
from pi_notebook.ai.replay import (
    RECORD_ENV,
    Player,
    Recorder,
    ReplayDivergence,
    ReplayError,
    check_replay,
    forget,
    handle_of,
    load_recording,
    record,
    recorded,
    replay,
    write_recording,
)
from tests.notebook.conftest import Kernel, kernel_env
from tests.providers.helpers import KEY, openai_model
from tests.providers.server import ScriptServer, sse, stream_bytes


def chunk(delta: dict[str, Any] | None = None, finish: str | None = None) -> dict[str, Any]:
    choice = {"index": 0, "delta": delta or {}, "finish_reason": finish}
    return {"id": "chatcmpl-r", "model": "test-model", "choices": [choice]}


def usage(prompt: int, completion: int) -> dict[str, Any]:
    return {
        "id": "chatcmpl-r",
        "choices": [],
        "usage": {"prompt_tokens": prompt, "completion_tokens": completion},
    }


def tool_call_stream() -> bytes:
    args = json.dumps({"a": 19, "b": 23})
    pieces = [args[i : i + 4] for i in range(0, len(args), 4)]
    calls = []
    for n, piece in enumerate(pieces):
        call: dict[str, Any] = {"index": 0, "function": {"arguments": piece}}
        if n == 0:
            call.update({"id": "call_add", "type": "function"})
            call["function"]["name"] = "add"
        calls.append(chunk({"tool_calls": [call]}))
    return sse(
        chunk({"role": "assistant", "content": ""}),
        chunk({"content": "Let me "}),
        chunk({"content": "add."}),
        *calls,
        chunk({}, "tool_calls"),
        usage(50, 12),
    )


def text_stream(*parts: str) -> bytes:
    return sse(*(chunk({"content": p}) for p in parts), chunk({}, "stop"), usage(80, 6))


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


def trace(agent: Agent) -> list[tuple[str, ...]]:
    """Every event as (type, inner stream event type, delta) -- what a UI would see."""
    seen: list[tuple[str, ...]] = []

    def listen(event: Any) -> None:
        if event.type == "message_update":
            inner = event.assistant_message_event
            seen.append((event.type, inner.type, getattr(inner, "delta", "")))
        elif event.type in ("message_start", "message_end"):
            seen.append((event.type, event.message.role))
        elif event.type == "tool_execution_end":
            seen.append((event.type, event.tool_name, event.result.content[0].text))
        else:
            seen.append((event.type,))

    agent.subscribe(listen)
    return seen


def transcript(agent: Agent) -> list[dict[str, Any]]:
    out = []
    for message in agent.state.messages:
        data = message.model_dump(mode="json", by_alias=True, exclude_none=True, warnings=False)
        data.pop("timestamp", None)
        out.append(data)
    return out


async def record_run(tmp_path: Path) -> tuple[Path, list[tuple[str, ...]], list[dict[str, Any]]]:
    server = ScriptServer()
    await server.start()
    path = tmp_path / "run.replay.jsonl"
    try:
        server.queue(
            stream_bytes(tool_call_stream(), split=7),
            stream_bytes(text_stream("19 + 23 ", "= 42."), split=5),
        )
        model = record(openai_model(server.url), path)
        agent = Agent(model=model, tools=[ADD], system_prompt="Be exact.", api_key=KEY)
        seen = trace(agent)
        await agent.prompt("What is 19 + 23?")
        assert len(server.requests) == 2
        handle = handle_of(model)
        assert isinstance(handle, Recorder) and handle.calls == 2
        forget(model)
    finally:
        await aclose_client()
        await server.stop()
    return path, seen, transcript(agent)


async def test_replay_reproduces_a_recorded_http_run_without_the_server(tmp_path: Path) -> None:
    path, recorded_trace, recorded_transcript = await record_run(tmp_path)
    assert recorded_transcript[-1]["content"] == [{"type": "text", "text": "19 + 23 = 42."}]
    assert recorded_transcript[2]["content"][0]["text"] == "42"

    model = replay(path)
    assert model.provider == "replay" and model.id == "test-model"
    agent = Agent(model=model, tools=[ADD], system_prompt="Be exact.")
    replayed_trace = trace(agent)
    await agent.prompt("What is 19 + 23?")

    assert replayed_trace == recorded_trace
    assert transcript(agent) == recorded_transcript  # usage, costs and response ids included
    player = handle_of(model)
    assert isinstance(player, Player)
    player.assert_complete()
    forget(model)


async def test_a_recording_written_from_the_messages_matches_and_replays(tmp_path: Path) -> None:
    path, _, recorded_transcript = await record_run(tmp_path)
    messages = parse_transcript(recorded_transcript)
    written = tmp_path / "from_messages.jsonl"
    _, calls = load_recording(path)
    model = openai_model("http://127.0.0.1:9")
    assert write_recording(written, model, "Be exact.", messages, [ADD]) == 2
    _, rebuilt = load_recording(written)
    # The requests are the ones the provider got, entry for entry; the replies' final messages.
    assert [c.entries for c in rebuilt] == [c.entries for c in calls]
    def reply(call: Any) -> dict[str, Any]:
        return {k: v for k, v in call.message.items() if k != "timestamp"}

    assert [reply(c) for c in rebuilt] == [reply(c) for c in calls]
    replayed = replay(written)
    agent = Agent(model=replayed, tools=[ADD], system_prompt="Be exact.")
    await agent.prompt("What is 19 + 23?")
    assert transcript(agent) == recorded_transcript
    handle_of(replayed).assert_complete()
    forget(replayed)


async def test_recording_holds_no_api_key(tmp_path: Path) -> None:
    path, _, _ = await record_run(tmp_path)
    text = path.read_text(encoding="utf-8")
    assert KEY not in text
    lines = [json.loads(line) for line in text.splitlines()]
    assert lines[0]["kind"] == "header"
    assert [line["kind"] for line in lines[1:]] == ["call", "call"]
    assert all(len(line["fingerprint"]) == 64 for line in lines[1:])


async def test_a_changed_prompt_diverges_loudly(tmp_path: Path) -> None:
    path, _, _ = await record_run(tmp_path)
    model = replay(path)
    agent = Agent(model=model, tools=[ADD], system_prompt="Be exact.")
    await agent.prompt("What is 19 + 24?")
    last = agent.state.messages[-1]
    assert last.stop_reason == "error"
    message = last.error_message or ""
    assert message.startswith(f"replay diverged from {path.name} at call 1, entry 1:")
    assert "19 + 23" in message and "19 + 24" in message
    assert agent.state.error_message == message
    with pytest.raises(ReplayDivergence, match="at call 1, entry 1"):
        check_replay(agent.state.messages)
    with pytest.raises(AssertionError, match="replay diverged"):
        handle_of(model).assert_complete()  # type: ignore[union-attr]
    forget(model)


async def test_a_changed_tool_result_diverges_at_the_second_call(tmp_path: Path) -> None:
    path, _, _ = await record_run(tmp_path)

    async def wrong_add(tool_call_id: str, params: Any, signal: object, update: object) -> Any:
        return AgentToolResult(content=[TextContent(text="41")])

    model = replay(path)
    agent = Agent(
        model=model,
        tools=[ADD.model_copy(update={"execute": wrong_add})],
        system_prompt="Be exact.",
    )
    await agent.prompt("What is 19 + 23?")
    last = agent.state.messages[-1]
    assert last.stop_reason == "error"
    assert f"diverged from {path.name} at call 2, entry 3:" in (last.error_message or "")
    assert '"41"' in (last.error_message or "")
    forget(model)


async def test_asking_past_the_recording_is_an_error_event(tmp_path: Path) -> None:
    path, _, _ = await record_run(tmp_path)
    model = replay(path)
    agent = Agent(model=model, tools=[ADD], system_prompt="Be exact.")
    await agent.prompt("What is 19 + 23?")
    handle_of(model).assert_complete()  # type: ignore[union-attr]
    await agent.prompt("And times two?")
    last = agent.state.messages[-1]
    assert last.stop_reason == "error"
    assert "call 3 was requested but only 2 were recorded" in (last.error_message or "")
    forget(model)


async def test_unused_recorded_calls_fail_assert_complete(tmp_path: Path) -> None:
    path, _, _ = await record_run(tmp_path)
    model = replay(path)
    player = handle_of(model)
    with pytest.raises(AssertionError, match="2 recorded call"):
        player.assert_complete()  # type: ignore[union-attr]
    forget(model)


async def test_an_aborted_replay_ends_with_an_aborted_error(tmp_path: Path) -> None:
    server = ScriptServer()
    await server.start()
    path = tmp_path / "one.jsonl"
    context = Context(system_prompt="Be exact.", messages=[UserMessage(content="hi")])
    try:
        server.queue(stream_bytes(text_stream("a ", "long ", "answer")))
        live = record(openai_model(server.url), path)
        response = await maybe_await(stream(live, context, StreamOptions(api_key=KEY)))
        assert (await response.result()).content[0].text == "a long answer"  # type: ignore[union-attr]
        forget(live)
    finally:
        await aclose_client()
        await server.stop()

    model = replay(path)
    controller = AbortController()
    response = await maybe_await(stream(model, context, StreamOptions(signal=controller.signal)))
    kinds = []
    async for event in response:
        kinds.append(event.type)
        if event.type == "text_delta":
            controller.abort()
    result = await response.result()
    assert result.stop_reason == "aborted"
    assert kinds[-1] == "error" and kinds.count("text_delta") == 1
    assert result.content[0].text == "a "  # type: ignore[union-attr]
    forget(model)


def test_bad_recordings_are_one_line_errors(tmp_path: Path) -> None:
    with pytest.raises(ReplayError, match="cannot read recording"):
        replay(tmp_path / "missing.jsonl")
    junk = tmp_path / "junk.jsonl"
    junk.write_text("{not json\n", encoding="utf-8")
    with pytest.raises(ReplayError, match="not a recording"):
        replay(junk)
    other = tmp_path / "other.jsonl"
    other.write_text('{"kind": "something"}\n', encoding="utf-8")
    with pytest.raises(ReplayError, match="no header line"):
        replay(other)


async def test_recorded_switches_on_the_environment(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path, _, _ = await record_run(tmp_path)
    monkeypatch.delenv(RECORD_ENV, raising=False)
    built: list[str] = []

    def real_model() -> Any:
        built.append("built")
        raise AssertionError("the real model is only built when recording")

    model = recorded(path, real_model)
    assert model.provider == "replay" and built == []
    forget(model)

    server = ScriptServer()
    await server.start()
    try:
        server.queue(stream_bytes(text_stream("fresh")))
        monkeypatch.setenv(RECORD_ENV, "1")
        fresh = tmp_path / "fresh.jsonl"
        live = recorded(fresh, lambda: openai_model(server.url))
        agent = Agent(model=live, api_key=KEY)
        await agent.prompt("hi")
        assert len(server.requests) == 1
        forget(live)
    finally:
        await aclose_client()
        await server.stop()
    monkeypatch.delenv(RECORD_ENV)
    again = replay(fresh)
    agent = Agent(model=again)
    await agent.prompt("hi")
    assert agent.state.messages[-1].content[0].text == "fresh"  # type: ignore[union-attr]
    forget(again)


# -- in a real kernel: a diverged replay fails the %%agent cell ----------------------------------


@pytest.fixture
def kernel(tmp_path: Path) -> Iterator[Kernel]:
    km = KernelManager(kernel_name="python3")
    km.start_kernel(env=kernel_env(tmp_path), cwd=str(tmp_path))
    running = Kernel(km)
    try:
        running.ok("%load_ext pi_notebook")
        yield running
    finally:
        running.shutdown()


async def record_hi(path: Path) -> None:
    server = ScriptServer()
    await server.start()
    try:
        server.queue(stream_bytes(text_stream("Hello ", "there.")))
        model = record(openai_model(server.url), path)
        await Agent(model=model, api_key=KEY).prompt("hi")
        forget(model)
    finally:
        await aclose_client()
        await server.stop()


async def test_a_diverged_replay_fails_the_agent_cell(kernel: Kernel, tmp_path: Path) -> None:
    path = tmp_path / "hi.jsonl"
    await record_hi(path)
    kernel.ok(f"from pi_notebook.ai.replay import replay\nm = replay({str(path)!r})")

    # The recording has no system prompt: the conversation must send none either.
    same = kernel.ok("%%agent --plain --model m --system ''\nhi")
    assert same.stdout == "user: hi\nassistant: Hello there.\n"

    further = kernel.run("%%agent --plain\nand then?")
    assert further.status == "error" and further.error is not None
    assert further.error["ename"] == "ReplayDivergence"
    assert "call 2 was requested but only 1 were recorded" in further.error["evalue"]
    assert "assistant [error]: replay diverged" in further.stdout  # the transcript still shows

    kernel.ok(f"m2 = replay({str(path)!r})")
    other = kernel.run("%%agent --plain --new --model m2\nhello")
    assert other.status == "error" and other.error is not None
    assert other.error["ename"] == "ReplayDivergence"
    assert "at call 1, entry 1: recorded" in other.error["evalue"]
    assert '"hi"' in other.error["evalue"] and '"hello"' in other.error["evalue"]
    kernel.ok("print(m2.provider)")  # the kernel and the session stay usable


async def test_recording_a_model_without_a_provider_is_an_error_event(tmp_path: Path) -> None:
    orphan = openai_model("http://127.0.0.1:9").model_copy(update={"api": "no-such-api"})
    model = record(orphan, tmp_path / "orphan.jsonl")
    context = Context(messages=[UserMessage(content="hi")])
    response = await maybe_await(stream(model, context, StreamOptions(api_key=KEY)))
    result = await response.result()
    assert result.stop_reason == "error"
    assert (
        result.error_message == "recording failed: No API provider registered for api: no-such-api"
    )
    check_replay([result])  # a failed recording is not a replay divergence
    assert handle_of(model).calls == 0  # type: ignore[union-attr]
    forget(model)


async def test_a_recording_holds_no_secret_and_still_replays(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The user's prompt carries a token from the environment and the model echoes it, split
    # across chunks: neither the context entries, the deltas nor the final message keep it.
    token = "ghp_" + "Sx1" * 12
    monkeypatch.setenv("GITHUB_TOKEN", token)
    server = ScriptServer()
    await server.start()
    path = tmp_path / "secret.replay.jsonl"
    prompt = f"Is {token} a valid token?"
    try:
        server.queue(
            stream_bytes(text_stream("It looks like ", token[:10], token[10:], "."), split=9)
        )
        model = record(openai_model(server.url), path)
        agent = Agent(model=model, api_key=KEY)
        await agent.prompt(prompt)
        forget(model)
    finally:
        await aclose_client()
        await server.stop()
    text = path.read_text(encoding="utf-8")
    assert token not in text and token[:10] not in text and token[10:] not in text
    assert "[redacted: GITHUB_TOKEN]" in text

    model = replay(path)
    agent = Agent(model=model)
    await agent.prompt(prompt)  # the same conversation matches its (redacted) recording
    reply = agent.state.messages[-1]
    assert reply.stop_reason == "stop", reply.error_message
    assert reply.content[0].text == "It looks like [redacted: GITHUB_TOKEN]."
    handle_of(model).assert_complete()
    forget(model)

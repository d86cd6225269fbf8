"""Context-overflow refusals as the real wire APIs send them: detected, then compacted and
retried once by the Agent (against the scripted HTTP server, not a mock)."""

from __future__ import annotations

import json
from typing import Any

import pytest

from pi_notebook.agent import SUMMARY_MARK, Agent
from pi_notebook.agent.summarise import SUMMARY_SYSTEM
from pi_notebook.ai import is_context_overflow

from .helpers import KEY, anthropic_model, collect, gemini_model, openai_model
from .responses_sse import responses_model
from .server import ScriptServer, error, sse, stream_bytes
from .test_anthropic_messages import ctx

#: The bodies real servers answer a too-long request with (HTTP 400).
OPENAI_OVERFLOW = {
    "error": {
        "message": "This model's maximum context length is 128000 tokens. However, your "
        "messages resulted in 131205 tokens. Please reduce the length of the messages.",
        "type": "invalid_request_error",
        "param": "messages",
        "code": "context_length_exceeded",
    }
}
OPENAI_WINDOW_OVERFLOW = {
    "error": {
        "message": "Your input exceeds the context window of this model. Please adjust your "
        "input and try again.",
        "type": "invalid_request_error",
        "param": "input",
        "code": "context_length_exceeded",
    }
}
LLAMACPP_OVERFLOW = {
    "error": {
        "code": 400,
        "message": "the request exceeds the available context size, try increasing it",
        "type": "exceed_context_size_error",
        "n_prompt_tokens": 4711,
        "n_ctx": 4096,
    }
}
ANTHROPIC_OVERFLOW = {
    "type": "error",
    "error": {
        "type": "invalid_request_error",
        "message": "prompt is too long: 213462 tokens > 200000 maximum",
    },
}


def chunk(delta: dict[str, Any] | None = None, finish: str | None = None) -> dict[str, Any]:
    choice = {"index": 0, "delta": delta or {}, "finish_reason": finish}
    return {"id": "chatcmpl-1", "model": "test-model", "choices": [choice]}


def reply(text: str) -> Any:
    return stream_bytes(sse(chunk({"role": "assistant", "content": text}), chunk({}, "stop")))


@pytest.mark.parametrize(
    "body",
    [OPENAI_OVERFLOW, OPENAI_WINDOW_OVERFLOW, LLAMACPP_OVERFLOW],
    ids=["openai", "openai-window", "llamacpp"],
)
async def test_openai_compatible_overflow_is_detected(server: ScriptServer, body: Any) -> None:
    server.queue(error(400, body))
    _, result = await collect(openai_model(server.url), ctx(), _opts())
    assert result.stop_reason == "error" and is_context_overflow(result)


async def test_anthropic_overflow_is_detected(server: ScriptServer) -> None:
    server.queue(error(400, ANTHROPIC_OVERFLOW))
    _, result = await collect(anthropic_model(server.url), ctx(), _opts())
    assert result.stop_reason == "error" and is_context_overflow(result)
    assert result.error_message is not None and "prompt is too long" in result.error_message


async def test_openai_responses_overflow_is_detected(server: ScriptServer) -> None:
    server.queue(error(400, OPENAI_WINDOW_OVERFLOW))
    _, result = await collect(responses_model(server.url), ctx(), _opts())
    assert result.stop_reason == "error" and is_context_overflow(result)


async def test_gemini_overflow_is_detected(server: ScriptServer) -> None:
    body = {
        "error": {
            "code": 400,
            "message": "The input token count (1196265) exceeds the maximum number of tokens "
            "allowed (1048576).",
            "status": "INVALID_ARGUMENT",
        }
    }
    server.queue(error(400, body))
    _, result = await collect(gemini_model(server.url), ctx(), _opts())
    assert result.stop_reason == "error" and is_context_overflow(result)


async def test_a_rate_limit_is_not_an_overflow(server: ScriptServer) -> None:
    server.queue(error(400, {"error": {"message": "Rate limit reached: too many tokens"}}))
    _, result = await collect(openai_model(server.url), ctx(), _opts())
    assert result.stop_reason == "error" and not is_context_overflow(result)


@pytest.mark.parametrize("body", [OPENAI_OVERFLOW, LLAMACPP_OVERFLOW], ids=["openai", "llamacpp"])
async def test_an_overflow_compacts_once_and_retries(server: ScriptServer, body: Any) -> None:
    server.queue(reply("first answer"), error(400, body), reply("SUMMARY"), reply("second"))
    agent = Agent(model=openai_model(server.url), api_key=KEY)
    await agent.prompt("first question")
    await agent.prompt("second question")
    # The run did not fail: the refusal never reached the transcript.
    assert [m.role for m in agent.state.messages] == ["user", "assistant"] * 2
    assert agent.state.messages[-1].content[0].text == "second"
    assert agent.state.error_message is None
    bodies = [json.loads(r.body) for r in server.requests]
    assert len(bodies) == 4
    summary_request = bodies[2]
    assert summary_request["messages"][0] == {"role": "system", "content": SUMMARY_SYSTEM}
    assert "tools" not in summary_request
    [asked] = summary_request["messages"][1]["content"]
    assert "[user]: first question\n\n[assistant]: first answer\n</conv" in asked["text"]
    retried = bodies[3]["messages"]
    assert retried[0]["content"][0]["text"].startswith(SUMMARY_MARK.format(count=2))
    assert retried[-1]["content"] == [{"type": "text", "text": "second question"}]


async def test_a_second_overflow_fails_the_run_readably(server: ScriptServer) -> None:
    server.queue(
        reply("first answer"),
        error(400, OPENAI_OVERFLOW),
        reply("SUMMARY"),
        error(400, OPENAI_OVERFLOW),
    )
    agent = Agent(model=openai_model(server.url), api_key=KEY)
    await agent.prompt("first question")
    await agent.prompt("second question")
    last = agent.state.messages[-1]
    assert last.stop_reason == "error"
    assert "maximum context length is 128000 tokens" in (last.error_message or "")
    assert len(server.requests) == 4  # one compaction, one retry: no loop


def _opts() -> Any:
    from pi_notebook.ai import StreamOptions

    return StreamOptions(api_key=KEY)


async def test_the_request_hook_numbers_the_retry_and_summary_with_their_turn(
    server: ScriptServer,
) -> None:
    from pi_notebook.agent import RunConfig
    from pi_notebook.notebook.context_view import RequestTap, context_text, turn_request

    server.queue(reply("first answer"), error(400, OPENAI_OVERFLOW), reply("SUMMARY"), reply("2"))
    first = RequestTap()
    agent = Agent(model=openai_model(server.url), api_key=KEY, on_request=first)
    await agent.prompt("first question")
    tap = RequestTap()  # one tap per run, as the notebook keeps them: turns count per run
    await agent.prompt("second question", run=RunConfig(on_request=tap))
    assert [(r.turn, r.purpose) for r in first.requests] == [(1, "turn")]
    # Three requests, one turn: the refused request, the summary and the retry are turn 1's.
    assert [(r.turn, r.purpose) for r in tap.requests] == [
        (1, "turn"),
        (1, "summary"),
        (1, "retry"),
    ]
    assert tap.requests[1].system_prompt == SUMMARY_SYSTEM
    sent = turn_request(tap.requests, 1)
    assert sent is tap.requests[2]  # what turn 1 answered from: the compacted retry
    assert context_text(sent).startswith(
        "turn 1: the request to openai/test-model (the request again, compacted, after a "
        "context overflow): "
    )

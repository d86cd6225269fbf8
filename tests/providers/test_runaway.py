"""A server that ignores ``max_tokens`` is not read forever (issue 28, item 11).

Each wire API against the scripted server on 127.0.0.1 streaming text with no end: the reply
stops once it is well past the limit the request carried (4 characters a token, times 2, at
least 4,096 characters), ends as stop reason ``length`` with a note that the server ignored the
limit, the server sees the client go, and the next request works.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from typing import Any

import pytest

from pi_notebook.agent import Agent
from pi_notebook.ai import AssistantMessage, Context, Model, StreamOptions, UserMessage
from pi_notebook.ai.providers import MIN_RUNAWAY_CHARS, runaway_chars

from .helpers import KEY, anthropic_model, collect, gemini_model, openai_model
from .responses_sse import responses_model
from .server import Endless, ScriptServer, endless, gemini_sse, named_sse, sse, stream_bytes

PIECE = "all work and no play makes a dull reply " * 2 + "and more words " + "ok!! "
"""One streamed delta (100 characters)."""
assert len(PIECE) == 100
FRAMES = 100_000
"""The most the server sends (10,000,000 characters, more than socket buffers hold): a
client that read it all failed."""


def _openai() -> tuple[bytes, bytes]:
    frame = {"id": "c1", "choices": [{"index": 0, "delta": {"content": PIECE}}]}
    return b"", sse(frame, end=False)


def _anthropic() -> tuple[bytes, bytes]:
    head = named_sse(
        ("message_start", {"type": "message_start", "message": {"id": "m", "usage": {}}}),
        (
            "content_block_start",
            {
                "type": "content_block_start",
                "index": 0,
                "content_block": {"type": "text", "text": ""},
            },
        ),
    )
    delta = {
        "type": "content_block_delta",
        "index": 0,
        "delta": {"type": "text_delta", "text": PIECE},
    }
    return head, named_sse(("content_block_delta", delta))


def _responses() -> tuple[bytes, bytes]:
    item = {
        "id": "msg_1",
        "type": "message",
        "status": "in_progress",
        "role": "assistant",
        "content": [],
    }
    common = {"item_id": "msg_1", "output_index": 0, "content_index": 0}
    response = {"id": "resp_1", "object": "response", "status": "in_progress", "output": []}
    head = named_sse(
        (
            "response.created",
            {"type": "response.created", "sequence_number": 0, "response": response},
        ),
        (
            "response.output_item.added",
            {
                "type": "response.output_item.added",
                "sequence_number": 1,
                "output_index": 0,
                "item": item,
            },
        ),
        (
            "response.content_part.added",
            {
                "type": "response.content_part.added",
                "sequence_number": 2,
                **common,
                "part": {"type": "output_text", "text": "", "annotations": []},
            },
        ),
    )
    delta = {"type": "response.output_text.delta", "sequence_number": 3, **common, "delta": PIECE}
    return head, named_sse(("response.output_text.delta", delta))


def _google() -> tuple[bytes, bytes]:
    chunk = {
        "candidates": [{"index": 0, "content": {"parts": [{"text": PIECE}], "role": "model"}}],
        "modelVersion": "gemini-2.5-flash",
        "responseId": "resp-1",
    }
    return b"", gemini_sse(chunk)


WIRES: dict[str, tuple[Callable[..., Model], Callable[[], tuple[bytes, bytes]], str]] = {
    "openai-completions": (openai_model, _openai, "max_tokens"),
    "anthropic-messages": (anthropic_model, _anthropic, "max_tokens"),
    "openai-responses": (responses_model, _responses, "max_output_tokens"),
    "google-generative-ai": (gemini_model, _google, "maxOutputTokens"),
}

OPENAI_OK = sse(
    {"id": "c2", "choices": [{"index": 0, "delta": {"content": "fine"}}]},
    {"id": "c2", "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]},
)


def ctx() -> Context:
    return Context(messages=[UserMessage(content="hi")])


def sent_limit(body: dict[str, Any], field: str) -> Any:
    return body["generationConfig"][field] if field == "maxOutputTokens" else body[field]


def test_the_cap_scales_with_the_limit() -> None:
    assert runaway_chars(256) == MIN_RUNAWAY_CHARS == 4_096
    assert runaway_chars(1_000) == 8_000
    assert runaway_chars(64_000) == 512_000  # not a fixed size


@pytest.mark.parametrize("api", sorted(WIRES))
async def test_a_reply_past_the_limit_is_cut_as_length(server: ScriptServer, api: str) -> None:
    make_model, frames, field = WIRES[api]
    head, frame = frames()
    sent = Endless()
    server.queue(endless(head, frame, sent, frames=FRAMES))
    model = make_model(server.url)
    options = StreamOptions(api_key=KEY, max_tokens=1_000, max_retries=0)
    events, result = await collect(model, ctx(), options)
    # What was sent: the limit; what came back: the reply cut past 8,000 characters.
    assert sent_limit(server.requests[0].json(), field) == 1_000
    text = result.content[0].text  # type: ignore[union-attr]
    assert 8_000 < len(text) < 8_000 + 70_000  # at most one read past the cap
    assert result.stop_reason == "length"
    assert result.error_message == (
        "the server ignored the output limit of 1000 tokens: stopped reading the reply after "
        f"{len(text)} characters"
    )
    kinds = [e.type for e in events]
    assert kinds[-2:] == ["text_end", "done"] and events[-1].reason == "length"
    assert events[-2].content == text
    await asyncio.wait_for(sent.finished.wait(), 10)
    assert sent.frames < FRAMES  # the client went away; the server did not run out


async def test_a_reply_within_the_limit_is_untouched(server: ScriptServer) -> None:
    long_ok = sse(
        *({"id": "c", "choices": [{"index": 0, "delta": {"content": PIECE}}]} for _ in range(80)),
        {"id": "c", "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]},
    )
    server.queue(stream_bytes(long_ok))
    options = StreamOptions(api_key=KEY, max_tokens=1_000, max_retries=0)  # 8,000 chars sent
    events, result = await collect(openai_model(server.url), ctx(), options)
    assert result.stop_reason == "stop" and result.error_message is None
    assert len(result.content[0].text) == 8_000  # type: ignore[union-attr]
    assert [e.type for e in events][-2:] == ["text_end", "done"]


async def test_an_agent_cut_by_the_cap_answers_the_next_prompt(server: ScriptServer) -> None:
    head, frame = _openai()
    sent = Endless()
    server.queue(endless(head, frame, sent, frames=FRAMES), stream_bytes(OPENAI_OK))
    agent = Agent(model=openai_model(server.url), api_key=KEY, max_tokens=300, max_retries=0)
    seen: list[str] = []
    agent.subscribe(lambda event: seen.append(event.type))
    await asyncio.wait_for(agent.prompt("talk"), 10)
    assert seen[-1] == "agent_end"
    cut = agent.state.messages[-1]
    assert isinstance(cut, AssistantMessage) and cut.stop_reason == "length"
    assert (cut.error_message or "").startswith("the server ignored the output limit of 300")
    await asyncio.wait_for(agent.prompt("again"), 10)
    reply = agent.state.messages[-1]
    assert isinstance(reply, AssistantMessage) and reply.stop_reason == "stop"
    assert reply.content[0].text == "fine"  # type: ignore[union-attr]
    bodies = [json.loads(r.body) for r in server.requests]
    assert [b["max_tokens"] for b in bodies] == [300, 300]

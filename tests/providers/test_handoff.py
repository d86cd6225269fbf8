"""Cross-provider handoff over real HTTP: a conversation started on one API continues on another.

As Pi's ``transformMessages`` (reference 1.7): the next provider sees another model's thinking
as plain text (redacted thinking is dropped), no foreign signatures, and tool-call ids adapted
to its own rules (the matching tool results follow). Each test streams the first reply from one
scripted server and checks the body the second provider's server received.
"""

from __future__ import annotations

import json
import re
from typing import Any

from pi_notebook.ai import (
    AssistantMessage,
    Context,
    StreamOptions,
    TextContent,
    Tool,
    ToolResultMessage,
    UserMessage,
    parse_message,
)

from .helpers import GEMINI_KEY, KEY, anthropic_model, collect, gemini_model, openai_model
from .server import ScriptServer, gemini_sse, named_sse, sse, stream_bytes

TOOL = Tool(
    name="lookup",
    description="Look a word up",
    parameters={"type": "object", "properties": {"q": {"type": "string"}}, "required": ["q"]},
)
ODD_ID = "call_8xY|fc_01+/weird=id"  # Responses-style ids carry "|" and other characters
SIG = "CiQB0e2Kb7Zd" + "A" * 20
ANTHROPIC_ID = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")


def opts(key: str = KEY) -> StreamOptions:
    return StreamOptions(api_key=key)


def _continue(first: list[Any], reply: AssistantMessage, result_text: str) -> Context:
    """The transcript after the first reply and the tool result, through Pi's JSON."""
    call = next(b for b in reply.content if b.type == "toolCall")
    result = ToolResultMessage(
        tool_call_id=call.id, tool_name=call.name, content=[TextContent(text=result_text)]
    )
    messages = [*first, reply, result, UserMessage(content="And now?")]
    restored = [
        parse_message(m) for m in json.loads(json.dumps([m.to_json_dict() for m in messages]))
    ]
    return Context(system_prompt="Be brief.", tools=[TOOL], messages=restored)


async def _openai_reply(server: ScriptServer) -> tuple[list[Any], AssistantMessage]:
    def chunk(delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
        return {"id": "c1", "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}

    call = {
        "index": 0,
        "id": ODD_ID,
        "type": "function",
        "function": {"name": "lookup", "arguments": '{"q": "gemini"}'},
    }
    body = sse(
        chunk({"reasoning_content": "The user wants a definition."}),
        chunk({"content": "Looking it up."}),
        chunk({"tool_calls": [call]}),
        chunk({}, "tool_calls"),
    )
    server.queue(stream_bytes(body))
    first = [UserMessage(content="What is gemini?")]
    _, reply = await collect(
        openai_model(server.url), Context(messages=first, tools=[TOOL]), opts()
    )
    assert reply.stop_reason == "toolUse", reply.error_message
    return first, reply


async def _gemini_reply(server: ScriptServer) -> tuple[list[Any], AssistantMessage]:
    def chunk(*parts: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
        cand: dict[str, Any] = {"index": 0, "content": {"role": "model", "parts": list(parts)}}
        if finish:
            cand["finishReason"] = finish
        return {"candidates": [cand], "usageMetadata": {"promptTokenCount": 5}}

    body = gemini_sse(
        chunk({"text": "A definition is wanted.", "thought": True, "thoughtSignature": SIG}),
        chunk({"text": "Looking it up.", "thoughtSignature": SIG}),
        chunk(
            {"functionCall": {"name": "lookup", "args": {"q": "gemini"}}, "thoughtSignature": SIG},
            finish="STOP",
        ),
    )
    server.queue(stream_bytes(body))
    first = [UserMessage(content="What is gemini?")]
    _, reply = await collect(
        gemini_model(server.url), Context(messages=first, tools=[TOOL]), opts(GEMINI_KEY)
    )
    assert reply.stop_reason == "toolUse", reply.error_message
    return first, reply


def _gemini_ok() -> Any:
    return stream_bytes(
        gemini_sse(
            {
                "candidates": [
                    {
                        "content": {"role": "model", "parts": [{"text": "Done."}]},
                        "finishReason": "STOP",
                    }
                ]
            }
        )
    )


def _anthropic_ok() -> Any:
    return stream_bytes(
        named_sse(
            ("message_start", {"type": "message_start", "message": {"id": "m", "usage": {}}}),
            (
                "message_delta",
                {"type": "message_delta", "delta": {"stop_reason": "end_turn"}, "usage": {}},
            ),
            ("message_stop", {"type": "message_stop"}),
        )
    )


def _openai_ok() -> Any:
    return stream_bytes(
        sse(
            {
                "id": "c",
                "choices": [{"index": 0, "delta": {"content": "Done."}, "finish_reason": None}],
            },
            {"id": "c", "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]},
        )
    )


async def test_openai_completions_then_gemini(server: ScriptServer) -> None:
    first, reply = await _openai_reply(server)
    server.queue(_gemini_ok())
    _, second = await collect(
        gemini_model(server.url), _continue(first, reply, "twins"), opts(GEMINI_KEY)
    )
    assert second.stop_reason == "stop", second.error_message
    contents = server.requests[1].json()["contents"]
    assert [c["role"] for c in contents] == ["user", "model", "user", "user"]
    assert contents[1]["parts"] == [
        {"text": "The user wants a definition."},  # another model's thinking: plain text
        {"text": "Looking it up."},
        {"functionCall": {"name": "lookup", "args": {"q": "gemini"}}},  # Gemini matches by name
    ]
    assert contents[2]["parts"] == [
        {"functionResponse": {"name": "lookup", "response": {"output": "twins"}}}
    ]
    assert contents[3]["parts"] == [{"text": "And now?"}]


async def test_openai_completions_then_anthropic(server: ScriptServer) -> None:
    first, reply = await _openai_reply(server)
    server.queue(_anthropic_ok())
    _, second = await collect(anthropic_model(server.url), _continue(first, reply, "twins"), opts())
    assert second.stop_reason == "stop", second.error_message
    messages = server.requests[1].json()["messages"]
    assistant = messages[1]["content"]
    assert [b["type"] for b in assistant] == ["text", "text", "tool_use"]
    assert assistant[0]["text"] == "The user wants a definition."
    new_id = assistant[2]["id"]
    assert new_id != ODD_ID and ANTHROPIC_ID.match(new_id)
    assert messages[2]["content"][0]["tool_use_id"] == new_id  # the result follows the call


async def test_gemini_then_anthropic_and_openai(server: ScriptServer) -> None:
    first, reply = await _gemini_reply(server)
    call = reply.content[2]
    assert call.thought_signature == SIG and reply.content[0].thinking_signature == SIG
    context = _continue(first, reply, "twins")

    server.queue(_anthropic_ok())
    _, second = await collect(anthropic_model(server.url), context, opts())
    assert second.stop_reason == "stop", second.error_message
    assistant = server.requests[1].json()["messages"][1]["content"]
    assert assistant == [
        {"type": "text", "text": "A definition is wanted."},  # no Gemini signature travels
        {"type": "text", "text": "Looking it up."},
        {"type": "tool_use", "id": call.id, "name": "lookup", "input": {"q": "gemini"}},
    ]
    assert ANTHROPIC_ID.match(call.id)  # Gemini's generated ids suit Anthropic as they are

    server.queue(_openai_ok())
    _, third = await collect(openai_model(server.url), context, opts())
    assert third.stop_reason == "stop", third.error_message
    sent = server.requests[2].json()["messages"]
    assistant_msg = next(m for m in sent if m["role"] == "assistant")
    assert assistant_msg["content"] == "A definition is wanted.Looking it up."
    assert "reasoning_content" not in assistant_msg
    assert assistant_msg["tool_calls"][0]["id"] == call.id
    assert next(m for m in sent if m["role"] == "tool")["tool_call_id"] == call.id


async def test_anthropic_then_gemini_drops_redacted_thinking(server: ScriptServer) -> None:
    def block(index: int, content: dict[str, Any]) -> tuple[str, dict[str, Any]]:
        return (
            "content_block_start",
            {"type": "content_block_start", "index": index, "content_block": content},
        )

    def delta(index: int, d: dict[str, Any]) -> tuple[str, dict[str, Any]]:
        return ("content_block_delta", {"type": "content_block_delta", "index": index, "delta": d})

    def stop(index: int) -> tuple[str, dict[str, Any]]:
        return ("content_block_stop", {"type": "content_block_stop", "index": index})

    body = named_sse(
        ("message_start", {"type": "message_start", "message": {"id": "m", "usage": {}}}),
        block(0, {"type": "redacted_thinking", "data": "opaque=="}),
        stop(0),
        block(1, {"type": "thinking", "thinking": ""}),
        delta(1, {"type": "thinking_delta", "thinking": "Plan: look it up."}),
        delta(1, {"type": "signature_delta", "signature": "sig"}),
        stop(1),
        block(2, {"type": "tool_use", "id": "toolu_01", "name": "lookup", "input": {"q": "x"}}),
        stop(2),
        (
            "message_delta",
            {"type": "message_delta", "delta": {"stop_reason": "tool_use"}, "usage": {}},
        ),
        ("message_stop", {"type": "message_stop"}),
    )
    server.queue(stream_bytes(body))
    first = [UserMessage(content="Define x")]
    _, reply = await collect(
        anthropic_model(server.url), Context(messages=first, tools=[TOOL]), opts()
    )
    assert reply.stop_reason == "toolUse", reply.error_message
    server.queue(_gemini_ok())
    _, second = await collect(
        gemini_model(server.url), _continue(first, reply, "a letter"), opts(GEMINI_KEY)
    )
    assert second.stop_reason == "stop", second.error_message
    parts = server.requests[1].json()["contents"][1]["parts"]
    assert parts == [
        {"text": "Plan: look it up."},
        {"functionCall": {"name": "lookup", "args": {"q": "x"}}},
    ]


async def test_another_gemini_model_gets_no_thought_signatures(server: ScriptServer) -> None:
    first, reply = await _gemini_reply(server)
    server.queue(_gemini_ok())
    other = gemini_model(server.url, id="gemini-3-pro-preview")
    _, second = await collect(other, _continue(first, reply, "twins"), opts(GEMINI_KEY))
    assert second.stop_reason == "stop", second.error_message
    sent = json.dumps(server.requests[1].json())
    assert SIG not in sent and '"thought"' not in sent

"""The JSON bodies sent for a multi-turn transcript with tools, images and thinking."""

from __future__ import annotations

from pi_notebook.ai import (
    AssistantMessage,
    Context,
    ImageContent,
    StreamOptions,
    TextContent,
    ThinkingContent,
    Tool,
    ToolCall,
    ToolResultMessage,
    UserMessage,
)

from .helpers import KEY, anthropic_model, collect, openai_model
from .server import ScriptServer, error

IMG = ImageContent(data="aGVsbG8=", mime_type="image/png")
TOOL = Tool(
    name="read",
    description="Read a file",
    parameters={"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]},
)


def transcript(api: str, provider: str, model_id: str, signature: str) -> Context:
    assistant = AssistantMessage(
        api=api,
        provider=provider,
        model=model_id,
        stop_reason="toolUse",
        content=[
            ThinkingContent(thinking="I should read it.", thinking_signature=signature),
            TextContent(text="Reading."),
            ToolCall(id="call_1", name="read", arguments={"path": "a.txt"}),
            ToolCall(id="call_2", name="read", arguments={"path": "b.png"}),
        ],
    )
    return Context(
        system_prompt="You are terse.",
        tools=[TOOL],
        messages=[
            UserMessage(content=[TextContent(text="Look at this"), IMG]),
            assistant,
            ToolResultMessage(
                tool_call_id="call_1", tool_name="read", content=[TextContent(text="alpha")]
            ),
            ToolResultMessage(
                tool_call_id="call_2", tool_name="read", content=[IMG], is_error=False
            ),
            # an errored assistant turn is dropped from history
            AssistantMessage(
                api=api,
                provider=provider,
                model=model_id,
                stop_reason="error",
                error_message="boom",
            ),
            UserMessage(content="And now?"),
        ],
    )


async def _body(server: ScriptServer, model, context: Context, **options) -> dict:
    server.queue(error(400, {"error": {"message": "just capturing"}}))
    await collect(model, context, StreamOptions(api_key=KEY, max_retries=0, **options))
    return server.requests[-1].json()


async def test_openai_body_shape(server: ScriptServer) -> None:
    model = openai_model(server.url, reasoning=True, compat={"supportsDeveloperRole": True})
    body = await _body(
        server,
        model,
        transcript(model.api, model.provider, model.id, "reasoning_content"),
        reasoning="high",
        max_tokens=500,
    )
    assert body["model"] == "test-model" and body["stream"] is True
    assert body["stream_options"] == {"include_usage": True}
    assert body["reasoning_effort"] == "high"
    assert body["max_tokens"] == 500
    msgs = body["messages"]
    assert [m["role"] for m in msgs] == [
        "developer",
        "user",
        "assistant",
        "tool",
        "tool",
        "user",
        "user",
    ]
    assert msgs[0] == {"role": "developer", "content": "You are terse."}
    assert msgs[1]["content"] == [
        {"type": "text", "text": "Look at this"},
        {"type": "image_url", "image_url": {"url": "data:image/png;base64,aGVsbG8="}},
    ]
    assistant = msgs[2]
    assert assistant["content"] == "Reading."
    assert assistant["reasoning_content"] == "I should read it."
    assert assistant["tool_calls"] == [
        {
            "id": "call_1",
            "type": "function",
            "function": {"name": "read", "arguments": '{"path": "a.txt"}'},
        },
        {
            "id": "call_2",
            "type": "function",
            "function": {"name": "read", "arguments": '{"path": "b.png"}'},
        },
    ]
    assert msgs[3] == {"role": "tool", "content": "alpha", "tool_call_id": "call_1"}
    assert msgs[4] == {"role": "tool", "content": "(see attached image)", "tool_call_id": "call_2"}
    assert msgs[5]["content"][0] == {"type": "text", "text": "Attached image(s) from tool result:"}
    assert msgs[5]["content"][1]["type"] == "image_url"
    assert msgs[6] == {"role": "user", "content": "And now?"}
    assert body["tools"][0]["function"]["name"] == "read"


async def test_openai_compat_switches(server: ScriptServer) -> None:
    context = Context(
        messages=[
            UserMessage(content="hi"),
            AssistantMessage(
                api="openai-completions",
                provider="openai",
                model="test-model",
                stop_reason="toolUse",
                content=[ToolCall(id="c1", name="read", arguments={})],
            ),
            ToolResultMessage(tool_call_id="c1", tool_name="read", content=[TextContent(text="x")]),
        ],
        system_prompt="sys",
    )
    model = openai_model(
        server.url,
        input=["text"],
        compat={
            "max_tokens_field": "max_completion_tokens",
            "supports_usage_in_streaming": False,
            "supports_null_assistant_content": False,
            "requires_tool_result_name": True,
            "supports_store": True,
        },
    )
    body = await _body(server, model, context, max_tokens=9)
    assert body["max_completion_tokens"] == 9 and "max_tokens" not in body
    assert "stream_options" not in body
    assert body["store"] is False
    assert body["messages"][0]["role"] == "system"
    assert body["messages"][2]["content"] == ""  # not null beside tool_calls
    assert body["messages"][3]["name"] == "read"
    assert body["tools"] == []  # tool history but no tools: some proxies need the key


async def test_openai_no_vision_and_orphan_tool_call(server: ScriptServer) -> None:
    context = Context(
        messages=[
            UserMessage(content=[TextContent(text="see"), IMG, IMG]),
            AssistantMessage(
                api="openai-completions",
                provider="openai",
                model="test-model",
                stop_reason="toolUse",
                content=[ToolCall(id="c9", name="read", arguments={})],
            ),
            UserMessage(content="next"),
        ]
    )
    body = await _body(server, openai_model(server.url, input=["text"]), context)
    msgs = body["messages"]
    assert msgs[0]["content"] == [
        {"type": "text", "text": "see"},
        {"type": "text", "text": "(image omitted: model does not support images)"},
    ]
    assert msgs[2] == {"role": "tool", "content": "No result provided", "tool_call_id": "c9"}
    assert msgs[3] == {"role": "user", "content": "next"}


async def test_anthropic_body_shape(server: ScriptServer) -> None:
    model = anthropic_model(server.url)
    body = await _body(
        server,
        model,
        transcript(model.api, model.provider, model.id, "sig-1"),
        reasoning="medium",
        max_tokens=2000,
        temperature=0.5,
    )
    assert body["model"] == "claude-test" and body["stream"] is True
    assert body["system"] == [
        {"type": "text", "text": "You are terse.", "cache_control": {"type": "ephemeral"}}
    ]
    assert body["thinking"] == {"type": "enabled", "budget_tokens": 8192}
    assert body["max_tokens"] == 2000 + 8192
    assert "temperature" not in body  # incompatible with thinking
    assert body["tools"] == [
        {
            "name": "read",
            "description": "Read a file",
            "input_schema": {
                "type": "object",
                "properties": {"path": {"type": "string"}},
                "required": ["path"],
            },
            "cache_control": {"type": "ephemeral"},
        }
    ]
    msgs = body["messages"]
    assert [m["role"] for m in msgs] == ["user", "assistant", "user", "user"]
    assert msgs[0]["content"][1] == {
        "type": "image",
        "source": {"type": "base64", "media_type": "image/png", "data": "aGVsbG8="},
    }
    assert msgs[1]["content"] == [
        {"type": "thinking", "thinking": "I should read it.", "signature": "sig-1"},
        {"type": "text", "text": "Reading."},
        {"type": "tool_use", "id": "call_1", "name": "read", "input": {"path": "a.txt"}},
        {"type": "tool_use", "id": "call_2", "name": "read", "input": {"path": "b.png"}},
    ]
    results = msgs[2]["content"]
    assert results[0] == {
        "type": "tool_result",
        "tool_use_id": "call_1",
        "content": "alpha",
        "is_error": False,
    }
    assert results[1]["content"] == [
        {"type": "text", "text": "(see attached image)"},
        {
            "type": "image",
            "source": {"type": "base64", "media_type": "image/png", "data": "aGVsbG8="},
        },
    ]
    # cache_control on the last user message
    assert msgs[3] == {
        "role": "user",
        "content": [{"type": "text", "text": "And now?", "cache_control": {"type": "ephemeral"}}],
    }


async def test_anthropic_foreign_thinking_ids_and_no_cache(server: ScriptServer) -> None:
    foreign = AssistantMessage(
        api="openai-completions",
        provider="openai",
        model="gpt-x",
        stop_reason="toolUse",
        content=[
            ThinkingContent(thinking="foreign thoughts", thinking_signature="reasoning_content"),
            ToolCall(id="call|weird/id+=", name="read", arguments={"path": "x"}),
        ],
    )
    context = Context(
        messages=[
            UserMessage(content="q"),
            foreign,
            ToolResultMessage(
                tool_call_id="call|weird/id+=", tool_name="read", content=[TextContent(text="r")]
            ),
        ]
    )
    body = await _body(
        server,
        anthropic_model(server.url, reasoning=False),
        context,
        cache_retention="none",
        temperature=0.2,
    )
    msgs = body["messages"]
    assert msgs[1]["content"][0] == {"type": "text", "text": "foreign thoughts"}
    assert msgs[1]["content"][1]["id"] == "call_weird_id__"
    assert msgs[2]["content"][0]["tool_use_id"] == "call_weird_id__"
    assert "cache_control" not in str(body)
    assert body["temperature"] == 0.2
    assert "thinking" not in body


async def test_anthropic_long_cache_and_adaptive_thinking(server: ScriptServer) -> None:
    model = anthropic_model(server.url, compat={"forceAdaptiveThinking": True})
    body = await _body(
        server,
        model,
        Context(system_prompt="s", messages=[UserMessage(content="q")]),
        reasoning="low",
        cache_retention="long",
    )
    assert body["thinking"] == {"type": "adaptive"}
    assert body["output_config"] == {"effort": "low"}
    assert body["system"][0]["cache_control"] == {"type": "ephemeral", "ttl": "1h"}

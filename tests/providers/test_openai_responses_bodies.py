"""The JSON bodies and headers openai-responses sends: input items, tools, reasoning, caching."""

from __future__ import annotations

from typing import Any

import pytest

from pi_notebook.ai import (
    AssistantMessage,
    Context,
    Model,
    StreamOptions,
    TextContent,
    ThinkingContent,
    ToolCall,
    ToolResultMessage,
    UserMessage,
)
from pi_notebook.ai.providers import get_model
from pi_notebook.ai.providers.openai_responses import clamp_thinking_level, short_hash

from .helpers import KEY, anthropic_model, collect, openai_model
from .responses_sse import reasoning_item, responses_model
from .server import ScriptServer, error
from .test_request_bodies import IMG, TOOL, transcript


async def _sent(server: ScriptServer, model: Model, context: Context, **options: Any) -> Any:
    server.queue(error(400, {"error": {"message": "just capturing"}}))
    options.setdefault("api_key", KEY)
    _, reply = await collect(model, context, StreamOptions(max_retries=0, **options))
    assert reply.error_message == "400: just capturing"
    return server.requests[-1]


async def test_transcript_as_input_items(server: ScriptServer) -> None:
    model = responses_model(server.url)
    context = transcript(model.api, model.provider, model.id, reasoning_item("I should read it."))
    body = (await _sent(server, model, context, reasoning="high", max_tokens=500)).json()
    assert body["model"] == "o4-test" and body["stream"] is True and body["store"] is False
    assert body["max_output_tokens"] == 500
    assert body["reasoning"] == {"effort": "high", "summary": "auto"}
    assert body["include"] == ["reasoning.encrypted_content"]
    items = body["input"]
    assert items[0] == {"role": "developer", "content": "You are terse."}
    assert items[1] == {
        "role": "user",
        "content": [
            {"type": "input_text", "text": "Look at this"},
            {
                "type": "input_image",
                "detail": "auto",
                "image_url": "data:image/png;base64,aGVsbG8=",
            },
        ],
    }
    assert items[2]["type"] == "reasoning" and items[2]["id"] == "rs_1"
    assert items[2]["summary"] == [{"type": "summary_text", "text": "I should read it."}]
    assert items[3] == {
        "type": "message",
        "role": "assistant",
        "content": [{"type": "output_text", "text": "Reading.", "annotations": []}],
        "status": "completed",
        "id": "msg_pi_1",  # no signature: Pi's fallback id, by message position
    }
    assert items[4] == {
        "type": "function_call",
        "call_id": "call_1",  # no fc_ item id to send
        "name": "read",
        "arguments": '{"path":"a.txt"}',
    }
    assert items[6] == {"type": "function_call_output", "call_id": "call_1", "output": "alpha"}
    assert items[7] == {
        "type": "function_call_output",
        "call_id": "call_2",
        "output": [
            {"type": "input_image", "detail": "auto", "image_url": "data:image/png;base64,aGVsbG8="}
        ],
    }
    # the errored assistant turn is left out
    assert items[8] == {"role": "user", "content": [{"type": "input_text", "text": "And now?"}]}
    assert len(items) == 9
    assert body["tools"] == [
        {
            "type": "function",
            "name": "read",
            "description": "Read a file",
            "parameters": TOOL.json_schema(),
            "strict": False,
        }
    ]


async def test_plain_model_system_role_no_strict_no_vision(server: ScriptServer) -> None:
    model = responses_model(server.url, reasoning=False, input=["text"], compat=None)
    context = Context(
        system_prompt="sys",
        tools=[TOOL],
        messages=[
            UserMessage(content="q"),
            AssistantMessage(
                api=model.api,
                provider=model.provider,
                model=model.id,
                stop_reason="toolUse",
                content=[ToolCall(id="call_1|fc_1", name="read", arguments={})],
            ),
            ToolResultMessage(tool_call_id="call_1|fc_1", tool_name="read", content=[IMG]),
        ],
    )
    body = (await _sent(server, model, context, max_tokens=3, temperature=0.2)).json()
    assert body["input"][0] == {"role": "system", "content": "sys"}
    assert body["input"][2]["id"] == "fc_1" and body["input"][2]["call_id"] == "call_1"
    assert body["input"][3]["output"] == "(tool image omitted: model does not support images)"
    assert "strict" not in body["tools"][0]
    assert body["max_output_tokens"] == 16 and body["temperature"] == 0.2
    assert "reasoning" not in body and "include" not in body


async def test_no_tools_key_without_tools(server: ScriptServer) -> None:
    body = (await _sent(server, responses_model(server.url), Context(messages=[]))).json()
    assert "tools" not in body and body["input"] == []


@pytest.mark.parametrize(
    ("model_id", "level", "expected"),
    [
        ("o4-mini", None, None),  # off is not a level o4-mini has: nothing is sent
        ("o4-mini", "minimal", {"effort": "low", "summary": "auto"}),
        ("o4-mini", "xhigh", {"effort": "high", "summary": "auto"}),
        ("gpt-5", "minimal", {"effort": "minimal", "summary": "auto"}),
        ("gpt-5.4", None, {"effort": "none"}),
        ("gpt-5.4", "xhigh", {"effort": "xhigh", "summary": "auto"}),
        ("gpt-5.4-pro", "low", {"effort": "medium", "summary": "auto"}),
        ("gpt-4.1", "high", None),  # not a reasoning model
    ],
)
async def test_reasoning_effort_from_the_thinking_level(
    server: ScriptServer, model_id: str, level: str | None, expected: dict[str, str] | None
) -> None:
    model = get_model("openai", model_id).model_copy(update={"base_url": server.url + "/v1"})
    body = (await _sent(server, model, Context(messages=[]), reasoning=level)).json()
    assert body.get("reasoning") == expected
    assert ("include" in body) == (expected is not None and "summary" in expected)


def test_thinking_level_clamping() -> None:
    bare = Model(id="m", api="openai-responses", provider="openai", reasoning=True)
    assert clamp_thinking_level(bare, "max") == "high"  # xhigh and max need a mapping
    assert clamp_thinking_level(bare, "minimal") == "minimal"
    plain = bare.model_copy(update={"reasoning": False})
    assert clamp_thinking_level(plain, "high") == "off"


async def test_prompt_cache_and_session_headers(server: ScriptServer) -> None:
    model = responses_model(server.url)
    session = "s" * 70
    request = await _sent(
        server, model, Context(messages=[]), session_id=session, cache_retention="long"
    )
    body = request.json()
    assert body["prompt_cache_key"] == "s" * 64
    assert body["prompt_cache_retention"] == "24h"
    assert request.headers["session_id"] == session
    assert request.headers["x-client-request-id"] == session
    request = await _sent(
        server, model, Context(messages=[]), session_id=session, cache_retention="none"
    )
    assert "prompt_cache_key" not in request.json() and "session_id" not in request.headers
    router = responses_model(server.url, provider="openrouter")
    request = await _sent(server, router, Context(messages=[]), session_id="abc")
    assert request.headers["x-session-id"] == "abc" and "session_id" not in request.headers
    assert "prompt_cache_retention" not in request.json()


async def test_on_payload_replaces_the_body(server: ScriptServer) -> None:
    def payload(body: dict[str, Any], model: Model) -> dict[str, Any]:
        return {**body, "service_tier": "flex"}

    request = await _sent(server, responses_model(server.url), ctx(), on_payload=payload)
    assert request.json()["service_tier"] == "flex"


def ctx() -> Context:
    return Context(messages=[UserMessage(content="hi")])


async def test_key_from_an_authorization_header_or_missing(
    server: ScriptServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    model = responses_model("https://api.openai.example")
    _, reply = await collect(model, ctx(), StreamOptions(max_retries=0))
    assert reply.stop_reason == "error"
    assert reply.error_message == "No API key for provider: openai"
    request = await _sent(
        server,
        responses_model(server.url),
        ctx(),
        api_key=None,
        headers={"authorization": "Bearer from-a-gateway"},
    )
    assert request.headers["authorization"] == "Bearer from-a-gateway"


async def test_foreign_turns_are_adapted(server: ScriptServer) -> None:
    """Another API's thinking becomes text and its tool-call ids the ones this API takes."""
    model = responses_model(server.url)
    context = Context(
        messages=[
            UserMessage(content="q"),
            AssistantMessage(
                api="openai-completions",
                provider="openai",
                model="gpt-4o",
                stop_reason="toolUse",
                content=[
                    ThinkingContent(thinking="hm", thinking_signature="reasoning_content"),
                    ToolCall(id="call 1|item/1", name="read", arguments={"path": "x"}),
                ],
            ),
            ToolResultMessage(
                tool_call_id="call 1|item/1", tool_name="read", content=[TextContent(text="r")]
            ),
        ]
    )
    items = (await _sent(server, model, context)).json()["input"]
    assert items[1]["content"][0]["text"] == "hm" and items[1]["id"] == "msg_pi_1"
    assert items[2]["call_id"] == "call_1"
    assert items[2]["id"] == f"fc_{short_hash('item/1')}"
    assert items[3] == {"type": "function_call_output", "call_id": "call_1", "output": "r"}


def test_short_hash_is_pi_s() -> None:
    # Values from Pi's shortHash (utils/hash.js) under node.
    assert short_hash("") == "k4n83c7h0j2b"
    assert short_hash("abc") == "y0biex7f9bbh"
    assert short_hash("Zürich😀") == "6i3gkt1qcprxo"


async def test_a_responses_conversation_continues_on_the_other_apis(server: ScriptServer) -> None:
    """Its reasoning becomes text and its ``call_id|item_id`` ids become ids those APIs accept, with
    each tool result still answering its call."""
    turn = AssistantMessage(
        api="openai-responses",
        provider="openai",
        model="o4-test",
        stop_reason="toolUse",
        content=[
            ThinkingContent(thinking="Plan.", thinking_signature=reasoning_item("Plan.")),
            TextContent(text="Reading.", text_signature='{"v":1,"id":"msg_1"}'),
            ToolCall(id="call_abc|fc_" + "x" * 60, name="read", arguments={"path": "a"}),
        ],
    )
    result = ToolResultMessage(
        tool_call_id=turn.content[2].id, tool_name="read", content=[TextContent(text="r")]
    )
    context = Context(messages=[UserMessage(content="q"), turn, result])
    chat = (await _sent(server, openai_model(server.url), context)).json()["messages"]
    assert "Plan." in chat[1]["content"]  # the reasoning, as text
    call_id = chat[1]["tool_calls"][0]["id"]
    assert "|" not in call_id and len(call_id) <= 40 and chat[2]["tool_call_id"] == call_id
    claude = (await _sent(server, anthropic_model(server.url), context)).json()["messages"]
    assert claude[1]["content"][0] == {"type": "text", "text": "Plan."}
    use = claude[1]["content"][2]
    assert use["type"] == "tool_use" and "|" not in use["id"]
    assert claude[2]["content"][0]["tool_use_id"] == use["id"]

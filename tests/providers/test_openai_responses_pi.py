"""openai-responses against Pi's own provider: the same transcript and the same SSE stream go
to Pi 0.82.1's ``streamSimple`` (``scripts/pi_responses.mjs``, under node, on ``bench/.pi``)
and to ours; the request bodies and the final messages must be the same.

Without node or Pi the tests skip, except in CI (``CI=true``), where they must run.
"""

from __future__ import annotations

import asyncio
import json
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

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
    dump_transcript,
)

from .helpers import KEY, collect
from .responses_sse import Stream, reasoning_item, responses_model
from .server import ScriptServer, stream_bytes
from .test_catalog_pi import ROOT, _unavailable, generate_catalog

pytestmark = pytest.mark.oracle

SCRIPT = ROOT / "scripts" / "pi_responses.mjs"
TOOL = Tool(
    name="read",
    description="Read a file",
    parameters={"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]},
)
IMG = ImageContent(data="aGVsbG8=", mime_type="image/png")


@pytest.fixture(scope="module")
def pi_dir() -> Path:
    if shutil.which("node") is None:
        _unavailable("node is not on PATH")
    try:
        generate_catalog.ensure_pi_installed()
    except (SystemExit, subprocess.CalledProcessError, OSError) as exc:
        _unavailable(f"could not install {generate_catalog.PI_AI}: {exc}")
    return Path(generate_catalog.PI_DIR)


async def _pi(pi_dir: Path, model: Any, context: Context, options: dict[str, Any]) -> Any:
    request = {
        "model": model.to_json_dict(),
        "context": {
            "systemPrompt": context.system_prompt,
            "messages": dump_transcript(context.messages),
            "tools": [
                {"name": t.name, "description": t.description, "parameters": t.json_schema()}
                for t in context.tools or []
            ],
        },
        "options": {"apiKey": KEY, "maxRetries": 0, **options},
    }
    process = await asyncio.create_subprocess_exec(
        "node",
        str(SCRIPT),
        str(pi_dir),
        json.dumps(request),
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    out, err = await asyncio.wait_for(process.communicate(), 120)
    assert process.returncode == 0, err.decode()[-2000:]
    answer = json.loads(out)
    assert answer["version"] == generate_catalog.PI_VERSION
    return answer


def _comparable(message: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in message.items() if k != "timestamp"}


def history() -> list[Any]:
    """A transcript with every kind of block: images, reasoning, text, two calls, an image
    result, an errored turn, a turn of another model of this API and one of another API."""
    own = AssistantMessage(
        api="openai-responses",
        provider="openai",
        model="o4-test",
        stop_reason="toolUse",
        content=[
            ThinkingContent(thinking="I should read.", thinking_signature=reasoning_item("x")),
            TextContent(text="Reading.", text_signature='{"v":1,"id":"msg_7"}'),
            ToolCall(id="call_1|fc_1", name="read", arguments={"path": "a.txt"}),
            ToolCall(id="call_2|fc_2", name="read", arguments={"path": "b.png"}),
        ],
    )
    sibling = AssistantMessage(
        api="openai-responses",
        provider="openai",
        model="gpt-other",
        stop_reason="toolUse",
        content=[
            ThinkingContent(thinking="Sibling thoughts.", thinking_signature=reasoning_item("y")),
            TextContent(text="x" * 3, text_signature="msg_" + "z" * 80),
            ToolCall(id="call_3|fc_3", name="read", arguments={"path": "c"}),
        ],
    )
    foreign = AssistantMessage(
        api="anthropic-messages",
        provider="anthropic",
        model="claude-x",
        stop_reason="toolUse",
        content=[
            ThinkingContent(thinking="Claude thoughts.", thinking_signature="sig"),
            ToolCall(id="toolu_01/weird+id", name="read", arguments={"path": "d"}),
        ],
    )
    completions = AssistantMessage(
        api="openai-completions",
        provider="openai",
        model="gpt-4o",
        stop_reason="toolUse",
        content=[ToolCall(id="call_9|item/9", name="read", arguments={"path": "e"})],
    )
    return [
        UserMessage(content=[TextContent(text="Look at this"), IMG]),
        own,
        ToolResultMessage(tool_call_id="call_1|fc_1", tool_name="read", content=[]),
        ToolResultMessage(
            tool_call_id="call_2|fc_2", tool_name="read", content=[TextContent(text="b"), IMG]
        ),
        AssistantMessage(
            api="openai-responses",
            provider="openai",
            model="o4-test",
            stop_reason="error",
            error_message="boom",
        ),
        UserMessage(content="Next."),
        sibling,
        ToolResultMessage(
            tool_call_id="call_3|fc_3", tool_name="read", content=[TextContent(text="c")]
        ),
        foreign,
        ToolResultMessage(
            tool_call_id="toolu_01/weird+id", tool_name="read", content=[TextContent(text="d")]
        ),
        completions,
        ToolResultMessage(
            tool_call_id="call_9|item/9", tool_name="read", content=[TextContent(text="e")]
        ),
        UserMessage(content="And now?"),
    ]


REPLY = (
    Stream()
    .created()
    .reasoning(0, "**Plan** first.", "Then act.", item_id="rs_9")
    .message(1, "Reading both.", item_id="msg_9")
    .function_call(2, "read", '{"path": "f.txt"}', call_id="call_f", item_id="fc_f")
    .completed()
    .body()
)


@pytest.mark.timeout(300)
@pytest.mark.parametrize(
    ("model_fields", "options"),
    [
        ({}, {"reasoning": "high", "maxTokens": 500}),
        ({}, {"reasoning": "minimal", "maxTokens": 8, "temperature": 0.3}),
        ({}, {"maxTokens": 100, "sessionId": "s" * 80, "cacheRetention": "long"}),
        ({"thinking_level_map": {"off": "none"}}, {"maxTokens": 100}),
        ({"reasoning": False, "input": ["text"], "compat": None}, {"maxTokens": 100}),
    ],
)
async def test_body_and_reply_are_pi_s(
    server: ScriptServer, pi_dir: Path, model_fields: dict[str, Any], options: dict[str, Any]
) -> None:
    model = responses_model(server.url, **model_fields)
    context = Context(system_prompt="You are terse.", tools=[TOOL], messages=history())
    server.queue(stream_bytes(REPLY, split=29), stream_bytes(REPLY, split=31))
    theirs = await _pi(pi_dir, model, context, options)
    ours = StreamOptions(
        api_key=KEY,
        max_retries=0,
        max_tokens=options.get("maxTokens"),
        temperature=options.get("temperature"),
        reasoning=options.get("reasoning"),
        session_id=options.get("sessionId"),
        cache_retention=options.get("cacheRetention"),
    )
    events, reply = await collect(model, context, ours)
    pi_body, our_body = (r.json() for r in server.requests)
    assert our_body == pi_body
    assert [e.type for e in events] == theirs["events"]
    assert _comparable(reply.to_json_dict()) == _comparable(theirs["message"])
    pi_headers, our_headers = (r.headers for r in server.requests)
    for name in ("session_id", "x-client-request-id", "authorization"):
        assert our_headers.get(name) == pi_headers.get(name), name


def _partial_text() -> Stream:
    s = Stream().created()
    s.add(
        "response.output_item.added",
        output_index=0,
        item={"id": "msg_1", "type": "message", "role": "assistant", "content": []},
    )
    return s.add("response.output_text.delta", output_index=0, item_id="msg_1", delta="Par")


ENDINGS = {
    "failed": _partial_text().failed("server_error", "The model failed.").body(),
    "failed without details": _partial_text()
    .add("response.failed", response={"id": "r", "status": "failed"})
    .body(),
    "incomplete": Stream().created().message(0, "Cut sh").incomplete().body(),
    "error event": _partial_text().add("error", code="ERR_X", message="Went wrong").body(),
    "no terminal event": _partial_text().body(),
    "refusal": Stream().created().message(0, "I can't.", refusal=True).completed().body(),
    "cancelled": _partial_text()
    .add("response.completed", response={"id": "r", "status": "cancelled"})
    .body(),
    "unknown status": _partial_text()
    .add("response.completed", response={"id": "r", "status": "paused"})
    .body(),
}


@pytest.mark.timeout(300)
@pytest.mark.parametrize("ending", list(ENDINGS))
async def test_endings_are_pi_s(server: ScriptServer, pi_dir: Path, ending: str) -> None:
    model = responses_model(server.url)
    context = Context(messages=[UserMessage(content="hi")])
    server.queue(stream_bytes(ENDINGS[ending]), stream_bytes(ENDINGS[ending]))
    theirs = await _pi(pi_dir, model, context, {"maxTokens": 100})
    events, reply = await collect(model, context, StreamOptions(api_key=KEY, max_tokens=100))
    assert [e.type for e in events] == theirs["events"]
    assert _comparable(reply.to_json_dict()) == _comparable(theirs["message"])

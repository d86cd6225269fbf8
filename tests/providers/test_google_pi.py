"""google-generative-ai against Pi's own: the same streams from the same 127.0.0.1 server.

Pi 0.82.1's provider (``@earendil-works/pi-ai`` as installed for the benchmark, with Google's
``@google/genai`` SDK, run by ``scripts/pi_google.mjs``) and ours each stream the same
scripted Gemini replies; the server records both requests. The request bodies must be equal
(the SDK's wire form of Pi's parameters), and so must the events (type, index, delta) and the
final messages (generated tool-call ids aside). Without node or Pi the tests skip, except in CI.
"""

from __future__ import annotations

import asyncio
import json
import re
from pathlib import Path
from typing import Any

import pytest

from pi_notebook.ai import (
    AssistantMessage,
    Context,
    ImageContent,
    StreamOptions,
    TextContent,
    Tool,
    ToolResultMessage,
    UserMessage,
)
from pi_notebook.ai.providers import resolve_model

from .helpers import GEMINI_KEY, collect
from .server import ScriptServer, gemini_sse, stream_bytes
from .test_catalog_pi import ROOT, pi_dir  # noqa: F401  (the fixture that installs Pi)

pytestmark = pytest.mark.oracle

SIG = "CiQB0e2Kb7Zd" + "A" * 20
IMG = ImageContent(data="aGVsbG8=", mime_type="image/png")
TOOL = Tool(
    name="read",
    description="Read a file",
    parameters={"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]},
)


def _history(model_id: str, provider: str = "google") -> list[Any]:
    api = "google-generative-ai" if provider == "google" else "openai-completions"
    return [
        UserMessage(content=[TextContent(text="Look"), IMG]),
        AssistantMessage(
            api=api,
            provider=provider,
            model=model_id,
            stop_reason="toolUse",
            content=[
                {"type": "thinking", "thinking": "Two files.", "thinkingSignature": SIG},
                {"type": "text", "text": "Reading.", "textSignature": SIG},
                {
                    "type": "toolCall",
                    "id": "call_1|x",
                    "name": "read",
                    "arguments": {"path": "a"},
                    "thoughtSignature": SIG,
                },
                {"type": "toolCall", "id": "call_2", "name": "read", "arguments": {"path": "b"}},
            ],
        ),
        ToolResultMessage(
            tool_call_id="call_1|x", tool_name="read", content=[TextContent(text="A")]
        ),
        ToolResultMessage(tool_call_id="call_2", tool_name="read", content=[IMG], is_error=True),
        UserMessage(content="Go on"),
    ]


def _chunk(*parts: dict[str, Any], finish: str | None = None, **usage: int) -> dict[str, Any]:
    cand: dict[str, Any] = {"index": 0, "content": {"role": "model", "parts": list(parts)}}
    if finish:
        cand["finishReason"] = finish
    return {"candidates": [cand], "usageMetadata": usage, "responseId": "r-1"}


STREAMS = {
    "text": gemini_sse(
        _chunk({"text": "Hello"}, promptTokenCount=7, totalTokenCount=7),
        _chunk(
            {"text": ", wörld."},
            finish="STOP",
            promptTokenCount=120,
            candidatesTokenCount=30,
            thoughtsTokenCount=50,
            cachedContentTokenCount=100,
            totalTokenCount=200,
        ),
    ),
    "thinking": gemini_sse(
        _chunk({"text": "Hmm", "thought": True}),
        _chunk({"text": ", yes.", "thought": True, "thoughtSignature": SIG}),
        _chunk({"text": "Answer"}, {"text": " here.", "thoughtSignature": SIG}),
        _chunk({"text": "", "thought": True}, finish="STOP", promptTokenCount=3),
    ),
    "calls": gemini_sse(
        _chunk({"text": "Reading both."}),
        _chunk(
            {"functionCall": {"name": "read", "args": {"path": "a"}}, "thoughtSignature": SIG},
            {"functionCall": {"name": "read", "args": {"path": "ü", "n": [1, 2]}}},
        ),
        _chunk({"text": "More."}, finish="STOP", promptTokenCount=4, candidatesTokenCount=9),
    ),
    "length": gemini_sse(_chunk({"text": "Once upon"}, finish="MAX_TOKENS", promptTokenCount=2)),
}

CASES: list[tuple[str, str, str | None, str, dict[str, Any]]] = [
    # (stream, model id, thinking level, history from, extra options)
    ("text", "gemini-2.5-flash", None, "same", {"maxTokens": 300, "temperature": 0.5}),
    ("thinking", "gemini-2.5-pro", "medium", "same", {}),
    ("calls", "gemini-3-pro-preview", "minimal", "foreign", {}),
    ("length", "gemma-4-31b-it", "low", "same", {"maxTokens": 50}),
    ("text", "gemini-flash-latest", None, "foreign", {}),
    ("thinking", "gemini-2.0-flash", "high", "same", {}),
]


def _contexts(server: ScriptServer) -> list[tuple[Any, Context, StreamOptions, dict[str, Any]]]:
    out = []
    for _, model_id, level, history, extra in CASES:
        model = resolve_model(f"google/{model_id}", base_url=server.url + "/v1beta")
        messages = _history(model_id) if history == "same" else _history("gpt-4o", "openai")
        context = Context(system_prompt="Be brief.", messages=messages, tools=[TOOL])
        options = StreamOptions(
            api_key=GEMINI_KEY,
            reasoning=level,
            max_tokens=extra.get("maxTokens"),
            temperature=extra.get("temperature"),
        )
        pi_case = {
            "model": model.to_json_dict(),
            "context": {
                "systemPrompt": context.system_prompt,
                "messages": [m.to_json_dict() for m in messages],
                "tools": [
                    {"name": t.name, "description": t.description, "parameters": t.parameters}
                    for t in context.tools or []
                ],
            },
            "options": {"apiKey": GEMINI_KEY, "reasoning": level, **extra},
        }
        out.append((model, context, options, pi_case))
    return out


_GENERATED_ID = re.compile(r"^(\w+)_\d+_\d+$")


def _normalise(message: dict[str, Any]) -> dict[str, Any]:
    """A message without what legitimately differs: timestamps and generated tool-call ids."""
    message = {k: v for k, v in message.items() if k != "timestamp"}
    content = []
    for block in message["content"]:
        if block.get("type") == "toolCall" and _GENERATED_ID.match(block["id"]):
            block = {**block, "id": _GENERATED_ID.sub(r"\1_<generated>", block["id"])}
        content.append(block)
    message["content"] = content
    return message


@pytest.mark.timeout(300)
async def test_same_requests_events_and_messages_as_pi(
    server: ScriptServer,
    pi_dir: Path,  # noqa: F811
) -> None:
    cases = _contexts(server)
    for stream_name, *_ in CASES:
        server.queue(stream_bytes(STREAMS[stream_name], split=11))
    process = await asyncio.create_subprocess_exec(
        "node",
        str(ROOT / "scripts" / "pi_google.mjs"),
        str(pi_dir),
        json.dumps({"cases": [case for *_, case in cases]}),
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    stdout, stderr = await asyncio.wait_for(process.communicate(), 120)
    assert process.returncode == 0, stderr.decode()[-2000:]
    pi = json.loads(stdout)
    pi_requests = list(server.requests)
    assert len(pi_requests) == len(CASES)

    for stream_name, *_ in CASES:
        server.queue(stream_bytes(STREAMS[stream_name], split=11))
    for index, ((model, context, options, _), theirs) in enumerate(
        zip(cases, pi["results"], strict=True)
    ):
        label = f"case {index}: {CASES[index][:3]}"
        events, message = await collect(model, context, options)
        ours_request = server.requests[len(CASES) + index]
        pi_request = pi_requests[index]
        assert ours_request.path == pi_request.path, label
        assert pi_request.headers["x-goog-api-key"] == ours_request.headers["x-goog-api-key"]
        assert ours_request.json() == pi_request.json(), label
        mine = [
            {
                k: v
                for k, v in {
                    "type": e.type,
                    "contentIndex": getattr(e, "content_index", None),
                    "delta": getattr(e, "delta", None),
                }.items()
                if v is not None
            }
            for e in events
        ]
        assert mine == [{k: v for k, v in e.items() if v is not None} for e in theirs["events"]], (
            label
        )
        assert _normalise(message.to_json_dict()) == _normalise(theirs["message"]), label

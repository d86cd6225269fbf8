"""The schema validator is imported while a request that offers tools waits for the model.

Each case runs in a fresh interpreter (what is imported is per process): an ``Agent`` against
a scripted OpenAI-compatible server on 127.0.0.1 that holds its first reply until the script
releases it, after looking at what the process has started and imported by then.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

pytestmark = pytest.mark.kernel

ROOT = Path(__file__).resolve().parents[2]

SCRIPT = r"""
import asyncio, json, sys

MODE = sys.argv[1]
if MODE == "broken":
    sys.modules["jsonschema"] = None  # as if jsonschema failed to import: import raises

from pi_notebook.agent import Agent, AgentTool, AgentToolResult
from pi_notebook.ai import TextContent, schema_warm_up
from pi_notebook.ai.faux import faux_assistant_message, faux_tool_call, register_faux_provider
from tests.providers.helpers import KEY, openai_model
from tests.providers.server import ScriptServer, sse, stream_bytes

seen = {}


async def count(tool_call_id, params, signal, on_update):
    seen["tool_got"] = params
    return AgentToolResult(content=[TextContent(text="counted")])


TOOL = AgentTool(
    name="count", label="Count", description="Count to n.",
    parameters={"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]},
    execute=count,
)


def chunk(delta, finish=None):
    return {"id": "c", "model": "test-model",
            "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}


CALL = {"index": 0, "id": "call_1", "type": "function",
        "function": {"name": "count", "arguments": '{"n": "5"}'}}


async def main():
    if MODE == "faux":
        faux = register_faux_provider()
        faux.set_responses([
            faux_assistant_message([faux_tool_call("count", {"n": "5"})], stop_reason="toolUse"),
            faux_assistant_message("Done."),
        ])
        agent = Agent(model=faux.get_model(), tools=[TOOL])
        await asyncio.wait_for(agent.prompt("Count."), 60)
        seen["thread"] = schema_warm_up.warm_up_thread is not None
        seen["tool_got"] = seen.get("tool_got")
        print(json.dumps(seen))
        return

    server = ScriptServer()
    await server.start()
    release = asyncio.Event()
    tools = MODE != "no-tools"

    async def held(request, conn):
        await release.wait()
        if tools:
            body = sse(chunk({"role": "assistant", "content": ""}),
                       chunk({"tool_calls": [CALL]}), chunk({}, "tool_calls"))
        else:
            body = sse(chunk({"role": "assistant", "content": "Hello."}), chunk({}, "stop"))
        await stream_bytes(body)(request, conn)

    server.queue(held, stream_bytes(sse(chunk({"content": "Done."}), chunk({}, "stop"))))
    agent = Agent(model=openai_model(server.url), tools=[TOOL] if tools else [],
                  get_api_key=lambda provider: KEY)
    run = asyncio.ensure_future(agent.prompt("Count."))
    await asyncio.wait_for(server.request_seen.wait(), 60)
    # The request is out and the model's reply is held: what has the process started?
    thread = schema_warm_up.warm_up_thread
    seen["thread"] = thread is not None
    seen["jsonschema_at_request"] = "jsonschema" in sys.modules
    if thread is not None:
        await asyncio.wait_for(asyncio.to_thread(thread.join, 60), 90)
        seen["thread_done"] = not thread.is_alive()
    seen["validator_before_reply"] = "pi_notebook.ai.json_schema" in sys.modules
    release.set()
    await asyncio.wait_for(run, 60)
    await server.stop()
    results = [m for m in agent.state.messages if m.role == "toolResult"]
    seen["tool_results"] = [[b.text for b in m.content] + [m.is_error] for m in results]
    seen["last"] = agent.state.messages[-1].content[0].text
    seen["jsonschema_at_end"] = sys.modules.get("jsonschema") is not None
    print(json.dumps(seen))


asyncio.run(main())
"""


def run_case(mode: str) -> dict[str, Any]:
    env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT), env.get("PYTHONPATH", "")])
    done = subprocess.run(
        [sys.executable, "-c", SCRIPT, mode],
        capture_output=True,
        text=True,
        timeout=180,
        cwd=ROOT,
        env=env,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    assert "Exception in thread" not in done.stderr, done.stderr[-3000:]
    result: dict[str, Any] = json.loads(done.stdout.splitlines()[-1])
    return result


def test_a_request_that_offers_tools_imports_the_validator_before_the_reply_arrives() -> None:
    seen = run_case("tools")
    assert seen["thread"] is True and seen["thread_done"] is True
    assert seen["validator_before_reply"] is True  # imported while the reply was held
    assert seen["tool_got"] == {"n": 5}  # then the first tool call was checked with it
    assert seen["tool_results"] == [["counted", False]]
    assert seen["last"] == "Done."


def test_a_run_without_tools_imports_no_validator() -> None:
    seen = run_case("no-tools")
    assert seen["thread"] is False
    assert seen["jsonschema_at_request"] is False
    assert seen["validator_before_reply"] is False
    assert seen["tool_results"] == [] and seen["last"] == "Hello."
    assert seen["jsonschema_at_end"] is False


def test_a_failing_background_import_is_quiet_and_the_tool_call_fails_as_before() -> None:
    seen = run_case("broken")
    assert seen["thread"] is True and seen["thread_done"] is True
    assert seen["validator_before_reply"] is False  # the failed import left nothing behind
    [[text, is_error]] = seen["tool_results"]
    assert is_error is True and "jsonschema" in text  # the first use imported and raised
    assert "tool_got" not in seen
    assert seen["last"] == "Done."


def test_the_faux_model_waits_on_nothing_so_nothing_is_warmed() -> None:
    seen = run_case("faux")
    assert seen["thread"] is False
    assert seen["tool_got"] == {"n": 5}

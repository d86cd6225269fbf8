"""Honest cards when a call never ran (issue 27.4): a reply the server rejected carried a tool
call that streamed, but nothing ran. Real runs against a llama.cpp-shaped server on 127.0.0.1
(``tests/providers/llamacpp_errors.py``): the reducer's state, the view's replay of its ops,
the static transcript and plain mode all say so, the server's message once, no empty bar."""

from __future__ import annotations

import json
import re
from collections.abc import AsyncIterator
from typing import Any

import pytest

from pi_notebook.agent import Agent
from pi_notebook.ai.providers import aclose_client
from pi_notebook.notebook.failed_calls import REPLY_FAILED, UNPARSED
from pi_notebook.notebook.panel.entries import initial_state
from pi_notebook.notebook.panel.ops import OpList, apply_ops
from pi_notebook.notebook.panel.reducer import PanelState
from pi_notebook.notebook.panel.static import render_static_html
from pi_notebook.notebook.render import render_transcript, shows_nothing
from pi_notebook.tools import builtin_tools
from tests.providers.helpers import openai_model
from tests.providers.llamacpp_errors import (
    PARSE_ERROR,
    dropped_tool_call,
    unparsed_tool_call,
    unparsed_up_front,
)
from tests.providers.server import Handler, ScriptServer

NOTHING_RAN = "the server could not parse the model's tool call: nothing ran"


@pytest.fixture
async def server() -> AsyncIterator[ScriptServer]:
    srv = ScriptServer()
    await srv.start()
    try:
        yield srv
    finally:
        await aclose_client()
        await srv.stop()


async def _run(server: ScriptServer, *handlers: Handler) -> tuple[Agent, PanelState, OpList]:
    server.queue(*handlers)
    namespace: dict[str, Any] = {}
    agent = Agent(model=openai_model(server.url), tools=builtin_tools("notebook", namespace) or [])
    agent.get_api_key = lambda provider: "sk-local"
    ops = OpList()
    state = PanelState(ops)
    agent.subscribe(state.apply)
    await agent.prompt("Print 40 + 2.")
    assert "_" not in namespace and not any(k for k in namespace if not k.startswith("__"))
    return agent, state, ops


def _transcript_html(html: str) -> str:
    return html.split('<div class="pi-transcript">', 1)[1]


async def test_a_call_the_server_could_not_parse_reads_not_run(server: ScriptServer) -> None:
    agent, state, ops = await _run(server, unparsed_tool_call())
    data = state.materialize()
    card = data["tools"]["call_1"]
    assert (card["status"], card["not_run"]) == ("reply-failed", UNPARSED)
    assert card["result_text"] == "" and card["duration_ms"] is None and not card["is_error"]
    assert '"code": "print(40 + 2)"' in card["args_text"]  # what the model tried to send
    reply = data["messages"][1]
    # The stray fence streamed as text, but the entry keeps no empty bar above the card.
    assert [b["type"] for b in reply["blocks"]] == ["toolCall"]
    assert reply["error"] is not None and PARSE_ERROR.split("\n")[0] in reply["error"]
    # The status line says it in short: the server's message is the message's error, once.
    assert data["status"]["state"] == "error"
    assert data["status"]["error"] == UNPARSED
    # A view following the ops ends with the same state.
    state.render()
    view = apply_ops(initial_state(), json.loads(json.dumps(ops.ops)))
    assert view["tools"]["call_1"]["status"] == "reply-failed"
    assert view["messages"][1]["blocks"] == reply["blocks"]
    # The static transcript: the card says nothing ran, has no result, the message once.
    html = _transcript_html(render_static_html(data))
    assert f"{NOTHING_RAN}." in html.replace("&#x27;", "'")
    assert 'data-status="reply-failed"' in html and "pi-tool-result" not in html
    assert '<pre class="pi-code">' not in html  # no empty code block
    assert html.count("Failed to parse input at pos 12") == 1
    # Plain mode: the call and why it never ran, the server's message once, no stray fence.
    plain = render_transcript(agent.state.messages)
    assert plain.count("Failed to parse input at pos 12") == 1
    assert f'assistant -> run_python({{"code": "print(40 + 2)"}}) — {NOTHING_RAN}' in plain
    assert "assistant: ```" not in plain
    assert len(server.requests) == 1  # nothing ran, so nothing was sent back either


async def test_a_500_before_anything_streamed_has_no_card(server: ScriptServer) -> None:
    _, state, _ = await _run(server, *unparsed_up_front())
    data = state.materialize()
    assert data["tools"] == {}
    reply = data["messages"][1]
    assert reply["blocks"] == [] and "Failed to parse input" in (reply["error"] or "")
    html = _transcript_html(render_static_html(data))
    assert html.count("Failed to parse input at pos 12") == 1
    assert "pi-tool-card" not in html


async def test_a_reply_that_dropped_mid_call_never_ran_either(server: ScriptServer) -> None:
    agent, state, _ = await _run(server, dropped_tool_call())
    data = state.materialize()
    card = data["tools"]["call_1"]
    assert (card["status"], card["not_run"]) == ("reply-failed", REPLY_FAILED)
    assert data["status"]["error"] != UNPARSED  # not a parse failure: the error as it was
    plain = render_transcript(agent.state.messages)
    assert f"{REPLY_FAILED}: nothing ran" in plain


@pytest.mark.parametrize(
    ("text", "empty"),
    [("```", True), ("```python\n\n```", True), ("  \n", True), ("~~~", True),
     ("```\nx = 1\n```", False), ("see `x`", False), ("``", False)],
)  # fmt: skip
def test_what_shows_nothing(text: str, empty: bool) -> None:
    assert shows_nothing(text) is empty


def test_the_pattern_knows_the_servers_words() -> None:
    from pi_notebook.notebook.failed_calls import never_ran_reason

    assert never_ran_reason("500: " + PARSE_ERROR + " (server_error)") == UNPARSED
    peg = "The model produced output that does not match the expected peg-native format"
    assert never_ran_reason(peg) == UNPARSED
    assert never_ran_reason("error parsing tool call: raw='{'") == UNPARSED
    assert never_ran_reason("Could not parse stream chunk as JSON: x") == REPLY_FAILED
    assert never_ran_reason(None) == REPLY_FAILED
    assert re.search("nothing ran", NOTHING_RAN)

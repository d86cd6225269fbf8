"""What the panel says about a run (issue 16.4-6, 9, 11): the states, the token counts, the
tool cards. Real agent runs on the faux provider through an AgentPanel; synchronisation is on
the panel's own frames and on events set by the tools, never on sleeps."""

from __future__ import annotations

import asyncio
import json
import math
from typing import Any

import pytest
from bs4 import BeautifulSoup

from pi_notebook.agent import Agent, AgentTool, AgentToolResult
from pi_notebook.ai import TextContent, faux_assistant_message
from pi_notebook.ai.faux import faux_text, faux_tool_call
from pi_notebook.notebook.panel.ops import OpList
from pi_notebook.notebook.panel.reducer import PanelState
from pi_notebook.notebook.panel.static import render_static_html
from pi_notebook.tools import ApprovalTimeout, approval_hook, notebook_tools

from .helpers import CapturePanel, collect_events, faux, run


def waiting_tool(started: asyncio.Event, release: asyncio.Event) -> AgentTool:
    async def execute(tool_call_id: str, params: Any, signal: Any, on_update: Any) -> Any:
        started.set()
        await release.wait()
        return AgentToolResult(content=[TextContent(text="released")])

    return AgentTool(
        name="wait", description="waits", parameters={"type": "object"}, execute=execute
    )


def calling(*calls: Any) -> Any:
    return faux_assistant_message(list(calls), stop_reason="toolUse")


async def test_a_run_aborted_during_a_tool_ends_aborted_not_done() -> None:
    started, release = asyncio.Event(), asyncio.Event()
    provider = faux([calling(faux_tool_call("wait", {}, id="w")), faux_assistant_message("no")])
    agent = Agent(model=provider.get_model(), tools=[waiting_tool(started, release)])
    panel = CapturePanel()
    panel.attach(agent)
    run_task = asyncio.ensure_future(agent.prompt("Go"))
    await asyncio.wait_for(started.wait(), 5)
    agent.abort()
    release.set()  # the tool finishes after the abort; the answer before it was complete
    await asyncio.wait_for(run_task, 5)
    panel.finish()
    assert panel.snapshot["messages"][1]["stop_reason"] == "toolUse"
    assert panel.snapshot["status"]["state"] == "aborted"


async def test_a_tool_waiting_for_approval_says_so_then_runs() -> None:
    started, release = asyncio.Event(), asyncio.Event()
    provider = faux([calling(faux_tool_call("wait", {}, id="w")), faux_assistant_message("ok")])
    panel = CapturePanel()
    agent = Agent(
        model=provider.get_model(),
        tools=[waiting_tool(started, release)],
        before_tool_call=approval_hook("all", lambda: panel.request_approval),
    )
    panel.attach(agent)
    panel.handle_message({"type": "hello"})
    run_task = asyncio.ensure_future(agent.prompt("Go"))
    await panel.wait_for(lambda p: bool(p.snapshot["approvals"]))
    snapshot = panel.snapshot
    assert snapshot["tools"]["w"]["status"] == "awaiting-approval"
    assert snapshot["status"]["state"] == "awaiting-approval"
    panel.handle_message({"type": "approval", "tool_call_id": "w", "approved": True})
    await asyncio.wait_for(started.wait(), 5)
    assert panel.snapshot["tools"]["w"]["status"] == "running"
    assert panel.snapshot["status"]["state"] == "running-tools"
    release.set()
    await asyncio.wait_for(run_task, 5)
    assert panel.snapshot["tools"]["w"]["status"] == "done"


async def test_an_unanswered_approval_times_out_to_a_refusal(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("PI_NOTEBOOK_APPROVAL_TIMEOUT", "0.05")
    started, release = asyncio.Event(), asyncio.Event()
    provider = faux([calling(faux_tool_call("wait", {}, id="w")), faux_assistant_message("ok")])
    panel = CapturePanel()  # no view ever says hello: nobody can answer
    agent = Agent(
        model=provider.get_model(),
        tools=[waiting_tool(started, release)],
        before_tool_call=approval_hook("all", lambda: panel.request_approval),
    )
    panel.attach(agent)
    await asyncio.wait_for(agent.prompt("Go"), 10)
    result = next(m for m in agent.state.messages if m.role == "toolResult")
    assert result.is_error and not started.is_set()
    assert result.content[0].text == (
        "approval required (--approve all) but nobody answered within 0.05 seconds (no front "
        "end attached, or no one there; PI_NOTEBOOK_APPROVAL_TIMEOUT sets the wait in seconds): "
        "the call was not run"
    )
    note = panel.snapshot["status"]["note"]
    assert note == "no answer to the approval of wait within 0.05 seconds: the call was refused"
    assert panel.snapshot["approvals"] == []
    with pytest.raises(ApprovalTimeout):
        await panel.request_approval(_Request("x"))


class _Request:
    def __init__(self, call_id: str) -> None:
        self.tool_call_id, self.tool_name, self.args, self.summary = call_id, "t", {}, "t()"


def test_a_call_the_loop_refused_before_running_says_the_call_was_malformed() -> None:
    ran: list[str] = []

    async def execute(tool_call_id: str, params: Any, signal: Any, on_update: Any) -> Any:
        ran.append(tool_call_id)
        raise RuntimeError("the tool itself failed")

    typed = AgentTool(
        name="typed",
        description="needs n",
        parameters={"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]},
        execute=execute,
    )
    provider = faux(
        [
            calling(
                faux_tool_call("missing", {}, id="unknown"),
                faux_tool_call("typed", {"n": "not a number"}, id="invalid"),
                faux_tool_call("typed", {"n": 1}, id="ran"),
            ),
            faux_assistant_message("done"),
        ]
    )
    ops = OpList()
    state = PanelState(ops)
    for event in run(collect_events(provider, "Go", [typed])):
        state.apply(event)
    tools = state.materialize()["tools"]
    assert ran == ["ran"]
    assert (tools["unknown"]["status"], tools["unknown"]["not_run"]) == (
        "rejected",
        "no tool of that name",
    )
    assert (tools["invalid"]["status"], tools["invalid"]["not_run"]) == (
        "rejected",
        "its arguments do not match the tool's schema",
    )
    assert (tools["ran"]["status"], tools["ran"]["not_run"]) == ("error", None)


def test_tool_arguments_keep_the_models_key_order() -> None:
    provider = faux([calling(faux_tool_call("wait", {"zeta": 1, "alpha": 2}, id="w")),
                     faux_assistant_message("ok")])  # fmt: skip
    started, release = asyncio.Event(), asyncio.Event()
    release.set()
    state = PanelState(OpList())
    for event in run(collect_events(provider, "Go", [waiting_tool(started, release)])):
        state.apply(event)
    args = state.materialize()["tools"]["w"]["args_text"]
    assert list(json.loads(args)) == ["zeta", "alpha"]
    assert args.index("zeta") < args.index("alpha")


def test_tool_arguments_that_streamed_a_key_end_redacted_in_the_card() -> None:
    key = "sk-live-abcdefghijklmnop1234"
    provider = faux([calling(faux_tool_call("wait", {"token": key, "n": 1}, id="w")),
                     faux_assistant_message("ok")])  # fmt: skip
    started, release = asyncio.Event(), asyncio.Event()
    release.set()
    state = PanelState(OpList())
    for event in run(collect_events(provider, "Go", [waiting_tool(started, release)])):
        state.apply(event)
    args = state.materialize()["tools"]["w"]["args_text"]
    assert key not in args and "[redacted" in args
    assert list(json.loads(args)) == ["token", "n"]


def test_a_notebook_tools_namespace_line_is_shown_once_in_its_card() -> None:
    async def execute(tool_call_id: str, params: Any, signal: Any, on_update: Any) -> Any:
        return AgentToolResult(
            content=[TextContent(text="stdout:\nok\nnamespace: created totals")],
            details={"namespace_diff": {"created": ["totals"], "changed": [], "deleted": []}},
        )

    writer = AgentTool(name="w", description="", parameters={"type": "object"}, execute=execute)
    provider = faux([calling(faux_tool_call("w", {}, id="c")), faux_assistant_message("ok")])
    state = PanelState(OpList())
    events = run(collect_events(provider, "Go", [writer]))
    for event in events:
        state.apply(event)
    card = state.materialize()["tools"]["c"]
    assert card["result_text"] == "stdout:\nok"
    assert card["diff"] == {"created": ["totals"], "changed": [], "deleted": []}
    # The model still reads the line: only the card's copy is dropped.
    result = next(e.result for e in events if e.type == "tool_execution_end")
    assert result.content[0].text.endswith("namespace: created totals")


def test_a_cards_diff_names_the_modules_the_code_imported_apart() -> None:
    """Issue 27: run_python's ``import math as m`` is ``imported: m`` in the card, live and in
    the static transcript, not a created variable."""
    code = "import math as m\nfrom math import sqrt\nx = m.pi"
    provider = faux(
        [
            calling(faux_tool_call("run_python", {"code": code}, id="c")),
            faux_assistant_message("ok"),
        ]
    )
    ns: dict[str, Any] = {}
    tools = [t for t in notebook_tools(ns) if t.name == "run_python"]
    state = PanelState(OpList())
    for event in run(collect_events(provider, "Go", tools)):
        state.apply(event)
    snapshot = state.materialize()
    diff = {"created": ["sqrt", "x"], "changed": [], "deleted": [], "imported": ["m"]}
    assert snapshot["tools"]["c"]["diff"] == diff
    page = BeautifulSoup(render_static_html(snapshot), "html.parser")
    line = page.select_one('.pi-tool-card[data-tool-call-id="c"] .pi-tool-diff')
    assert line is not None and line.get_text() == "namespace — created: sqrt, x; imported: m"


def test_waiting_for_the_model_until_the_first_token() -> None:
    provider = faux([faux_assistant_message("Hello there")])
    state = PanelState(OpList())
    state.set_context_estimate(50)  # the widget's estimate of the request being sent
    seen: list[tuple[str, Any]] = []
    asked = False
    for event in run(collect_events(provider)):
        state.apply(event)
        state.render()  # a frame
        status = state.data["status"]
        seen.append((status["state"], status["waiting_since"]))
        asked = asked or getattr(getattr(event, "message", None), "role", "") == "assistant"
        if status["state"] == "waiting" and not asked:  # before the provider reports usage
            assert (status["est_in"], status["est_out"]) == (50, 0), "the prompt's size shows"
    states = [s for s, _ in seen]
    first_streaming = states.index("streaming")
    assert states[0] == "waiting" and set(states[:first_streaming]) == {"waiting"}
    assert all(since is not None for _, since in seen[:first_streaming])
    assert all(since is None for _, since in seen[first_streaming:])
    assert states[-1] == "done"


def test_token_counts_while_streaming_use_what_the_provider_reported() -> None:
    text = "word " * 40
    provider = faux([faux_assistant_message(text)])  # it reports usage from the start
    ops = OpList()
    state = PanelState(ops)
    state.set_context_estimate(123)
    estimates: list[tuple[int, int]] = []
    events = run(collect_events(provider))
    for event in events:
        before = len(ops.ops)
        state.apply(event)
        if event.type == "message_update":
            kind = event.assistant_message_event.type
            if estimates and kind == "text_delta":  # (the first ends "waiting": an op)
                assert len(ops.ops) == before, "a token writes no op: the estimate is per frame"
            state.render()  # a frame
            status = state.data["status"]
            estimates.append((status["est_in"], status["est_out"]))
    usage = events[-1].messages[-1].usage  # agent_end: the reply
    assert set(estimates) == {(usage.input, usage.output)}
    status = state.data["status"]
    assert (status["est_in"], status["est_out"]) == (0, 0), "the final usage replaced them"
    assert status["tokens_out"] == usage.output and status["estimated"] is False


async def test_an_aborted_reply_keeps_its_estimate() -> None:
    """A real OpenAI-compatible stream that stalls after some text, before any usage."""
    import pi_notebook.ai.providers  # noqa: F401  (registers the HTTP APIs)
    from pi_notebook.ai.providers import aclose_client

    from ..providers.helpers import openai_model
    from ..providers.server import ScriptServer, sse, stall

    text = "An answer that streams for a while before the user aborts it."
    first = sse({"choices": [{"index": 0, "delta": {"content": text}}]}, end=False)
    server = ScriptServer()
    await server.start()
    try:
        started = asyncio.Event()
        server.queue(stall(server, first, started))
        model = openai_model(server.url, provider="llamacpp", compat={"supports_store": False})
        agent = Agent(model=model, api_key="none")
        panel = CapturePanel()
        panel.attach(agent)
        panel.handle_message({"type": "hello"})
        task = asyncio.ensure_future(agent.prompt("Hi"))
        await panel.wait_for(lambda p: p.snapshot["status"]["est_out"] > 0)
        # While it streams: the reply counted from what arrived, the prompt estimated.
        live = panel.snapshot["status"]
        assert live["est_out"] == math.ceil(len(text) / 4) and live["est_in"] > 0
        agent.abort()
        await asyncio.wait_for(task, 5)
    finally:
        await aclose_client()
        await server.stop()
    reply = agent.state.messages[-1]
    assert reply.stop_reason == "aborted" and reply.usage.output == 0, "no usage was reported"
    status = panel.snapshot["status"]
    assert status["state"] == "aborted"
    assert status["tokens_out"] == math.ceil(len(text) / 4)
    assert status["tokens_in"] > 0 and status["estimated"] is True


def test_a_reply_cut_by_the_output_limit_says_so() -> None:
    provider = faux([faux_assistant_message([faux_text("half an ans")], stop_reason="length")])
    state = PanelState(OpList())
    state.set_max_tokens(64)
    for event in run(collect_events(provider)):
        state.apply(event)
    entry = state.materialize()["messages"][1]
    assert entry["stop_reason"] == "length"
    assert entry["note"] == (
        "cut off: the reply reached the output limit (64 tokens); "
        "raise it with %%agent --max-tokens N"
    )


async def test_the_prompt_estimate_is_the_compacted_request_that_was_sent() -> None:
    """While the model thinks, "~N in" is the size of what was sent: after a compaction that
    is the summary and the kept turn, not the transcript (whose first reply reported a usage
    that counted the messages the summary replaced)."""
    from pi_notebook.ai import register_faux_provider
    from pi_notebook.notebook.context_view import RequestTap

    small = register_faux_provider(
        token_size=(1, 1), models=[{"id": "small", "context_window": 400}]
    )
    panel = CapturePanel()
    thinking: list[tuple[str, int]] = []

    def answer(text: str) -> Any:
        def step(context: Any, options: Any, state: Any, model: Any) -> Any:
            status = panel.snapshot["status"]  # the request is out; no token has come back
            thinking.append((status["state"], status["est_in"]))
            return faux_assistant_message(text)

        return step

    try:
        small.set_responses([answer("r1"), faux_assistant_message("SUMMARY"), answer("r2")])
        tap = RequestTap(before=panel.before_request)
        agent = Agent(model=small.get_model(), on_request=tap)
        panel.attach(agent)
        await agent.prompt("A" * 800)
        await agent.prompt("B" * 800)
    finally:
        small.unregister()
    first, compacted = thinking
    assert first == ("waiting", 200)  # 800 characters, 4 a token
    summary, kept = agent.compaction.view(agent.state.messages)[:2]
    sent = tap.requests[-1]
    assert sent.purpose == "turn" and sent.messages[-1].content[0].text == "B" * 800
    expected = sum(math.ceil(len(m.content[0].text) / 4) for m in (summary, kept))
    assert compacted == ("waiting", expected) and expected < 400

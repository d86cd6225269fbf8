"""The reducer: real agent event sequences (faux provider) -> panel state and ops."""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest

from pi_notebook.agent import AgentTool, AgentToolResult
from pi_notebook.ai import TextContent, faux_assistant_message
from pi_notebook.ai.faux import faux_text, faux_thinking, faux_tool_call
from pi_notebook.notebook.panel.ops import OpList, apply_ops
from pi_notebook.notebook.panel.state import PanelState, initial_state, redact

from .helpers import collect_events, failing_tool, faux, image_tool, run


def reduce(events: list[Any]) -> tuple[PanelState, OpList]:
    ops = OpList()
    state = PanelState(ops, model="faux/faux-1")
    for event in events:
        state.apply(event)
    state.materialize()
    return state, ops


def tool_run(size: int = 1) -> list[Any]:
    provider = faux(
        [
            faux_assistant_message(
                [
                    faux_thinking("I should plot."),
                    faux_text("Plotting **now**."),
                    faux_tool_call("plot", {"n": 3}, id="c1"),
                    faux_tool_call("boom", {}, id="c2"),
                ],
                stop_reason="toolUse",
            ),
            faux_assistant_message("Done: see `fig`."),
        ],
        size=size,
    )
    return run(collect_events(provider, "Plot it", [image_tool(), failing_tool()]))


@pytest.mark.parametrize("size", [1, 3, 50])
def test_ops_replayed_on_the_initial_state_rebuild_the_state(size: int) -> None:
    state, ops = reduce(tool_run(size))
    rebuilt = apply_ops(initial_state("faux/faux-1"), json.loads(json.dumps(ops.ops)))
    assert rebuilt == json.loads(json.dumps(state.data))


def test_transcript_tool_cards_and_status() -> None:
    state, _ = reduce(tool_run())
    data = state.data
    roles = [m["role"] for m in data["messages"]]
    assert roles == ["user", "assistant", "toolResult", "toolResult", "assistant"]
    first = data["messages"][1]
    assert first["blocks"] == [
        {"type": "thinking", "text": "I should plot."},
        {"type": "text", "text": "Plotting **now**."},
        {"type": "toolCall", "id": "c1", "name": "plot"},
        {"type": "toolCall", "id": "c2", "name": "boom"},
    ]
    plot, boom = data["tools"]["c1"], data["tools"]["c2"]
    assert plot["status"] == "done" and not plot["is_error"]
    assert json.loads(plot["args_text"]) == {"n": 3}
    assert plot["result_text"] == "plotted 3 points"
    assert plot["images"] == [{"mime": "image/png", "data": "iVBORw0KGgo="}]
    assert plot["diff"] == {"created": ["fig"], "changed": [], "deleted": []}
    assert isinstance(plot["duration_ms"], float) and plot["duration_ms"] >= 0
    assert boom["status"] == "error" and boom["is_error"]
    assert "the tool broke" in boom["result_text"]
    status = data["status"]
    assert status["state"] == "done" and status["turn"] == 2
    assert status["tokens_in"] > 0 and status["tokens_out"] > 0
    assert data["messages"][-1]["blocks"] == [{"type": "text", "text": "Done: see `fig`."}]


def test_tool_card_passes_through_pending_running_progress_done() -> None:
    _, ops = reduce(tool_run())
    statuses = [op[2] for op in ops.ops if op[0] == "s" and op[1] == ["tools", "c1", "status"]]
    created = [op[2]["status"] for op in ops.ops if op[0] == "s" and op[1] == ["tools", "c1"]]
    assert created + statuses == ["pending", "running", "progress", "done"]
    args = "".join(
        op[2] for op in ops.ops if op[0] == "a" and op[1] == ["tools", "c1", "args_text"]
    )
    assert json.loads(args) == {"n": 3}, "the arguments grow while the model streams them"


def test_a_snapshot_mid_stream_shows_the_arguments_streamed_so_far() -> None:
    events = tool_run()
    ops = OpList()
    state = PanelState(ops, model="faux/faux-1")
    seen = ""
    checked = 0
    for event in events:
        state.apply(event)
        sub = getattr(event, "assistant_message_event", None)
        if sub is not None and sub.type == "toolcall_delta" and sub.content_index == 2:
            seen += sub.delta
            assert state.materialize()["tools"]["c1"]["args_text"] == seen
            checked += 1
    assert checked > 1 and json.loads(seen) == {"n": 3}


def test_lifecycle_tree_from_the_ten_events() -> None:
    state, _ = reduce(tool_run())
    nodes = state.data["lifecycle"]
    run_node = nodes[0]
    assert run_node["kind"] == "run" and run_node["parent"] is None
    turns = [n for n in nodes if n["kind"] == "turn"]
    assert [t["parent"] for t in turns] == [0, 0] and len(turns) == 2
    tools = [n for n in nodes if n["kind"] == "tool"]
    assert [t["detail"] for t in tools] == ["plot", "boom"]
    assert all(t["parent"] == turns[0]["id"] for t in tools)
    messages = [n for n in nodes if n["kind"] == "message"]
    assert [m["detail"] for m in messages] == [
        "user",
        "assistant",
        "toolResult",
        "toolResult",
        "assistant",
    ]
    assert messages[1]["updates"] > 5, "the streamed message counts its updates"
    assert all(n["end"] is not None and n["end"] >= n["start"] for n in nodes)
    kinds = {e["type"] for e in state.events}
    assert kinds == {
        "agent_start", "agent_end", "turn_start", "turn_end", "message_start",
        "message_update", "message_end", "tool_execution_start", "tool_execution_update",
        "tool_execution_end",
    }  # fmt: skip
    times = [e["t"] for e in state.events]
    assert times == sorted(times)


def test_per_token_path_is_lean() -> None:
    provider = faux([faux_assistant_message("word " * 200)])
    ops = OpList()
    state = PanelState(ops)
    events = run(collect_events(provider))
    paths = []
    for event in events:
        state.apply(event)
        if event.type == "message_update" and event.assistant_message_event.type == "text_delta":
            paths.append(state._blocks[0].path)
    # One path object per block, and the block's text is not rebuilt per token.
    assert len(paths) == 250 and all(p is paths[0] for p in paths)
    appends = [op for op in ops.ops if op[0] == "a"]
    assert len(appends) == 250 and "".join(op[2] for op in appends) == "word " * 200


def test_error_message_reads_as_the_provider_message_without_secrets(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-live-abcdefghijklmnop1234")
    message = "401: invalid key sk-live-abcdefghijklmnop1234 (api_key=zzzzzzzzzzzz)"
    provider = faux([faux_assistant_message("", stop_reason="error", error_message=message)])
    state, _ = reduce(run(collect_events(provider)))
    assert state.data["status"]["state"] == "error"
    error = state.data["status"]["error"]
    assert error.startswith("401: invalid key ")
    assert "sk-live" not in error and "zzzz" not in error
    assert state.data["messages"][-1]["error"] == error
    assert redact("Bearer abcdefghijklmnopqrstu") == "Bearer [redacted: bearer token]"
    assert redact("key sk-ant-api03-abcdefghijklmnop.") == "key [redacted: api key]."
    ordinary = "risk-assessment-framework-v2 and task-management-systems, apikey docs"
    assert redact(ordinary) == ordinary


def test_aborted_run() -> None:
    provider = faux([faux_assistant_message("", stop_reason="aborted", error_message="stop")])
    state, _ = reduce(run(collect_events(provider)))
    assert state.data["status"]["state"] == "aborted"
    assert state.data["messages"][-1]["stop_reason"] == "aborted"


def test_ops_carry_copies_not_live_state() -> None:
    ops = OpList()
    state = PanelState(ops)
    for event in tool_run():
        state.apply(event)
    before = copy.deepcopy(ops.ops)
    state.data["tools"]["c1"]["status"] = "mutated"
    state.data["lifecycle"][0]["label"] = "mutated"
    assert ops.ops == before


def test_a_key_like_tool_result_is_sent_once_not_on_every_update() -> None:
    # The card keeps the redacted text: comparing it with the raw text always differed, so the
    # same result went out again with every progress update and at the end.
    secret = "api_key=abcdefghijklmnop"

    async def execute(tool_call_id: str, params: Any, signal: Any, on_update: Any) -> Any:
        for _ in range(3):
            on_update(AgentToolResult(content=[TextContent(text=secret)]))
        return AgentToolResult(content=[TextContent(text=secret)])

    leaky = AgentTool(name="leaky", parameters={"type": "object"}, execute=execute)
    provider = faux(
        [
            faux_assistant_message([faux_tool_call("leaky", {}, id="k1")], stop_reason="toolUse"),
            faux_assistant_message("done"),
        ]
    )
    state, ops = reduce(run(collect_events(provider, "go", [leaky])))
    assert state.data["tools"]["k1"]["result_text"] == "api_key=[redacted: api_key]"
    sets = [op for op in ops.ops if op[0] == "s" and op[1] == ["tools", "k1", "result_text"]]
    assert [op[2] for op in sets] == ["api_key=[redacted: api_key]"]

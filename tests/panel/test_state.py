"""The reducer: real agent event sequences (faux provider) -> panel state and ops."""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest

from pi_notebook.agent import AgentTool, AgentToolResult
from pi_notebook.ai import TextContent, faux_assistant_message, redact
from pi_notebook.ai.faux import faux_text, faux_thinking, faux_tool_call
from pi_notebook.notebook.panel.entries import initial_state
from pi_notebook.notebook.panel.markdown import render_markdown
from pi_notebook.notebook.panel.ops import OpList, apply_ops
from pi_notebook.notebook.panel.reducer import PanelState
from pi_notebook.notebook.panel.streaming_text import TAIL_LIMIT

from .corpus import ANSWERS
from .helpers import collect_events, failing_tool, faux, image_tool, run


def html_of(block: dict[str, Any]) -> str:
    return "".join(block["html"])


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
    assert data["messages"][0]["html"] == "<p>Plot it</p>\n"
    first = data["messages"][1]
    assert first["blocks"] == [
        {"type": "thinking", "html": ["<p>I should plot.</p>\n"], "tail": "", "raw": None},
        {
            "type": "text",
            "html": ["<p>Plotting <strong>now</strong>.</p>\n"],
            "tail": "",
            "raw": None,
        },
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
    assert [html_of(b) for b in data["messages"][-1]["blocks"]] == [
        "<p>Done: see <code>fig</code>.</p>\n"
    ]


def test_tool_card_passes_through_pending_prepared_running_progress_done() -> None:
    _, ops = reduce(tool_run())
    statuses = [op[2] for op in ops.ops if op[0] == "s" and op[1] == ["tools", "c1", "status"]]
    created = [op[2]["status"] for op in ops.ops if op[0] == "s" and op[1] == ["tools", "c1"]]
    assert created + statuses == ["pending", "prepared", "running", "progress", "done"]
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
    before = 0
    for event in events:
        state.apply(event)
        if event.type == "message_update" and event.assistant_message_event.type == "text_delta":
            assert state._reply is not None
            paths.append(state._reply._blocks[0].path)
            assert len(ops.ops) == before, "a token writes no op: the text is rendered per frame"
        before = len(ops.ops)
    # One path object per block, and the block's text is not rebuilt per token.
    assert len(paths) == 250 and all(p is paths[0] for p in paths)
    text = state.data["messages"][1]["blocks"][0]
    assert html_of(text) == render_markdown("word " * 200)


@pytest.mark.parametrize("tokens", [50, 500])
def test_events_keep_counts_not_a_record_per_token(tokens: int) -> None:
    provider = faux([faux_assistant_message("word " * tokens)])
    state, _ = reduce(run(collect_events(provider)))
    kinds = [e["type"] for e in state.events]
    assert kinds == [
        "agent_start", "turn_start", "message_start", "message_end", "message_start",
        "message_update", "message_end", "turn_end", "agent_end",
    ]  # fmt: skip
    updates = state.events[5]
    deltas = -(-5 * tokens // 4)  # 4-character tokens
    assert updates["count"] == deltas + 2 and updates["kinds"] == {
        "text_start": 1,
        "text_delta": deltas,
        "text_end": 1,
    }
    assert state.counts["message_update"] == deltas + 2 and state.counts["message_start"] == 2


def stream_in_frames(text: str, every: int, size: int = 1) -> tuple[PanelState, OpList, list[Any]]:
    """Reduce a faux answer of ``text``, rendering (a frame) after every ``every`` deltas;
    returns the state, its ops and the text block as each frame left it."""
    provider = faux([faux_assistant_message(text)], size=size)
    ops = OpList()
    state = PanelState(ops)
    frames: list[Any] = []
    deltas = 0
    for event in run(collect_events(provider)):
        state.apply(event)
        sub = getattr(event, "assistant_message_event", None)
        if sub is not None and sub.type == "text_delta":
            deltas += 1
            if deltas % every == 0:
                state.render()
                frames.append(copy.deepcopy(state.data["messages"][1]["blocks"][0]))
    state.materialize()
    return state, ops, frames


@pytest.mark.parametrize("name", sorted(ANSWERS))
@pytest.mark.parametrize("every", [1, 7])
def test_streamed_markdown_ends_as_the_whole_render_and_finished_blocks_never_change(
    name: str, every: int
) -> None:
    text = ANSWERS[name]
    state, ops, frames = stream_in_frames(text, every)
    block = state.data["messages"][1]["blocks"][0]
    assert html_of(block) == render_markdown(text)
    assert block["tail"] == "" and block["raw"] is None
    # A frame's finished blocks are a prefix of the final ones (never re-rendered), and
    # finished + tail is what the text streamed so far renders to.
    assert len(frames) > 10
    for frame in frames:
        assert frame["html"] == block["html"][: len(frame["html"])]
    assert any(f["tail"] for f in frames) and any(len(f["html"]) > 1 for f in frames)
    # The ops rebuild the state, splices of the tail and moves off its head included.
    assert {"t", "m"} <= {op[0] for op in ops.ops}
    rebuilt = apply_ops(initial_state(), json.loads(json.dumps(ops.ops)))
    assert rebuilt == json.loads(json.dumps(state.data))


def test_a_tail_longer_than_the_limit_streams_as_raw_text() -> None:
    long_paragraph = "word " * (TAIL_LIMIT // 4)
    text = f"First **paragraph**.\n\n{long_paragraph}\n\nAfter."
    state, ops, frames = stream_in_frames(text, 5)
    raw = [f["raw"] for f in frames if f["raw"] is not None]
    assert raw and all(len(r) > TAIL_LIMIT for r in raw), "raw only while the tail is long"
    assert all(f["tail"] == "" for f in frames if f["raw"] is not None)
    appends = [op for op in ops.ops if op[0] == "a" and op[1][-1] == "raw"]
    assert appends, "raw text grows by appends, not by resending it"
    block = state.data["messages"][1]["blocks"][0]
    assert html_of(block) == render_markdown(text) and block["raw"] is None
    rebuilt = apply_ops(initial_state(), json.loads(json.dumps(ops.ops)))
    assert rebuilt == json.loads(json.dumps(state.data))


def test_a_tail_splice_counts_utf16_units() -> None:
    text = "Emoji 😀 and math $x^2$ " * 20
    state, ops, _ = stream_in_frames(text, 3)
    assert any(op[0] == "t" for op in ops.ops)
    rebuilt = apply_ops(initial_state(), json.loads(json.dumps(ops.ops)))
    assert rebuilt == json.loads(json.dumps(state.data))


def test_an_answer_aborted_mid_stream_is_rendered_from_what_arrived() -> None:
    provider = faux([faux_assistant_message("**Bold** start\n\n- one\n- two and more words")])
    events = run(collect_events(provider))
    # Cut the stream: drop text_end, as an abort does, and end the message with the partial.
    cut = [e for e in events if getattr(e, "assistant_message_event", None) is None
           or e.assistant_message_event.type != "text_end"]  # fmt: skip
    state, _ = reduce(cut)
    block = state.data["messages"][1]["blocks"][0]
    assert html_of(block) == render_markdown("**Bold** start\n\n- one\n- two and more words")
    assert block["tail"] == "" and block["raw"] is None


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


def test_a_key_in_streamed_text_never_leaves_in_an_op() -> None:
    # Finished blocks and the tail are redacted as they are rendered (per frame, never per
    # token), so the whole key is in no op, not only in the final state.
    secret = "sk-" + "live1234" * 4
    text = f"The key is {secret} here.\n\nNext **paragraph** streams.\n\n| a |\n|---|\n| {secret} |"
    state, ops, frames = stream_in_frames(text, 1)
    assert secret not in json.dumps(ops.ops)
    assert secret not in json.dumps(frames)
    html = html_of(state.data["messages"][1]["blocks"][0])
    assert html.count("[redacted") == 2 and "<strong>paragraph</strong>" in html


def test_a_compaction_is_a_one_line_marker_in_the_transcript_and_its_ops() -> None:
    from pi_notebook.notebook.panel.static import render_static_html

    ops = OpList()
    state = PanelState(ops, model="faux/faux-1")
    mirror = copy.deepcopy(state.data)
    state.add_compaction(12)
    entry = {"role": "compaction", "count": 12, "text": "compacted 12 messages"}
    assert state.data["messages"] == [entry]
    apply_ops(mirror, ops.ops)
    assert mirror == state.data
    html = render_static_html(state.data)
    assert '<span class="pi-compaction">compacted 12 messages</span>' in html


def test_a_key_streamed_in_tool_arguments_ends_redacted_in_the_card() -> None:
    key = "sk-live-abcdefghijklmnop1234"

    async def execute(tool_call_id: str, params: Any, signal: Any, on_update: Any) -> Any:
        return AgentToolResult(content=[TextContent(text="done")])

    tool = AgentTool(name="w", description="", parameters={"type": "object"}, execute=execute)
    provider = faux(
        [
            faux_assistant_message([faux_tool_call("w", {"token": key, "n": 1}, id="c")]),
            faux_assistant_message("ok"),
        ]
    )
    state, ops = reduce(run(collect_events(provider, "Go", [tool])))
    args = state.materialize()["tools"]["c"]["args_text"]
    assert key not in args and "[redacted" in args
    final = initial_state()
    apply_ops(final, ops.ops)
    assert key not in final["tools"]["c"]["args_text"]


def test_a_huge_tool_result_shows_a_bounded_preview_in_its_card() -> None:
    """Issue 28, item 10: the card holds at most 10,000 characters and says how many more."""

    async def execute(tool_call_id: str, params: Any, signal: Any, on_update: Any) -> Any:
        return AgentToolResult(content=[TextContent(text="z" * 300_000)])

    big = AgentTool(name="big", description="", parameters={"type": "object"}, execute=execute)
    provider = faux(
        [
            faux_assistant_message([faux_tool_call("big", {}, id="c1")], stop_reason="toolUse"),
            faux_assistant_message("ok"),
        ]
    )
    state, _ = reduce(run(collect_events(provider, "Go", [big])))
    text = state.data["tools"]["c1"]["result_text"]
    assert text == "z" * 10_000 + "\n[… 90068 more characters not shown]"

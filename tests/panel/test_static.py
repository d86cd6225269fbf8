"""The static transcript: sanitised HTML in the live panel's DOM, from real runs.

It is what a saved notebook shows everywhere, so it must keep what the live panel shows (tool
cards with arguments, results, images and the namespace diff, thinking and the lifecycle
collapsed, status, tokens and cost), stay inert for hostile text, arguments and results, and
show finished text exactly as the live view does (checked against the view in jsdom).
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
from bs4 import BeautifulSoup

from pi_notebook.agent import AgentTool
from pi_notebook.agent.types import AgentToolResult
from pi_notebook.ai import faux_assistant_message
from pi_notebook.ai.faux import faux_text, faux_thinking, faux_tool_call
from pi_notebook.notebook.panel.assets import frontend
from pi_notebook.notebook.panel.markdown import render_markdown
from pi_notebook.notebook.panel.ops import OpList
from pi_notebook.notebook.panel.reducer import PanelState
from pi_notebook.notebook.panel.static import render_static_html

from .corpus import ANSWERS, HOSTILE
from .helpers import collect_events, faux, image_tool, run
from .test_markdown import audit

ROOT = Path(__file__).resolve().parents[2]
#: What the static frame adds to the Markdown renderer's markup (no style: no css passed).
FRAME_TAGS = frozenset(("details", "summary", "img"))
FRAME_ATTRIBUTES = frozenset(
    ("data-state", "data-role", "data-index", "data-block", "data-status", "data-tool-call-id",
     "data-kind", "open", "alt", "src")
)  # fmt: skip


def reduce(provider: Any, prompt: str, tools: list[AgentTool]) -> dict[str, Any]:
    state = PanelState(OpList(), model="faux/faux-1")
    for event in run(collect_events(provider, prompt, tools)):
        state.apply(event)
    return state.materialize()


def hostile_state() -> dict[str, Any]:
    joined = "\n\n".join(HOSTILE)
    provider = faux(
        [
            faux_assistant_message(
                [
                    faux_thinking(joined),
                    faux_text(joined),
                    faux_tool_call("echo", {"code": joined}, id="x1"),
                ],
                stop_reason="toolUse",
            ),
            faux_assistant_message("", stop_reason="error", error_message=HOSTILE[1]),
        ]
    )

    async def execute(tool_call_id: str, params: Any, signal: Any, on_update: Any) -> Any:
        return AgentToolResult(
            content=[
                {"type": "text", "text": params["code"]},
                {"type": "image", "data": "PHN2Zz4=", "mime_type": "image/svg+xml"},
                {"type": "image", "data": "x onerror=alert(1)", "mime_type": "image/png"},
            ]
        )

    tool = AgentTool(name="echo", description="", parameters={"type": "object"}, execute=execute)
    return reduce(provider, joined, [tool])


def test_hostile_text_args_and_results_render_inert() -> None:
    html = render_static_html(hostile_state())
    page = BeautifulSoup(html, "html.parser")
    shown = [i for i in page.find_all("img") if i.get("class") != ["pi-timeline"]]
    assert shown == [], "a tool's SVG or non-base64 image is never shown"
    assert audit(html, FRAME_TAGS, FRAME_ATTRIBUTES) == []
    # The payloads are shown as text, not dropped: thinking, text, prompt, arguments, result.
    text = page.get_text()
    assert text.count("<script>alert(1)</script>") >= 5
    assert "[image image/svg+xml]" in text


def test_static_html_keeps_what_the_live_panel_shows() -> None:
    provider = faux(
        [
            faux_assistant_message(
                [
                    faux_thinking("Plot first."),
                    faux_text("Use **bold**"),
                    faux_tool_call("echo", {"n": 1}, id="t9"),
                ],
                stop_reason="toolUse",
            ),
            faux_assistant_message(ANSWERS["summary"]),
        ]
    )
    state = reduce(provider, "Plot `it`", [image_tool("echo")])
    page = BeautifulSoup(render_static_html(state, css=".pi-panel{}"), "html.parser")
    assert page.style is not None and page.style.get_text() == ".pi-panel{}"
    root = page.select_one(".pi-panel.pi-static")
    assert root["data-state"] == "done" and "tex2jax_ignore" in root["class"]
    status = root.select_one(".pi-status")
    assert status.select_one(".pi-model").get_text() == "faux/faux-1"
    assert status.select_one(".pi-turn").get_text() == "turn 2"
    assert status.select_one(".pi-tokens").get_text().endswith(" out")
    assert status.select_one(".pi-cost").get_text().startswith("$")
    assert status.get_text().startswith("faux/faux-1 done turn 2 "), "reads unstyled too"
    roles = [m["data-role"] for m in root.select(".pi-transcript > .pi-message")]
    assert roles == ["user", "assistant", "assistant"], "a result its tool card shows: once"
    assert "shown in the card" not in root.get_text()
    assert root.select_one(".pi-message[data-role=user] code").get_text() == "it"
    thinking = root.select_one("details.pi-thinking")
    assert "open" not in thinking.attrs and thinking.get_text().strip() == "thinkingPlot first."
    card = root.select_one('.pi-tool-card[data-tool-call-id="t9"][data-status="done"]')
    assert card.select_one(".pi-tool-name").get_text() == "echo"
    assert json.loads(card.select_one("pre.pi-tool-args").get_text()) == {"n": 1}
    assert card.select_one(".pi-tool-result .pi-tool-preview").get_text() == "plotted 1 points"
    assert card.select_one("img.pi-image")["src"].startswith("data:image/png;base64,")
    assert card.select_one(".pi-tool-diff").get_text() == "namespace — created: fig"
    assert card.select_one(".pi-tool-duration").get_text().endswith("s")
    answer = root.select(".pi-message[data-role=assistant]")[-1]
    assert answer.select_one("table td").get_text() == "North"
    assert answer.select_one("pre.pi-code[data-lang=python] span.k") is not None
    box = root.select_one("details.pi-lifecycle-box")
    assert "open" not in box.attrs
    tree = box.select_one(".pi-lifecycle")
    assert len(tree.select(".pi-node[data-kind=run] > .pi-node[data-kind=turn]")) == 2
    assert len(tree.select(".pi-node[data-kind=turn] > .pi-node[data-kind=tool]")) == 1
    assert "Tool Execution (echo) " in tree.get_text()
    assert audit(str(root), FRAME_TAGS, FRAME_ATTRIBUTES) == []


VIEW_SCRIPT = """
import { JSDOM } from "jsdom";
const { mountPanel } = await import(process.argv[1]);
let input = "";
process.stdin.on("data", (d) => (input += d)).on("end", () => {
  const dom = new JSDOM("<!doctype html><div id=host></div>");
  const view = mountPanel(dom.window.document.getElementById("host"), {
    send: () => {}, tick: false,
  });
  view.adopt(JSON.parse(input));
  const texts = [...dom.window.document.querySelectorAll(".pi-message .pi-text")];
  console.log(JSON.stringify(texts.map((t) => {
    t.querySelectorAll(".pi-tail").forEach((tail) => tail.remove());
    t.querySelectorAll(".pi-chunk").forEach((chunk) => chunk.replaceWith(...chunk.childNodes));
    return t.innerHTML;
  })));
});
"""


@pytest.mark.kernel
@pytest.mark.skipif(shutil.which("node") is None, reason="node is not installed")
def test_the_live_view_shows_the_kernels_html_for_finished_text() -> None:
    if not (ROOT / "js" / "node_modules" / "jsdom").is_dir():
        pytest.skip("js/node_modules is missing (cd js && npm ci)")
    provider = faux(
        [faux_assistant_message([faux_text(ANSWERS["math"]), faux_text(ANSWERS["links"])])]
    )
    state = reduce(provider, ANSWERS["summary"], [])
    done = subprocess.run(
        ["node", "--input-type=module", "-e", VIEW_SCRIPT, (ROOT / "js" / "view.js").as_uri()],
        input=json.dumps(state),
        capture_output=True,
        text=True,
        cwd=ROOT / "js",
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    live = json.loads(done.stdout)
    static = BeautifulSoup(render_static_html(state), "html.parser").select(".pi-text")

    def normal(html: str) -> str:  # both parsed and serialised by one HTML parser
        return str(BeautifulSoup(html, "html.parser"))

    assert [normal(h) for h in live] == [normal(t.decode_contents()) for t in static]
    assert len(live) == 3
    expected = [render_markdown(t) for t in (ANSWERS["summary"], ANSWERS["math"], ANSWERS["links"])]
    assert [normal(h) for h in live] == [normal(h) for h in expected]


FRAMES_SCRIPT = """
import { JSDOM } from "jsdom";
const { mountPanel } = await import(process.argv[1]);
let input = "";
process.stdin.on("data", (d) => (input += d)).on("end", () => {
  const { initial, frames, final } = JSON.parse(input);
  const mount = () => {
    const dom = new JSDOM("<!doctype html><div id=host></div>");
    const doc = dom.window.document;
    return [doc, mountPanel(doc.getElementById("host"), { send: () => {}, tick: false })];
  };
  const [live, view] = mount();
  view.receive({ type: "snapshot", seq: 0, ...initial });
  frames.forEach((ops, i) => view.receive({ type: "deltas", seq: i + 1, ops }));
  const [fresh, again] = mount();
  again.adopt(final);
  const html = (doc) => doc.querySelector(".pi-transcript").innerHTML;
  console.log(JSON.stringify([html(live), html(fresh)]));
});
"""


@pytest.mark.kernel
@pytest.mark.skipif(shutil.which("node") is None, reason="node is not installed")
@pytest.mark.parametrize("every", [1, 9])
def test_the_kernels_frames_build_the_same_dom_as_a_fresh_render(every: int) -> None:
    """Real ops (finished blocks, tail splices, raw text) applied frame by frame in the view."""
    if not (ROOT / "js" / "node_modules" / "jsdom").is_dir():
        pytest.skip("js/node_modules is missing (cd js && npm ci)")
    long = "word " * 500  # a tail past TAIL_LIMIT streams as raw text
    text = f"{ANSWERS['summary']}\n\n{long}\n\n{ANSWERS['math']}"
    provider = faux([faux_assistant_message([faux_thinking("Think **first**."), faux_text(text)])])
    ops = OpList()
    state = PanelState(ops, model="faux/faux-1")
    initial = json.loads(json.dumps(state.data))
    frames: list[list[Any]] = []
    taken = deltas = 0
    for event in run(collect_events(provider, "Go", [])):
        state.apply(event)
        deltas += event.type == "message_update"
        if deltas % every == 0:
            state.render()
            frames.append(ops.ops[taken:])
            taken = len(ops.ops)
    state.materialize()
    frames.append(ops.ops[taken:])
    kinds = {op[0] for frame in frames for op in frame}
    assert {"t", "m", "a", "p", "s"} <= kinds
    payload = json.dumps({"initial": initial, "frames": frames, "final": state.data})
    done = subprocess.run(
        ["node", "--input-type=module", "-e", FRAMES_SCRIPT, (ROOT / "js" / "view.js").as_uri()],
        input=payload,
        capture_output=True,
        text=True,
        cwd=ROOT / "js",
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    live, fresh = json.loads(done.stdout)
    assert live == fresh
    assert "<table>" in live and "<math" in live


def test_the_stylesheet_ships_with_the_transcript() -> None:
    css = frontend()[1]
    assert ".pi-panel" in css and "--jp-" in css


def test_tree_leaves_are_links_to_their_message_or_card_and_show_own_time() -> None:
    provider = faux(
        [
            faux_assistant_message([faux_tool_call("echo", {"n": 1}, id='t 9"x')], "toolUse"),
            faux_assistant_message("Done."),
        ]
    )
    state = reduce(provider, "Go", [image_tool("echo")])
    state["lifecycle"][0]["held"] = 2500.0  # as if the run had been held 2.5 s in step mode
    page = BeautifulSoup(render_static_html(state, anchor="pi-abc"), "html.parser")
    tree = page.select_one(".pi-lifecycle")
    assert [n["data-kind"] for n in tree.select("details.pi-node")] == ["run", "turn", "turn"]
    leaves = tree.select(".pi-node.pi-leaf")
    assert [leaf["data-kind"] for leaf in leaves] == ["message"] * 2 + ["tool", "message"] * 1 + [
        "message"
    ]
    assert not tree.select(".pi-leaf details, .pi-leaf summary"), "no empty disclosure"
    for leaf in leaves:  # each link lands on the element it names, in this transcript
        target = page.select_one(leaf.select_one("a.pi-node-link")["href"])
        assert target is not None
        if leaf["data-kind"] == "tool" or "pi-tool-card" in target["class"]:
            assert target["data-tool-call-id"] == 't 9"x'
        else:
            assert target.name == "div" and "pi-message" in target["class"]
    message_targets = [
        leaf.select_one("a.pi-node-link")["href"]
        for leaf in leaves
        if leaf["data-kind"] == "message"
    ]
    assert len(set(message_targets)) == 4 and sum("-t" in h for h in message_targets) == 1
    run_line = tree.select_one("details[data-kind=run] > summary").get_text()
    assert run_line.startswith("Agent Run · ") and run_line.endswith(" · held 2.5s")
    assert "Tool Execution (echo) · " in tree.get_text()
    # The only links the frame adds are these same-page anchors.
    problems = audit(str(page), FRAME_TAGS | {"a"}, FRAME_ATTRIBUTES | {"href", "id"})
    assert problems and all(re.fullmatch(r"href '#pi-abc-[mt]\d+'", p) for p in problems)


def test_the_static_transcript_shows_what_the_model_was_last_sent() -> None:
    from pi_notebook.ai import TextContent, UserMessage
    from pi_notebook.notebook.context_view import SentRequest, context_summary

    hostile = HOSTILE[0]
    request = SentRequest(
        turn=1,
        model="faux/faux-1",
        system_prompt=f"Be terse. {hostile}",
        messages=[UserMessage(content=[TextContent(text=hostile)])],
        tools=[],
        options={"max_tokens": 64},
    )
    state = reduce(faux([faux_assistant_message("ok")]), "Hi", [])
    state["context"] = context_summary(request)
    html = render_static_html(state)
    page = BeautifulSoup(html, "html.parser")
    box = page.select_one("details.pi-context")
    assert "open" not in box.attrs
    assert box.select_one("summary").get_text().startswith("What the model was sent — turn 1: 1")
    roles = [li["data-role"] for li in box.select(".pi-context-item")]
    assert roles == ["system", "user"]
    assert box.select_one(".pi-context-item[data-role=user] pre").get_text() == hostile
    assert box.select_one(".pi-context-options").get_text() == "options: max_tokens=64"
    assert audit(html, FRAME_TAGS, FRAME_ATTRIBUTES) == []


def test_the_last_answer_with_code_names_the_command_that_takes_it_into_a_cell() -> None:
    # The live panel's "insert as cell" buttons need the view; the saved transcript runs no
    # script, so under the last answer that has code blocks it names %agent code --answer.
    with_code = "Use the lower-case name:\n\n```python\ndf['bmi']\n```"
    state = reduce(faux([faux_assistant_message([faux_text(with_code)])]), "why?", [])
    page = BeautifulSoup(render_static_html(state), "html.parser")
    hints = page.select(".pi-answer-code")
    assert len(hints) == 1 and "%agent code --answer" in hints[0].get_text()
    assert hints[0].find_previous_sibling(class_="pi-message")["data-role"] == "assistant"

    plain = reduce(faux([faux_assistant_message([faux_text("No code here.")])]), "why?", [])
    assert not BeautifulSoup(render_static_html(plain), "html.parser").select(".pi-answer-code")

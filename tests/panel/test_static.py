"""The static rendering: sanitised HTML from model text, tool arguments and tool results."""

from __future__ import annotations

import json
import shutil
import subprocess
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import pytest

from pi_notebook.ai import faux_assistant_message
from pi_notebook.ai.faux import faux_text, faux_tool_call
from pi_notebook.notebook.panel import render_markdown
from pi_notebook.notebook.panel.ops import OpList
from pi_notebook.notebook.panel.state import PanelState
from pi_notebook.notebook.panel.static import render_static_html

from .helpers import collect_events, faux, run

ROOT = Path(__file__).resolve().parents[2]
PAYLOADS = [
    "<script>alert(1)</script>",
    "<img src=x onerror=alert(1)>",
    '"><svg onload=alert(1)>',
    "[click](javascript:alert(1))",
    "[click](JaVaScRiPt:alert(1))",
    "[x](data:text/html;base64,PHNjcmlwdD4=)",
    '[x](https://ok.example/"onmouseover="alert(1))',
    "**<b onclick=alert(1)>bold</b>**",
    "`<script>alert(1)</script>`",
    "```\n</code></pre><script>alert(1)</script>\n```",
    "<a href='javascript:alert(1)'>x</a>",
]
ALLOWED_TAGS = {
    "style", "div", "small", "b", "i", "p", "br", "strong", "em", "code", "pre", "a", "ul",
    "ol", "li", "blockquote", "h1", "h2", "h3", "h4", "h5", "h6", "details", "summary", "img",
}  # fmt: skip


class Audit(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.problems: list[str] = []
        self.text = ""

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag not in ALLOWED_TAGS:
            self.problems.append(f"tag {tag}")
        for name, value in attrs:
            value = value or ""
            if name.startswith("on"):
                self.problems.append(f"handler {name}")
            if name == "href" and not value.startswith(("http://", "https://", "mailto:")):
                self.problems.append(f"href {value}")
            if name == "src" and not value.startswith("data:image/png;base64,"):
                self.problems.append(f"src {value}")

    def handle_data(self, data: str) -> None:
        self.text += data


def audit(html: str) -> Audit:
    parser = Audit()
    parser.feed(html)
    return parser


def hostile_state() -> dict[str, Any]:
    joined = "\n".join(PAYLOADS)
    provider = faux(
        [
            faux_assistant_message(
                [faux_text(joined), faux_tool_call("echo", {"code": joined}, id="x1")],
                stop_reason="toolUse",
            ),
            faux_assistant_message("", stop_reason="error", error_message=PAYLOADS[1]),
        ]
    )
    from pi_notebook.agent import AgentTool
    from pi_notebook.agent.types import AgentToolResult

    async def execute(tool_call_id: str, params: Any, signal: Any, on_update: Any) -> Any:
        return AgentToolResult(
            content=[
                {"type": "text", "text": params["code"]},
                {"type": "image", "data": "PHN2Zz4=", "mime_type": "image/svg+xml"},
            ]
        )

    tool = AgentTool(name="echo", description="", parameters={"type": "object"}, execute=execute)
    state = PanelState(OpList())
    for event in run(collect_events(provider, joined, [tool])):
        state.apply(event)
    return state.materialize()


def test_hostile_text_args_and_results_render_inert() -> None:
    state = hostile_state()
    html = render_static_html(state)
    report = audit(html)
    assert report.problems == []
    # The payloads are shown as text, not dropped: every one appears (escaped) in the output.
    assert report.text.count("<script>alert(1)</script>") >= 4
    assert "[image image/svg+xml]" in report.text


def test_static_html_has_transcript_cards_and_status() -> None:
    provider = faux(
        [
            faux_assistant_message(
                [faux_text("Use **bold**"), faux_tool_call("echo", {"n": 1}, id="t9")],
                stop_reason="toolUse",
            ),
            faux_assistant_message("fine"),
        ]
    )
    from .helpers import image_tool

    state = PanelState(OpList(), model="faux/faux-1")
    for event in run(collect_events(provider, "go", [image_tool("echo")])):
        state.apply(event)
    html = render_static_html(state.materialize())
    assert '<div class="pi-message" data-role="user">' in html
    assert "<strong>bold</strong>" in html
    assert '<div class="pi-tool-card" data-status="done"><b>echo</b>' in html
    assert '<img alt="tool image" style="max-width:320px" src="data:image/png;base64,' in html
    assert "namespace: created: fig" in html
    assert "faux/faux-1 · done · turn 2" in html
    tree = html[html.index('<details class="pi-lifecycle">') :]
    assert tree.index('data-kind="run"><summary>Agent Run') < tree.index('data-kind="turn"')
    assert tree.count('data-kind="turn"') == 2 and tree.count('data-kind="tool"') == 1
    assert "<summary>Tool Execution (echo) " in tree


@pytest.mark.skipif(shutil.which("node") is None, reason="node is not installed")
def test_python_and_javascript_markdown_agree() -> None:
    samples = [
        *PAYLOADS,
        "# Title\n\nSome **bold**, *it*, _it_ and `code`.\n- a\n- b\n1. one\n> q",
        "line one\nline two\n\n```\nx < y\n```\n[ok](https://e.com/?a=1&b=2) [no](ftp://x)",
        "unclosed `tick and **star",
    ]
    script = (
        f"import {{ renderMarkdown }} from {json.dumps((ROOT / 'js' / 'markdown.js').as_uri())};"
        "let s='';process.stdin.on('data',d=>s+=d).on('end',()=>"
        "console.log(JSON.stringify(JSON.parse(s).map(renderMarkdown))));"
    )
    done = subprocess.run(
        ["node", "--input-type=module", "-e", script],
        input=json.dumps(samples),
        capture_output=True,
        text=True,
        timeout=30,
        check=True,
    )
    assert json.loads(done.stdout) == [render_markdown(s) for s in samples]

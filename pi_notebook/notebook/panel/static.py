"""The static rendering of a run: sanitised HTML from the panel state, in the live panel's DOM.

When a run ends its cell's output becomes this HTML (with the plain transcript), so GitHub,
nbviewer, nbconvert, VS Code and a JupyterLab without the kernel show the transcript with no
widget manager. It has the live panel's structure and classes (``js/``, by region: the status
line, messages with the kernel-rendered Markdown, tool cards with what their approval did,
arguments, results, images, rich displays (HTML rebuilt by :mod:`.rich_html`) and the namespace
diff, what the model was last sent; the run's notebook context, thinking and the lifecycle tree
collapsed in ``<details>``, which read without JavaScript), without the controls, so one
stylesheet (``js/panel.css``, passed in) styles both and the same checks read both. The tree's
leaves are links to their message or tool card (anchors with ids made unique per transcript by
``anchor``). Text that is not already kernel-rendered HTML is escaped; images are shown only for
whitelisted raster types with base64 data. The root is marked for MathJax to skip, so a dollar
amount is never typeset as math. It must stay pure.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from ..failed_calls import never_ran_line
from .entries import DIFF_LABELS, IMAGE_TYPES
from .markdown import escape_html
from .static_context import context_html
from .timeline import as_timeline
from .timeline_render import timeline_box

_BASE64 = re.compile(r"^[A-Za-z0-9+/=\s]*$")
#: Characters of a tool result shown in the card (the rest is in its details), as in js/format.js.
PREVIEW_CHARS = 600
#: Most characters of one tool result kept in the saved transcript.
FULL_CHARS = 20_000
#: How states and tool statuses read (as js/status.js's STATE_LABELS and js/cards.js's TOOL_LABELS).
STATE_LABELS = {
    "waiting": "waiting for the model",
    "running-tools": "running tools",
    "awaiting-approval": "awaiting approval",
}
TOOL_LABELS = {
    "awaiting-approval": "awaiting approval",
    "rejected": "malformed call: not run",
    "prepared": "prepared, waiting to run",
    "aborted": "not run (aborted)",
    "reply-failed": "not run",
}


def _image(image: dict[str, Any]) -> str:
    mime, data = image.get("mime"), image.get("data", "")
    if mime not in IMAGE_TYPES or not isinstance(data, str) or not _BASE64.match(data):
        return ""
    return f'<img class="pi-image" alt="tool image" src="data:{mime};base64,{data}">'


def _cut(text: str, limit: int, tail: str) -> str:
    return text if len(text) <= limit else text[:limit] + tail.format(len(text) - limit)


def elapsed(ms: Any) -> str:
    """Seconds as the panel shows them (js/format.js's formatElapsed)."""
    seconds = max(0.0, float(ms)) / 1000 if isinstance(ms, int | float) else 0.0
    if seconds < 60:
        return f"{seconds:.1f}s"
    return f"{int(seconds // 60)}m{round(seconds % 60)}s"


def _details(cls: str, summary: str, body: str, open_: bool = False) -> str:
    flag = " open" if open_ else ""
    return f'<details class="{cls}"{flag}><summary>{summary}</summary>{body}</details>'


class _Anchors:
    """Element ids of one transcript: ``PREFIX-mN`` for message N, ``PREFIX-tN`` for the Nth
    tool card (tool call ids may hold any character, so they are numbered)."""

    def __init__(self, prefix: str, tools: dict[str, Any], messages: list[dict[str, Any]]) -> None:
        self.prefix = prefix
        self.tools = {tool_id: n for n, tool_id in enumerate(tools)}
        # A tool result its card shows is not rendered: a link to it goes to that card.
        self.shown_by_card = {
            i: str(m.get("tool_call_id", ""))
            for i, m in enumerate(messages)
            if m.get("role") == "toolResult" and str(m.get("tool_call_id", "")) in tools
        }

    def message(self, index: Any) -> str:
        return f"{self.prefix}-m{int(index)}" if self.prefix else ""

    def tool(self, tool_id: Any) -> str:
        n = self.tools.get(str(tool_id))
        return f"{self.prefix}-t{n}" if self.prefix and n is not None else ""

    def of(self, target: Any) -> str:
        if not isinstance(target, dict):
            return ""
        if isinstance(target.get("message"), int):
            index = target["message"]
            if index in self.shown_by_card:
                return self.tool(self.shown_by_card[index])
            return self.message(index)
        if "tool" in target:
            return self.tool(target["tool"])
        return ""


def _id(anchor: str) -> str:
    return f' id="{escape_html(anchor)}"' if anchor else ""


def _tool_card(tool_id: str, card: dict[str, Any] | None, anchor: str = "") -> str:
    status = escape_html(str(card.get("status", "pending")) if card else "pending")
    head = f'<div class="pi-tool-card"{_id(anchor)} data-tool-call-id="{escape_html(tool_id)}" '
    head += f'data-status="{status}">'
    if card is None:
        return head + "</div>"
    duration = card.get("duration_ms")
    label = escape_html(TOOL_LABELS.get(str(card.get("status")), str(card.get("status", ""))))
    parts = [
        head,
        '<div class="pi-tool-head">',
        f'<span class="pi-tool-name">{escape_html(str(card.get("label") or card.get("name", "")))}'
        "</span>",
        f'<span class="pi-tool-status">{label}</span>',
        f'<span class="pi-tool-duration">{elapsed(duration) if duration is not None else ""}'
        "</span></div>",
    ]
    if card.get("not_run"):
        line = not_run_line(str(card.get("status", "")), str(card["not_run"]))
        parts.append(f'<div class="pi-tool-not-run">{escape_html(line)}</div>')
    if card.get("approval"):
        text = escape_html(str(card["approval"]))
        parts.append(f'<div class="pi-tool-approval">Approval: {text}</div>')
    parts.append(f'<pre class="pi-tool-args">{escape_html(str(card.get("args_text", "")))}</pre>')
    if card.get("status") == "reply-failed":  # nothing ran: no result to show
        return "".join(parts) + "</div>"
    parts.append('<div class="pi-tool-result">')
    result = str(card.get("result_text", ""))
    if result:
        preview = result if len(result) <= PREVIEW_CHARS else result[:PREVIEW_CHARS] + " …"
        parts.append(f'<pre class="pi-tool-preview">{escape_html(preview)}</pre>')
    parts.extend(_image(i) for i in card.get("images", []))
    # Kernel-sanitised HTML (rich_html.py), as a text block's: inserted as it is.
    parts.extend(f'<div class="pi-tool-display">{d}</div>' for d in card.get("displays") or [])
    parts.append("</div>")
    if len(result) > PREVIEW_CHARS:
        full = _cut(result, FULL_CHARS, "\n[… {} more characters]")
        parts.append(_details("pi-tool-details", "details", f"<pre>{escape_html(full)}</pre>"))
    diff = card.get("diff")
    if isinstance(diff, dict):
        bits = [f"{k}: {', '.join(map(str, diff.get(k, [])))}" for k in DIFF_LABELS if diff.get(k)]
        text = f"namespace — {'; '.join(bits)}" if bits else "namespace unchanged"
        parts.append(f'<div class="pi-tool-diff">{escape_html(text)}</div>')
    parts.append("</div>")
    return "".join(parts)


def not_run_line(status: str, reason: str) -> str:
    """Why a card's tool did not run, as js/cards.js writes it."""
    if status == "aborted":
        return f"Not run: {reason}."
    if status == "reply-failed":
        return f"{never_ran_line(reason)}."
    return f"The model's call was malformed ({reason}): the tool did not run."


def _markdown(block: dict[str, Any]) -> str:
    """A text block's kernel-rendered HTML, with its tail if it never finished."""
    html = "".join(str(h) for h in block.get("html", []))
    raw = block.get("raw")
    if isinstance(raw, str):
        return html + f'<div class="pi-tail pi-raw">{escape_html(raw)}</div>'
    return html + str(block.get("tail") or "")


def _message(index: int, entry: dict[str, Any], tools: dict[str, Any], anchors: _Anchors) -> str:
    role = str(entry.get("role", "custom"))
    head = f'<div class="pi-message"{_id(anchors.message(index))} data-role="{escape_html(role)}"'
    head += f' data-index="{index}">'
    body: list[str] = []
    if role == "assistant":
        for j, block in enumerate(entry.get("blocks", [])):
            kind = block.get("type")
            if kind == "text":
                body.append(f'<div class="pi-text" data-block="{j}">{_markdown(block)}</div>')
            elif kind == "thinking":
                inner = f'<div class="pi-thinking-text">{_markdown(block)}</div>'
                body.append(
                    f'<details class="pi-thinking" data-block="{j}">'
                    f"<summary>thinking</summary>{inner}</details>"
                )
            elif kind == "toolCall":
                tool_id = str(block.get("id", ""))
                body.append(_tool_card(tool_id, tools.get(tool_id), anchors.tool(tool_id)))
        error, reason = entry.get("error"), entry.get("stop_reason")
        if (error or reason == "aborted") and not (reason == "aborted" and entry.get("note")):
            line = f"[{reason or 'error'}]" + (f" {error}" if error else "")
            body.append(f'<div class="pi-message-error">{escape_html(line)}</div>')
        if entry.get("note"):
            line = f"[{reason or 'note'}] {entry['note']}"
            body.append(f'<div class="pi-message-note">{escape_html(line)}</div>')
        return head + "".join(body) + "</div>"
    if role == "notebookContext":
        return head + notebook_context_html(entry) + "</div>"
    if role == "compaction":
        text = escape_html(str(entry.get("text", "")))
        return f'{head}<span class="pi-compaction">{text}</span></div>'
    if role == "toolResult":
        if str(entry.get("tool_call_id", "")) in tools:  # its tool card shows it, once
            return ""
        flag = " (error)" if entry.get("is_error") else ""
        label = f"{entry.get('tool_name', '')}{flag} →"
        text = str(entry.get("text", ""))
        body.append(f'<span class="pi-role">{escape_html(label)}</span>')
        preview = _cut(text, PREVIEW_CHARS, " …")
        body.append(f'<pre class="pi-result-text">{escape_html(preview)}</pre>')
    else:
        label = "user" if role == "user" else str(entry.get("custom_role") or "custom")
        queued = queued_label(entry)
        if queued:
            label = f"user ({queued})"
        body.append(f'<span class="pi-role">{escape_html(label)}</span>')
        body.append(f'<div class="pi-text">{entry.get("html", "")}</div>')
    body.extend(_image(i) for i in entry.get("images", []))
    return head + "".join(body) + "</div>"


def notebook_context_html(entry: Mapping[str, Any]) -> str:
    """The notebook context a run sent, collapsed (as js/notebook_context.js draws it)."""
    parts = []
    if entry.get("left_out"):
        parts.append(f'<div class="pi-nbcontext-note">{escape_html(str(entry["left_out"]))}</div>')
    for cell in entry.get("cells") or []:
        number = int(cell.get("number", 0))
        lines = [
            f'<div class="pi-nbcell-label">In [{number}]:</div>',
            f'<pre class="pi-nbcell-source">{escape_html(str(cell.get("source", "")))}</pre>',
        ]
        if cell.get("result") is not None:
            out = f"Out[{number}]: {cell['result']}"
            lines.append(f'<pre class="pi-nbcell-out">{escape_html(out)}</pre>')
        if cell.get("error") is not None:
            lines.append(f'<pre class="pi-nbcell-error">{escape_html(str(cell["error"]))}</pre>')
        parts.append(f'<div class="pi-nbcell" data-cell="{number}">{"".join(lines)}</div>')
    title = escape_html(str(entry.get("title", "notebook context")))
    return _details("pi-nbcontext", title, "".join(parts))


def queued_label(entry: Mapping[str, Any]) -> str:
    """``steer, after turn 1's tools``: how a queued user message was delivered ("" for the
    prompt), as js/transcript.js writes it."""
    kind = entry.get("queued")
    if kind not in ("steer", "followup"):
        return ""
    word = "steer" if kind == "steer" else "follow-up"
    entered = entry.get("entered")
    return f"{word}, {entered}" if entered else word


def node_times(node: dict[str, Any]) -> str:
    """A node's own time (its span without the time held in step mode), the held time apart
    and its updates, as js/format.js's ``nodeTimes`` writes them."""
    start, end = node.get("start"), node.get("end")
    held = node.get("held") or 0
    if isinstance(start, int | float) and isinstance(end, int | float):
        own = f"{max(0.0, end - start - held) / 1000:.3f}s"
    else:
        own = "…"
    text = own + (f" · held {elapsed(held)}" if held else "")
    updates = int(node.get("updates") or 0)
    return text + (f" · {updates} update{'' if updates == 1 else 's'}" if updates else "")


def _lifecycle(nodes: list[dict[str, Any]], anchors: _Anchors) -> str:
    """The Run -> Turn -> Message / Tool tree (as js/lifecycle.js builds it), in a collapsed box: a
    node with children is a disclosure, a leaf a line linking to its message or tool card."""
    children: dict[Any, list[dict[str, Any]]] = {}
    for node in nodes:
        children.setdefault(node.get("parent"), []).append(node)

    def line(node: dict[str, Any]) -> str:
        detail = f" ({node['detail']})" if node.get("detail") else ""
        label = escape_html(f"{node.get('label', '')}{detail}")
        times = escape_html(f" · {node_times(node)}")
        return (
            f'<span class="pi-node-label">{label}</span><span class="pi-node-times">{times}</span>'
        )

    def build(node: dict[str, Any]) -> str:
        kind = escape_html(str(node.get("kind", "")))
        kids = children.get(node.get("id"), [])
        if not kids:
            anchor = anchors.of(node.get("target"))
            if anchor:
                return (
                    f'<div class="pi-node pi-leaf" data-kind="{kind}">'
                    f'<a class="pi-node-link" href="#{escape_html(anchor)}">{line(node)}</a></div>'
                )
            return f'<div class="pi-node pi-leaf" data-kind="{kind}">{line(node)}</div>'
        inner = "".join(build(child) for child in kids)
        flag = "" if node.get("kind") == "message" else " open"
        return (
            f'<details class="pi-node" data-kind="{kind}"{flag}><summary>{line(node)}</summary>'
            f"{inner}</details>"
        )

    roots = "".join(build(node) for node in children.get(None, []))
    return (
        '<details class="pi-lifecycle-box"><summary>Lifecycle</summary>'
        f'<div class="pi-lifecycle">{roots}</div></details>'
    )


def _status(status: dict[str, Any]) -> str:
    state = str(status.get("state", ""))
    tokens_in = int(status.get("tokens_in", 0)) + int(status.get("est_in", 0) or 0)
    tokens_out = int(status.get("tokens_out", 0)) + int(status.get("est_out", 0) or 0)
    tokens = f"{tokens_in} in / {tokens_out} out"
    if status.get("estimated") or status.get("est_in") or status.get("est_out"):
        tokens = f"~{tokens_in} in / ~{tokens_out} out (estimate)"
    spans = [
        ("model", str(status.get("model", ""))),
        ("state-label", STATE_LABELS.get(state, state)),
        ("turn", f"turn {int(status.get('turn', 0))}"),
        ("tokens", tokens),
        ("cost", f"${float(status.get('cost', 0)):.4f}"),
        ("elapsed", elapsed(status.get("elapsed_ms", 0))),
        ("held-time", held_line(status)),
        ("note", f" — {status['note']}" if status.get("note") else ""),
        ("error", f" — {status['error']}" if status.get("error") else ""),
    ]
    # Spaces between the items: a flex row ignores them, a host without the stylesheet (an
    # untrusted notebook) shows them instead of "faux-1doneturn 2".
    inner = " ".join(f'<span class="pi-{name}">{escape_html(text)}</span>' for name, text in spans)
    return f'<div class="pi-status">{inner}</div>'


def held_line(status: Mapping[str, Any]) -> str:
    """The step-mode time held, apart from the run's elapsed time ("" when nothing was held)."""
    held = status.get("held_ms") or 0
    return f"(held {elapsed(held)})" if held else ""


def render_static_html(state: Mapping[str, Any], css: str = "", anchor: str = "") -> str:
    """The whole run as one sanitised HTML fragment (``css``: the panel's stylesheet;
    ``anchor``: a prefix, unique in the page, for the ids the tree's links point at)."""
    status = state.get("status", {})
    tools = state.get("tools", {})
    anchors = _Anchors(re.sub(r"[^A-Za-z0-9_-]", "", anchor), tools, state.get("messages", []))
    entries = state.get("messages", [])
    coded = _last_answer_with_code(entries)
    messages = "".join(
        _message(i, m, tools, anchors) + (ANSWER_CODE_HINT if i == coded else "")
        for i, m in enumerate(entries)
    )
    style = f"<style>{css}</style>" if css else ""
    state_name = escape_html(str(status.get("state", "")))
    return (
        f'{style}<div class="pi-panel pi-static tex2jax_ignore mathjax_ignore" '
        f'data-state="{state_name}">{_status(status)}<div class="pi-transcript">{messages}'
        f"</div>{_queue(state.get('queue', []))}{context_html(state.get('context'))}"
        f"{timeline_box(as_timeline(state.get('timeline')))}"
        f"{_lifecycle(state.get('lifecycle', []), anchors)}</div>"
    )


ANSWER_CODE_HINT = (
    '<div class="pi-message-note pi-answer-code">the answer\'s code blocks into a new cell: '
    "<code>%agent code --answer</code></div>"
)
"""Under the last answer that has code blocks: the live panel's "insert as cell" buttons need
the view, which a saved transcript has not (it runs no script), so it names the line command
that does the same."""


def _last_answer_with_code(entries: list[dict[str, Any]]) -> int | None:
    """The index of the last assistant entry, if its text holds a code block."""
    for i in range(len(entries) - 1, -1, -1):
        entry = entries[i]
        if entry.get("role") != "assistant" or not any(
            b.get("type") == "text" for b in entry.get("blocks", [])
        ):
            continue
        texts = (_markdown(b) for b in entry.get("blocks", []) if b.get("type") == "text")
        return i if any('<pre class="pi-code"' in t for t in texts) else None
    return None


def _queue(items: list[dict[str, Any]]) -> str:
    """Messages still queued when the run ended: the next ``%%agent`` cell delivers them."""
    if not items:
        return ""
    where = {
        "steer": "steer (with the next %%agent cell's prompt)",
        "followup": "follow-up (after the next %%agent cell's answer)",
    }
    rows = "".join(
        f'<li class="pi-queue-item" data-kind="{escape_html(str(i.get("kind", "")))}">'
        f"{escape_html(where.get(str(i.get('kind')), str(i.get('kind'))))}: "
        f"{escape_html(str(i.get('text', '')))}</li>"
        for i in items
    )
    title = "Queued for the next %%agent cell (%agent status lists it, %agent reset drops it)"
    return (
        f'<div class="pi-queue-box"><div class="pi-queue-title">{title}</div>'
        f'<ul class="pi-queue">{rows}</ul></div>'
    )


__all__ = [
    "FULL_CHARS",
    "PREVIEW_CHARS",
    "elapsed",
    "held_line",
    "node_times",
    "not_run_line",
    "notebook_context_html",
    "queued_label",
    "render_static_html",
]

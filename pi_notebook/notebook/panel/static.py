"""The static rendering of a finished run: sanitised HTML (and text) from the panel state.

After a run the panel's display output also carries this HTML, so GitHub, nbviewer and VS Code
show the transcript without a widget manager. All model and tool text goes through
:func:`~.markdown.render_markdown` or :func:`~.markdown.escape_html`; images are shown only
for whitelisted raster types with base64 data. It must stay pure.
"""

from __future__ import annotations

import re
from typing import Any

from .markdown import escape_html, render_markdown
from .state import IMAGE_TYPES

_BASE64 = re.compile(r"^[A-Za-z0-9+/=\s]*$")
PREVIEW_CHARS = 2_000

STYLE = (
    "<style>.pi-static{font-family:system-ui,sans-serif;font-size:13px;line-height:1.45}"
    ".pi-static .pi-message{margin:4px 0;padding:4px 8px;border-left:3px solid #ccc}"
    ".pi-static .pi-message[data-role=user]{border-color:#4a7bd0}"
    ".pi-static .pi-message[data-role=assistant]{border-color:#4caf50}"
    ".pi-static .pi-thinking{opacity:.65}"
    ".pi-static .pi-tool-card{border:1px solid #ddd;border-radius:4px;margin:4px 0;padding:4px}"
    ".pi-static pre{white-space:pre-wrap;margin:2px 0}</style>"
)


def _image(image: dict[str, Any]) -> str:
    mime, data = image.get("mime"), image.get("data", "")
    if mime not in IMAGE_TYPES or not isinstance(data, str) or not _BASE64.match(data):
        return ""
    return f'<img alt="tool image" style="max-width:320px" src="data:{mime};base64,{data}">'


def _preview(text: str) -> str:
    if len(text) <= PREVIEW_CHARS:
        return text
    return text[:PREVIEW_CHARS] + f"\n[… {len(text) - PREVIEW_CHARS} more characters]"


def _tool_card(card: dict[str, Any]) -> str:
    status = escape_html(str(card.get("status", "")))
    name = escape_html(str(card.get("name", "")))
    duration = card.get("duration_ms")
    took = f" · {duration / 1000:.2f}s" if isinstance(duration, int | float) else ""
    parts = [
        f'<div class="pi-tool-card" data-status="{status}">',
        f"<b>{name}</b> <small>[{status}{took}]</small>",
        f"<pre>{escape_html(_preview(str(card.get('args_text', ''))))}</pre>",
    ]
    result = str(card.get("result_text", ""))
    if result:
        parts.append(f"<pre>{escape_html(_preview(result))}</pre>")
    parts.extend(_image(i) for i in card.get("images", []))
    diff = card.get("diff")
    if isinstance(diff, dict):
        bits = [
            f"{k}: {escape_html(', '.join(map(str, diff.get(k, []))))}"
            for k in ("created", "changed", "deleted")
            if diff.get(k)
        ]
        if bits:
            parts.append(f"<small>namespace: {'; '.join(bits)}</small>")
    parts.append("</div>")
    return "".join(parts)


def _message(entry: dict[str, Any], tools: dict[str, Any]) -> str:
    role = entry.get("role", "custom")
    head = f'<div class="pi-message" data-role="{escape_html(str(role))}">'
    if role == "assistant":
        body: list[str] = []
        for block in entry.get("blocks", []):
            kind = block.get("type")
            if kind == "text" and block.get("text"):
                body.append(render_markdown(block["text"]))
            elif kind == "thinking" and block.get("text"):
                body.append(
                    '<details class="pi-thinking"><summary>thinking</summary>'
                    f"{render_markdown(block['text'])}</details>"
                )
            elif kind == "toolCall":
                card = tools.get(block.get("id", ""))
                if card is not None:
                    body.append(_tool_card(card))
        if entry.get("error"):
            reason = escape_html(str(entry.get("stop_reason") or "error"))
            body.append(f"<p><i>[{reason}] {escape_html(str(entry['error']))}</i></p>")
        elif entry.get("stop_reason") == "aborted":
            body.append("<p><i>[aborted]</i></p>")
        return head + "".join(body) + "</div>"
    if role == "toolResult":
        name = escape_html(str(entry.get("tool_name", "")))
        flag = " (error)" if entry.get("is_error") else ""
        text = escape_html(_preview(str(entry.get("text", ""))))
        return f"{head}<small>{name}{flag} →</small><pre>{text}</pre></div>"
    label = "user" if role == "user" else escape_html(str(entry.get("custom_role", role)))
    images = "".join(_image(i) for i in entry.get("images", []))
    text = render_markdown(str(entry.get("text", "")))
    return f"{head}<small>{label}</small>{text}{images}</div>"


def _lifecycle(nodes: list[dict[str, Any]]) -> str:
    """The Run -> Turn -> Message / Tool tree as nested, collapsed ``<details>``."""
    children: dict[int | None, list[dict[str, Any]]] = {}
    for node in nodes:
        children.setdefault(node.get("parent"), []).append(node)

    def seconds(value: Any) -> str:
        return f"{value / 1000:.3f}s" if isinstance(value, int | float) else "…"

    def build(node: dict[str, Any]) -> str:
        detail = f" ({escape_html(str(node['detail']))})" if node.get("detail") else ""
        updates = f", {int(node['updates'])} updates" if node.get("updates") else ""
        label = escape_html(str(node.get("label", "")))
        kind = escape_html(str(node.get("kind", "")))
        inner = "".join(build(child) for child in children.get(node.get("id"), []))
        return (
            f'<details class="pi-node" data-kind="{kind}"><summary>{label}{detail} '
            f"{seconds(node.get('start'))} → {seconds(node.get('end'))}{updates}</summary>"
            f'<div style="margin-left:12px">{inner}</div></details>'
        )

    roots = "".join(build(node) for node in children.get(None, []))
    if not roots:
        return ""
    return f'<details class="pi-lifecycle"><summary>Lifecycle</summary>{roots}</details>'


def render_static_html(state: dict[str, Any]) -> str:
    """The whole run as one sanitised HTML fragment."""
    status = state.get("status", {})
    tools = state.get("tools", {})
    line = (
        f"{escape_html(str(status.get('model', '')))} · {escape_html(str(status.get('state')))}"
        f" · turn {int(status.get('turn', 0))} · {int(status.get('tokens_in', 0))} in /"
        f" {int(status.get('tokens_out', 0))} out · ${float(status.get('cost', 0)):.4f}"
    )
    messages = "".join(_message(m, tools) for m in state.get("messages", []))
    return (
        f'{STYLE}<div class="pi-static"><div class="pi-status"><small>{line}</small></div>'
        f"{messages}{_lifecycle(state.get('lifecycle', []))}</div>"
    )


__all__ = ["render_static_html"]

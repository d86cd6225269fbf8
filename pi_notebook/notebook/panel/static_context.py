"""The static transcript's context box: what the model was last sent, as js/context.js shows
it (without the raw JSON), with what changed since the previous request first and the whole
request collapsed under it. Every text escaped. Pure.
"""

from __future__ import annotations

import json
from typing import Any

from .markdown import escape_html

TOOLS_HEAD = "tools (their JSON schemas are sent too)"


def _tokens(count: Any) -> str:
    n = int(count) if isinstance(count, int | float) else 0
    return f"≈ {n} token{'' if n == 1 else 's'}"


def context_html(context: Any) -> str:
    """What the model was last sent (as js/context.js's view, without the raw JSON)."""
    if not isinstance(context, dict):
        return ""
    messages = context.get("messages", [])
    tools = context.get("tools", [])
    count = int(context.get("message_count", len(messages)))
    summary = (
        f"What the model was sent — turn {int(context.get('turn', 0))}: {count} "
        f"message{'' if count == 1 else 's'}, {len(tools)} tool{'' if len(tools) == 1 else 's'}"
        f", {_tokens(context.get('tokens'))}"
    )

    def item(role: str, label: str, tokens: Any, text: str, why: str = "") -> str:
        reason = f'<span class="pi-context-why">{escape_html(why)}</span>' if why else ""
        return (
            f'<li class="pi-context-item" data-role="{escape_html(role)}">'
            f'<div class="pi-context-head"><span class="pi-context-role">{escape_html(label)}'
            f'</span><span class="pi-context-tokens">{_tokens(tokens)}</span>{reason}</div>'
            f'<pre class="pi-context-text">{escape_html(text)}</pre></li>'
        )

    system = context.get("system", {})
    items = [item("system", "system prompt", system.get("tokens"), system.get("text") or "(none)")]
    if context.get("skipped"):
        items.append(
            f'<li class="pi-context-skipped">… {int(context["skipped"])} earlier messages</li>'
        )
    for m in messages:
        label = f"{m.get('n', '')}. {m.get('label', '')}"
        items.append(item(str(m.get("role", "")), label, m.get("tokens"), str(m.get("text", ""))))
    tool_items = "".join(
        f'<li class="pi-context-tool"><code>{escape_html(str(t.get("name", "")))}</code> '
        + escape_html(
            (f"— {t['description']} " if t.get("description") else "")
            + f"({_tokens(t.get('tokens'))})"
        )
        + "</li>"
        for t in tools
    )
    options = context.get("options") or {}
    shown = ", ".join(f"{k}={json.dumps(v, default=str)}" for k, v in options.items())
    body = (
        f'<ol class="pi-context-list">{"".join(items)}</ol>'
        f'<div class="pi-context-head">{TOOLS_HEAD if tools else "no tools"}</div>'
        f'<ul class="pi-context-tools">{tool_items}</ul>'
        f'<div class="pi-context-options">{escape_html("options: " + (shown or "none set"))}</div>'
    )
    changes = context.get("changes")
    if isinstance(changes, dict):  # what changed first, the whole request collapsed
        whole = f"the whole request: {count} message{'' if count == 1 else 's'}, " + (
            f"{len(tools)} tool{'' if len(tools) == 1 else 's'}, options"
        )
        body = (
            f'{_changes(changes, item)}<details class="pi-context-all"><summary>'
            f"{escape_html(whole)}</summary>{body}</details>"
        )
    body += '<div class="pi-context-note">≈: an estimate, 4 characters a token (as Pi counts)</div>'
    return (
        f'<details class="pi-context"><summary class="pi-context-summary">'
        f'{escape_html(summary)}</summary><div class="pi-context-body">{body}</div></details>'
    )


def _changes(changes: dict[str, Any], item: Any) -> str:
    """What changed since the previous request (as js/context.js's changes block)."""
    n = int(changes.get("tokens") or 0)
    size = f"≈ {'+' if n >= 0 else '−'}{abs(n)} token{'' if abs(n) == 1 else 's'}"
    head = f"What changed since turn {int(changes.get('since') or 0)}'s request ({size})"
    parts = [f'<div class="pi-context-head pi-context-changes-head">{escape_html(head)}</div>']
    parts += [
        f'<div class="pi-context-change-note">{escape_html(str(note))}</div>'
        for note in changes.get("notes") or []
    ]
    for sign, key in (("+", "added"), ("−", "removed")):
        listed = [
            item(
                str(m.get("role", "")),
                f"{sign} {m.get('n', '')}. {m.get('label', '')}",
                m.get("tokens"),
                str(m.get("text", "")),
                str(m.get("why", "")),
            )
            for m in changes.get(key) or []
        ]
        if listed:
            parts.append(f'<ol class="pi-context-list pi-context-{key}">{"".join(listed)}</ol>')
    unchanged = int(changes.get("unchanged") or 0)
    words = f"unchanged: {unchanged} message{'' if unchanged == 1 else 's'}"
    parts.append(f'<div class="pi-context-unchanged">{escape_html(words)}</div>')
    return f'<div class="pi-context-changes">{"".join(parts)}</div>'


__all__ = ["TOOLS_HEAD", "context_html"]

"""What the model is sent: each request of a run, kept by reference and shown on demand.

:class:`RequestTap` is the Agent's request hook (``on_request``) for one run. The Agent awaits
it right before every model request with exactly what the provider gets: the model, the
``Context`` (system prompt, the messages after ``transform_context`` and ``convert_to_llm``,
the tool schemas), the stream options, the turn and why the request is made. The tap keeps a
:class:`SentRequest` per request (references to those message and tool lists, never copies,
and the options without keys) and lets a listener act first, e.g. step mode holding "before the
model request of turn 2" and the panel showing the request.

The views are built from a :class:`SentRequest` when asked for: :func:`context_summary` (the
panel's readable list: roles, bounded previews, a token estimate), :func:`context_text`
(``%agent context TURN``) and :func:`context_json` (the raw request as Pi's JSON). Every text
that leaves is redacted (``pi_notebook.ai.redact``); API keys, the abort signal and header
values never reach a view. This module must never copy a transcript while a run streams.
"""

from __future__ import annotations

import json
import math
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

from ..agent import ModelRequest, RequestPurpose
from ..ai import AbortSignal, StreamOptions, redact, redact_data
from ..ai import message_text as ai_message_text

#: Characters of one message shown in the panel's list (the raw JSON has all of it).
PREVIEW_CHARS = 300
#: Most messages listed in the panel (the latest ones; ``%agent context`` prints them all).
LISTED_MESSAGES = 100
#: Most characters of the raw JSON sent to the panel on demand.
JSON_CHARS = 200_000
ESTIMATE_NOTE = "an estimate: 4 characters a token, as Pi counts"
_HIDDEN_OPTIONS = frozenset(("api_key", "signal"))


def tokens_text(count: int) -> str:
    return f"≈ {count} token{'' if count == 1 else 's'}"


def estimate_tokens(text: str) -> int:
    """Pi's rule of thumb: a token per 4 characters (UTF-16 code units, as JavaScript counts)."""
    length = len(text) if text.isascii() else len(text.encode("utf-16-le")) // 2
    return math.ceil(length / 4)


#: How ``%agent context`` and the panel name a request that is not the turn's first.
PURPOSE_WORDS = {
    "summary": "a compaction summary request",
    "retry": "the request again, compacted, after a context overflow",
}


@dataclass(slots=True)
class SentRequest:
    """One model request of a run, as the provider got it (references, not copies)."""

    turn: int
    """The loop's turn the request belongs to (a summary or a retry keeps its turn's number)."""
    model: str
    """``provider/id``."""
    system_prompt: str
    messages: list[Any]
    tools: list[Any]
    options: dict[str, Any] = field(default_factory=dict)
    """The stream options that were set, without the key, the signal or header values."""
    purpose: RequestPurpose = "turn"
    """Why it was sent: the turn's request, a compaction summary, or a retry after overflow."""

    def summary(self) -> str:
        count = len(self.messages)
        tools = len(self.tools)
        return (
            f"{count} message{'s' if count != 1 else ''}, {tools} tool{'s' if tools != 1 else ''}"
            f", {tokens_text(self.tokens())}"
        )

    def tokens(self) -> int:
        total = estimate_tokens(self.system_prompt)
        total += sum(estimate_tokens(message_text(m)) for m in self.messages)
        return total + sum(estimate_tokens(_tool_json(t)) for t in self.tools)


def options_view(options: StreamOptions | None) -> dict[str, Any]:
    """The options that were set, without keys: callbacks and header values are only named."""
    if options is None:
        return {}
    shown: dict[str, Any] = {}
    values = {name: getattr(options, name) for name in type(options).model_fields}
    values.update(options.model_extra or {})
    for name, value in values.items():
        if name in _HIDDEN_OPTIONS or value is None:
            continue
        if name == "headers" and isinstance(value, dict):
            shown[name] = {str(k): "(value hidden)" for k in value}
        elif callable(value):
            shown[name] = "(a callback)"
        else:
            shown[name] = value
    data: dict[str, Any] = redact_data(json.loads(json.dumps(shown, default=repr)))
    return data


class RequestTap:
    """The Agent's request hook for one run (``RunConfig(on_request=tap)``): keeps every
    request of the run as a :class:`SentRequest`, numbered by the loop's turns, so a compaction
    summary or an overflow retry keeps its turn's number.

    ``before`` (if given) runs next, and may be awaited, for each request a turn sends (the
    turn's request and its retry), not for summary requests: the panel shows and holds what the
    turn sends.
    """

    def __init__(
        self,
        before: Callable[[SentRequest, AbortSignal | None], Awaitable[None] | None] | None = None,
    ) -> None:
        self.requests: list[SentRequest] = []
        self.before = before
        self._offset = 0

    def next_prompt(self) -> None:
        """The next run (Interrupt & send) goes on in this tap: its turns number on."""
        self._offset = max((r.turn for r in self.requests), default=0)

    def __call__(self, request: ModelRequest) -> Awaitable[None] | None:
        model, context = request.model, request.context
        sent = SentRequest(
            turn=self._offset + max(request.turn, 1),
            model=f"{model.provider}/{model.id}",
            system_prompt=context.system_prompt or "",
            messages=context.messages,
            tools=list(context.tools or []),
            options=options_view(request.options),
            purpose=request.purpose,
        )
        self.requests.append(sent)
        if self.before is not None and sent.purpose != "summary":
            return self.before(sent, request.signal)
        return None


def turn_request(requests: list[SentRequest], turn: int) -> SentRequest | None:
    """What ``turn`` sent for its answer: its last request that is not a summary (the retry,
    when the first was refused for overflow), or None."""
    sent = [r for r in requests if r.turn == turn and r.purpose != "summary"]
    return sent[-1] if sent else None


def turn_count(requests: list[SentRequest]) -> int:
    """How many turns made a model request."""
    return len({r.turn for r in requests if r.purpose != "summary"})


# -- reading messages --------------------------------------------------------------------------


def message_text(message: Any) -> str:
    """A message's content as one readable text (thinking marked, tool calls as
    ``→ name(args)``): :func:`pi_notebook.ai.message_text` with what a request view shows."""
    return ai_message_text(message, thinking=True, tool_calls=True)


def message_label(message: Any) -> str:
    role = str(getattr(message, "role", "custom"))
    if role == "toolResult":
        error = " (error)" if getattr(message, "is_error", False) else ""
        return f"toolResult {getattr(message, 'tool_name', '')}{error}"
    return role


def _tool_json(tool: Any) -> str:
    return json.dumps(
        {"name": tool.name, "description": tool.description, "parameters": tool.json_schema()},
        ensure_ascii=False,
        default=str,
    )


def _cut(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[:limit] + f" … [{len(text) - limit} more]"


# -- the views ---------------------------------------------------------------------------------


def dropped_by_provider(message: Any) -> bool:
    """An assistant message that ended in error or was aborted: the provider step leaves it
    out of what the model is sent (``ai.transform``, as Pi's ``transformMessages``)."""
    return getattr(message, "role", None) == "assistant" and getattr(
        message, "stop_reason", None
    ) in ("error", "aborted")


def context_summary(
    request: SentRequest, *, held: bool = False, changes: dict[str, Any] | None = None
) -> dict[str, Any]:
    """The panel's view: the readable list with roles, bounded previews and token estimates.
    Messages the provider step drops (an aborted or failed reply) are not listed, only
    counted (``dropped``). ``changes`` is what changed since the previous request
    (:func:`~.context_diff.changes_view`; None for a run's first)."""
    sent = [m for m in request.messages if not dropped_by_provider(m)]
    listed = sent[-LISTED_MESSAGES:]
    skipped = len(sent) - len(listed)
    messages = []
    for offset, message in enumerate(listed):
        text = message_text(message)
        messages.append(
            {
                "n": skipped + offset + 1,
                "role": str(getattr(message, "role", "custom")),
                "label": message_label(message),
                "text": redact(_cut(text, PREVIEW_CHARS)),
                "tokens": estimate_tokens(text),
            }
        )
    tools = [
        {
            "name": tool.name,
            "description": redact(_cut(tool.description or "", PREVIEW_CHARS)),
            "tokens": estimate_tokens(_tool_json(tool)),
        }
        for tool in request.tools
    ]
    return {
        "turn": request.turn,
        "model": request.model,
        "held": held,
        "tokens": request.tokens(),
        "message_count": len(sent),
        "dropped": len(request.messages) - len(sent),
        "skipped": skipped,
        "system": {
            "text": redact(_cut(request.system_prompt, PREVIEW_CHARS)),
            "tokens": estimate_tokens(request.system_prompt),
        },
        "messages": messages,
        "tools": tools,
        "options": request.options,
        "changes": changes,
        "json": None,
    }


def context_data(request: SentRequest) -> dict[str, Any]:
    """The request as the provider got it, in Pi's JSON (redacted)."""
    data = {
        "model": request.model,
        "systemPrompt": request.system_prompt,
        "messages": [_dump(m) for m in request.messages],
        "tools": [json.loads(_tool_json(t)) for t in request.tools],
        "options": request.options,
    }
    redacted: dict[str, Any] = redact_data(data)
    return redacted


def context_json(request: SentRequest, limit: int | None = None) -> str:
    text = json.dumps(context_data(request), indent=2, ensure_ascii=False, default=str)
    return text if limit is None else _cut(text, limit)


def _dump(message: Any) -> Any:
    dump = getattr(message, "to_json_dict", None)
    return dump() if callable(dump) else repr(message)


def context_text(request: SentRequest) -> str:
    """``%agent context TURN``: every message of the request with its role and estimate."""
    purpose = f" ({PURPOSE_WORDS[request.purpose]})" if request.purpose in PURPOSE_WORDS else ""
    lines = [
        f"turn {request.turn}: the request to {request.model}{purpose}: {request.summary()} "
        f"({ESTIMATE_NOTE})",
        f"system ({tokens_text(estimate_tokens(request.system_prompt))})",
    ]
    lines.extend(_indented(redact(request.system_prompt) or "(no system prompt)"))
    for n, message in enumerate(request.messages, 1):
        text = message_text(message)
        lines.append(f"{n}. {message_label(message)} ({tokens_text(estimate_tokens(text))})")
        lines.extend(_indented(redact(text) or "(empty)"))
    lines.append(f"tools ({len(request.tools)})")
    for tool in request.tools:
        tokens = estimate_tokens(_tool_json(tool))
        lines.append(f"  {tool.name} ({tokens_text(tokens)}): {redact(tool.description or '')}")
    if request.options:
        options = ", ".join(f"{k}={json.dumps(v, default=str)}" for k, v in request.options.items())
        lines.append(f"options: {options}")
    else:
        lines.append("options: none set")
    return "\n".join(lines)


def _indented(text: str) -> list[str]:
    return ["  " + line for line in text.splitlines() or [""]]


__all__ = [
    "ESTIMATE_NOTE",
    "RequestTap",
    "SentRequest",
    "context_data",
    "context_json",
    "context_summary",
    "context_text",
    "estimate_tokens",
    "message_text",
    "options_view",
    "turn_count",
    "turn_request",
]

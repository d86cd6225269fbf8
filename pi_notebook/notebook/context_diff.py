"""What changed between two model requests of a run: ``%agent context TURN --diff`` and the
"what changed" part of the panel's context view.

For teaching, the useful view of a request is what is new since the one before it: the model's
reply to that request, the tool results added, a steer or follow-up injected, the messages a
compaction replaced (its summary in, which messages out), a changed system prompt, tools or
options. :func:`request_diff` lines the two requests' messages up (equal content, so a message
kept by reference or rebuilt by ``convert_to_llm`` is the same message) with
:class:`difflib.SequenceMatcher`; :func:`diff_text` prints the new parts first and the rest as
one "unchanged" line; :func:`changes_view` is the panel's bounded, redacted form.

A delivered user message is told apart by where it entered: after tool results it is a steer
(the loop polls steering messages after a turn's tools); after a reply without tool calls it is
a steer or a follow-up (the messages alone cannot tell which queue it came from). Built only
when asked for (a request's view, a line command), never per token.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from difflib import SequenceMatcher
from typing import Any

from ..agent import is_summary
from ..ai import redact
from .context_view import (
    ESTIMATE_NOTE,
    PREVIEW_CHARS,
    SentRequest,
    context_text,
    dropped_by_provider,
    estimate_tokens,
    message_label,
    message_text,
    tokens_text,
)

#: Characters of a message that left the request, as ``--diff`` shows it (its text was shown
#: in an earlier request's view).
OUT_PREVIEW = 120
#: Most new or removed messages the panel lists (``%agent context TURN --diff`` prints all).
LISTED_CHANGES = 50
_SUMMARY_COUNT = re.compile(r"a summary of (\d+) earlier messages")


@dataclass(slots=True)
class Change:
    """One message that is new in a request, or that left it."""

    n: int
    """Its number in its own request (as ``%agent context`` numbers them)."""
    message: Any
    why: str
    """What it is: ``a tool result``, ``steer, entered after turn 1's tools``, ..."""


@dataclass(slots=True)
class RequestDiff:
    """What ``request`` sends that ``previous`` did not (see the module docstring)."""

    request: SentRequest
    previous: SentRequest | None
    added: list[Change] = field(default_factory=list)
    removed: list[Change] = field(default_factory=list)
    unchanged: list[int] = field(default_factory=list)
    """The numbers (in ``request``) of the messages both requests send."""
    notes: list[str] = field(default_factory=list)
    """Changes beside the messages: the model, the system prompt, the tools, the options."""

    @property
    def compacted(self) -> bool:
        return any(is_summary(change.message) for change in self.added)


def _key(message: Any) -> str:
    dump = getattr(message, "to_json_dict", None)
    data = dump() if callable(dump) else repr(message)
    return json.dumps(data, sort_keys=True, ensure_ascii=False, default=str)


def _sent(request: SentRequest) -> list[tuple[int, Any]]:
    """The messages the model gets, numbered as ``%agent context`` numbers them."""
    return [(n, m) for n, m in enumerate(request.messages, 1) if not dropped_by_provider(m)]


def request_diff(previous: SentRequest | None, request: SentRequest) -> RequestDiff:
    """What changed from ``previous`` (None: nothing before, everything is new) to ``request``."""
    diff = RequestDiff(request, previous)
    now = _sent(request)
    if previous is None:
        diff.added = [Change(n, m, _why(now, i, None)) for i, (n, m) in enumerate(now)]
        return diff
    before = _sent(previous)
    # The same objects at the start (the usual case: the transcript grew) need no comparing.
    same = 0
    while same < min(len(before), len(now)) and before[same][1] is now[same][1]:
        same += 1
    diff.unchanged.extend(n for n, _ in now[:same])
    matcher = SequenceMatcher(
        None, [_key(m) for _, m in before[same:]], [_key(m) for _, m in now[same:]], False
    )
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        i1, i2, j1, j2 = i1 + same, i2 + same, j1 + same, j2 + same
        if tag == "equal":
            diff.unchanged.extend(n for n, _ in now[j1:j2])
            continue
        diff.removed.extend(Change(n, m, "") for n, m in before[i1:i2])
        diff.added.extend(Change(*now[j], _why(now, j, previous)) for j in range(j1, j2))
    if diff.compacted:
        for change in diff.removed:
            change.why = "replaced by the compaction summary"
        out = sum(_covered(c.message) or 1 for c in diff.removed)
        for change in diff.added:
            covered = _covered(change.message)
            if covered is not None and covered > out:
                change.why = (
                    f"the compaction summary (it stands for {covered} messages: the {out} out "
                    f"below and {covered - out} new since turn {previous.turn}'s request, "
                    "never sent on their own)"
                )
    diff.notes = _notes(previous, request)
    return diff


def _why(now: list[tuple[int, Any]], index: int, previous: SentRequest | None) -> str:
    """What the new message at ``index`` of ``now`` is, from its role and what precedes it."""
    message = now[index][1]
    role = getattr(message, "role", "custom")
    if is_summary(message):
        covered = _covered(message)
        count = f" (it stands for {covered} messages)" if covered is not None else ""
        return f"the compaction summary{count}"
    if role == "toolResult":
        return "a tool result"
    if previous is None:
        return "in the run's first request"
    if role == "assistant":
        return f"the model's reply to turn {previous.turn}'s request"
    if role != "user":
        return "a message added"
    before = getattr(now[index - 1][1], "role", None) if index else None
    if before == "toolResult":
        return f"steer, entered after turn {previous.turn}'s tools"
    if before == "assistant":
        return f"steer or follow-up, entered after turn {previous.turn}"
    return "a user message entered during the run (a steer or follow-up)"


def _covered(message: Any) -> int | None:
    """How many messages a compaction summary stands for (None: not a summary)."""
    if not is_summary(message):
        return None
    found = _SUMMARY_COUNT.search(message_text(message))
    return int(found.group(1)) if found else None


def _notes(previous: SentRequest, request: SentRequest) -> list[str]:
    notes = []
    if previous.model != request.model:
        notes.append(f"model: {previous.model} → {request.model}")
    if previous.system_prompt != request.system_prompt:
        old, new = estimate_tokens(previous.system_prompt), estimate_tokens(request.system_prompt)
        notes.append(f"system prompt changed ({tokens_text(old)} → {tokens_text(new)})")
    old_tools = [t.name for t in previous.tools]
    new_tools = [t.name for t in request.tools]
    if added := [n for n in new_tools if n not in old_tools]:
        notes.append(f"tools added: {', '.join(added)}")
    if gone := [n for n in old_tools if n not in new_tools]:
        notes.append(f"tools removed: {', '.join(gone)}")
    if previous.options != request.options:
        names = sorted(
            k
            for k in previous.options.keys() | request.options.keys()
            if previous.options.get(k) != request.options.get(k)
        )
        notes.append(f"options changed: {', '.join(names)}")
    return notes


def _unchanged_words(diff: RequestDiff) -> str:
    count = len(diff.unchanged)
    words = [f"{count} message{'' if count == 1 else 's'}{_ranges(diff.unchanged)}"]
    notes = " ".join(diff.notes)
    if "system prompt" not in notes:
        words.append("the system prompt")
    if "tools" not in notes:
        tools = len(diff.request.tools)
        words.append(f"{tools} tool{'' if tools == 1 else 's'}")
    if "options" not in notes:
        words.append("the options")
    return ", ".join(words)


def _ranges(numbers: list[int]) -> str:
    """`` (1–4, 6)``: message numbers as runs ("" for none)."""
    if not numbers:
        return ""
    runs: list[list[int]] = []
    for n in numbers:
        if runs and n == runs[-1][-1] + 1:
            runs[-1].append(n)
        else:
            runs.append([n])
    parts = [f"{r[0]}–{r[-1]}" if len(r) > 1 else str(r[0]) for r in runs]
    return f" ({', '.join(parts)})"


def diff_text(diff: RequestDiff) -> str:
    """``%agent context TURN --diff``: the new parts first (in full), the messages that left
    (a preview each), the rest as one "unchanged" line."""
    request, previous = diff.request, diff.previous
    if previous is None:
        return (
            f"turn {request.turn}: the run's first request: nothing before it to compare with, "
            f"so all of it is new\n{context_text(request)}"
        )
    delta = request.tokens() - previous.tokens()
    lines = [
        f"turn {request.turn}: what changed since turn {previous.turn}'s request "
        f"(now {request.summary()}, {delta:+d} tokens; {ESTIMATE_NOTE})"
    ]
    for note in diff.notes:
        lines.append(note)
        if note.startswith("system prompt changed"):  # the new one in full
            text = redact(request.system_prompt) or "(no system prompt)"
            lines.extend("    " + line for line in text.splitlines())
    if diff.added:
        lines.append(f"new ({len(diff.added)}):")
    for change in diff.added:
        text = message_text(change.message)
        lines.append(
            f"+ {change.n}. {message_label(change.message)} "
            f"({tokens_text(estimate_tokens(text))}): {change.why}"
        )
        lines.extend("    " + line for line in (redact(text) or "(empty)").splitlines() or [""])
    if diff.removed:
        why = "replaced by the compaction summary" if diff.compacted else "no longer sent"
        numbered = f"numbered as turn {previous.turn} sent them"
        lines.append(f"out ({len(diff.removed)}, {why}; {numbered}):")
    for change in diff.removed:
        text = " ".join(message_text(change.message).split())
        preview = text if len(text) <= OUT_PREVIEW else text[: OUT_PREVIEW - 1] + "…"
        lines.append(
            f"- {change.n}. {message_label(change.message)} "
            f"({tokens_text(estimate_tokens(text))}): {redact(preview) or '(empty)'}"
        )
    if not diff.added and not diff.removed and not diff.notes:
        lines.append("no change: the same messages as before")
    lines.append(f"unchanged: {_unchanged_words(diff)}")
    return "\n".join(lines)


def _item(change: Change, limit: int) -> dict[str, Any]:
    text = message_text(change.message)
    cut = text if len(text) <= limit else text[:limit] + f" … [{len(text) - limit} more]"
    return {
        "n": change.n,
        "role": str(getattr(change.message, "role", "custom")),
        "label": message_label(change.message),
        "why": change.why,
        "text": redact(cut),
        "tokens": estimate_tokens(text),
    }


def changes_view(previous: SentRequest | None, request: SentRequest) -> dict[str, Any] | None:
    """The panel's "what changed since the previous request" (None for a run's first request:
    all of it is new, and the list shows it)."""
    if previous is None:
        return None
    diff = request_diff(previous, request)
    return {
        "since": previous.turn,
        "added": [_item(c, PREVIEW_CHARS) for c in diff.added[-LISTED_CHANGES:]],
        "removed": [_item(c, OUT_PREVIEW) for c in diff.removed[:LISTED_CHANGES]],
        "more": max(0, len(diff.added) - LISTED_CHANGES)
        + max(0, len(diff.removed) - LISTED_CHANGES),
        "compacted": diff.compacted,
        "unchanged": len(diff.unchanged),
        "notes": diff.notes,
        "tokens": request.tokens() - previous.tokens(),
    }


__all__ = ["Change", "RequestDiff", "changes_view", "diff_text", "request_diff"]

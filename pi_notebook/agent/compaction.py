"""Context compaction: what the model sees stays within its context window.

:class:`Compactor` is the ``Agent``'s ``transform_context`` (after the user's own): before each
request it estimates the context's size (the last reply's reported usage plus 4 characters a
token for what came after it, or 4 characters a token for everything) and, past ``threshold``
of the model's ``context_window``, asks the same model for a summary of the oldest messages
and sends that one summary message (:func:`~.summarise.summary_message`) in their place. The
recent messages (about ``keep_fraction`` of the context, at least the last one) are kept whole,
a cut never falls between a tool call and its results, and an assistant message with an
unanswered tool call is never summarised. The summary is cached (keyed on the identity of the
last message it covers) and reused for every later request, and summarised again, with the old
summary in it, when the context grows past the threshold once more. The transcript itself
(``Agent.state.messages``) is never changed: only the list handed to the model is.

When a provider refuses a request for its length (:func:`~pi_notebook.ai.is_context_overflow`)
before sending anything, the ``Agent`` compacts once (:meth:`Compactor.compact` on
``last_input``) and sends the request once more, where it makes its requests; the refusal is
never seen by the loop. A request whose signal was aborted meanwhile (during a summary) is
answered ``aborted`` without being sent.

A failed or aborted summary request leaves the context as it was (the run goes on, or ends at
the abort); nothing here raises into the loop.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Any

from ..ai import (
    AbortSignal,
    AgentMessage,
    AssistantMessage,
    Context,
    Model,
    ToolCall,
    maybe_await,
)
from .sizes import estimate_tokens, message_chars
from .summarise import is_summary, reply_text, summary_message, summary_request

DEFAULT_THRESHOLD = 0.8
DEFAULT_KEEP_FRACTION = 0.3

Summarise = Callable[[Context, AbortSignal | None], Awaitable[AssistantMessage]]


@dataclass
class Compaction:
    """One compaction, as its listeners see it."""

    count: int
    """Messages of the transcript the summary now stands for."""
    tokens_before: int
    tokens_after: int
    position: int
    """The transcript's length when it happened (the next message goes there)."""
    summary: str

    @property
    def note(self) -> str:
        return f"compacted {self.count} message{'s' if self.count != 1 else ''}"


@dataclass
class _Cached:
    covered: int
    last: AgentMessage
    message: AgentMessage
    made_at: int


class Compactor:
    """Compacts what the model sees (see the module docstring)."""

    def __init__(
        self,
        *,
        model: Callable[[], Model],
        summarise: Summarise,
        overhead_chars: Callable[[], int] = lambda: 0,
        enabled: bool = True,
        threshold: float = DEFAULT_THRESHOLD,
        keep_fraction: float = DEFAULT_KEEP_FRACTION,
    ) -> None:
        """``summarise(context, signal)`` runs the summary request on the same model;
        ``overhead_chars()`` is the size of the system prompt and tool definitions."""
        self._model = model
        self._summarise = summarise
        self._overhead = overhead_chars
        self.enabled = enabled
        self.threshold = threshold
        self.keep_fraction = keep_fraction
        self._cached: _Cached | None = None
        self._listeners: tuple[Callable[[Compaction], Any], ...] = ()
        self.last_input: list[AgentMessage] | None = None
        """The messages of the latest request (what an overflow retry compacts)."""
        self.last_failure: AssistantMessage | None = None
        """The reply of the latest summary request that gave no summary (error, aborted)."""

    # -- listeners and state ---------------------------------------------------------------

    def subscribe(self, listener: Callable[[Compaction], Any]) -> Callable[[], None]:
        """Call ``listener(compaction)`` after each compaction; returns ``unsubscribe``."""
        self._listeners = (*self._listeners, listener)

        def unsubscribe() -> None:
            self._listeners = tuple(f for f in self._listeners if f is not listener)

        return unsubscribe

    def reset(self) -> None:
        """Forget the summary (a new conversation)."""
        self._cached = None
        self.last_input = None

    @property
    def compacted(self) -> int:
        """How many messages of the transcript the current summary stands for."""
        return self._cached.covered if self._cached is not None else 0

    # -- what the model sees ---------------------------------------------------------------

    def view(self, messages: Sequence[AgentMessage]) -> list[AgentMessage]:
        """``messages`` with the cached summary in place of the messages it covers."""
        cached = self._cached
        if cached is not None:
            covered = cached.covered
            if len(messages) >= covered and messages[covered - 1] is cached.last:
                return [cached.message, *messages[covered:]]
        return list(messages)

    def estimate(self, messages: Sequence[AgentMessage]) -> int:
        """Estimated tokens of the request ``messages`` make (through the cached summary)."""
        view = self.view(messages)
        offset = len(messages) - len(view)  # full index = view index + offset
        fresh_from = self._cached.made_at if self._cached is not None else 0
        for index in range(len(view) - 1, -1, -1):
            message = view[index]
            if isinstance(message, AssistantMessage) and index + offset >= fresh_from:
                usage = message.usage
                total = usage.input + usage.output + usage.cache_read + usage.cache_write
                if total and message.stop_reason not in ("error", "aborted"):
                    after = sum(message_chars(m) for m in view[index + 1 :])
                    return total + estimate_tokens(after)
        return estimate_tokens(self._overhead() + sum(message_chars(m) for m in view))

    async def transform(
        self, messages: list[AgentMessage], signal: AbortSignal | None = None
    ) -> list[AgentMessage]:
        """The ``transform_context`` hook: compact past the threshold, then the view."""
        self.last_input = messages
        if not self.enabled:
            return messages
        window = self._model().context_window
        if (
            window
            and (signal is None or not signal.aborted)
            and self.estimate(messages) > self.threshold * window
        ):
            await self.compact(messages, signal)
        return self.view(messages)

    # -- compacting ------------------------------------------------------------------------

    async def compact(
        self, messages: Sequence[AgentMessage], signal: AbortSignal | None = None
    ) -> Compaction | None:
        """Summarise the older messages now; None when there is nothing to summarise or the
        summary request failed (``last_failure``)."""
        view = self.view(messages)
        before = self.estimate(messages)
        window = self._model().context_window or before
        # Keep about keep_fraction of the context as it is now, or of the window if smaller
        # (after a provider's refusal the estimate may be short of the truth: keep less).
        cut = self._cut(view, min(window, before))
        if cut is None:
            return None
        reply = await self._summarise(summary_request(view[:cut], int(window * 2.4)), signal)
        text = reply_text(reply)
        if reply.stop_reason in ("error", "aborted") or not text:
            self.last_failure = reply
            return None
        self.last_failure = None
        offset = len(messages) - len(view)
        covered = cut + offset
        self._cached = _Cached(
            covered=covered,
            last=messages[covered - 1],
            message=summary_message(text, covered),
            made_at=len(messages),
        )
        done = Compaction(covered, before, self.estimate(messages), len(messages), text)
        for listener in self._listeners:
            await maybe_await(listener(done))
        return done

    def _cut(self, view: Sequence[AgentMessage], size: int) -> int | None:
        """Where the kept tail starts: never at a tool result, never after an unanswered
        tool call; about ``keep_fraction`` of ``size`` kept, at least the last message."""
        answered = {getattr(m, "tool_call_id", None) for m in view if m.role == "toolResult"}
        limit = len(view) - 1
        for index, message in enumerate(view):
            if isinstance(message, AssistantMessage) and any(
                isinstance(b, ToolCall) and b.id not in answered for b in message.content
            ):
                limit = index
                break
        first = 2 if view and is_summary(view[0]) else 1
        candidates = [i for i in range(first, limit + 1) if view[i].role != "toolResult"]
        if not candidates:
            return None
        keep_budget = self.keep_fraction * size
        cut = candidates[-1]
        kept = estimate_tokens(sum(message_chars(m) for m in view[cut:]))
        for index in reversed(candidates[:-1]):
            size = estimate_tokens(sum(message_chars(m) for m in view[index:cut]))
            if kept + size > keep_budget:
                break
            cut, kept = index, kept + size
        return cut


__all__ = [
    "DEFAULT_KEEP_FRACTION",
    "DEFAULT_THRESHOLD",
    "Compaction",
    "Compactor",
]

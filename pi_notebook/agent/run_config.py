"""Per-run settings of the ``Agent`` and the request hook.

:class:`RunConfig` is one run's settings, given to ``Agent.prompt(..., run=...)`` or
``Agent.continue_(run=...)``: each field left at :data:`KEEP` takes the Agent's own value, any
other value (``None`` included, where it means "no limit") replaces it for that run only.
Nothing of the Agent is written: the next run without a ``RunConfig`` runs on the Agent's own
values. A caller that wants different settings for one run (the notebook's ``%%agent --max-turns
3``) builds one of these instead of patching the Agent and putting it back.

:class:`ModelRequest` is what the request hook (``Agent(on_request=...)`` and
``RunConfig.on_request``) is awaited with, right before the Agent sends a model request: why it
is sent (:data:`RequestPurpose`), the turn it belongs to, and exactly the model, context and
stream options the provider gets. A run makes three kinds of request: the loop's ``turn``
request, a compaction ``summary`` request (made while the turn's context is prepared), and the
turn's request once more (``retry``) after the provider refused it for the context's length.
The hook may hold the request (step mode) by returning an awaitable; it must not change what
it is given.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from enum import Enum
from typing import TYPE_CHECKING, Any, Final, Literal, TypeAlias

from ..ai import AbortSignal, Context, Model, StreamOptions

if TYPE_CHECKING:
    from .events import AgentEvent


class _Keep(Enum):
    KEEP = "KEEP"

    def __repr__(self) -> str:
        return "KEEP"


KEEP: Final = _Keep.KEEP
"""A :class:`RunConfig` field's default: the Agent's own value for this run."""

Keep: TypeAlias = Literal[_Keep.KEEP]

RequestPurpose: TypeAlias = Literal["turn", "summary", "retry"]
"""``"turn"`` (the loop's request), ``"summary"`` (a compaction summary) or ``"retry"`` (the
turn's request again, compacted, after a context overflow)."""


@dataclass(slots=True, frozen=True)
class ModelRequest:
    """One model request, as the provider gets it (references, not copies)."""

    purpose: RequestPurpose
    turn: int
    """The run's turn (``turn_start`` events so far, at least 1); a summary or a retry keeps
    its turn's number. 0 for a summary made outside a run (``Agent.compact()``)."""
    model: Model
    context: Context
    options: StreamOptions
    """With the run's signal and, when one was found, the API key: never show it whole."""

    @property
    def signal(self) -> AbortSignal | None:
        return self.options.signal


RequestHook: TypeAlias = Callable[[ModelRequest], Awaitable[None] | None]
"""Called with each :class:`ModelRequest` before it is sent; an awaitable it returns is
awaited first (the request waits)."""

MaxTokens: TypeAlias = int | Callable[[Model, Context], int | None] | None
"""An output limit: tokens, ``None`` (the provider's default), or a function of the request
(the model and the context actually sent) giving one, called for each request."""


@dataclass(slots=True, frozen=True)
class RunConfig:
    """One run's settings; :data:`KEEP` (every field's default) keeps the Agent's own."""

    max_turns: int | Keep | None = KEEP
    max_cost: float | Keep | None = KEEP
    """USD this run may spend."""
    budget: float | Keep | None = KEEP
    """USD the whole conversation may have spent (checked before the run and between turns)."""
    max_tokens: MaxTokens | Keep = KEEP
    """The output limit of this run's requests (``stream_options.max_tokens``)."""
    compaction: bool | Keep = KEEP
    """False: this run sends the whole history (no summary, no overflow retry); True keeps
    the Agent's own setting (``Agent(compaction=False)`` stays off)."""
    before_tool_call: Callable[..., Any] | Keep | None = KEEP
    listeners: Sequence[Callable[[AgentEvent], Any] | Callable[[AgentEvent, AbortSignal], Any]] = ()
    """Extra listeners for this run only, called as ``subscribe``'s (awaited, in order), after
    the Agent's own subscribers."""
    on_request: RequestHook | Keep | None = KEEP
    """The request hook for this run (see :class:`ModelRequest`)."""
    convert_to_llm: Callable[[list[Any]], Any] | Keep = KEEP
    """This run's ``convert_to_llm`` (the transcript to the model's messages, also for a
    compacted retry): the notebook's turns its context messages into text this way."""


def pick(value: Any, own: Any) -> Any:
    """``value`` unless it is :data:`KEEP`, then ``own``."""
    return own if value is KEEP else value


__all__ = [
    "KEEP",
    "MaxTokens",
    "ModelRequest",
    "RequestHook",
    "RequestPurpose",
    "RunConfig",
    "pick",
]

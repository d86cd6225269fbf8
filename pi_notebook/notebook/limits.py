"""The output limit (``max_tokens``) of a ``%%agent`` cell's model requests.

Pi sends ``options.maxTokens ?? model.maxTokens`` clamped to what the context window leaves
(``clampMaxTokensToContext``); a model without ``maxTokens`` gets no limit at all, and a local
model in a repetition loop then streams until someone stops it. Here every request of a cell
carries a limit: ``--max-tokens N`` for that cell, else the Agent's own ``max_tokens`` (its
``stream_options.max_tokens``, left as it is), else the model's ``max_tokens``, else the
catalogue's value for the model's id (a hand-made ``Model`` of a known model), else
:data:`DEFAULT_MAX_TOKENS`, a conservative default for an unknown local model. A default (not
a value the user gave) is clamped, as Pi does, to the context window minus the size of what is
sent and a safety margin: for each request, on the context actually sent (a compacted one after
a compaction, a summary request's own), never below :data:`MIN_OUTPUT_TOKENS` (or the default
itself when it is lower), so a request never asks for ``max_tokens: 1``. The limit reaches the
Agent as the run's ``RunConfig.max_tokens``; the Agent's own options are never written.

This module must never touch the network or read keys; the catalogue is imported lazily.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from ..agent import Agent, MaxTokens
from ..ai import Context, Model
from .estimate import estimate_request_tokens

DEFAULT_MAX_TOKENS = 4096
#: Tokens Pi keeps free in the context window beyond the prompt (``CONTEXT_SAFETY_TOKENS``).
CONTEXT_SAFETY_TOKENS = 4096
#: The least a clamped default asks for (a summary, a reply after compaction): never 1.
MIN_OUTPUT_TOKENS = 1024


@dataclass(frozen=True)
class OutputLimit:
    tokens: int
    source: str
    """Where the value came from, for ``%agent status``."""
    ceiling: int = 0
    """For a default clamped to the context window: the default (each request is clamped
    again on what it sends); 0 for a value the user gave."""

    def text(self) -> str:
        return f"{self.tokens} tokens per reply (from {self.source})"


@functools.cache
def catalogue_max_tokens(provider: str, model_id: str) -> int:
    """The catalogue's max output tokens for this model (by provider and id, else by id in
    any provider); 0 when it does not know the id."""
    try:
        from ..ai.providers import get_model, list_models
    except ImportError:  # pragma: no cover (the providers ship with the package)
        return 0
    try:
        return get_model(provider, model_id).max_tokens
    except KeyError:
        pass
    return next((m.max_tokens for m in list_models() if m.id == model_id), 0)


def _default(model: Model) -> tuple[int, str]:
    if model.max_tokens > 0:
        return model.max_tokens, "the model's max_tokens"
    known = catalogue_max_tokens(model.provider, model.id)
    if known > 0:
        return known, f"the catalogue's value for {model.id}"
    return DEFAULT_MAX_TOKENS, "the default for a model without max_tokens"


def room_for_reply(model: Model, ceiling: int, sent_tokens: int) -> int:
    """``ceiling`` clamped to what the context window leaves after ``sent_tokens`` (and Pi's
    safety margin), never below :data:`MIN_OUTPUT_TOKENS` or ``ceiling`` when that is lower."""
    if model.context_window <= 0:
        return ceiling
    room = model.context_window - sent_tokens - CONTEXT_SAFETY_TOKENS
    return max(min(ceiling, MIN_OUTPUT_TOKENS), min(ceiling, room))


def _sent_tokens(messages: Sequence[Any], system_prompt: str, tools: Sequence[Any]) -> int:
    return estimate_request_tokens(messages, system_prompt, tools)


def output_limit(agent: Agent, cell_value: int | None = None) -> OutputLimit:
    """The limit a cell's requests carry (see the module docstring), as it stands for what the
    next request would send (the conversation through its compaction summary)."""
    if cell_value is not None:
        return OutputLimit(cell_value, "--max-tokens")
    own = agent.stream_options.max_tokens
    if own:
        return OutputLimit(own, "the Agent's max_tokens")
    model = agent.state.model
    tokens, source = _default(model)
    if model.context_window > 0:
        state = agent.state
        view = agent.compaction.view(state.messages) if agent.compaction.enabled else state.messages
        clamped = room_for_reply(
            model, tokens, _sent_tokens(view, state.system_prompt, state.tools)
        )
        if clamped < tokens:
            source = f"{source}, clamped to the room left in the context window"
        return OutputLimit(clamped, source, ceiling=tokens)
    return OutputLimit(tokens, source)


def run_max_tokens(limit: OutputLimit) -> MaxTokens:
    """The run's ``RunConfig.max_tokens``: the value the user gave, or the default clamped
    again for each request on the context it sends."""
    ceiling = limit.ceiling
    if not ceiling:
        return limit.tokens

    def per_request(model: Model, context: Context) -> int:
        sent = _sent_tokens(context.messages, context.system_prompt or "", context.tools or ())
        return room_for_reply(model, ceiling, sent)

    return per_request


__all__ = [
    "CONTEXT_SAFETY_TOKENS",
    "DEFAULT_MAX_TOKENS",
    "MIN_OUTPUT_TOKENS",
    "OutputLimit",
    "catalogue_max_tokens",
    "output_limit",
    "room_for_reply",
    "run_max_tokens",
]

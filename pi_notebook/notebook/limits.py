"""The output limit (``max_tokens``) of a ``%%agent`` cell's model requests.

Pi sends ``options.maxTokens ?? model.maxTokens`` clamped to what the context window leaves
(``clampMaxTokensToContext``); a model without ``maxTokens`` gets no limit at all, and a local
model in a repetition loop then streams until someone stops it. Here every request of a cell
carries a limit: ``--max-tokens N`` for that cell, else the Agent's own ``max_tokens`` (its
``stream_options.max_tokens``, left as it is), else the model's ``max_tokens``, else the
catalogue's value for the model's id (a hand-made ``Model`` of a known model), else
:data:`DEFAULT_MAX_TOKENS`, a conservative default for an unknown local model. A default (not
a value the user gave) is clamped, as Pi does, to the context window minus the conversation's
estimated size and a safety margin, estimated once when the cell starts.

This module must never touch the network or read keys; the catalogue is imported lazily.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass

from ..agent import Agent
from ..ai import Model
from .estimate import estimate_context_tokens

DEFAULT_MAX_TOKENS = 4096
#: Tokens Pi keeps free in the context window beyond the prompt (``CONTEXT_SAFETY_TOKENS``).
CONTEXT_SAFETY_TOKENS = 4096


@dataclass(frozen=True)
class OutputLimit:
    tokens: int
    source: str
    """Where the value came from, for ``%agent status``."""

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


def output_limit(agent: Agent, cell_value: int | None = None) -> OutputLimit:
    """The limit a cell's requests carry (see the module docstring)."""
    if cell_value is not None:
        return OutputLimit(cell_value, "--max-tokens")
    own = agent.stream_options.max_tokens
    if own:
        return OutputLimit(own, "the Agent's max_tokens")
    model = agent.state.model
    tokens, source = _default(model)
    if model.context_window > 0:
        state = agent.state
        used = estimate_context_tokens(state.messages, state.system_prompt, state.tools)
        room = max(1, model.context_window - used - CONTEXT_SAFETY_TOKENS)
        if room < tokens:
            return OutputLimit(room, f"{source}, clamped to the room left in the context window")
    return OutputLimit(tokens, source)


def _set_max_tokens(agent: Agent, tokens: int | None) -> None:
    agent.stream_options = agent.stream_options.model_copy(update={"max_tokens": tokens})


def apply_limit(agent: Agent, limit: OutputLimit) -> Callable[[], None]:
    """Set the limit in ``agent.stream_options`` for one cell; returns what puts the Agent's
    own value back (only that field: other options changed meanwhile stay)."""
    previous = agent.stream_options.max_tokens
    _set_max_tokens(agent, limit.tokens)

    def restore() -> None:
        _set_max_tokens(agent, previous)

    return restore


__all__ = [
    "CONTEXT_SAFETY_TOKENS",
    "DEFAULT_MAX_TOKENS",
    "OutputLimit",
    "apply_limit",
    "catalogue_max_tokens",
    "output_limit",
]

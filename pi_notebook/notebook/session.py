"""The per-kernel notebook session: the default conversation and what the last run left behind.

One :class:`NotebookSession` lives per process (``get_session()``). It owns the default
``Agent`` (created lazily on the resolved default model), remembers which agent the last
``%%agent`` cell used (the target of the ``%agent`` line commands), a bounded log of the last
run (:class:`~.run_log.RunLog`), what each model request of that run was sent (``%agent
context``: references to the messages, not copies), its final reply, and a background run if
one was scheduled. It must never print, never touch the user namespace except through explicit
calls from the magic, and never hold an API key.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from ..agent import Agent
from ..ai import Model
from .context_view import SentRequest
from .conversation_settings import copy_settings
from .models import ResolvedModel, check_api_key, resolve_default_model
from .run_log import RunLog
from .system_prompt import DEFAULT_SYSTEM_PROMPT


@dataclass
class NotebookSession:
    default: Agent | None = None
    current: Agent | None = None
    """The agent of the last ``%%agent`` cell (line commands act on it)."""
    model_source: dict[int, str] = field(default_factory=dict)
    """Per agent (by id): why its model was chosen."""
    last_run: RunLog | None = None
    """What the last ``%%agent`` run left for ``%agent events`` / ``status`` (bounded)."""
    last_reply: str = ""
    last_requests: list[SentRequest] = field(default_factory=list)
    """What each model request of the last run was sent (``%agent context TURN``)."""
    background: asyncio.Task[None] | None = None

    @property
    def last_events(self) -> list[dict[str, Any]]:
        """The last run's events as ``%agent events`` shows them."""
        return self.last_run.records() if self.last_run is not None else []

    def default_agent(self, namespace: Mapping[str, Any] | None = None) -> Agent:
        """The default conversation, created on the default model the first time."""
        if self.default is None:
            resolved = resolve_default_model(namespace)
            self.default = Agent(model=resolved.model, system_prompt=DEFAULT_SYSTEM_PROMPT)
            self.model_source[id(self.default)] = resolved.source
        return self.default

    def target(self, namespace: Mapping[str, Any] | None = None) -> Agent:
        """The agent line commands act on."""
        return self.current if self.current is not None else self.default_agent(namespace)

    def set_model(self, agent: Agent, model: Model, source: str) -> None:
        check_api_key(model)
        agent.state.model = model
        self.model_source[id(agent)] = source

    def source_of(self, agent: Agent) -> str:
        return self.model_source.get(id(agent), "given")

    def ensure_usable(self, agent: Agent, namespace: Mapping[str, Any] | None = None) -> None:
        """Give a model-less agent the default model; check the key of the agent's model."""
        if agent.state.model.provider == "unknown":
            resolved: ResolvedModel = resolve_default_model(namespace)
            agent.state.model = resolved.model
            self.model_source[id(agent)] = resolved.source
        check_api_key(agent.state.model)

    def new_default(self, namespace: Mapping[str, Any] | None = None) -> Agent:
        """A fresh default conversation that keeps the current default's model."""
        old = self.default
        self.default = None
        agent = self.default_agent(namespace) if old is None else Agent(model=old.state.model)
        if old is not None:
            self.model_source[id(agent)] = self.source_of(old)
            agent.state.system_prompt = old.state.system_prompt
            agent.state.thinking_level = old.state.thinking_level
            copy_settings(old, agent)  # tools and approval policy
        self.default = agent
        if self.current is old:
            self.current = agent
        return agent


_session = NotebookSession()


def get_session() -> NotebookSession:
    return _session


__all__ = ["NotebookSession", "get_session"]

"""The per-kernel notebook session: the conversations by name and what the last run left behind.

One :class:`NotebookSession` lives per process (``get_session()``). It keeps every
:class:`~.conversation.Conversation` of the notebook by name (``default``, or the ``--agent NAME``
variable; a replay's has none), which one the line commands act on (``conversation``: the last
``%%agent`` cell's or replay's), which one ``%agent undo`` acts on (``last_cell``: the last
``%%agent`` cell's, never a replay's), a bounded log of the last run (:class:`~.run_log.RunLog`),
its final reply, and a background run if one was scheduled. It must never print, never touch the
user namespace except through explicit calls from the magic, and never hold an API key.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from ..agent import Agent
from ..ai import Model
from .context_view import SentRequest
from .conversation import DEFAULT, Conversation, key_of
from .models import check_api_key, resolve_default_model
from .run_log import RunLog
from .system_prompt import DEFAULT_SYSTEM_PROMPT

USE_MODEL_DEFAULT = "use_model(), the session's default"
"""Where a conversation's model came from when it took the model ``use_model`` set."""


@dataclass
class NotebookSession:
    conversations: dict[str, Conversation] = field(default_factory=dict)
    """By name: ``default`` or the ``--agent`` variable (as :func:`key_of` spells it)."""
    conversation: Conversation | None = None
    """The conversation of the last ``%%agent`` cell or replay (line commands act on it)."""
    last_cell: Conversation | None = None
    """The conversation of the last ``%%agent`` cell (``%agent undo`` acts on it)."""
    others: list[Conversation] = field(default_factory=list)
    """Conversations of agents given by object rather than by name (kept for their source)."""
    default_model: Model | None = None
    """The model ``use_model`` set: a conversation made later without ``--model`` (a fresh
    ``--agent NAME`` too) takes it, not the default a provider key in the environment would
    give."""
    last_run: RunLog | None = None
    """What the last ``%%agent`` run left for ``%agent events`` / ``status`` (bounded)."""
    last_reply: str = ""
    background: asyncio.Task[None] | None = None

    @property
    def current(self) -> Agent | None:
        """The agent of the last ``%%agent`` cell or replay."""
        return self.conversation.agent if self.conversation is not None else None

    @property
    def default(self) -> Agent | None:
        found = self.conversations.get(DEFAULT)
        return found.agent if found is not None else None

    @property
    def last_requests(self) -> list[SentRequest]:
        """What each model request of the current conversation's last run was sent."""
        return self.conversation.last_requests if self.conversation is not None else []

    @property
    def last_events(self) -> list[dict[str, Any]]:
        """The last run's events as ``%agent events`` shows them."""
        return self.last_run.records() if self.last_run is not None else []

    def default_conversation(self, namespace: Mapping[str, Any] | None = None) -> Conversation:
        """The default conversation, created on the default model the first time."""
        found = self.conversations.get(DEFAULT)
        if found is None:
            resolved = resolve_default_model(namespace)
            agent = Agent(model=resolved.model, system_prompt=DEFAULT_SYSTEM_PROMPT)
            found = Conversation(agent, source=resolved.source)
            self.conversations[DEFAULT] = found
        return found

    def default_agent(self, namespace: Mapping[str, Any] | None = None) -> Agent:
        return self.default_conversation(namespace).agent

    def named(self, name: str, agent: Agent) -> Conversation:
        """The conversation of ``--agent NAME`` (a new one when the variable holds another
        agent than before)."""
        key = key_of(name)
        found = self.conversations.get(key)
        if found is None or found.agent is not agent:
            found = self.conversations[key] = Conversation(agent, name=name)
        return found

    def conversation_of(self, agent: Agent) -> Conversation:
        """The conversation ``agent`` is the Agent of (one is made for an agent not seen yet)."""
        for found in (*self.conversations.values(), *self.others):
            if found.agent is agent:
                return found
        if self.conversation is not None and self.conversation.agent is agent:
            return self.conversation
        made = Conversation(agent)
        self.others = [*self.others[-15:], made]
        return made

    def target(self, namespace: Mapping[str, Any] | None = None) -> Conversation:
        """The conversation line commands act on."""
        if self.conversation is not None:
            return self.conversation
        return self.default_conversation(namespace)

    def set_model(self, agent: Agent, model: Model, source: str) -> None:
        check_api_key(model)
        self.conversation_of(agent).set_model(model, source)

    def source_of(self, agent: Agent) -> str:
        return self.conversation_of(agent).source

    def ensure_usable(self, agent: Agent, namespace: Mapping[str, Any] | None = None) -> None:
        """Give a model-less agent the session's default model (``use_model``'s, else the
        default resolved from the environment); check the key of the agent's model."""
        if agent.state.model.provider == "unknown":
            if self.default_model is not None:
                self.conversation_of(agent).set_model(self.default_model, USE_MODEL_DEFAULT)
            else:
                resolved = resolve_default_model(namespace)
                self.conversation_of(agent).set_model(resolved.model, resolved.source)
        check_api_key(agent.state.model)

    def new_default(self, namespace: Mapping[str, Any] | None = None) -> Conversation:
        """A fresh default conversation that keeps the current default's model, system prompt,
        thinking level, tools and approval policy."""
        old = self.conversations.pop(DEFAULT, None)
        if old is None:
            return self.default_conversation(namespace)
        fresh = old.fresh()
        self.conversations[DEFAULT] = fresh
        if self.conversation is old:
            self.conversation = fresh
        return fresh


_session = NotebookSession()


def get_session() -> NotebookSession:
    return _session


__all__ = ["NotebookSession", "get_session"]

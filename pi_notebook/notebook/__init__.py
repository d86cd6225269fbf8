"""pi_notebook.notebook — the Jupyter side: ``%load_ext pi_notebook`` and the ``%%agent`` magic.

Public helpers: :func:`use_model` (set the default conversation's model, e.g. a faux model
scripted in the notebook), :func:`session`, ``await wait()`` (wait for a ``--background``
run) and :data:`settings` (the code cell and saved conversations, on or off); for teaching, step
mode's hold points and words (:func:`hold_points`, :class:`StepNarrator`), what each request
sends (:class:`RequestTap`, :func:`context_text`) and the tool lines a replay needs
(:func:`record_tools`).
This package must never use nest_asyncio, block the kernel's event loop, or print keys.
"""

from __future__ import annotations

from ..agent import Agent
from ..ai import FauxProvider, Model
from .config import Settings, settings
from .context_view import RequestTap, SentRequest, context_json, context_text
from .magic import load_ipython_extension, unload_ipython_extension, wait
from .models import ModelError, demo_model
from .render import render_transcript
from .replay_run import record_tools
from .session import NotebookSession, get_session
from .stepping import GRANULARITIES, MODEL_REQUEST, StepNarrator, hold_points


def session() -> NotebookSession:
    """The kernel's notebook session (default conversation, last reply, last events)."""
    return get_session()


def use_model(model: Model | FauxProvider) -> Agent:
    """Make ``model`` the default conversation's model, and the model of every conversation
    made later without ``--model`` (a new ``--agent NAME`` too); returns the default's agent."""
    resolved = model.get_model() if isinstance(model, FauxProvider) else model
    state = get_session()
    agent = state.default_agent()
    state.set_model(agent, resolved, "use_model()")
    state.default_model = resolved
    return agent


__all__ = [
    "GRANULARITIES",
    "MODEL_REQUEST",
    "ModelError",
    "NotebookSession",
    "RequestTap",
    "SentRequest",
    "Settings",
    "StepNarrator",
    "context_json",
    "context_text",
    "demo_model",
    "hold_points",
    "load_ipython_extension",
    "record_tools",
    "render_transcript",
    "session",
    "settings",
    "unload_ipython_extension",
    "use_model",
    "wait",
]

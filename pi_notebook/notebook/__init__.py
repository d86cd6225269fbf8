"""pi_notebook.notebook — the Jupyter side: ``%load_ext pi_notebook`` and the ``%%agent`` magic.

Public helpers: :func:`use_model` (set the default conversation's model, e.g. a faux model
scripted in the notebook), :func:`session`, ``await wait()`` (wait for a ``--background``
run) and :data:`settings` (the code cell and saved conversations, on or off).
This package must never use nest_asyncio, block the kernel's event loop, or print keys.
"""

from __future__ import annotations

from ..agent import Agent
from ..ai import FauxProvider, Model
from .config import Settings, settings
from .magic import load_ipython_extension, unload_ipython_extension, wait
from .models import ModelError, demo_model
from .render import render_transcript
from .session import NotebookSession, get_session


def session() -> NotebookSession:
    """The kernel's notebook session (default conversation, last reply, last events)."""
    return get_session()


def use_model(model: Model | FauxProvider) -> Agent:
    """Make ``model`` the default conversation's model; returns that agent."""
    resolved = model.get_model() if isinstance(model, FauxProvider) else model
    state = get_session()
    agent = state.default_agent()
    state.set_model(agent, resolved, "use_model()")
    return agent


__all__ = [
    "ModelError",
    "NotebookSession",
    "Settings",
    "demo_model",
    "load_ipython_extension",
    "render_transcript",
    "session",
    "settings",
    "unload_ipython_extension",
    "use_model",
    "wait",
]

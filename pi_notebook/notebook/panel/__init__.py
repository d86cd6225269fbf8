"""The agent panel: a live, steerable view of an agent run (an anywidget).

:class:`AgentPanel` follows an :class:`~pi_notebook.agent.Agent` (``panel.attach(agent)``),
streams text, thinking and tool progress to its views in batched, numbered deltas, offers
Abort / Steer / Follow-up / step mode controls, and leaves a static, sanitised rendering of
the transcript behind. ``panel.events`` is the run's event list as data.
"""

from __future__ import annotations

from ...ai import redact
from .markdown import escape_html, render_markdown
from .reducer import PanelState
from .static import render_static_html
from .step import StepGate
from .transport import Transport
from .widget import AgentPanel

__all__ = [
    "AgentPanel",
    "PanelState",
    "StepGate",
    "Transport",
    "escape_html",
    "redact",
    "render_markdown",
    "render_static_html",
]

"""Kernel-wide switches of the notebook layer: the offered code cell and saved conversations.

``pi_notebook.notebook.settings`` is the one :class:`Settings` object. Each switch is ``None``
until set in code, and then follows its environment variable in ``pi_notebook.settings`` (read
at each use, so a ``%env`` takes effect at once); a value set in code wins over the environment:

- ``code_cell``: offer the agent's code as a new cell below the ``%%agent`` cell
  (``PI_NOTEBOOK_CODE_CELL=off`` turns it off; default on in interactive mode).
- ``sessions``: save each conversation beside the notebook after every run
  (``PI_NOTEBOOK_SESSIONS=off`` turns it off; default on when the notebook's path is known).

This module must never print, touch the user namespace or read anything but these variables.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..settings import CODE_CELL, SESSIONS


@dataclass
class Settings:
    code_cell: bool | None = None
    """Offer the agent's code as the next cell; ``None``: ``$PI_NOTEBOOK_CODE_CELL`` (on)."""
    sessions: bool | None = None
    """Save conversations beside the notebook; ``None``: ``$PI_NOTEBOOK_SESSIONS`` (on)."""

    def code_cell_on(self) -> bool:
        return self.code_cell if self.code_cell is not None else CODE_CELL.value()

    def sessions_on(self) -> bool:
        return self.sessions if self.sessions is not None else SESSIONS.value()


settings = Settings()

__all__ = ["Settings", "settings"]

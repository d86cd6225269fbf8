"""pi_notebook: the Pi agent runtime in Python, living inside Jupyter.

``%load_ext pi_notebook`` registers the ``%%agent`` magic (see :mod:`pi_notebook.notebook`).
The environment variables it reads are one table, :mod:`pi_notebook.settings`.
"""

from __future__ import annotations

from typing import Any

__version__ = "0.1.0"


def load_ipython_extension(ip: Any) -> None:
    from .notebook import load_ipython_extension as load

    load(ip)


def unload_ipython_extension(ip: Any) -> None:
    from .notebook import unload_ipython_extension as unload

    unload(ip)

"""How a ``%%agent`` cell runs in this shell: awaited on the kernel's loop, or in the background.

A cell that awaits its run (the input transformer rewrites it into a top-level ``await``) stays
busy until the run ends, so Run All, nbval and papermill wait for it, and the stop button
cancels it. The agent panel also needs the kernel to read its widget messages (Abort, Steer,
approvals) while the cell is still running. ipykernel 7.4 does; ipykernel 6.29 to 7.3 read
them only between cells (measured with jupyter_client: a comm message sent during an
``await asyncio.sleep(2)`` cell was handled when the cell ended). So with those versions a
run that shows the panel goes to the background, where the panel's buttons work but the cell
returns at once; a plain run (``--plain``, ``PI_NOTEBOOK_UI=plain``) still awaits.

This module must never import ipykernel unless a kernel already did, and never change the
shell: it only reads the ipykernel version and IPython's ``autoawait`` setting.
"""

from __future__ import annotations

import re
import sys
from dataclasses import dataclass
from typing import Any, Literal

__all__ = ["WIDGETS_DURING_A_CELL", "RunMode", "run_mode"]

WIDGETS_DURING_A_CELL = (7, 4)
"""The first ipykernel that reads widget messages while a cell awaits."""

Mode = Literal["await", "background", "blocking"]


@dataclass(frozen=True)
class RunMode:
    """What a ``%%agent`` cell does here; ``why`` says it for ``%agent status``, ``note`` in
    a few words for a background run's placeholder."""

    mode: Mode
    why: str
    note: str = ""

    @property
    def awaits(self) -> bool:
        return self.mode == "await"


def ipykernel_version() -> str | None:
    """The running ipykernel's version (``None`` outside a kernel)."""
    module = sys.modules.get("ipykernel")
    version = getattr(module, "__version__", None)
    return str(version) if version else None


def _release(version: str) -> tuple[int, ...]:
    return tuple(int(part) for part in re.findall(r"\d+", version)[:2])


def run_mode(shell: Any, *, plain: bool) -> RunMode:
    """How a ``%%agent`` cell without ``--background`` runs in ``shell`` (an IPython shell).

    ``plain``: the run prints its transcript instead of showing the panel.
    """
    version = ipykernel_version() if shell is not None else None
    if version is None:
        return RunMode("blocking", "no kernel: the cell blocks in asyncio.run until the run ends")
    kernel = f"ipykernel {version}"
    if not getattr(shell, "autoawait", False):
        return RunMode(
            "background",
            f"{kernel} with autoawait off: the run goes to the background and the cell "
            "returns at once (%autoawait on makes cells wait)",
            "autoawait is off, so this cell cannot wait for the run",
        )
    awaits = "the cell awaits the run on the kernel's loop (it stays busy until the run ends, "
    if _release(version) >= WIDGETS_DURING_A_CELL:
        # No version in the text: it is the same for every kernel that has this mode.
        return RunMode("await", awaits + "the stop button cancels it, the panel's buttons work)")
    between = f"{kernel} reads widget messages only between cells"
    if plain:
        return RunMode(
            "await",
            awaits + f"the stop button cancels it); {between}, so a run with the panel goes "
            "to the background",
        )
    return RunMode(
        "background",
        f"{between}, so a run with the panel goes to the background for the panel's buttons "
        "to work: the cell returns at once, await pi_notebook.notebook.wait() joins the run "
        "(plain runs, --plain, await it; ipykernel >= 7.4 awaits both)",
        f"{kernel} reads the panel's messages only between cells",
    )

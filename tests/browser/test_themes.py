"""The panel in JupyterLab's light and dark themes: one run per theme.

Each theme runs the three themed scenarios one after the other (the step bar and status line
with a formula, table and code in the answer; what the panel says while waiting, awaiting
approval, on a malformed call and at the output limit; step mode's "what the model will be
sent" view), checking the contrast of every part they show, live and static. Notebook 7 runs
the dark one (its smoke subset, see conftest.py).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from .driver import Notebook
from .server import JupyterServer
from .test_panel import check_the_step_bar_and_status_line_are_readable_in_light_and_dark
from .test_panel_ux import check_what_the_panel_says_reads_in_light_and_dark
from .test_teaching import (
    check_step_tools_holds_before_each_request_and_shows_what_the_model_is_sent,
)


@pytest.mark.parametrize(
    "theme",
    ["JupyterLab Light", pytest.param("JupyterLab Dark", marks=pytest.mark.notebook7)],
)
def test_the_panel_reads_in_light_and_dark(
    nb: Notebook, workdir: Path, server: JupyterServer, theme: str
) -> None:
    check_the_step_bar_and_status_line_are_readable_in_light_and_dark(nb, workdir, server, theme)
    check_what_the_panel_says_reads_in_light_and_dark(nb, workdir, server, theme)
    check_step_tools_holds_before_each_request_and_shows_what_the_model_is_sent(
        nb, workdir, server, theme
    )

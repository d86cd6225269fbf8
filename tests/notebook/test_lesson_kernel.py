"""The lesson's ``--step --background`` cells with the panel, as a class runs them in JupyterLab.

Under nbval the lesson runs in plain mode, where step mode is off and the cell's own listener
holds the run. Here the same cells, read from ``notebooks/02_loop_lifecycle.ipynb``, run in a
kernel with the panel (``ui_kernel``), whose front end is played by
:class:`~.test_panel_kernel.PanelClient` clicking *Next* at every hold: the run is held by the
panel and by the listener, and the cell after it still reads ``agent.state`` at the hold and
prints what the stored output says.
"""

from __future__ import annotations

import json

import pytest

from .conftest import ROOT, Kernel
from .test_panel_kernel import PanelClient, run_cell

pytestmark = pytest.mark.kernel

LESSON = ROOT / "notebooks" / "02_loop_lifecycle.ipynb"


def lesson() -> list[tuple[str, str]]:
    """Each code cell's source and its stored stdout."""
    notebook = json.loads(LESSON.read_text(encoding="utf-8"))
    cells = []
    for cell in notebook["cells"]:
        if cell["cell_type"] != "code":
            continue
        stdout = "".join(
            "".join(out["text"])
            for out in cell["outputs"]
            if out["output_type"] == "stream" and out["name"] == "stdout"
        )
        cells.append(("".join(cell["source"]), stdout))
    return cells


def test_the_background_step_cells_read_the_state_at_the_panels_hold(ui_kernel: Kernel) -> None:
    cells = lesson()
    gate = next(n for n, (source, _) in enumerate(cells) if source.startswith("gate, reached"))
    for source, _ in cells[:gate]:  # the set-up and the sections above
        if not source.startswith(("%agent replay", "%%agent")):  # the replays: walked elsewhere
            ui_kernel.ok(source, timeout=120)
    ui_kernel.ok(cells[gate][0])

    held: list[str] = []

    def on_frame(client: PanelClient) -> None:
        assert client.state is not None
        step = client.state["step"]
        if step["held"] is not None and len(held) < step["count"]:
            held.append(step["held"])
            client.send({"type": "next"})

    client = PanelClient(ui_kernel, on_frame)
    background, reader = cells[gate + 1], cells[gate + 2]
    assert background[0].startswith("%%agent --agent stepped --step --background")
    assert run_cell(ui_kernel, background[0], client) == "ok"  # returns at once
    assert client.comm_id is not None  # the panel is shown, held at its first point

    assert run_cell(ui_kernel, reader[0], client, timeout=120) == "ok"
    assert client.stdout == reader[1]  # what the stored output says, with the panel too
    assert "pending_tool_calls: ['t1']" in reader[1]
    assert held[:2] == ["agent_start", "turn_start"] and held[-1] == "agent_end"
    assert "tool_execution_start" in held


@pytest.mark.parametrize("granularity", ["", " all", " tools"])
def test_each_step_cell_of_the_lesson_walks_its_holds_to_agent_end(
    ui_kernel: Kernel, granularity: str
) -> None:
    source = f"%agent replay 02_loop_lifecycle.run.jsonl --step{granularity}"
    assert source in [cell for cell, _ in lesson()]
    ui_kernel.ok(f"import os\nos.chdir({str(LESSON.parent)!r})")
    held: list[str] = []

    def on_frame(client: PanelClient) -> None:
        assert client.state is not None
        step = client.state["step"]
        if step["held"] is not None and len(held) < step["count"]:
            held.append(step["held"])
            client.send({"type": "next"})

    client = PanelClient(ui_kernel, on_frame)
    assert run_cell(ui_kernel, source, client, timeout=120) == "ok"
    assert client.state is not None and client.state["status"]["state"] == "done"
    if granularity == " tools":  # two model requests, four tool calls
        assert held.count("model_request") == 2 and held.count("tool_execution_start") == 4
        assert len(held) == 6
    else:
        assert held[0] == "agent_start" and held[-1] == "agent_end"
        assert held.count("tool_execution_end") == 4
        assert ("message_update" in held) == (granularity == " all")


def test_the_two_loops_run_draws_a_timeline_with_both_queues(ui_kernel: Kernel) -> None:
    cells = lesson()
    sources = [source for source, _ in cells]

    def starting(prefix: str) -> int:
        return next(n for n, source in enumerate(sources) if source.startswith(prefix))

    for prefix in ("import asyncio", "LEVEL = ", "async def add(", "def echo_last_user("):
        ui_kernel.ok(sources[starting(prefix)], timeout=120)
    script = starting("faux.set_responses([tool_call_reply(), echo_last_user, echo_last_user])\n"
                      "timeline_agent")
    ui_kernel.ok(sources[script])
    run, timeline = sources[script + 1], sources[script + 2]
    assert run.startswith("%%agent --agent timeline_agent") and timeline == "%agent timeline"
    client = PanelClient(ui_kernel)
    assert run_cell(ui_kernel, run, client, timeout=120) == "ok"
    rows = ui_kernel.ok(timeline).stdout
    # The plain-mode line stored under nbval is not what a panel run gives.
    assert cells[script + 2][1] == "no timeline: no %%agent run was shown in a panel yet " \
        "(plain mode keeps none)\n"
    assert "no timeline" not in rows
    for turn in (1, 2, 3):
        assert f"turn {turn} starts" in rows
    lanes = {line.split()[2] for line in rows.splitlines()[1:] if "starts" not in line}
    assert {"model", "convert", "steering", "follow-up"} <= lanes, rows
    assert "STEER: use metres." in rows and "FOLLOW-UP: and in yards." in rows

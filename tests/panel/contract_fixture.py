"""Writes (or checks) ``tests/panel/fixtures/panel_contract.json``, which the JS tests read.

    python tests/panel/contract_fixture.py          # rewrite the fixture
    python tests/panel/contract_fixture.py --check  # exit 1 if it is stale

The fixture holds the contract's types as JSON Schema (from ``pi_notebook.notebook.panel.
contract``'s TypedDicts, through pydantic, with every object closed to extra keys), the names the
front end must know (run states, tool statuses, op kinds, message types both ways) and one real
run: the snapshot a view starts from, the delta frames the reducer wrote (a frame per few
events, each after ``render()`` as the transport does) and the state they must rebuild.
``tests/panel/test_contract.py`` checks that the fixture is current and that the run's states
match the schema.
"""

from __future__ import annotations

import copy
import json
import sys
from pathlib import Path
from typing import Any, get_args, get_type_hints

from pydantic import TypeAdapter

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from pi_notebook.ai import faux_assistant_message  # noqa: E402
from pi_notebook.ai.faux import faux_text, faux_thinking, faux_tool_call  # noqa: E402
from pi_notebook.notebook.panel import contract  # noqa: E402
from pi_notebook.notebook.panel.entries import initial_state  # noqa: E402
from pi_notebook.notebook.panel.ops import OpList  # noqa: E402
from pi_notebook.notebook.panel.reducer import PanelState  # noqa: E402

FIXTURE = ROOT / "tests" / "panel" / "fixtures" / "panel_contract.json"
MODEL = "faux/faux-1"
EVENTS_PER_FRAME = 6


def closed(schema: Any) -> Any:
    """``schema`` with ``additionalProperties: false`` on every object that lists properties."""
    if isinstance(schema, dict):
        out = {k: closed(v) for k, v in schema.items()}
        if out.get("type") == "object" and "properties" in out:
            out["additionalProperties"] = False
        return out
    if isinstance(schema, list):
        return [closed(v) for v in schema]
    return schema


def schema_of(kind: Any) -> Any:
    return closed(TypeAdapter(kind).json_schema())


def message_types(union: Any) -> list[str]:
    """The ``type`` literals of a union of message TypedDicts."""
    names: list[str] = []
    for member in get_args(union):
        names.extend(get_args(get_type_hints(member)["type"]))
    return sorted(names)


class _Clock:
    """Milliseconds that advance 1.5 per reading: timings in the fixture stay the same."""

    def __init__(self) -> None:
        self.now = 1_000_000.0

    def __call__(self) -> float:
        self.now += 1.5
        return self.now


#: The notebook context the example run starts with (two cells, the second failed).
CONTEXT_TEXT = (
    "Notebook context: the cells run since your last reply, oldest first.\n\n"
    "In [3]:\n```python\ndata = {'age': [50, 61]}\ndata\n```\nOut[3]: {'age': [50, 61]}\n\n"
    "In [4]:\n```python\ndata['BMI']\n```\nError in In [4]: KeyError: 'BMI'\n"
    "Traceback (the cell's frame and the last ones):\n  cell, line 1, in <module>: data['BMI']"
)
#: A rich display the example's tool shows (a DataFrame's HTML, with a script to drop).
DISPLAY = {
    "text/plain": "   bmi\n0  1.5",
    "text/html": '<table class="dataframe"><tr><th>bmi</th></tr><tr><td>1.5</td></tr></table>'
    "<script>alert(1)</script>",
}


def _events() -> list[Any]:
    """A real run (faux provider): the notebook context, thinking, Markdown text, a tool with
    progress, text, an image and a rich display, a failing tool, then a final answer."""
    from pi_notebook.ai import TextContent, UserMessage
    from pi_notebook.notebook.notebook_context import NotebookContextMessage
    from tests.panel.helpers import collect_events, failing_tool, faux, image_tool, run

    provider = faux(
        [
            faux_assistant_message(
                [
                    faux_thinking("I should plot."),
                    faux_text("Plotting **now**:\n\n- three points\n- one figure\n"),
                    faux_tool_call("plot", {"n": 3}, id="c1"),
                    faux_tool_call("boom", {}, id="c2"),
                ],
                stop_reason="toolUse",
            ),
            faux_assistant_message("Done: see `fig`."),
        ],
        size=2,
    )
    context = NotebookContextMessage(content=CONTEXT_TEXT, cells=[3, 4], errors=[4], timestamp=1)
    prompt = [context, UserMessage(content=[TextContent(text="Plot it")], timestamp=2)]
    tools = [image_tool(displays=[DISPLAY]), failing_tool()]
    return list(run(collect_events(provider, prompt, tools)))


def example_run() -> dict[str, Any]:
    ops = OpList()
    state = PanelState(ops, model=MODEL, clock=_Clock())
    start = copy.deepcopy(state.data)
    frames: list[dict[str, Any]] = []

    def cut() -> None:
        state.render()
        if ops.ops:
            frames.append({"type": "deltas", "seq": len(frames) + 1, "ops": ops.ops})
            ops.ops = []

    for number, event in enumerate(_events(), 1):
        state.apply(event)
        if event.type == "tool_execution_start" and event.tool_call_id == "c1":
            state.set_queue([{"kind": "followup", "text": "then save it"}])
            card = {"tool_call_id": "c1", "tool_name": "plot", "summary": "3", "args_text": "{}"}
            state.set_approvals([card])
        if event.type == "tool_execution_end" and event.tool_call_id == "c1":
            state.set_approvals([])
        if number % EVENTS_PER_FRAME == 0:
            cut()
    cut()
    state.materialize()
    final = json.loads(json.dumps(state.data))
    return {
        "snapshot": {**json.loads(json.dumps(start)), "type": "snapshot", "seq": 0},
        "frames": json.loads(json.dumps(frames)),
        "final": final,
    }


def build() -> dict[str, Any]:
    return {
        "about": (
            "Generated by tests/panel/contract_fixture.py from "
            "pi_notebook/notebook/panel/contract.py; see docs/panel-protocol.md. Do not edit."
        ),
        "run_states": list(get_args(contract.RunState)),
        "tool_statuses": list(get_args(contract.ToolStatus)),
        "op_kinds": [get_args(get_args(op)[0])[0] for op in get_args(contract.AnyOp)],
        "kernel_to_view": message_types(contract.KernelMessage),
        "view_to_kernel": message_types(contract.ViewMessage),
        "schemas": {
            "state": schema_of(contract.PanelData),
            "synced_state": schema_of(contract.SyncedState),
            "kernel_to_view": schema_of(contract.KernelMessage),
            "view_to_kernel": schema_of(contract.ViewMessage),
        },
        "initial_state": json.loads(json.dumps(initial_state(MODEL))),
        "example": example_run(),
    }


def render() -> str:
    return json.dumps(build(), indent=1, ensure_ascii=False, sort_keys=True) + "\n"


def main(argv: list[str]) -> int:
    text = render()
    if "--check" in argv:
        if not FIXTURE.exists() or FIXTURE.read_text(encoding="utf-8") != text:
            print(f"{FIXTURE.relative_to(ROOT)} is stale: python tests/panel/contract_fixture.py")
            return 1
        return 0
    FIXTURE.parent.mkdir(parents=True, exist_ok=True)
    FIXTURE.write_text(text, encoding="utf-8")
    print(f"wrote {FIXTURE.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))

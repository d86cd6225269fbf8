"""The panel contract (``notebook/panel/contract.py``) against the real reducer and widget.

The JSON fixture the JS tests read must be what ``contract_fixture.py`` writes now, and every
state the reducer and the widget produce must match the TypedDicts key for key (the schemas are
closed: a key the contract does not name fails, as does a missing one).
"""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest
from jsonschema import Draft202012Validator

from pi_notebook.agent import Agent
from pi_notebook.ai import faux_assistant_message
from pi_notebook.notebook.panel.ops import apply_ops

from . import contract_fixture
from .helpers import CapturePanel, faux

FIXTURE = json.loads(contract_fixture.FIXTURE.read_text(encoding="utf-8"))


def validator(name: str) -> Draft202012Validator:
    return Draft202012Validator(FIXTURE["schemas"][name])


def problems(name: str, value: Any) -> list[str]:
    return [f"{list(e.absolute_path)}: {e.message}" for e in validator(name).iter_errors(value)]


def test_the_fixture_is_what_the_contract_writes_now() -> None:
    assert contract_fixture.FIXTURE.read_text(encoding="utf-8") == contract_fixture.render(), (
        "stale fixture: python tests/panel/contract_fixture.py"
    )


def test_every_state_of_the_real_run_matches_the_contract() -> None:
    example = copy.deepcopy(FIXTURE["example"])
    assert problems("kernel_to_view", example["snapshot"]) == []
    state = {k: v for k, v in example["snapshot"].items() if k not in ("type", "seq")}
    assert problems("state", FIXTURE["initial_state"]) == []
    for frame in example["frames"]:
        assert problems("kernel_to_view", frame) == []
        apply_ops(state, frame["ops"])
        assert problems("state", state) == [], frame["seq"]
    assert state == example["final"]
    assert example["final"]["tools"] and example["final"]["lifecycle"]


def test_a_key_the_contract_does_not_name_fails() -> None:
    state = copy.deepcopy(FIXTURE["initial_state"])
    state["status"]["surprise"] = 1
    del state["queue"]
    found = problems("state", state)
    assert any("surprise" in p for p in found) and any("queue" in p for p in found)


async def test_the_widgets_synced_state_and_messages_match_the_contract() -> None:
    provider = faux([faux_assistant_message("Hi **there**.")])
    agent = Agent(model=provider.get_model())
    panel = CapturePanel()
    panel.handle_message({"type": "hello", "seq": -1})  # a view listens: frames are sent
    panel.attach(agent)
    await agent.prompt("Q")
    panel.finish()
    assert problems("synced_state", json.loads(json.dumps(panel.state))) == []
    kinds = [m["type"] for m in panel.sent]
    assert "snapshot" in kinds and "deltas" in kinds
    assert all(problems("kernel_to_view", m) == [] for m in panel.sent)


@pytest.mark.parametrize(
    "message",
    [
        {"type": "hello", "seq": -1},
        {"type": "hello"},
        {"type": "resync"},
        {"type": "abort"},
        {"type": "steer", "text": "x"},
        {"type": "followup", "text": "x"},
        {"type": "interrupt_send", "text": "x"},
        {"type": "draft", "text": "x"},
        {"type": "draft", "text": "x", "final": True},
        {"type": "clear_queue"},
        {"type": "next"},
        {"type": "run_to_end"},
        {"type": "approval", "tool_call_id": "c1", "approved": True},
        {"type": "approval", "tool_call_id": "c1", "approved": True, "answer": "always"},
        {"type": "approval", "tool_call_id": "c1", "approved": False, "answer": "stop"},
        {"type": "context_json"},
    ],
)
def test_every_view_message_of_the_contract_is_handled(message: dict[str, Any]) -> None:
    assert problems("view_to_kernel", message) == []
    assert message["type"] in FIXTURE["view_to_kernel"]
    panel = CapturePanel(model="faux/faux-1")
    panel.handle_message(message)  # no run attached: a note at most, never an exception

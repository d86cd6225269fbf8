"""The static transcript drawn from the same fixture states the JS tests draw live.

``js/test/contract.test.js`` mounts the view on the fixture's real run (its snapshot, then each
delta frame) and checks the final state's tool cards and run state. Here every state of that
run (the snapshot, the state after each frame, the final one) is rendered by ``static.py`` and
must show the same things: the run state, one entry per message with its role and index, the
assistant blocks, a card per tool call with its status, the lifecycle nodes. A key renamed in
the contract, the reducer or the static renderer without the others fails here, so the live and
saved drawings cannot drift apart.
"""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest
from bs4 import BeautifulSoup, Tag

from pi_notebook.notebook.panel.ops import apply_ops
from pi_notebook.notebook.panel.static import render_static_html

from .contract_fixture import FIXTURE

RUN = json.loads(FIXTURE.read_text(encoding="utf-8"))["example"]


def _states() -> list[tuple[str, dict[str, Any]]]:
    state = {k: v for k, v in copy.deepcopy(RUN["snapshot"]).items() if k not in ("type", "seq")}
    states = [("snapshot", copy.deepcopy(state))]
    for frame in RUN["frames"]:
        apply_ops(state, copy.deepcopy(frame["ops"]))
        states.append((f"frame {frame['seq']}", copy.deepcopy(state)))
    assert state == RUN["final"], "the frames rebuild the final state (as the JS test checks)"
    states.append(("final", RUN["final"]))
    return states


STATES = _states()


def _one(soup: BeautifulSoup, selector: str) -> Tag:
    found = soup.select(selector)
    assert len(found) == 1, f"{selector}: {len(found)} elements"
    return found[0]


@pytest.mark.parametrize(("name", "state"), STATES, ids=[name for name, _ in STATES])
def test_each_fixture_state_draws_statically_as_the_view_draws_it(
    name: str, state: dict[str, Any]
) -> None:
    soup = BeautifulSoup(render_static_html(state, anchor="fx"), "html.parser")
    assert _one(soup, ".pi-panel")["data-state"] == state["status"]["state"]
    tools = state["tools"]
    shown_by_card = {
        i
        for i, m in enumerate(state["messages"])
        if m["role"] == "toolResult" and m["tool_call_id"] in tools
    }
    entries = soup.select(".pi-transcript > .pi-message")
    expected = [(i, m["role"]) for i, m in enumerate(state["messages"]) if i not in shown_by_card]
    assert [(int(str(e["data-index"])), e["data-role"]) for e in entries] == expected
    for index, message in enumerate(state["messages"]):
        if message["role"] != "assistant":
            continue
        entry = _one(soup, f'.pi-message[data-index="{index}"]')
        kinds = [b["type"] for b in message["blocks"]]
        assert len(entry.select(".pi-text[data-block]")) == kinds.count("text")
        assert len(entry.select(".pi-thinking[data-block]")) == kinds.count("thinking")
        calls = [b["id"] for b in message["blocks"] if b["type"] == "toolCall"]
        drawn = [c["data-tool-call-id"] for c in entry.select(".pi-tool-card")]
        assert drawn == calls
    for tool_id, card in tools.items():
        drawn_card = _one(soup, f'.pi-tool-card[data-tool-call-id="{tool_id}"]')
        assert drawn_card["data-status"] == card["status"]
        assert _one(drawn_card, ".pi-tool-name").get_text() == card["name"]
        assert drawn_card.select_one(".pi-tool-head") is not None
    assert len(soup.select(".pi-lifecycle .pi-node")) == len(state["lifecycle"])
    assert {n["data-kind"] for n in soup.select(".pi-node")} == {
        n["kind"] for n in state["lifecycle"]
    }


def test_the_fixture_run_has_what_the_checks_need() -> None:
    """The run the checks read has tool cards, several roles and a finished state (else the
    checks above would pass on nothing)."""
    final = RUN["final"]
    assert set(final["tools"]) == {"c1", "c2"} and final["status"]["state"] == "done"
    assert {m["role"] for m in final["messages"]} >= {"user", "assistant", "toolResult"}
    assert len(STATES) >= 4

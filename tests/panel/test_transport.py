"""Batching, sequence numbers, the hello handshake and resync."""

from __future__ import annotations

import asyncio
import json
from typing import Any

from pi_notebook.agent import Agent
from pi_notebook.ai import faux_assistant_message
from pi_notebook.notebook.panel.ops import Op, OpBuffer, Path
from pi_notebook.notebook.panel.transport import Transport

from .helpers import CapturePanel, faux, replay


class Source(OpBuffer):
    """An op buffer the transport pulls from (the reducer's side, without a reducer)."""

    def take_ops(self) -> list[Op]:
        return self.take()

    def drop_ops(self) -> None:
        self.take()


class Writer:
    """Writes ops as the reducer does, then pokes the transport as the widget does."""

    def __init__(self, send: Any, **kwargs: Any) -> None:
        self.source = Source()
        self.transport = Transport(send, self.source, **kwargs)

    def set(self, path: Path, value: Any) -> None:
        self.source.set(path, value)
        self.transport.poke()

    def append(self, path: Path, text: str) -> None:
        self.source.append(path, text)
        self.transport.poke()

    def push(self, path: Path, value: Any) -> None:
        self.source.push(path, value)
        self.transport.poke()


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def test_nothing_is_sent_before_a_view_says_hello() -> None:
    sent: list[dict[str, Any]] = []
    writer = Writer(sent.append)
    transport = writer.transport
    writer.append(["messages", 0, "text"], "lost")
    writer.set(["status", "state"], "streaming")
    transport.flush()
    assert sent == [] and transport.seq == 0


def test_appends_to_one_path_coalesce_and_frames_are_rate_limited() -> None:
    sent: list[dict[str, Any]] = []
    clock = Clock()
    writer = Writer(sent.append, rate=30, clock=clock)
    transport = writer.transport
    transport.snapshot({"status": {}})
    path = ["messages", 0, "blocks", 0, "text"]
    for i in range(3000):  # 3 s of tokens at 1,000 a second
        clock.now = i / 1000
        writer.append(path, "x")
        if i % 500 == 0:
            writer.set(["status", "turn"], i)
    transport.flush()
    frames = [m for m in sent if m["type"] == "deltas"]
    assert 85 <= len(frames) <= 92, len(frames)  # ~30 a second, never one per token
    assert [m["seq"] for m in frames] == list(range(1, len(frames) + 1))
    text = "".join(op[2] for m in frames for op in m["ops"] if op[0] == "a")
    assert text == "x" * 3000
    assert all(sum(op[0] == "a" for op in m["ops"]) <= 2 for m in frames)


async def test_the_loop_timer_sends_what_is_left() -> None:
    got = asyncio.Event()
    sent: list[dict[str, Any]] = []

    def send(message: dict[str, Any]) -> None:
        sent.append(message)
        got.set()

    # the fake clock stands still, so "b" is always within the interval whatever the
    # scheduling; only the real loop timer (1/30 s) can send it
    writer = Writer(send, rate=30, loop=asyncio.get_running_loop(), clock=Clock())
    transport = writer.transport
    transport.snapshot({})
    writer.append(["t"], "a")  # first op after a long pause: sent at once
    got.clear()
    writer.append(["t"], "b")  # within the interval: waits for the timer
    assert [m["type"] for m in sent] == ["snapshot", "deltas"]
    await asyncio.wait_for(got.wait(), 2)
    assert sent[-1] == {"type": "deltas", "seq": 2, "ops": [["a", ["t"], "b"]]}


async def test_a_view_that_lost_a_frame_resyncs_to_the_exact_state() -> None:
    provider = faux([faux_assistant_message("alpha beta gamma delta " * 30)], tps=2000)
    agent = Agent(model=provider.get_model())
    panel = CapturePanel(rate=1000)
    panel.attach(agent)
    view: dict[str, Any] = {"seq": None, "state": None, "dropped": 0, "resyncs": 0}

    def on_message(message: dict[str, Any]) -> None:
        if message["type"] == "snapshot":
            view["state"] = {k: v for k, v in message.items() if k not in ("type", "seq")}
            view["seq"] = message["seq"]
            return
        if message["seq"] == 3 and not view["dropped"]:
            view["dropped"] = 1  # the channel loses frame 3
            return
        if message["seq"] <= view["seq"]:
            return
        if message["seq"] != view["seq"] + 1:
            view["resyncs"] += 1
            view["seq"] = 10**9  # drop until the snapshot
            panel._on_custom_msg(panel, {"type": "resync"}, [])
            return
        from pi_notebook.notebook.panel.ops import apply_ops

        apply_ops(view["state"], message["ops"])
        view["seq"] = message["seq"]

    original = panel._send_message

    def send(message: dict[str, Any]) -> None:
        original(message)
        on_message(json.loads(json.dumps(message)))

    panel.transport._send = send
    panel.handle_message({"type": "hello"})
    await agent.prompt("Hi")
    panel.finish()
    assert view["dropped"] == 1 and view["resyncs"] == 1
    assert view["state"] == panel.snapshot
    snapshots = [i for i, m in enumerate(panel.sent) if m["type"] == "snapshot"]
    assert len(snapshots) == 2
    assert replay(panel.sent[snapshots[1] :]) == panel.snapshot


def _ops() -> Any:
    from hypothesis import strategies as st

    key = st.sampled_from(["x", "y"])
    return st.lists(
        st.one_of(
            st.tuples(st.just("a"), key, st.text(max_size=3)),
            st.tuples(st.just("s"), key, st.text(max_size=3)),
            st.tuples(st.just("p"), st.just("items"), st.integers(0, 9)),
            st.tuples(st.just("tick"), st.just(""), st.floats(0, 0.1)),
        ),
        max_size=60,
    )


def test_batching_never_changes_what_the_view_ends_with() -> None:
    """Any op sequence, any timing: frames replayed == the ops applied one by one."""
    from hypothesis import given, settings

    from pi_notebook.notebook.panel.ops import apply_op

    @settings(max_examples=200, deadline=None)
    @given(_ops())
    def check(ops: list[tuple[str, str, Any]]) -> None:
        sent: list[dict[str, Any]] = []
        clock = Clock()
        writer = Writer(lambda m: sent.append(json.loads(json.dumps(m))), clock=clock)
        transport = writer.transport
        initial = {"x": "", "y": "", "items": []}
        transport.snapshot(initial)
        expected = json.loads(json.dumps(initial))
        paths = {"x": ["x"], "y": ["y"], "items": ["items"]}
        for kind, key, value in ops:
            if kind == "tick":
                clock.now += value
                continue
            {"a": writer.append, "s": writer.set, "p": writer.push}[kind](paths[key], value)
            apply_op(expected, [kind, [key], value])
        transport.flush()
        assert replay(sent) == expected

    check()

"""The panel's lifecycle tree: run > turns > messages and tool executions, with their times.

A node opens when its event starts and closes when it ends; its ``held`` is the step-mode time
held while it was open, so its duration without the holds is ``end - start - held``. Each node
points at what it shows in the transcript (a message index or a tool call id), for the tree's
links. This module must stay pure.
"""

from __future__ import annotations

from .contract import LifecycleKind, LifecycleNode, NodeTarget
from .ops import OpSink, copy_value
from .status_line import RunClock


class Lifecycle:
    """The ``lifecycle`` list of the state and the ops that grow it."""

    __slots__ = ("clock", "nodes", "sink")

    def __init__(self, nodes: list[LifecycleNode], sink: OpSink, clock: RunClock) -> None:
        self.nodes = nodes
        self.sink = sink
        self.clock = clock

    def open(
        self,
        kind: LifecycleKind,
        label: str,
        parent: int | None,
        detail: str = "",
        target: NodeTarget | None = None,
    ) -> int:
        index = len(self.nodes)
        node: LifecycleNode = {
            "id": index,
            "parent": parent,
            "kind": kind,
            "label": label,
            "detail": detail,
            "start": self.clock.now(),
            "end": None,
            "held": 0,
            "updates": 0,
            "target": target,
        }
        self.nodes.append(node)
        self.clock.node_opened(index)
        self.sink.push(["lifecycle"], copy_value(node))
        return index

    def close(self, index: int | None, updates: int | None = None) -> None:
        if index is None:
            return
        node = self.nodes[index]
        node["end"] = end = self.clock.now()
        self.sink.set(["lifecycle", index, "end"], end)
        held = self.clock.node_held(index)
        if held:
            node["held"] = held
            self.sink.set(["lifecycle", index, "held"], held)
        if updates is not None:
            node["updates"] = updates
            self.sink.set(["lifecycle", index, "updates"], updates)

    def set_detail(self, index: int, detail: str) -> None:
        self.nodes[index]["detail"] = detail
        self.sink.set(["lifecycle", index, "detail"], detail)

    def count_update(self, index: int) -> None:
        node = self.nodes[index]
        node["updates"] += 1
        self.sink.set(["lifecycle", index, "updates"], node["updates"])


__all__ = ["Lifecycle"]

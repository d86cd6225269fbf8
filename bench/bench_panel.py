"""The agent panel's transport: bytes and messages over the comm, and chunk-to-comm latency.

Workload (issue 5): one run whose answer is 20,000 tokens of text (80,000 characters; the faux
provider's token is 4 characters and it streams one token per chunk) spread over three
assistant messages with two tool calls between them, paced at ``--tps`` tokens a second.
Every comm message the widget sends goes through ipywidgets' real serialisation into a
recording comm (``comm.create_comm`` replaced), so the figures count exactly what would go
over iopub: ``comm_open`` (it carries the front-end module and stylesheet, once per panel:
minified by ``js/build.mjs`` when built), the custom messages (the snapshot answering the
view's ``hello`` and the delta frames, which carry the Markdown as kernel-rendered HTML:
finished blocks once, the streaming tail as a splice) and the ``update`` messages of the synced
``state`` trait.

Latency is measured from the agent's first listener seeing a text chunk (the sink, right
after the provider chunk) to the first frame sent after it (each frame renders all the text
that arrived before it).

Peers, in the same run, as ratios to the text's UTF-8 bytes:

* ``per-token frames``: the same panel with batching off (one frame per op);
* ``whole-value HTML``: an ``ipywidgets.HTML`` whose value is re-sent in full per token,
  measured on the first ``--html-tokens`` tokens (it is quadratic, so 20,000 would take
  minutes) and extrapolated quadratically to the full answer.

Run: ``python bench/bench_panel.py [--tps 4000] [--tokens 20000] [--html-tokens 2000]``.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import comm
from comm.base_comm import BaseComm

from pi_notebook.agent import Agent, AgentTool
from pi_notebook.agent.types import AgentToolResult
from pi_notebook.ai import faux_assistant_message, register_faux_provider
from pi_notebook.ai.faux import faux_text, faux_tool_call


class Recorder:
    def __init__(self) -> None:
        self.records: list[tuple[float, str, int, Any]] = []

    def clear(self) -> None:
        self.records = []


RECORDER = Recorder()


class RecordingComm(BaseComm):
    """A comm that serialises like the kernel's and records instead of sending."""

    def publish_msg(
        self,
        msg_type: str,
        data: Any = None,
        metadata: Any = None,
        buffers: Any = None,
        **keys: Any,
    ) -> None:
        body = json.dumps({"data": data, "metadata": metadata or {}}, separators=(",", ":"))
        RECORDER.records.append((time.perf_counter(), msg_type, len(body.encode()), data))


comm.create_comm = lambda **kwargs: RecordingComm(**kwargs)  # type: ignore[assignment]


def answer_text(tokens: int) -> str:
    words = ["The ", "loop ", "runs ", "**tools** ", "and ", "streams ", "`text` ", "fast. "]
    text = ""
    i = 0
    while len(text) < tokens * 4:
        text += words[i % len(words)]
        i += 1
        if i % 40 == 0:
            text += "\n\n"
    return text[: tokens * 4]


def plot_tool() -> AgentTool:
    async def execute(tool_call_id: str, params: Any, signal: Any, on_update: Any) -> Any:
        on_update(AgentToolResult(content=[{"type": "text", "text": "working"}]))
        return AgentToolResult(content=[{"type": "text", "text": f"result for {params}"}])

    return AgentTool(name="compute", description="", parameters={"type": "object"}, execute=execute)


def provider(text: str, tps: float) -> Any:
    a, b = int(len(text) * 0.4), int(len(text) * 0.8)
    faux = register_faux_provider(token_size=(1, 1), tokens_per_second=tps)
    faux.set_responses(
        [
            faux_assistant_message(
                [faux_text(text[:a]), faux_tool_call("compute", {"x": 1})], stop_reason="toolUse"
            ),
            faux_assistant_message(
                [faux_text(text[a:b]), faux_tool_call("compute", {"x": 2})], stop_reason="toolUse"
            ),
            faux_assistant_message(text[b:]),
        ]
    )
    return faux


async def run_panel(text: str, tps: float, rate: float) -> dict[str, Any]:
    from pi_notebook.notebook.panel import AgentPanel

    RECORDER.clear()
    panel = AgentPanel(rate=rate)
    open_bytes = sum(size for _, kind, size, _ in RECORDER.records if kind == "comm_open")
    RECORDER.clear()
    faux = provider(text, tps)
    agent = Agent(model=faux.get_model(), tools=[plot_tool()])
    seen: list[tuple[float, int]] = []  # (time, cumulative streamed text length)
    total = [0]

    def first_listener(event: Any) -> None:
        if event.type == "message_update":
            sub = event.assistant_message_event
            if sub.type == "text_delta":
                total[0] += len(sub.delta)
                seen.append((time.perf_counter(), total[0]))

    agent.subscribe(first_listener)
    panel.attach(agent)
    panel.handle_message({"type": "hello"})  # the view announces itself
    started = time.perf_counter()
    await agent.prompt("Write the long answer.")
    elapsed = time.perf_counter() - started
    panel.finish()
    faux.unregister()
    records = RECORDER.records
    custom = [r for r in records if r[3].get("method") == "custom"]
    updates = [r for r in records if r[3].get("method") == "update"]
    # When did each chunk reach the comm? The first frame after it renders it.
    frame_times = [at for at, _, _, data in custom if data["content"]["type"] == "deltas"]
    latencies: list[float] = []
    j = 0
    for at, _ in seen:
        while j < len(frame_times) and frame_times[j] < at:
            j += 1
        if j < len(frame_times):
            latencies.append((frame_times[j] - at) * 1000)
    final = panel.snapshot
    streamed = [
        "".join(b["html"]) for m in final["messages"] if m["role"] == "assistant"
        for b in m["blocks"] if b["type"] == "text"
    ]  # fmt: skip
    from pi_notebook.notebook.panel import render_markdown

    a, b = int(len(text) * 0.4), int(len(text) * 0.8)
    expected = [render_markdown(part) for part in (text[:a], text[a:b], text[b:])]
    assert streamed == expected, "the panel's transcript must be the whole answer"
    return {
        "open_bytes": open_bytes,
        "custom_msgs": len(custom),
        "custom_bytes": sum(r[2] for r in custom),
        "update_msgs": len(updates),
        "update_bytes": sum(r[2] for r in updates),
        "last_update": updates[-1][2] if updates else 0,
        "frames": sum(1 for r in custom if r[3]["content"]["type"] == "deltas"),
        "elapsed": elapsed,
        "latency": latencies,
    }


async def run_html(text: str, tokens: int, tps: float) -> dict[str, Any]:
    import ipywidgets

    from pi_notebook.notebook.panel import render_markdown

    RECORDER.clear()
    widget = ipywidgets.HTML()
    RECORDER.clear()
    part = text[: tokens * 4]
    faux = register_faux_provider(token_size=(1, 1), tokens_per_second=tps)
    faux.set_responses([faux_assistant_message(part)])
    agent = Agent(model=faux.get_model())
    buffer: list[str] = []

    def listener(event: Any) -> None:
        if event.type == "message_update" and event.assistant_message_event.type == "text_delta":
            buffer.append(event.assistant_message_event.delta)
            widget.value = render_markdown("".join(buffer))

    agent.subscribe(listener)
    await agent.prompt("Write.")
    faux.unregister()
    return {"msgs": len(RECORDER.records), "bytes": sum(r[2] for r in RECORDER.records)}


async def listener_cost(text: str, with_panel: bool) -> float:
    """Seconds per text delta of an unpaced run, with or without a panel following it."""
    from pi_notebook.notebook.panel import AgentPanel

    best = float("inf")
    for _ in range(3):
        faux = register_faux_provider(token_size=(1, 1), tokens_per_second=None)
        faux.set_responses([faux_assistant_message(text)])
        agent = Agent(model=faux.get_model())
        if with_panel:
            panel = AgentPanel()
            panel.attach(agent)
            panel.handle_message({"type": "hello"})
        started = time.perf_counter()
        await agent.prompt("Write.")
        best = min(best, time.perf_counter() - started)
        if with_panel:
            panel.finish()
        faux.unregister()
    return best / (len(text) / 4)


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tokens", type=int, default=20_000)
    parser.add_argument("--tps", type=float, default=4_000.0, help="faux tokens per second")
    parser.add_argument("--html-tokens", type=int, default=2_000)
    args = parser.parse_args()
    text = answer_text(args.tokens)
    text_bytes = len(text.encode())
    print(f"answer: {args.tokens:,} tokens, {text_bytes:,} bytes, 2 tool calls, {args.tps:g} tok/s")

    batched = await run_panel(text, args.tps, rate=30)
    unbatched = await run_panel(text, args.tps, rate=1e9)
    html = await run_html(text, args.html_tokens, args.tps)
    scale = (args.tokens / args.html_tokens) ** 2

    def row(name: str, msgs: int, size: int, note: str = "") -> None:
        print(f"  {name:<34} {msgs:>9,} msgs {size:>15,} B  {size / text_bytes:>9.2f}x  {note}")

    print("\ncomm traffic (ratio = bytes / answer text bytes):")
    b = batched
    live = b["custom_bytes"]
    row("panel, live (snapshot + deltas)", b["custom_msgs"], live,
        f"{b['frames']} frames, {b['frames'] / b['elapsed']:.1f} frames/s")  # fmt: skip
    row("panel, state-trait syncs", b["update_msgs"], b["update_bytes"], "low rate + end of run")
    row("panel, total per run", b["custom_msgs"] + b["update_msgs"], live + b["update_bytes"])
    row("panel, comm_open (once, has the ESM)", 1, b["open_bytes"])
    u = unbatched
    row("peer: per-token frames", u["custom_msgs"], u["custom_bytes"], "batching off")
    row(f"peer: whole-value HTML ({args.html_tokens:,} tok)", html["msgs"], html["bytes"])
    row(
        f"peer: whole-value HTML (x{scale:g} extrap.)",
        int(html["msgs"] * args.tokens / args.html_tokens),
        int(html["bytes"] * scale),
        "quadratic extrapolation to the full answer",
    )
    overhead = (live - text_bytes) / max(1, b["frames"])
    print(f"\n  live bytes over the text: {live - text_bytes:,} B = {overhead:.0f} B per frame")
    budget = 1.5 * text_bytes
    per_frame = max(0.0, (live - budget) / max(1, b["frames"]))
    verdict = "meets" if per_frame <= 200 else "MISSES"
    print(
        f"  target 1.5x text + c per frame: live = 1.5x text + {per_frame:.0f} B/frame "
        f"({verdict} the target with c = 200 B)"
    )
    print(
        f"  tokens streamed at {args.tokens / b['elapsed']:,.0f} tok/s measured "
        f"({b['elapsed']:.1f} s); final state sync {b['last_update']:,} B "
        f"({b['last_update'] / text_bytes:.2f}x)"
    )
    print(f"  per-token peer / panel live: {u['custom_bytes'] / live:.2f}x bytes, "
          f"{u['custom_msgs'] / b['custom_msgs']:.0f}x messages")  # fmt: skip
    lat = b["latency"]
    print(
        f"\nlatency, provider chunk -> comm message (ms, {len(lat):,} chunks): "
        f"p50 {statistics.median(lat):.1f}, p95 {pct(lat, 0.95):.1f}, max {max(lat):.1f}"
    )
    lat_u = u["latency"]
    print(
        f"  per-token peer: p50 {statistics.median(lat_u):.2f}, p95 {pct(lat_u, 0.95):.2f}, "
        f"max {max(lat_u):.2f}"
    )

    bare = await listener_cost(text, with_panel=False)
    followed = await listener_cost(text, with_panel=True)
    print(
        f"\nper-token cost, unpaced run: {bare * 1e6:.1f} us/delta bare agent, "
        f"{followed * 1e6:.1f} us/delta with the panel ({followed / bare:.2f}x)"
    )


if __name__ == "__main__":
    asyncio.run(main())

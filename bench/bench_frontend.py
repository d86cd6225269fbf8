"""The panel's browser main-thread time per frame while Markdown streams, in headless Chromium.

Workload: a Markdown answer as models write them (paragraphs with bold, code and math, a
table, a Python fence, a numbered list; repeated) streamed as 4-character tokens. The kernel
side is the real reducer (``PanelState``) cutting a frame every ``--frame-tokens`` tokens (4 by
default: 120 tokens/s at the panel's 30 frames a second); the frames are recorded, then fed one
by one to the shipped front-end module (the committed minified build, loaded from a blob as
anywidget loads it, driven through a stand-in anywidget model) in Debian's headless Chromium.

Figures, around 1k, 10k and 50k tokens into the answer (the frames in the last tenth before
each mark):

* **ours**: main-thread ms per frame, from handing the frame to the view to the end of a
  forced style + layout (``offsetHeight``): script, DOM and layout, not paint (median, mean
  and p95 over the window: Chromium rounds ``performance.now()`` to 0.1 ms in a page without
  cross-origin isolation, and the mean also carries GC pauses and a shared machine's noise);
* **full re-render**: the peer, what a view that re-renders the whole answer per frame pays:
  ``innerHTML`` of the whole answer's HTML so far plus the same forced layout;
* **kernel**: the reducer's ms per frame (``PanelState.render``: finished blocks, the tail).

Ours should stay flat from 1k to 50k; the full re-render grows with the answer.

Run: ``python bench/bench_frontend.py [--tokens 1000,10000,50000] [--frame-tokens 4]``.
Needs ``playwright`` (pip) and ``/usr/bin/chromium`` (apt), as ``tests/browser`` does.
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

from pi_notebook.agent import Agent
from pi_notebook.ai import faux_assistant_message, register_faux_provider
from pi_notebook.notebook.panel.assets import frontend
from pi_notebook.notebook.panel.markdown import render_markdown
from pi_notebook.notebook.panel.ops import OpList
from pi_notebook.notebook.panel.reducer import PanelState

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run"]

SECTION = """\
The **variance** of `revenue` is $\\sigma^2 = \\frac{1}{n}\\sum_i (x_i - \\bar x)^2$, and the \
mean ticket grew by 4.2% over the quarter, see [the report](https://example.org/q3).

| region | orders | revenue |
|:-------|-------:|--------:|
| North  |    312 | 48,210.50 |
| South  |    298 | 41,003.00 |

```python
summary = df.groupby("region").agg(orders=("id", "count"), revenue=("amount", "sum"))
print(summary.sort_values("revenue", ascending=False))  # biggest first
```

1. Load the data with `pd.read_csv`.
2. Drop the rows without an *order id*.
3. Group and compare.

"""


def answer(tokens: int) -> str:
    text = ""
    while len(text) < tokens * 4:
        text += SECTION
    return text[: tokens * 4]


def kernel_frames(text: str, frame_tokens: int) -> tuple[dict[str, Any], list[Any], list[float]]:
    """(initial state, frames of ops, kernel ms per frame): a faux run streaming ``text``."""
    faux = register_faux_provider(token_size=(1, 1), tokens_per_second=None)
    faux.set_responses([faux_assistant_message(text)])
    agent = Agent(model=faux.get_model())
    ops = OpList()
    state = PanelState(ops, model="faux/bench")
    initial = json.loads(json.dumps(state.data))
    frames: list[Any] = []
    costs: list[float] = []
    deltas = [0]

    def listener(event: Any) -> None:
        state.apply(event)
        if event.type == "message_update" and event.assistant_message_event.type == "text_delta":
            deltas[0] += 1
            if deltas[0] % frame_tokens == 0:
                began = time.perf_counter()
                state.render()
                costs.append((time.perf_counter() - began) * 1000)
                frames.append(ops.ops)
                ops.ops = []

    agent.subscribe(listener)
    asyncio.run(agent.prompt("Summarise the sales."))
    faux.unregister()
    state.materialize()
    frames.append(ops.ops)
    block = state.data["messages"][1]["blocks"][0]
    assert "".join(block["html"]) == render_markdown(text), "the streamed HTML is the render"
    return initial, frames, costs


PAGE_SETUP = """async (code) => {
    const url = URL.createObjectURL(new Blob([code], { type: "text/javascript" }));
    const widget = (await import(url)).default;  // as anywidget loads _esm
    class Model {
        constructor() { this.handlers = new Map(); }
        get(name) { return name === "state" ? {} : undefined; }
        on(name, fn) { this.handlers.set(name, [...(this.handlers.get(name) || []), fn]); }
        off() {}
        send() {}
        emit(name, value) { for (const fn of this.handlers.get(name) || []) fn(value); }
    }
    const el = document.createElement("div");
    document.body.append(el);
    window.model = new Model();
    widget.render({ model: window.model, el });
    window.peer = document.createElement("div");
    window.peer.className = "pi-panel";
    document.body.append(window.peer);
}"""

PAGE_STREAM = """([initial, frames]) => {
    window.model.emit("msg:custom", { type: "snapshot", seq: 0, ...initial });
    const times = [];
    frames.forEach((ops, i) => {
        const began = performance.now();
        window.model.emit("msg:custom", { type: "deltas", seq: i + 1, ops });
        document.body.offsetHeight;  // force style + layout
        times.push(performance.now() - began);
    });
    return times;
}"""

PAGE_PEER = """([html, repeat]) => {
    const times = [];
    for (let i = 0; i < repeat; i++) {
        window.peer.innerHTML = "";
        document.body.offsetHeight;
        const began = performance.now();
        window.peer.innerHTML = html;
        document.body.offsetHeight;
        times.push(performance.now() - began);
    }
    window.peer.innerHTML = "";
    return times;
}"""


def window(values: list[float], frame_tokens: int, mark: int) -> list[float]:
    """The values of the frames in the last tenth before ``mark`` tokens."""
    last = max(1, mark // frame_tokens)
    first = max(0, last - max(1, last // 10))
    return values[first:last]


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tokens", default="1000,10000,50000", help="marks, comma-separated")
    parser.add_argument("--frame-tokens", type=int, default=4)
    parser.add_argument("--repeat", type=int, default=5, help="full re-renders per mark")
    args = parser.parse_args()
    marks = [int(t) for t in args.tokens.split(",")]
    text = answer(max(marks))
    print(
        f"answer: {max(marks):,} tokens ({len(text):,} characters of Markdown), "
        f"a frame every {args.frame_tokens} tokens"
    )
    initial, frames, kernel = kernel_frames(text, args.frame_tokens)
    esm, css = frontend()
    print(f"front end: {len(esm):,} B module + {len(css):,} B stylesheet, {len(frames):,} frames")

    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(
            executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS
        )
        page = browser.new_page(viewport={"width": 1200, "height": 900})
        page.set_content(f"<!doctype html><style>{css}</style><body></body>")
        page.evaluate(PAGE_SETUP, esm)
        ours: list[float] = page.evaluate(PAGE_STREAM, [initial, frames])
        rows = []
        for mark in marks:
            html = render_markdown(text[: mark * 4])
            peer: list[float] = page.evaluate(PAGE_PEER, [html, args.repeat])
            mine = window(ours, args.frame_tokens, mark)
            rows.append((mark, mine, peer, window(kernel, args.frame_tokens, mark)))
        browser.close()

    # Chromium rounds performance.now() to 0.1 ms here (no cross-origin isolation): medians
    # are in 0.1 ms steps, so the mean is shown too (it also carries GC pauses and the noise of
    # a shared machine, which the median leaves out).
    print("\nmain-thread ms per frame, ours vs a full re-render of the answer:")
    print(
        f"  {'tokens':>7}  {'ours: median':>12} {'mean':>6} {'p95':>6}  "
        f"{'full: median':>12} {'mean':>7}  {'full / ours':>11}  {'kernel ms/frame':>15}"
    )
    for mark, mine, peer, cost in rows:
        m, p = statistics.median(mine), statistics.median(peer)
        print(
            f"  {mark:>7,}  {m:>12.2f} {statistics.fmean(mine):>6.2f} {pct(mine, 0.95):>6.2f}  "
            f"{p:>12.2f} {statistics.fmean(peer):>7.2f}  {p / max(m, 0.1):>10.0f}x  "
            f"{statistics.median(cost):>15.3f}"
        )
    first, last = rows[0], rows[-1]
    growth = statistics.median(last[1]) / max(statistics.median(first[1]), 0.1)
    peer_growth = statistics.median(last[2]) / max(statistics.median(first[2]), 0.1)
    print(
        f"\n  from {first[0]:,} to {last[0]:,} tokens (medians): ours x{growth:.2f}, "
        f"full re-render x{peer_growth:.1f}"
    )


if __name__ == "__main__":
    main()

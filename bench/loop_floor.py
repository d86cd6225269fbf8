"""The CPython floor of the loop's per-token path, next to pi_notebook's own cost per delta.

    python bench/loop_floor.py [--deltas 100000] [--repeat 5]

Both rows stream one text message of ``--deltas`` 4-character deltas and count, per delta:

* floor - every piece of per-token work the runtime must do, written out in one Python
          function with nothing between the pieces: check the abort flag, grow the text block
          in place, build the ``text_delta`` event, check it for completion, keep the
          transcript's last message, check the ``{...partial}`` snapshot, build the
          ``message_update`` event, reduce the Agent's state and call one listener that counts
          events (the listener ``bench_loop.py`` uses). No generators, no calls between
          modules, no per-turn work: no real implementation can cost less in CPython.
* ours  - ``Agent.prompt()`` on the faux provider answering the same message, as the delta
          workload of ``bench_loop.py`` times it.

The gap between the rows is what the runtime's layers cost (faux stream, EventStream, loop,
Agent sink); the floor is the most any rewrite of those layers in Python could gain.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import sys
import time
from pathlib import Path
from typing import Any

BENCH = Path(__file__).resolve().parent
ROOT = BENCH.parent
for path in (ROOT, BENCH):
    if str(path) not in sys.path:
        sys.path.insert(0, str(path))

from bench_loop import delta_responses, run_once  # noqa: E402

from pi_notebook.agent import AbortController, MessageUpdateEvent  # noqa: E402
from pi_notebook.ai import Model, TextContent, TextDeltaEvent, empty_reply  # noqa: E402


class _State:
    streaming_message: Any = None


def floor_run(deltas: int) -> float:
    """Seconds for ``deltas`` tokens of per-token work with nothing between the pieces."""
    model = Model(id="floor", api="faux", provider="faux")
    partial = empty_reply(model)
    partial.content.append(TextContent(text=""))
    chunks = ["abcd"] * deltas
    signal = AbortController().signal
    state = _State()
    counts = {"events": 0, "deltas": 0}

    def listener(event: Any, signal: Any) -> None:
        counts["events"] += 1
        if event.type == "message_update" and event.assistant_message_event.type == "text_delta":
            counts["deltas"] += 1

    listeners = (listener,)
    transcript = [partial]
    snapshot = partial.model_copy()
    block = vars(partial.content[0])
    gc.collect()
    t0 = time.perf_counter()
    for chunk in chunks:
        if signal.aborted:
            break
        text = block.pop("text")
        text += chunk
        block["text"] = text
        event = TextDeltaEvent(0, chunk, partial)
        kind = event.type
        if kind == "done" or kind == "error":
            break
        transcript[-1] = partial
        if vars(snapshot) != vars(partial):
            snapshot = partial.model_copy()
        update = MessageUpdateEvent(snapshot, event)
        if update.type == "message_update":
            state.streaming_message = update.message
        for call in listeners:
            call(update, signal)
    seconds = time.perf_counter() - t0
    assert counts["deltas"] == deltas and block["text"] == "abcd" * deltas
    return seconds


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--deltas", type=int, default=100_000)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    n = args.deltas
    floor = min(floor_run(n) for _ in range(args.repeat + 1))

    async def ours_once() -> float:
        result = await run_once(delta_responses(n))
        assert result["deltas"] == n
        return float(result["seconds"])

    async def ours_best() -> float:
        await ours_once()  # warm-up
        return min([await ours_once() for _ in range(args.repeat)])

    ours = asyncio.run(ours_best())
    print(f"one message of {n:,} deltas, best of {args.repeat}:")
    print(f"  floor  {floor / n * 1e6:6.2f} us/delta   (per-token work, nothing between)")
    print(f"  ours   {ours / n * 1e6:6.2f} us/delta   (Agent.prompt on the faux provider)")
    print(f"  ours / floor = {ours / floor:.2f}x")


if __name__ == "__main__":
    main()

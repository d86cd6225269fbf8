"""Abort latency: from ``controller.abort()`` to the server seeing the client disconnect.

Issue 3 asks that an abort close the HTTP response at once (the server sees the disconnect
within 100 ms). This measures it against the test suite's real HTTP server on 127.0.0.1,
for both wire APIs, over repeated stalled streams, next to the time ``result()`` takes to
return the aborted message. Run: ``python bench/bench_abort.py [--repeat N]``.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from pi_notebook.ai import (
    AbortController,
    Context,
    Model,
    StreamOptions,
    UserMessage,
    maybe_await,
    stream,
)
from pi_notebook.ai.providers import aclose_client
from tests.providers.server import ScriptServer, named_sse, sse, stall

OPENAI_FIRST = sse({"choices": [{"index": 0, "delta": {"content": "partial"}}]}, end=False)
ANTHROPIC_FIRST = named_sse(
    ("message_start", {"type": "message_start", "message": {"id": "m", "usage": {}}}),
    (
        "content_block_start",
        {"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}},
    ),
    (
        "content_block_delta",
        {"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": "p"}},
    ),
)


async def once(server: ScriptServer, model: Model, first: bytes) -> tuple[float, float]:
    started = asyncio.Event()
    server.disconnected.clear()
    server.queue(stall(server, first, started))
    controller = AbortController()
    options = StreamOptions(api_key="sk-bench", signal=controller.signal, max_retries=0)
    response = await maybe_await(
        stream(model, Context(messages=[UserMessage(content="hi")]), options)
    )
    async for event in response:
        if event.type in ("text_delta", "error"):
            break
    loop = asyncio.get_running_loop()
    t0 = loop.time()
    controller.abort()
    message = await asyncio.wait_for(response.result(), 5)
    returned = loop.time() - t0
    await asyncio.wait_for(server.disconnected.wait(), 5)
    assert message.stop_reason == "aborted", message.error_message
    assert server.disconnect_time is not None
    return returned, server.disconnect_time - t0


async def main(repeat: int) -> None:
    server = ScriptServer()
    await server.start()
    try:
        models = {
            "openai-completions": (
                Model(id="m", api="openai-completions", provider="openai", base_url=server.url),
                OPENAI_FIRST,
            ),
            "anthropic-messages": (
                Model(id="m", api="anthropic-messages", provider="anthropic", base_url=server.url),
                ANTHROPIC_FIRST,
            ),
        }
        print(f"abort latency over {repeat} stalled streams each (ms)")
        print(
            f"{'api':<20} {'result() median':>16} {'disconnect median':>18} {'disconnect max':>15}"
        )
        for api, (model, first) in models.items():
            samples = [await once(server, model, first) for _ in range(repeat)]
            returned = [r * 1000 for r, _ in samples]
            seen = [d * 1000 for _, d in samples]
            print(
                f"{api:<20} {statistics.median(returned):>16.2f} "
                f"{statistics.median(seen):>18.2f} {max(seen):>15.2f}"
            )
    finally:
        await aclose_client()
        await server.stop()


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=20)
    asyncio.run(main(parser.parse_args().repeat))

"""Client throughput on a long Responses-API stream: our openai-responses client vs peers.

Starts a local HTTP server (a subprocess on 127.0.0.1, ``bench_providers.serve_body``) that
answers ``POST /v1/responses`` with one response of ``--deltas`` ``response.output_text.delta``
events (default 25,000) in OpenAI's shape (``event:`` + ``data:``, item ids, sequence numbers,
``logprobs``), then times, in one run and one event loop:

* raw+json - httpx ``aiter_lines()``, parsing each ``data:`` line with pydantic-core's
             ``from_json``: the floor of any client that reads each event;
* ours     - ``pi_notebook``'s openai-responses stream, iterating every event;
* sdk      - the official ``openai`` SDK's ``responses.create(stream=True)``, touching every
             text delta.

Prints the best of ``--repeat`` runs for each, and the ratios. It must never talk to anything
but its own local server.

    PYTHONPATH=. python bench/bench_responses.py [--deltas 25000] [--repeat 5]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_providers import serve_body


def _payload(deltas: int) -> bytes:
    words = ["alpha ", "beta ", "gamma ", "délta ", "epsilon ", "zeta ", "eta ", "theta "]
    events: list[dict[str, Any]] = []
    response = {
        "id": "resp_bench",
        "object": "response",
        "created_at": 1741290958,
        "status": "in_progress",
        "model": "bench-model",
        "output": [],
        "usage": None,
    }
    events.append({"type": "response.created", "response": response})
    message = {"id": "msg_bench", "type": "message", "role": "assistant", "content": []}
    events.append({"type": "response.output_item.added", "output_index": 0, "item": message})
    common = {"item_id": "msg_bench", "output_index": 0, "content_index": 0}
    part = {"type": "output_text", "text": "", "annotations": []}
    events.append({"type": "response.content_part.added", **common, "part": part})
    text = []
    for i in range(deltas):
        word = words[i % len(words)]
        text.append(word)
        events.append(
            {"type": "response.output_text.delta", **common, "delta": word, "logprobs": []}
        )
    full = "".join(text)
    done_part = {**part, "text": full}
    events.append({"type": "response.output_text.done", **common, "text": full, "logprobs": []})
    events.append({"type": "response.content_part.done", **common, "part": done_part})
    item = {**message, "status": "completed", "content": [done_part]}
    events.append({"type": "response.output_item.done", "output_index": 0, "item": item})
    usage = {
        "input_tokens": 10,
        "input_tokens_details": {"cached_tokens": 0},
        "output_tokens": deltas,
        "output_tokens_details": {"reasoning_tokens": 0},
        "total_tokens": deltas + 10,
    }
    final = {**response, "status": "completed", "output": [item], "usage": usage}
    events.append({"type": "response.completed", "response": final})
    out = []
    for n, event in enumerate(events):
        event = {"type": event["type"], "sequence_number": n, **event}
        out.append(f"event: {event['type']}\ndata: {json.dumps(event, ensure_ascii=False)}\n\n")
    return "".join(out).encode()


async def run_raw_json(client: Any, url: str) -> int:
    from pydantic_core import from_json

    n = 0
    async with client.stream(
        "POST", url + "/responses", json={"model": "bench-model", "stream": True}
    ) as response:
        async for line in response.aiter_lines():
            data = from_json(line[6:]) if line.startswith("data: {") else None
            if data is not None and data["type"] == "response.output_text.delta":
                n += 1
    return n


async def run_ours(client: Any, url: str) -> int:
    from pi_notebook.ai import Context, Model, StreamOptions, UserMessage, maybe_await, stream

    model = Model(id="bench-model", api="openai-responses", provider="bench", base_url=url)
    context = Context(messages=[UserMessage(content="go")])
    s = await maybe_await(stream(model, context, StreamOptions(api_key="bench")))
    n = 0
    async for event in s:
        if event.type == "text_delta":
            n += 1
    result = await s.result()
    assert result.stop_reason == "stop", result.error_message
    return n


async def run_sdk(client: Any, url: str) -> int:
    n = 0
    response = await client.responses.create(model="bench-model", input="go", stream=True)
    async for event in response:
        if event.type == "response.output_text.delta" and event.delta:
            n += 1
    return n


PEERS = ("raw+json", "ours", "sdk")


async def bench(url: str, repeat: int) -> dict[str, float]:
    import httpx
    import openai

    from pi_notebook.ai.providers import aclose_client

    http = httpx.AsyncClient(http1=True)
    sdk = openai.AsyncOpenAI(base_url=url, api_key="bench", max_retries=0)
    runners: dict[str, tuple[Any, Any]] = {
        "raw+json": (run_raw_json, http),
        "ours": (run_ours, None),
        "sdk": (run_sdk, sdk),
    }
    best = {name: float("inf") for name in runners}
    counts = {}
    try:
        for name, (runner, client) in runners.items():
            counts[name] = await runner(client, url)  # warm-up, untimed
        for _ in range(repeat):
            for name, (runner, client) in runners.items():
                t0 = time.perf_counter()
                counts[name] = await runner(client, url)
                best[name] = min(best[name], time.perf_counter() - t0)
    finally:
        await http.aclose()
        await sdk.close()
        await aclose_client()
    print("text deltas seen:", counts)
    return best


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--deltas", type=int, default=25_000)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--serve", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.serve:
        asyncio.run(serve_body(_payload(args.deltas)))
        return
    proc = subprocess.Popen(
        [sys.executable, __file__, "--serve", "--deltas", str(args.deltas)],
        stdout=subprocess.PIPE,
        text=True,
        env={**os.environ},
    )
    try:
        assert proc.stdout is not None
        port = int(proc.stdout.readline())
        url = f"http://127.0.0.1:{port}/v1"
        best = asyncio.run(bench(url, args.repeat))
    finally:
        proc.terminate()
        proc.wait()
    n = args.deltas
    print(f"Responses stream of {n} text deltas, best of {args.repeat} (clients made once):")
    for name in PEERS:
        us = best[name] / n * 1e6
        print(f"  {name:10s} {best[name] * 1000:8.1f} ms  {us:6.2f} us/delta")
    print(f"  ours / raw+json = {best['ours'] / best['raw+json']:.2f}x   (a floor that parses)")
    print(f"  sdk / ours      = {best['sdk'] / best['ours']:.2f}x   (> 1.0x: ours faster)")


if __name__ == "__main__":
    main()

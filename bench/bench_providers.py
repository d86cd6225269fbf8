"""Client throughput on a long streamed answer: our openai-completions client vs the floor.

Starts a local HTTP server (a subprocess on 127.0.0.1) that streams a chat completion of
``--chunks`` SSE chunks (default 25,000), then times, in one run and one event loop:

* raw      - httpx ``aiter_lines()`` over the same stream (no JSON, no events): the floor;
* raw+json - the same, parsing each ``data:`` line with pydantic-core's ``from_json`` (the
             fastest JSON parser installed): the floor of any client that reads each chunk;
* raw+events - the same line read, cutting each chunk's content out with a string search (no
             JSON, no checks: it works only on this payload) and yielding ``grow_text``'s
             ``text_delta`` (the block grown in place) through one async generator: the least
             any Python client that streams Pi's events can do;
* ours     - ``pi_notebook`` openai-completions stream, iterating every event;
* ours-plain - the same with the learned text-chunk envelope off (``MAX_SHAPE_ATTEMPTS = 0``):
             every chunk parsed whole, as a client without ``providers/chunk_shape.py`` does;
* sdk      - the official ``openai`` SDK's streaming, touching every chunk's delta;
* ours+gzip - ours again, the same stream sent ``content-encoding: gzip`` (flushed per
             frame, as a compressing proxy streams it): the cost of decoding a compressed reply.

Prints the best of ``--repeat`` runs for each (wall time, and this process's CPU time, which a
busy machine disturbs less; the server's CPU is not counted), and the ratios. Targets: ours
within 1.3x of raw, and faster than the SDK. It must never talk to anything but its own local
server.

    PYTHONPATH=. python bench/bench_providers.py [--chunks 25000] [--repeat 5] [--obfuscation]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import string
import subprocess
import sys
import time
import zlib
from typing import Any


def _payload(chunks: int, obfuscation: bool = False) -> bytes:
    parts = []
    noise = random.Random(7)
    base = {
        "id": "chatcmpl-bench",
        "object": "chat.completion.chunk",
        "created": 1700000000,
        "model": "bench-model",
        "system_fingerprint": "fp_bench",
    }
    words = ["alpha ", "beta ", "gamma ", "délta ", "epsilon ", "zeta ", "eta ", "theta "]
    for i in range(chunks):
        delta = {"content": words[i % len(words)]}
        if i == 0:
            delta["role"] = "assistant"
        chunk: dict[str, Any] = {
            **base,
            "choices": [{"index": 0, "delta": delta, "logprobs": None, "finish_reason": None}],
        }
        if obfuscation:  # OpenAI pads every chunk with a random string of random length
            chunk["obfuscation"] = "".join(
                noise.choices(string.ascii_letters, k=noise.randint(1, 12))
            )
        parts.append(f"data: {json.dumps(chunk, ensure_ascii=False)}\n\n")
    final = {
        **base,
        "choices": [{"index": 0, "delta": {}, "logprobs": None, "finish_reason": "stop"}],
    }
    parts.append(f"data: {json.dumps(final)}\n\n")
    usage = {
        **base,
        "choices": [],
        "usage": {"prompt_tokens": 10, "completion_tokens": chunks, "total_tokens": chunks + 10},
    }
    parts.append(f"data: {json.dumps(usage)}\n\n")
    parts.append("data: [DONE]\n\n")
    return "".join(parts).encode()


# --------------------------------------------------------------------------------------------
# Server (runs in a subprocess)


async def _serve(chunks: int, obfuscation: bool) -> None:
    await serve_body(_payload(chunks, obfuscation))


async def serve_body(body: bytes) -> None:
    """Answer every request on a free port (printed first) with ``body`` as a chunked SSE reply
    (gzip-encoded, one flushed frame per 16 KiB of the body, when the path has ``/gz/``)."""
    frame = 16384
    pieces = [body[i : i + frame] for i in range(0, len(body), frame)]
    compressor = zlib.compressobj(wbits=31)
    gzipped = [compressor.compress(p) + compressor.flush(zlib.Z_SYNC_FLUSH) for p in pieces]
    gzipped.append(compressor.flush())

    def chunked(frames: list[bytes]) -> bytes:
        return b"".join(f"{len(f):x}\r\n".encode() + f + b"\r\n" for f in frames if f) + (
            b"0\r\n\r\n"
        )

    framed, framed_gzip = chunked(pieces), chunked(gzipped)
    head = (
        b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ntransfer-encoding: chunked\r\n\r\n"
    )
    head_gzip = head[:-2] + b"content-encoding: gzip\r\n\r\n"

    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            while True:
                raw = await reader.readuntil(b"\r\n\r\n")
                length = 0
                for line in raw.split(b"\r\n"):
                    if line.lower().startswith(b"content-length:"):
                        length = int(line.split(b":")[1])
                if length:
                    await reader.readexactly(length)
                if b"/gz/" in raw.split(b"\r\n", 1)[0]:
                    writer.write(head_gzip + framed_gzip)
                else:
                    writer.write(head + framed)
                await writer.drain()
        except (asyncio.IncompleteReadError, ConnectionError):
            pass
        finally:
            writer.close()

    server = await asyncio.start_server(handle, "127.0.0.1", 0)
    print(server.sockets[0].getsockname()[1], flush=True)
    async with server:
        await server.serve_forever()


# --------------------------------------------------------------------------------------------
# Clients
#
# Every peer makes its HTTP client once, before timing (creating an httpx client costs about
# 20 ms: it loads the CA bundle), and gets one untimed warm-up run. Ours uses the pooled
# client that every pi_notebook request uses.


async def run_raw(client: Any, url: str, *, parse: bool = False) -> int:
    """Read the stream's lines; with ``parse``, JSON-parse each ``data:`` line too."""
    from pydantic_core import from_json

    n = 0
    async with client.stream(
        "POST", url + "/chat/completions", json={"model": "bench-model", "stream": True}
    ) as response:
        lines = response.aiter_lines()
        if not parse:  # the floor: nothing but the line read in the loop
            async for line in lines:
                if line:
                    n += 1
        else:
            async for line in lines:
                if line.startswith("data: {"):
                    from_json(line[6:])
                    n += 1
    return n


async def run_raw_json(client: Any, url: str) -> int:
    return await run_raw(client, url, parse=True)


_CONTENT = '"content": "'


async def _least_events(lines: Any, partial: Any) -> Any:
    from pi_notebook.ai import grow_text

    skip = len(_CONTENT)
    async for line in lines:
        start = line.find(_CONTENT)
        if start < 0:
            continue
        start += skip
        yield grow_text(partial, 0, line[start : line.index('"', start)])  # no escapes here


async def run_raw_events(client: Any, url: str) -> int:
    from pi_notebook.ai import Model, TextContent, empty_reply

    partial = empty_reply(Model(id="bench-model", api="openai-completions", provider="bench"))
    partial.content.append(TextContent(text=""))
    n = 0
    async with client.stream(
        "POST", url + "/chat/completions", json={"model": "bench-model", "stream": True}
    ) as response:
        async for event in _least_events(response.aiter_lines(), partial):
            if event.type == "text_delta":
                n += 1
    return n


async def run_ours(client: Any, url: str) -> int:
    from pi_notebook.ai import Context, Model, StreamOptions, UserMessage, maybe_await, stream

    model = Model(id="bench-model", api="openai-completions", provider="bench", base_url=url)
    context = Context(messages=[UserMessage(content="go")])
    s = await maybe_await(stream(model, context, StreamOptions(api_key="bench")))
    n = 0
    async for event in s:
        if event.type == "text_delta":
            n += 1
    result = await s.result()
    assert result.stop_reason == "stop", result.error_message
    return n


async def run_ours_plain(client: Any, url: str) -> int:
    from pi_notebook.ai.providers import openai_completions

    attempts = openai_completions.MAX_SHAPE_ATTEMPTS
    openai_completions.MAX_SHAPE_ATTEMPTS = 0  # never learn an envelope: parse every chunk
    try:
        return await run_ours(client, url)
    finally:
        openai_completions.MAX_SHAPE_ATTEMPTS = attempts


async def run_ours_gzip(client: Any, url: str) -> int:
    return await run_ours(client, url + "/gz")


async def run_sdk(client: Any, url: str) -> int:
    n = 0
    response = await client.chat.completions.create(
        model="bench-model", messages=[{"role": "user", "content": "go"}], stream=True
    )
    async for chunk in response:
        if chunk.choices and chunk.choices[0].delta.content:
            n += 1
    return n


PEERS = ("raw", "raw+json", "raw+events", "ours", "ours-plain", "sdk", "ours+gzip")


async def bench(url: str, repeat: int) -> tuple[dict[str, float], dict[str, float]]:
    import httpx
    import openai

    from pi_notebook.ai.providers import aclose_client

    http = httpx.AsyncClient(http1=True)
    sdk = openai.AsyncOpenAI(base_url=url, api_key="bench", max_retries=0)
    runners: dict[str, tuple[Any, Any]] = {
        "raw": (run_raw, http),
        "raw+json": (run_raw_json, http),
        "raw+events": (run_raw_events, http),
        "ours": (run_ours, None),
        "ours-plain": (run_ours_plain, None),
        "sdk": (run_sdk, sdk),
        "ours+gzip": (run_ours_gzip, None),
    }
    best = {name: float("inf") for name in runners}
    best_cpu = dict(best)
    counts = {}
    try:
        for name, (runner, client) in runners.items():
            counts[name] = await runner(client, url)  # warm-up, untimed
        for _ in range(repeat):
            for name, (runner, client) in runners.items():
                t0, c0 = time.perf_counter(), time.process_time()
                counts[name] = await runner(client, url)
                best[name] = min(best[name], time.perf_counter() - t0)
                best_cpu[name] = min(best_cpu[name], time.process_time() - c0)
    finally:
        await http.aclose()
        await sdk.close()
        await aclose_client()
    print("items seen:", counts)
    return best, best_cpu


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--chunks", type=int, default=25_000)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument(
        "--obfuscation",
        action="store_true",
        help="give every chunk a random 'obfuscation' field, as OpenAI's own API does",
    )
    parser.add_argument("--serve", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.serve:
        asyncio.run(_serve(args.chunks, args.obfuscation))
        return
    proc = subprocess.Popen(
        [sys.executable, __file__, "--serve", "--chunks", str(args.chunks)]
        + (["--obfuscation"] if args.obfuscation else []),
        stdout=subprocess.PIPE,
        text=True,
        env={**os.environ},
    )
    try:
        assert proc.stdout is not None
        port = int(proc.stdout.readline())
        url = f"http://127.0.0.1:{port}/v1"
        best, cpu = asyncio.run(bench(url, args.repeat))
    finally:
        proc.terminate()
        proc.wait()
    n = args.chunks
    shape = " with OpenAI's per-chunk obfuscation field" if args.obfuscation else ""
    print(
        f"stream of {n} chunks{shape}, best of {args.repeat} (clients made once, warm-up untimed):"
    )
    for name in PEERS:
        us = best[name] / n * 1e6
        rate = n / best[name]
        cpu_us = cpu[name] / n * 1e6
        print(
            f"  {name:10s} {best[name] * 1000:8.1f} ms  {us:6.2f} us/chunk  {rate:9.0f} chunks/s"
            f"   cpu {cpu_us:6.2f} us/chunk"
        )
    json_us = (best["raw+json"] - best["raw"]) / n * 1e6
    print(f"  JSON parse alone (raw+json - raw): {json_us:.2f} us/chunk")
    print(f"  ours / raw      = {best['ours'] / best['raw']:.2f}x   (issue target <= 1.3x)")
    least = best["raw+events"] / best["raw"]
    print(f"  raw+events / raw = {least:.2f}x   (the least an event-streaming client can cost)")
    parsing_floor = best["ours"] / best["raw+json"]
    print(f"  ours / raw+json = {parsing_floor:.2f}x   (a floor that parses each chunk)")
    plain = best["ours-plain"] / best["ours"]
    plain_cpu = cpu["ours-plain"] / cpu["ours"]
    print(
        f"  ours-plain / ours = {plain:.2f}x wall, {plain_cpu:.2f}x cpu"
        "   (what the learned envelope buys; > 1.0x: it pays)"
    )
    print(f"  sdk / ours      = {best['sdk'] / best['ours']:.2f}x   (> 1.0x: ours faster)")
    gzip_cost = best["ours+gzip"] / best["ours"]
    print(f"  ours+gzip / ours = {gzip_cost:.2f}x   (decoding a gzip-encoded reply)")


if __name__ == "__main__":
    main()

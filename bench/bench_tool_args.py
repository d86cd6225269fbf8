"""CPU per argument byte of a streaming tool call, at 4 KB and 40 KB, old parser vs new.

    python bench/bench_tool_args.py [--sizes 4000,40000] [--repeat 5]

One ``run_python`` tool call whose ``code`` argument (Python source: newlines, quotes,
backslashes and a little non-ASCII, all escaped in the JSON) streams in token-sized
fragments of 1 to 7 characters (4 on average, as OpenAI sends them). Each peer handles every
fragment the way a provider does and sets the block's ``arguments`` to the partial parse:

* old    - the previous ``grow_tool_call``: append to the raw string, then
           ``parse_json_object`` (``json_parse``) of the whole string, on every fragment;
* jiter  - ``pydantic_core.from_json(whole string, allow_partial="trailing-strings")`` on
           every fragment, for information (it re-reads the whole string too, and its
           partial semantics are not Pi's: no ``tr`` -> true, no repair);
* new    - ``grow_tool_call`` (``json_incremental``: the tokenizer resumes where the last
           fragment ended).

Figures are process CPU time (``time.process_time``), best of ``--repeat`` runs after a
warm-up, in ns per argument byte, and the ratio of the 40 KB run's total to the 4 KB run's:
10 is linear, 100 quadratic. The issue's target is a ratio of at most 12 for ``new``. Before
timing, one pass checks that ``new`` answers what ``old`` answers after every fragment.
"""

from __future__ import annotations

import argparse
import asyncio
import functools
import gc
import json
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

BENCH = Path(__file__).resolve().parent
ROOT = BENCH.parent
for path in (ROOT, BENCH):
    if str(path) not in sys.path:
        sys.path.insert(0, str(path))

from bench_providers import serve_body  # noqa: E402
from pydantic_core import from_json  # noqa: E402

from pi_notebook.ai import (  # noqa: E402
    Context,
    Model,
    StreamOptions,
    ToolCall,
    ToolCallDeltaEvent,
    UserMessage,
    empty_reply,
    maybe_await,
    stream,
)
from pi_notebook.ai.json_parse import parse_json_object  # noqa: E402
from pi_notebook.ai.partial import RawArguments, grow_tool_call  # noqa: E402
from pi_notebook.ai.providers import aclose_client, openai_completions  # noqa: E402

_SNIPPET = '''def summarise(frame, column="value"):
    """Mean and spread of one column, by group (µ, σ)."""
    grouped = frame.groupby("group")[column]
    stats = grouped.agg(["mean", "std"]).rename(columns={"std": "σ"})
    print(f"{len(stats)} groups\\tpath=C:\\\\data\\\\{column}.csv")
    return stats.sort_values("mean", ascending=False)

'''


def arguments_json(size: int) -> str:
    """The raw JSON of a ``run_python`` call of exactly ``size`` chars (``size`` >= 40)."""
    code = ""
    while len(json.dumps({"code": code + _SNIPPET, "timeout": 30}, ensure_ascii=False)) <= size:
        code += _SNIPPET
    code += "#" * (size - len(json.dumps({"code": code, "timeout": 30}, ensure_ascii=False)))
    return json.dumps({"code": code, "timeout": 30}, ensure_ascii=False)


def fragments(text: str) -> list[str]:
    """Token-sized pieces of 1..7 characters (mean 4), deterministic."""
    pieces, i, step = [], 0, 0
    while i < len(text):
        width = 1 + (step * 3) % 7
        pieces.append(text[i : i + width])
        i += width
        step += 1
    return pieces


def _partial() -> Any:
    partial = empty_reply(Model(id="bench", api="bench", provider="bench"))
    partial.content.append(ToolCall(id="call_1", name="run_python"))
    return partial


def _delta_event(partial: Any, index: int, fragment: str) -> ToolCallDeltaEvent:
    return ToolCallDeltaEvent(index, fragment, partial)


def old_grow_tool_call(
    partial: Any, index: int, raw: dict[int, str], fragment: str
) -> ToolCallDeltaEvent:
    """The previous ``grow_tool_call``: the whole raw string re-parsed on every fragment."""
    text = raw.pop(index, "")
    text += fragment
    raw[index] = text
    partial.content[index].arguments = parse_json_object(text)
    return _delta_event(partial, index, fragment)


def jiter_grow_tool_call(
    partial: Any, index: int, raw: dict[int, str], fragment: str
) -> ToolCallDeltaEvent:
    """The same with jiter, falling back to ``parse_json_object`` where jiter fails."""
    text = raw.pop(index, "")
    text += fragment
    raw[index] = text
    try:
        parsed = from_json(text, allow_partial="trailing-strings")
    except ValueError:
        parsed = parse_json_object(text)
    partial.content[index].arguments = parsed if isinstance(parsed, dict) else {}
    return _delta_event(partial, index, fragment)


GROWERS: dict[str, Callable[..., ToolCallDeltaEvent]] = {
    "old": old_grow_tool_call,
    "jiter": jiter_grow_tool_call,
    "new": grow_tool_call,
}


def run_parse(grow: Callable[..., ToolCallDeltaEvent], pieces: list[str]) -> Any:
    partial = _partial()
    raw: dict[int, Any] = {}
    for piece in pieces:
        grow(partial, 0, raw, piece)
    return partial.content[0].arguments


def check_same_answers(pieces: list[str]) -> None:
    partial = _partial()
    raw: RawArguments = {}
    text = ""
    for piece in pieces:
        text += piece
        grow_tool_call(partial, 0, raw, piece)
        assert partial.content[0].arguments == parse_json_object(text), text[-40:]


def best_cpu(
    runs: dict[int, Callable[[], Any]], expected: dict[int, Any], repeat: int
) -> dict[int, float]:
    """Best CPU seconds per size; the sizes take turns, so both see the same machine."""
    for size, run in runs.items():
        assert run() == expected[size]  # warm-up, and the final answer is the whole arguments
    times: dict[int, list[float]] = {size: [] for size in runs}
    for _ in range(repeat):
        for size, run in runs.items():
            gc.collect()
            start = time.process_time()
            run()
            times[size].append(time.process_time() - start)
    return {size: min(figures) for size, figures in times.items()}


# --------------------------------------------------------------------------------------------
# Through the openai-completions client, from a local server


def sse_body(pieces: list[str]) -> bytes:
    base = {"id": "chatcmpl-bench", "object": "chat.completion.chunk", "model": "bench-model"}
    frames = []
    for n, piece in enumerate(pieces):
        call: dict[str, Any] = {"index": 0, "function": {"arguments": piece}}
        if n == 0:
            call.update(id="call_1", type="function")
            call["function"]["name"] = "run_python"
        delta = {"tool_calls": [call]}
        frames.append({**base, "choices": [{"index": 0, "delta": delta, "finish_reason": None}]})
    frames.append({**base, "choices": [{"index": 0, "delta": {}, "finish_reason": "tool_calls"}]})
    data = "".join(f"data: {json.dumps(frame, ensure_ascii=False)}\n\n" for frame in frames)
    return (data + "data: [DONE]\n\n").encode()


async def client_cpu(url: str, grow: Callable[..., ToolCallDeltaEvent]) -> tuple[float, Any]:
    """CPU seconds of one streamed reply through our client, with ``grow`` as its grower."""
    openai_completions.grow_tool_call = grow  # type: ignore[attr-defined]
    try:
        model = Model(id="bench-model", api="openai-completions", provider="bench", base_url=url)
        context = Context(messages=[UserMessage(content="go")])
        start = time.process_time()
        s = await maybe_await(stream(model, context, StreamOptions(api_key="bench")))
        async for _event in s:
            pass
        result = await s.result()
        cpu = time.process_time() - start
    finally:
        openai_completions.grow_tool_call = grow_tool_call  # type: ignore[attr-defined]
    assert result.stop_reason == "toolUse", result.error_message
    return cpu, result.content[0].arguments


def client_rows(pieces: dict[int, list[str]], repeat: int) -> dict[str, dict[int, float]]:
    servers: dict[int, subprocess.Popen[str]] = {}
    urls: dict[int, str] = {}
    with tempfile.TemporaryDirectory() as folder:
        try:
            for size, parts in pieces.items():
                body = Path(folder) / f"{size}.sse"
                body.write_bytes(sse_body(parts))
                servers[size] = subprocess.Popen(
                    [sys.executable, __file__, "--serve", str(body)],
                    stdout=subprocess.PIPE,
                    text=True,
                )
                assert servers[size].stdout is not None
                urls[size] = f"http://127.0.0.1:{int(servers[size].stdout.readline())}/v1"

            async def measure() -> dict[str, dict[int, float]]:
                times: dict[str, dict[int, list[float]]] = {
                    name: {size: [] for size in pieces} for name in ("old", "new")
                }
                try:
                    for name, figures in times.items():
                        for turn in range(repeat + 1):  # the first is a warm-up
                            for size, parts in pieces.items():  # the sizes take turns
                                gc.collect()
                                cpu, arguments = await client_cpu(urls[size], GROWERS[name])
                                assert arguments == json.loads("".join(parts))
                                if turn:
                                    figures[size].append(cpu)
                finally:
                    await aclose_client()
                return {
                    name: {size: min(cpus) for size, cpus in figures.items()}
                    for name, figures in times.items()
                }

            return asyncio.run(measure())
        finally:
            for server in servers.values():
                server.terminate()
                server.wait()


def print_rows(title: str, totals: dict[str, dict[int, float]], chars: dict[int, int]) -> None:
    small, large = chars
    heads = (f"{small:,} ns/byte", f"{large:,} ns/byte", f"{large:,} / {small:,}")
    print(title)
    print(f"  {'peer':6} {heads[0]:>16} {heads[1]:>16} {heads[2]:>16}")
    for name, figures in totals.items():
        per_byte = {size: figures[size] / chars[size] * 1e9 for size in chars}
        ratio = figures[large] / figures[small]
        print(f"  {name:6} {per_byte[small]:16.1f} {per_byte[large]:16.1f} {ratio:15.1f}x")
    print(f"  old / new at {large:,} chars = {totals['old'][large] / totals['new'][large]:.1f}x")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", default="4000,40000", help="two argument sizes, in chars")
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--serve", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.serve:
        asyncio.run(serve_body(Path(args.serve).read_bytes()))
        return
    small, large = (int(size) for size in args.sizes.split(","))
    texts = {size: arguments_json(size) for size in (small, large)}
    chars = {size: len(text) for size, text in texts.items()}
    pieces = {size: fragments(text) for size, text in texts.items()}
    check_same_answers(pieces[small])
    print(
        f"one run_python call, fragments of 1-7 chars; CPU, best of {args.repeat}; "
        f"{chars[small]:,} chars ({len(pieces[small]):,} fragments) and "
        f"{chars[large]:,} chars ({len(pieces[large]):,} fragments)"
    )
    expected = {size: json.loads(text) for size, text in texts.items()}
    parse = {
        name: best_cpu(
            {size: functools.partial(run_parse, grow, pieces[size]) for size in texts},
            expected,
            args.repeat,
        )
        for name, grow in GROWERS.items()
    }
    print_rows("grower alone (append, parse, toolcall_delta event):", parse, chars)
    print_rows(
        "through the openai-completions client (SSE from a local server, every event):",
        client_rows(pieces, args.repeat),
        chars,
    )


if __name__ == "__main__":
    main()

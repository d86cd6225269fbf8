"""The first tool call of a process: reply -> tool start, with and without the schema warm-up.

Usage: ``python bench/bench_first_tool.py [--repeat 5] [--delays 1.5,0.1] [--tokens 50]``

A local OpenAI-compatible server (a thread of this process, 127.0.0.1, chunked SSE) answers
the first request of a run after ``delay`` seconds (the model thinking) with ``--tokens`` text
chunks, one every 10 ms, then one tool call; it answers the tool result at once with "Done.".
Each figure runs in a fresh interpreter (``python bench/bench_first_tool.py --child``) that
imports ``pi_notebook``, builds an ``Agent`` with one JSON-schema tool and prompts it once:

* ``reply -> tool``: from the assistant's ``message_end`` (the whole tool call received) to
  the tool's ``execute`` starting: what the tool card sits "prepared" for (arguments checked
  against the schema in between). Without the warm-up it includes importing ``jsonschema``
  (whose ``rfc3987_syntax`` builds its Lark grammars when imported);
* ``prompt -> tool``: from ``prompt()`` to the tool's ``execute`` starting (includes ``delay``);
* ``request out``: from ``prompt()`` to the request reaching the server (the provider's first
  import, the request built and sent), which the warm-up must not delay;
* ``first token``: from the request reaching the server to the first ``text_delta``, minus
  ``delay``: how late the process sees the reply's first chunk;
* ``stream``: from the first ``text_delta`` to ``message_end`` (``--tokens`` x 10 ms paced by
  the server): whether the import, when it is still running then, slows the tokens.

Rows are medians of ``--repeat`` processes per mode, the modes alternated; ``warm-up off`` sets
``pi_notebook.ai.schema_warm_up.enabled = False`` (the code as it was before the warm-up).
``delay`` 1.5 s is a model that thinks; 0.1 s one that answers before the import is done.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
PACE = 0.01
ARRIVALS: list[float] = []
"""When each request arrived (``perf_counter`` is the system's monotonic clock on Linux and
macOS, the same in the child processes)."""


def _chunk(delta: dict[str, Any], finish: str | None = None) -> bytes:
    body = {
        "id": "c1",
        "object": "chat.completion.chunk",
        "model": "bench",
        "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
    }
    return f"data: {json.dumps(body)}\n\n".encode()


class _Reply(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    delay = 1.5
    tokens = 50

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def _send(self, data: bytes) -> None:
        self.wfile.write(f"{len(data):x}\r\n".encode() + data + b"\r\n")
        self.wfile.flush()

    def do_POST(self) -> None:
        ARRIVALS.append(time.perf_counter())
        body = json.loads(self.rfile.read(int(self.headers["content-length"])))
        answered = any(m.get("role") == "tool" for m in body["messages"])
        self.send_response(200)
        self.send_header("content-type", "text/event-stream")
        self.send_header("transfer-encoding", "chunked")
        self.end_headers()
        if answered:
            self._send(_chunk({"role": "assistant", "content": "Done."}, None))
            self._send(_chunk({}, "stop"))
        else:
            time.sleep(self.delay)
            self._send(_chunk({"role": "assistant", "content": ""}))
            for _ in range(self.tokens):
                self._send(_chunk({"content": "word "}))
                time.sleep(PACE)
            call = {"index": 0, "id": "call_1", "type": "function"}
            call["function"] = {"name": "lookup", "arguments": '{"key": "alpha", "limit": 3}'}
            self._send(_chunk({"tool_calls": [call]}))
            self._send(_chunk({}, "tool_calls"))
        self._send(b"data: [DONE]\n\n")
        self.wfile.write(b"0\r\n\r\n")
        self.wfile.flush()


CHILD = r"""
import asyncio, json, sys, time
t_start = time.perf_counter()
from pi_notebook.agent import Agent, AgentTool, AgentToolResult
from pi_notebook.ai import Model, TextContent
from pi_notebook.ai import schema_warm_up

schema_warm_up.enabled = sys.argv[2] == "on"
marks = {}

async def lookup(tool_call_id, params, signal, on_update):
    marks.setdefault("tool_runs", time.perf_counter())
    return AgentToolResult(content=[TextContent(text=f"{params['key']}: 1")])

TOOL = AgentTool(
    name="lookup", label="Lookup", description="Look a key up.",
    parameters={"type": "object", "required": ["key"],
                "properties": {"key": {"type": "string", "format": "uri-reference"},
                               "limit": {"type": "integer"}}},
    execute=lookup,
)

def listener(event, signal):
    now = time.perf_counter()
    if event.type == "message_update" and event.assistant_message_event.type == "text_delta":
        marks.setdefault("first_token", now)
    elif event.type == "message_end" and getattr(event.message, "role", "") == "assistant":
        if "reply_end" not in marks:
            marks["reply_end"] = now
            thread = schema_warm_up.warm_up_thread
            marks["warm_done_at_reply"] = thread is not None and not thread.is_alive()

async def main():
    model = Model(id="bench", api="openai-completions", provider="openai",
                  base_url=sys.argv[1], context_window=128000, max_tokens=4096)
    agent = Agent(model=model, tools=[TOOL], system_prompt="You are a benchmark.",
                  get_api_key=lambda provider: "sk-bench")
    agent.subscribe(listener)
    marks["prompt"] = time.perf_counter()
    await agent.prompt("Look alpha up.")
    assert agent.state.messages[-1].content[0].text == "Done.", agent.state.messages[-1]
    print(json.dumps(marks))

asyncio.run(main())
"""


def run_child(url: str, warm: bool) -> dict[str, Any]:
    done = subprocess.run(
        [sys.executable, "-c", CHILD, url, "on" if warm else "off"],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=ROOT,
    )
    if done.returncode != 0:
        raise RuntimeError(done.stderr[-3000:])
    marks: dict[str, Any] = json.loads(done.stdout.splitlines()[-1])
    return marks


def figures(marks: dict[str, Any], arrival: float, delay: float) -> dict[str, float]:
    return {
        "reply -> tool": marks["tool_runs"] - marks["reply_end"],
        "prompt -> tool": marks["tool_runs"] - marks["prompt"],
        "request out": arrival - marks["prompt"],
        "first token": marks["first_token"] - arrival - delay,
        "stream": marks["reply_end"] - marks["first_token"],
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--delays", default="1.5,0.1")
    parser.add_argument("--tokens", type=int, default=50)
    args = parser.parse_args()
    _Reply.tokens = args.tokens
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Reply)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    url = f"http://127.0.0.1:{server.server_address[1]}/v1"
    try:
        for delay in (float(d) for d in args.delays.split(",")):
            _Reply.delay = delay
            runs: dict[bool, list[dict[str, float]]] = {True: [], False: []}
            imported: dict[bool, list[bool]] = {True: [], False: []}
            for i in range(args.repeat * 2):
                warm = i % 2 == 0
                ARRIVALS.clear()
                marks = run_child(url, warm)
                runs[warm].append(figures(marks, ARRIVALS[0], delay))
                imported[warm].append(bool(marks["warm_done_at_reply"]))
            print(
                f"model replies after {delay:g} s, {args.tokens} tokens at {PACE * 1000:g} ms, "
                f"fresh process each, median of {args.repeat} (ms)"
            )
            columns = ("reply -> tool", "prompt -> tool", "request out", "first token", "stream")
            heads = "".join(f"{c:>15}" for c in columns)
            print(f"  {'':12}{heads}  import done by reply end")
            median: dict[bool, dict[str, float]] = {}
            for warm in (True, False):
                median[warm] = {c: statistics.median(r[c] for r in runs[warm]) for c in columns}
                label = "warm-up on" if warm else "warm-up off"
                cells = "".join(f"{median[warm][c] * 1000:15.1f}" for c in columns)
                print(f"  {label:12}{cells}  {sum(imported[warm])}/{args.repeat}")
            on, off = median[True], median[False]
            print(
                f"  reply -> tool: off / on = {off['reply -> tool'] / on['reply -> tool']:.1f}x"
                f"; prompt -> tool: off / on = {off['prompt -> tool'] / on['prompt -> tool']:.2f}x"
                f"; request out, first token: on - off = "
                f"{(on['request out'] - off['request out']) * 1000:+.1f} ms, "
                f"{(on['first token'] - off['first token']) * 1000:+.1f} ms"
                f"; stream: on / off = {on['stream'] / off['stream']:.2f}x"
            )
    finally:
        server.shutdown()


if __name__ == "__main__":
    main()

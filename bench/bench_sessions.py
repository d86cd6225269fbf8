"""What saving a conversation after every run costs, next to two peers in the same run.

A conversation grows by one run at a time (a prompt, a tool call, its result, an answer: 4
messages of about ``--chars`` characters each); after each run it is saved. Rows:

- ``ours``: :class:`LineCache` (each message serialised once) + the atomic write (temporary
  file, fsync, ``os.replace``) of the whole file: what the magic does at ``agent_end``.
- ``full dump``: every message serialised again at every save (``dump_transcript`` of the
  whole transcript), same atomic write.
- ``append``: only the new lines appended to the file, no temporary file and no fsync: the
  floor of any save, and not crash-safe.

Printed: the mean cost of one save over the last ``--window`` runs of a conversation of
``--runs`` runs, in ms, and the ratios. Run: ``python bench/bench_sessions.py``.
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from pathlib import Path

from pi_notebook.ai import (
    AgentMessage,
    AssistantMessage,
    TextContent,
    ToolCall,
    ToolResultMessage,
    UserMessage,
    dump_transcript,
)
from pi_notebook.notebook.transcript_file import FileHeader, LineCache, read, write


def one_run(index: int, chars: int) -> list[AgentMessage]:
    text = ("lorem ipsum " * (chars // 12 + 1))[:chars]
    common = {"api": "faux", "provider": "faux", "model": "faux-1"}
    return [
        UserMessage(content=f"question {index}: {text}"),
        AssistantMessage(
            content=[ToolCall(id=f"c{index}", name="run_python", arguments={"code": text})],
            stop_reason="toolUse",
            **common,
        ),
        ToolResultMessage(
            tool_call_id=f"c{index}",
            tool_name="run_python",
            content=[TextContent(text=text)],
            details={"namespace_diff": {"created": ["x"], "changed": [], "deleted": []}},
        ),
        AssistantMessage(content=[TextContent(text=text)], **common),
    ]


def ours(folder: Path, runs: list[list[AgentMessage]], window: int) -> float:
    path, cache, messages = folder / "ours.jsonl", LineCache(), []
    spent = 0.0
    for i, run in enumerate(runs):
        messages.extend(run)
        start = time.perf_counter()
        write(path, FileHeader(), cache.lines(messages))
        if i >= len(runs) - window:
            spent += time.perf_counter() - start
    assert len(read(path).messages) == len(messages)
    return spent / window


def full_dump(folder: Path, runs: list[list[AgentMessage]], window: int) -> float:
    path, messages = folder / "full.jsonl", []
    spent = 0.0
    for i, run in enumerate(runs):
        messages.extend(run)
        start = time.perf_counter()
        lines = [
            json.dumps(d, ensure_ascii=False, separators=(",", ":"))
            for d in dump_transcript(messages)
        ]
        write(path, FileHeader(), lines)
        if i >= len(runs) - window:
            spent += time.perf_counter() - start
    return spent / window


def append(folder: Path, runs: list[list[AgentMessage]], window: int) -> float:
    path = folder / "append.jsonl"
    path.write_text(FileHeader().line() + "\n", encoding="utf-8")
    spent = 0.0
    for i, run in enumerate(runs):
        start = time.perf_counter()
        lines = [
            json.dumps(d, ensure_ascii=False, separators=(",", ":")) for d in dump_transcript(run)
        ]
        with path.open("a", encoding="utf-8") as handle:
            handle.write("".join(line + "\n" for line in lines))
        if i >= len(runs) - window:
            spent += time.perf_counter() - start
    return spent / window


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=250)
    parser.add_argument("--chars", type=int, default=1000)
    parser.add_argument("--window", type=int, default=20)
    args = parser.parse_args()
    window = max(1, min(args.window, args.runs))
    runs = [one_run(i, args.chars) for i in range(args.runs)]
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        figures = {
            "ours": ours(folder, runs, window),
            "full dump": full_dump(folder, runs, window),
            "append": append(folder, runs, window),
        }
        size = (folder / "ours.jsonl").stat().st_size
    messages = 4 * args.runs
    print(
        f"one save after each run; conversation of {args.runs} runs ({messages:,} messages, "
        f"{size / 1e6:.1f} MB), mean of the last {window} saves"
    )
    for name, seconds in figures.items():
        print(f"  {name:<10} {seconds * 1e3:8.2f} ms")
    print(f"  full dump / ours  {figures['full dump'] / figures['ours']:.2f}")
    print(f"  ours / append     {figures['ours'] / figures['append']:.2f}")


if __name__ == "__main__":
    main()

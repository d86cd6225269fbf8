"""Loop + Agent cost per event, pi_notebook vs Pi itself, in one run.

    python bench/bench_loop.py [--repeat N] [--warmup N] [--turns N] [--no-pi] [--profile FILE]

Workload (identical on both sides, faux provider with token size 1 = 4-character chunks):

* loop   -- one ``prompt()``; 200 turns, each streaming 4,000 characters of text (1,000
            ``text_delta``) and then one tool call (``step({"i": n})``, a tool answering "ok"),
            then a final text reply. Figure: wall time of ``prompt()`` / events the subscribed
            listener received.
* deltas -- one ``prompt()`` answered by a single text message of 10,000 and of 100,000
            deltas. Figure: wall time / text deltas. It must stay flat from 10k to 100k (no
            per-token copy of the whole message or transcript).

Pi's side is ``@earendil-works/pi-agent-core`` + ``@earendil-works/pi-ai`` (faux provider) at
PI_VERSION under node, installed by this script into ``bench/.pi/`` (git-ignored) with
``npm install --ignore-scripts`` unless already there; ``bench/pi_loop_bench.mjs`` runs it and
prints JSON.

Timing discipline, the same on both sides: one untimed warm-up run, then best of N timed runs;
each run gets a fresh faux provider and Agent; a full garbage collection right before each timed
``prompt()`` (``gc.collect()`` / node ``--expose-gc`` ``gc()``), and the collector left ON during
the timed region (node's cannot be switched off). The listener is a trivial counter on both.
"""

from __future__ import annotations

import argparse
import asyncio
import functools
import gc
import json
import os
import platform
import shutil
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

BENCH = Path(__file__).resolve().parent
ROOT = BENCH.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from pi_notebook.agent import Agent, AgentTool, AgentToolResult  # noqa: E402
from pi_notebook.ai import (  # noqa: E402
    TextContent,
    faux_assistant_message,
    faux_text,
    faux_tool_call,
    register_faux_provider,
    unregister_api_provider,
)

PI_VERSION = "0.82.1"
PI_DIR = BENCH / ".pi"
PI_PACKAGES = ("@earendil-works/pi-agent-core", "@earendil-works/pi-ai")
NODE_SCRIPT = BENCH / "pi_loop_bench.mjs"

TURNS = 200
CHARS = 4_000
DELTA_SIZES = (10_000, 100_000)


# --------------------------------------------------------------------------------------------
# pi_notebook side


async def _step(tool_call_id: str, params: Any, signal: Any, on_update: Any) -> AgentToolResult:
    return AgentToolResult(content=[TextContent(text="ok")])


TOOL = AgentTool(
    name="step",
    label="Step",
    description="Advance one step.",
    parameters={
        "type": "object",
        "properties": {"i": {"type": "integer"}},
        "required": ["i"],
    },
    execute=_step,
)


def loop_responses(turns: int, chars: int) -> list[Any]:
    text = "abcd" * (chars // 4)
    responses: list[Any] = [
        faux_assistant_message(
            [faux_text(text), faux_tool_call("step", {"i": i}, id=f"call_{i}")],
            stop_reason="toolUse",
        )
        for i in range(turns)
    ]
    responses.append(faux_assistant_message("All done."))
    return responses


def delta_responses(deltas: int) -> list[Any]:
    return [faux_assistant_message("abcd" * deltas)]


async def run_once(responses: list[Any], *, disable_gc: bool = False) -> dict[str, Any]:
    faux = register_faux_provider(token_size=(1, 1))
    try:
        faux.set_responses(responses)
        agent = Agent(model=faux.get_model(), tools=[TOOL], system_prompt="You are a benchmark.")
        counts = {"events": 0, "deltas": 0}

        def listener(event: Any, signal: Any) -> None:
            counts["events"] += 1
            if (
                event.type == "message_update"
                and event.assistant_message_event.type == "text_delta"
            ):
                counts["deltas"] += 1

        agent.subscribe(listener)
        gc.collect()
        if disable_gc:
            gc.disable()
        try:
            t0, c0 = time.perf_counter(), time.process_time()
            await agent.prompt("Go.")
            seconds = time.perf_counter() - t0
            cpu = time.process_time() - c0
        finally:
            gc.enable()
        last = agent.state.messages[-1]
        if agent.state.error_message or getattr(last, "stop_reason", None) != "stop":
            raise RuntimeError(f"run failed: {agent.state.error_message or last}")
        return {"seconds": seconds, "cpu": cpu, **counts, "messages": len(agent.state.messages)}
    finally:
        unregister_api_provider(faux.api)


async def best_of(
    make: Callable[[], list[Any]], repeat: int, warmup: int, **kw: Any
) -> dict[str, Any]:
    for _ in range(warmup):
        await run_once(make(), **kw)
    runs = [await run_once(make(), **kw) for _ in range(repeat)]
    best = min(runs, key=lambda r: r["seconds"])
    cpu = min(r["cpu"] for r in runs)
    return {**best, "cpu": cpu, "all_seconds": [r["seconds"] for r in runs]}


async def python_side(args: argparse.Namespace, *, disable_gc: bool = False) -> dict[str, Any]:
    result: dict[str, Any] = {
        "runtime": f"{platform.python_implementation()} {platform.python_version()}",
        "loop": await best_of(
            lambda: loop_responses(args.turns, args.chars),
            args.repeat,
            args.warmup,
            disable_gc=disable_gc,
        ),
        "deltas": {},
    }
    if not disable_gc:
        for n in DELTA_SIZES:
            result["deltas"][str(n)] = await best_of(
                functools.partial(delta_responses, n), args.repeat, args.warmup
            )
    return result


# --------------------------------------------------------------------------------------------
# Pi side


def _installed_version(package: str) -> str | None:
    manifest = PI_DIR / "node_modules" / package / "package.json"
    try:
        version: str = json.loads(manifest.read_text())["version"]
        return version
    except (OSError, ValueError, KeyError):
        return None


def ensure_pi_installed() -> None:
    if all(_installed_version(p) == PI_VERSION for p in PI_PACKAGES):
        return
    npm = shutil.which("npm")
    if npm is None:
        raise SystemExit("npm not found on PATH: needed to install Pi into bench/.pi/")
    PI_DIR.mkdir(exist_ok=True)
    manifest = {
        "name": "pi-notebook-bench-pi",
        "private": True,
        "type": "module",
        "description": "Pi itself, for bench/bench_loop.py (written by the benchmark).",
        "dependencies": {p: PI_VERSION for p in PI_PACKAGES},
    }
    (PI_DIR / "package.json").write_text(json.dumps(manifest, indent=2) + "\n")
    print(f"installing Pi {PI_VERSION} into {PI_DIR.relative_to(ROOT)}/ ...", file=sys.stderr)
    subprocess.run(
        [npm, "install", "--ignore-scripts", "--no-audit", "--no-fund", "--loglevel=error"],
        cwd=PI_DIR,
        check=True,
        stdout=sys.stderr,
    )
    missing = [p for p in PI_PACKAGES if _installed_version(p) != PI_VERSION]
    if missing:
        raise SystemExit(f"npm install did not yield {missing} at {PI_VERSION}")


def pi_side(args: argparse.Namespace) -> dict[str, Any]:
    node = shutil.which("node")
    if node is None:
        raise SystemExit("node not found on PATH")
    ensure_pi_installed()
    config = {
        "turns": args.turns,
        "chars": args.chars,
        "repeat": args.repeat,
        "warmup": args.warmup,
        "delta_sizes": list(DELTA_SIZES),
    }
    proc = subprocess.run(
        [node, "--expose-gc", str(NODE_SCRIPT), str(PI_DIR), json.dumps(config)],
        capture_output=True,
        text=True,
        env={**os.environ, "NODE_NO_WARNINGS": "1"},
    )
    if proc.returncode != 0:
        raise SystemExit(f"node benchmark failed ({proc.returncode}):\n{proc.stderr}")
    figures: dict[str, Any] = json.loads(proc.stdout.strip().splitlines()[-1])
    return figures


# --------------------------------------------------------------------------------------------
# report


def _us(seconds: float, n: int) -> float:
    return seconds * 1e6 / n if n else float("nan")


def report(
    args: argparse.Namespace,
    py: dict[str, Any],
    pi: dict[str, Any] | None,
    py_nogc: dict[str, Any] | None,
) -> None:
    print(f"pi_notebook: {py['runtime']} ({sys.executable})")
    if pi is not None:
        pkgs = ", ".join(f"{k}@{v}" for k, v in pi["packages"].items())
        print(f"Pi:          {pi['runtime']}, {pkgs}")
    print(
        f"discipline:  best of {args.repeat} after {args.warmup} warm-up; "
        "fresh faux + Agent per run; full GC before each timed prompt(), "
        "GC on while timing (both sides)"
    )
    print()
    workload = (
        f"{args.turns} turns x ({args.chars:,} chars in 4-char deltas + 1 tool call) + final text"
    )
    print(f"Loop + Agent: {workload}")
    header = (
        f"{'side':<22}{'events':>10}{'total s':>10}{'µs/event':>11}{'ratio':>8}"
        f"{'cpu µs/ev':>11}{'cpu ratio':>10}"
    )
    print(header)
    print("-" * len(header))
    loop = py["loop"]
    py_us = _us(loop["seconds"], loop["events"])
    pi_us = pi_cpu = None
    if pi is not None:
        pl = pi["loop"]
        pi_us = _us(pl["seconds"], pl["events"])
        pi_cpu = _us(pl["cpu"], pl["events"])
    rows: list[tuple[str, Any, float]] = [("pi_notebook (python)", loop, py_us)]
    if py_nogc is not None:
        nl = py_nogc["loop"]
        rows.append(("pi_notebook, gc off*", nl, _us(nl["seconds"], nl["events"])))
    if pi is not None and pi_us is not None:
        rows.append(("Pi (node)", pi["loop"], pi_us))
    for name, r, us in rows:
        cpu = _us(r["cpu"], r["events"])
        ratio = f"{us / pi_us:7.2f}x" if pi_us else "      -"
        cpu_ratio = f"{cpu / pi_cpu:9.2f}x" if pi_cpu else "        -"
        print(
            f"{name:<22}{r['events']:>10,}{r['seconds']:>10.3f}{us:>11.2f}{ratio:>8}"
            f"{cpu:>11.2f}{cpu_ratio:>10}"
        )
    if pi is not None and loop["events"] != pi["loop"]["events"]:
        print(f"  NOTE: event counts differ ({loop['events']} vs {pi['loop']['events']})")
    if py_nogc is not None:
        print(
            "  * informational only: Python with gc.disable() while timing (node has no equivalent)"
        )
    print("  ratio = µs/event relative to Pi under node (<1 means pi_notebook is faster)")
    print(
        "  cpu = the process's CPU time (best run), every thread: node's GC and JIT threads too;"
        " steadier than wall time on a busy machine"
    )
    print()
    print("Delta scaling: one text message of N deltas (µs per text_delta, whole prompt() timed)")
    sizes = [str(n) for n in DELTA_SIZES]
    header = f"{'side':<28}" + "".join(f"{int(n):>12,}" for n in sizes) + f"{'100k/10k':>10}"
    print(header)
    print("-" * len(header))
    sides = [("pi_notebook (python)", py["deltas"])]
    if pi is not None:
        sides.append(("Pi (node)", pi["deltas"]))
    for name, d in sides:
        per = [_us(d[n]["seconds"], d[n]["deltas"]) for n in sizes]
        print(f"{name:<28}" + "".join(f"{u:>12.2f}" for u in per) + f"{per[-1] / per[0]:>9.2f}x")
    for name, d in sides:
        per = [_us(d[n]["cpu"], d[n]["deltas"]) for n in sizes]
        label = f"{name}, cpu"
        print(f"{label:<28}" + "".join(f"{u:>12.2f}" for u in per) + f"{per[-1] / per[0]:>9.2f}x")
    print("  flat = 100k/10k close to 1.0 (no per-token copy of the message or transcript)")
    print()
    print("all runs (s):")
    print(
        f"  pi_notebook loop {_fmt(loop['all_seconds'])}; "
        + "; ".join(f"{n} deltas {_fmt(py['deltas'][n]['all_seconds'])}" for n in sizes)
    )
    if pi is not None:
        print(
            f"  Pi          loop {_fmt(pi['loop']['all_seconds'])}; "
            + "; ".join(f"{n} deltas {_fmt(pi['deltas'][n]['all_seconds'])}" for n in sizes)
        )


def _fmt(values: list[float]) -> str:
    return "[" + ", ".join(f"{v:.3f}" for v in values) + "]"


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "--repeat", type=int, default=5, help="timed runs per figure (best is kept)"
    )
    parser.add_argument("--warmup", type=int, default=1, help="untimed runs before timing")
    parser.add_argument("--turns", type=int, default=TURNS)
    parser.add_argument("--chars", type=int, default=CHARS)
    parser.add_argument("--no-pi", action="store_true", help="skip the node side")
    parser.add_argument(
        "--gc-off",
        action="store_true",
        help="also time the Python loop with gc.disable() (informational)",
    )
    parser.add_argument(
        "--profile",
        metavar="FILE",
        help="instead of benchmarking, cProfile one Python loop run into FILE",
    )
    args = parser.parse_args()

    if args.profile:
        import cProfile
        import pstats

        profiler = cProfile.Profile()
        responses = loop_responses(args.turns, args.chars)
        profiler.enable()
        asyncio.run(run_once(responses))
        profiler.disable()
        profiler.dump_stats(args.profile)
        pstats.Stats(args.profile).sort_stats("tottime").print_stats(30)
        return

    pi = None if args.no_pi else pi_side(args)
    py = asyncio.run(python_side(args))
    py_nogc = asyncio.run(python_side(args, disable_gc=True)) if args.gc_off else None
    report(args, py, pi, py_nogc)


if __name__ == "__main__":
    main()

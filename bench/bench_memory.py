"""Kernel memory over many runs and one huge run: plain mode, panel mode, and a bare Agent.

Each mode runs in its own fresh ipykernel (driven through jupyter_client, as Jupyter drives
one), so its figures are not mixed with another mode's garbage or allocator state. A real
kernel rather than an in-process IPython shell, because the issue's numbers were kernel RSS,
and because panel mode needs ipykernel's comms (the widget's frames and its synced state go
through the real serialisation) and plain mode needs ipykernel's stdout (``OutStream``).

In every kernel, on the faux model (4-character tokens, one token per chunk, no pacing):

* ``start``: RSS once the extension, the faux provider and one warm-up run are loaded;
* ``--runs`` runs of a short reply (``--run-tokens`` tokens), each one ``%%agent`` cell as
  the input transformer writes it (``await run_cell(line, body)``), all in one loop;
* one run of ``--tokens`` tokens (1,000,000 by default: 4 MB of text in one message);
* ``%agent reset``.

RSS (resident set size, from ``/proc/self/statm``) is read after a full ``gc.collect()``; each
column shows the growth over ``start``. ``+objects`` is the growth of CPython's allocated
blocks (``sys.getallocatedblocks()``) over the big run: live small objects, which is where a
record per token shows (RSS also keeps memory the allocator has not handed back).
Peers, in the same invocation:

* ``bare Agent``: the same prompts through ``Agent.prompt()`` with no listener, no magic, no
  panel: what the conversation itself costs (the transcript keeps every reply's text, and the
  faux provider keeps its script);
* the same kernel's ``start`` RSS.

``mode / bare`` is a mode's growth over the bare Agent's growth. A last row is the size of
``%agent events`` (as JSON) after a ``--events-tokens`` reply, next to the reply's text size.

Run: ``python bench/bench_memory.py [--runs 200] [--tokens 1000000] [--modes bare,plain,panel]``.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
from pathlib import Path
from typing import Any

from jupyter_client.manager import KernelManager

ROOT = Path(__file__).resolve().parents[1]
KEY_VARS = ("ANTHROPIC_API_KEY", "OPENAI_API_KEY", "OPENROUTER_API_KEY", "PI_NOTEBOOK_MODEL")

SETUP = """
import gc, json, resource, sys
import pi_notebook.notebook as pn
from pi_notebook.agent import Agent
from pi_notebook.ai import faux_assistant_message, register_faux_provider
from pi_notebook.notebook.magic import run_cell

faux = register_faux_provider(token_size=(1, 1))
pn.use_model(faux)

def _rss():
    gc.collect()
    with open('/proc/self/statm') as f:
        return int(f.read().split()[1]) * resource.getpagesize()

def _now():
    rss = _rss()
    return {'rss': rss, 'blocks': sys.getallocatedblocks()}

def _reply(tokens):
    return faux_assistant_message('word' * tokens)

def _report(**values):
    print('BENCH ' + json.dumps(values))
"""

# One run as the ``%%agent`` cell's input transformer writes it, or the bare Agent's prompt.
RUN = {
    "plain": "await run_cell('--plain', 'hi')",
    "panel": "await run_cell('', 'hi')",
    "bare": "await bare.prompt('hi')",
}
RESET = {"plain": "%agent reset", "panel": "%agent reset", "bare": "bare.reset()"}


class Kernel:
    """One ipykernel with the repository on its path and no provider keys."""

    def __init__(self, plain: bool) -> None:
        self.tmp = tempfile.TemporaryDirectory()
        env = {k: v for k, v in os.environ.items() if k not in KEY_VARS}
        env["IPYTHONDIR"] = str(Path(self.tmp.name) / "ipython")
        env["PYTHONPATH"] = os.pathsep.join([str(ROOT), env.get("PYTHONPATH", "")])
        env.pop("PI_NOTEBOOK_UI", None)
        if plain:
            env["PI_NOTEBOOK_UI"] = "plain"
        self.km = KernelManager(kernel_name="python3")
        self.km.start_kernel(env=env, cwd=self.tmp.name, extra_arguments=[])
        self.kc = self.km.client()
        self.kc.start_channels()
        self.kc.wait_for_ready(timeout=60)

    def run(self, code: str, timeout: float = 3600) -> dict[str, Any]:
        """Execute ``code``; the values its ``_report(...)`` calls printed (merged).

        Other output (plain mode's transcripts) goes over iopub as in Jupyter, and is dropped.
        """
        values: dict[str, Any] = {}
        errors: list[str] = []

        def hook(msg: dict[str, Any]) -> None:
            kind = msg["header"]["msg_type"]
            if kind == "stream" and msg["content"]["name"] == "stdout":
                for line in msg["content"]["text"].splitlines():
                    if line.startswith("BENCH "):
                        values.update(json.loads(line[len("BENCH ") :]))
            elif kind == "error":
                errors.append(f"{msg['content']['ename']}: {msg['content']['evalue']}")

        reply = self.kc.execute_interactive(code, timeout=timeout, output_hook=hook)
        if errors or reply["content"]["status"] != "ok":
            raise RuntimeError(f"cell failed: {code[:80]!r}: {errors}")
        return values

    def close(self) -> None:
        self.kc.stop_channels()
        self.km.shutdown_kernel(now=True)
        self.tmp.cleanup()


def measure(mode: str, args: argparse.Namespace) -> dict[str, Any]:
    kernel = Kernel(plain=mode != "panel")
    try:
        kernel.run("%load_ext pi_notebook")
        kernel.run(SETUP)
        if mode == "bare":
            kernel.run("bare = Agent(model=faux.get_model())")
        run, reset = RUN[mode], RESET[mode]
        # Warm-up: one run, so imports and first-use caches are in ``start``.
        kernel.run(f"faux.set_responses([_reply({args.run_tokens})])\n{run}")
        start = kernel.run("_report(**_now())")
        many = kernel.run(
            f"faux.set_responses([_reply({args.run_tokens}) for _ in range({args.runs})])\n"
            f"for _ in range({args.runs}):\n"
            f"    {run}\n"
            "_report(**_now())"
        )
        big = kernel.run(f"faux.set_responses([_reply({args.tokens})])\n{run}\n_report(**_now())")
        after_reset = kernel.run(f"{reset}\n_report(**_now())")
        peak = kernel.run("_report(peak=resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)")
        result: dict[str, Any] = {
            "start": start["rss"],
            "many": many["rss"],
            "big": big["rss"],
            "reset": after_reset["rss"],
            "peak": peak["peak"] * 1024,
            "blocks": big["blocks"] - start["blocks"],
        }
        if mode == "plain":
            result["events"] = kernel.run(
                f"faux.set_responses([_reply({args.events_tokens})])\n{run}\n"
                "_evs = %agent events\n"
                "_report(events_bytes=len(json.dumps(_evs, default=str)), events=len(_evs))"
            )
        return result
    finally:
        kernel.close()


def mb(value: float) -> str:
    return f"{value / 2**20:8.1f}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=200)
    parser.add_argument("--run-tokens", type=int, default=20)
    parser.add_argument("--tokens", type=int, default=1_000_000)
    parser.add_argument("--events-tokens", type=int, default=10_000)
    parser.add_argument("--modes", default="bare,plain,panel")
    args = parser.parse_args()
    modes = [m.strip() for m in args.modes.split(",") if m.strip()]
    unknown = set(modes) - set(RUN)
    if unknown:
        parser.error(f"unknown modes: {', '.join(sorted(unknown))}")
    print(
        f"{args.runs} runs of {args.run_tokens} tokens, then one run of {args.tokens:,} tokens "
        f"({args.tokens * 4:,} characters), then %agent reset; RSS in MB after gc.collect()"
    )
    results = {mode: measure(mode, args) for mode in modes}
    header = (
        f"  {'mode':<10} {'start':>8} {'+runs':>8} {'+big run':>9} {'+reset':>8} {'peak':>8}"
        f"  {'+objects (big run)':>18}"
    )
    print(header)
    for mode, r in results.items():
        print(
            f"  {mode:<10} {mb(r['start'])} {mb(r['many'] - r['start'])} "
            f"{mb(r['big'] - r['start']):>9} {mb(r['reset'] - r['start'])} {mb(r['peak'])}"
            f"  {r['blocks']:>18,}"
        )
    bare = results.get("bare")
    if bare is not None:
        print("growth over the bare Agent's growth (mode / bare):")
        for mode, r in results.items():
            if mode == "bare":
                continue
            cells = []
            for key, label in (("many", "runs"), ("big", "big run"), ("reset", "reset")):
                base = max(bare[key] - bare["start"], 2**20)  # at least 1 MB: no division by ~0
                cells.append(f"{label} {(r[key] - r['start']) / base:6.2f}x")
            print(f"  {mode:<10} " + "  ".join(cells))
    plain = results.get("plain")
    if plain is not None:
        events = plain["events"]
        text = args.events_tokens * 4
        print(
            f"%agent events after a {args.events_tokens:,}-token reply: {events['events']:,} "
            f"records, {events['events_bytes']:,} bytes of JSON "
            f"({events['events_bytes'] / text:.1f}x the reply's {text:,} characters)"
        )
    sys.stdout.flush()


if __name__ == "__main__":
    main()

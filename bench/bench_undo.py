"""Undo snapshots: peak memory and time of a run_python call over big arrays, against the floor.

    python bench/bench_undo.py                 # eight 90 MB arrays (the issue's case)
    python bench/bench_undo.py --arrays 2 --mb 4

Each measurement runs in a fresh child process (peak RSS, ``ru_maxrss``, only grows): it creates
``--arrays`` float arrays of ``--mb`` MB in a namespace, then runs one piece of code either

* **floor**: with ``run_code`` alone (the worker thread, no diff, no undo copies), or
* **ours**: as the ``run_python`` tool (guarded, diffed, with undo copies in a 100 MB budget),

and prints the peak RSS above the arrays and the call's time. Two pieces of code: **reads**
only reads the arrays (``a.shape``, ``len(a)``, ``a[0] + 1``: nothing is copied), **methods**
calls a method on each (``a.sum()``: the AST cannot prove that read-only, so copies are taken,
all within the one budget).
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

CHILD = r"""
import asyncio, json, resource, sys, time
import numpy as np
from pi_notebook.tools import notebook_tools, workspace
from pi_notebook.tools.execution import run_code

arrays, mb, mode, code = int(sys.argv[1]), float(sys.argv[2]), sys.argv[3], sys.argv[4]
ns = {"np": np}
for i in range(arrays):
    ns[f"a{i}"] = np.ones(int(mb * 1024 * 1024 / 8))
before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss

async def main():
    if mode == "floor":
        start = time.perf_counter()
        outcome = await run_code(code, ns, None)
        assert outcome.error is None, outcome.error
    else:
        workspace(ns).begin_run()
        (run_python,) = [t for t in notebook_tools(ns) if t.name == "run_python"]
        start = time.perf_counter()
        await run_python.execute("c", {"code": code}, None, lambda partial: None)
    return time.perf_counter() - start

seconds = asyncio.run(main())
after = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
print(json.dumps({"seconds": seconds, "extra_mb": (after - before) / 1024}))
"""


def code_for(kind: str, arrays: int) -> str:
    names = [f"a{i}" for i in range(arrays)]
    if kind == "reads":
        return "\n".join(f"print({n}.shape, len({n}), {n}[0] + 1)" for n in names)
    return "total = " + " + ".join(f"float({n}.sum())" for n in names)


def measure(arrays: int, mb: float, mode: str, code: str) -> dict[str, float]:
    done = subprocess.run(
        [sys.executable, "-c", CHILD, str(arrays), str(mb), mode, code],
        capture_output=True,
        text=True,
        timeout=600,
        cwd=ROOT,
    )
    if done.returncode != 0:
        raise SystemExit(done.stderr[-3000:])
    result: dict[str, float] = json.loads(done.stdout.splitlines()[-1])
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--arrays", type=int, default=8)
    parser.add_argument("--mb", type=float, default=90.0)
    args = parser.parse_args()
    print(f"{args.arrays} arrays of {args.mb:g} MB; peak RSS above the arrays, and time")
    print(f"{'code':<8} {'run':<6} {'extra MB':>9} {'seconds':>8}")
    for kind in ("reads", "methods"):
        code = code_for(kind, args.arrays)
        rows = {mode: measure(args.arrays, args.mb, mode, code) for mode in ("floor", "ours")}
        for mode, row in rows.items():
            print(f"{kind:<8} {mode:<6} {row['extra_mb']:>9.1f} {row['seconds']:>8.3f}")
        floor, ours = rows["floor"], rows["ours"]
        print(
            f"{kind:<8} ours - floor: {ours['extra_mb'] - floor['extra_mb']:+.1f} MB, "
            f"ours / floor: {ours['seconds'] / max(floor['seconds'], 1e-9):.1f}x time"
        )


if __name__ == "__main__":
    main()

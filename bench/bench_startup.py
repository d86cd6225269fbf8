"""The first cell: import CPU and ``%load_ext pi_notebook`` wall time, beside ``import ipywidgets``.

Usage: ``python bench/bench_startup.py [--repeat 5] [--kernels 3]``

Rows, each the median of ``--repeat`` fresh interpreters (CPU: user + system of the child):

* ``python -c pass``: the interpreter alone, the floor every row includes;
* ``import ipywidgets``: the peer, what any widget notebook pays;
* ``import pi_notebook.notebook``: what ``%load_ext pi_notebook`` imports;
* ``... + the schema validator``: the same plus ``pi_notebook.ai.json_schema`` (``jsonschema``),
  which the package imported eagerly before, so this row is the old figure;

each twice: with jsonschema's format extras installed (every Jupyter install has them, through
``jupyter-events``; ``rfc3987_syntax`` compiles a Lark grammar when imported) and without
them (a meta-path finder refuses those modules, as if they were not installed, which
jsonschema tolerates). Then ``%load_ext pi_notebook`` and ``import ipywidgets`` in fresh
ipykernels (``--kernels`` of each, one kernel per figure, jupyter_client's execute_reply
timing: the wall time the user waits for that first cell).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

FORMAT_EXTRAS = (
    "rfc3987_syntax",
    "rfc3987",
    "rfc3339_validator",
    "rfc3986_validator",
    "fqdn",
    "isoduration",
    "jsonpointer",
    "uri_template",
    "webcolors",
    "idna",
)

WITHOUT_EXTRAS = f"""
import sys
class _NotInstalled:
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in {FORMAT_EXTRAS!r}:
            raise ModuleNotFoundError(f"No module named {{name!r}}", name=name)
        return None
sys.meta_path.insert(0, _NotInstalled())
"""

ROWS = [
    ("python -c pass", "pass"),
    ("import ipywidgets", "import ipywidgets"),
    ("import pi_notebook.notebook", "import pi_notebook.notebook"),
    (
        "... + the schema validator (before)",
        "import pi_notebook.notebook, pi_notebook.ai.json_schema",
    ),
]


def child_cpu(code: str) -> tuple[float, float]:
    """(CPU seconds, wall seconds) of a fresh interpreter running ``code``."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    subprocess.run([sys.executable, "-c", code], check=True, cwd=ROOT)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return cpu, wall


def import_rows(repeat: int) -> None:
    print(f"import, fresh interpreter, median of {repeat} (CPU s / wall s)")
    print(f"  {'':42} {'with format extras':>22} {'without':>18}")
    figures: dict[tuple[str, bool], float] = {}
    for label, code in ROWS:
        cells = []
        for extras in (True, False):
            program = code if extras else WITHOUT_EXTRAS + code
            runs = [child_cpu(program) for _ in range(repeat)]
            cpu = statistics.median(r[0] for r in runs)
            wall = statistics.median(r[1] for r in runs)
            figures[label, extras] = cpu
            cells.append(f"{cpu:6.3f} / {wall:6.3f}")
        print(f"  {label:42} {cells[0]:>22} {cells[1]:>18}")
    for extras in (True, False):
        ours = figures["import pi_notebook.notebook", extras]
        peer = figures["import ipywidgets", extras]
        old = figures["... + the schema validator (before)", extras]
        which = "with" if extras else "without"
        print(
            f"  {which} extras: ours / ipywidgets = {ours / peer:.2f}x, "
            f"before / now = {old / ours:.2f}x"
        )


def kernel_cell(code: str) -> float:
    """Wall seconds from sending ``code`` to a fresh kernel until its reply."""
    from jupyter_client.manager import KernelManager

    with tempfile.TemporaryDirectory() as tmp:
        env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
        env["IPYTHONDIR"] = str(Path(tmp) / "ipython")
        env["PYTHONPATH"] = os.pathsep.join([str(ROOT), env.get("PYTHONPATH", "")])
        km = KernelManager(kernel_name="python3")
        km.start_kernel(env=env, cwd=tmp, stderr=subprocess.DEVNULL)
        kc = km.client()
        kc.start_channels()
        try:
            kc.wait_for_ready(timeout=120)
            quiet = {"timeout": 120, "output_hook": lambda msg: None}
            kc.execute_interactive("1", **quiet)  # the kernel's own warm-up
            start = time.perf_counter()
            reply = kc.execute_interactive(code, **quiet)
            elapsed = time.perf_counter() - start
            if reply["content"]["status"] != "ok":
                raise RuntimeError(f"{code!r} failed: {json.dumps(reply['content'])[:500]}")
            return elapsed
        finally:
            kc.stop_channels()
            km.shutdown_kernel(now=True)


def kernel_rows(kernels: int) -> None:
    print(f"\nfirst cell in a fresh ipykernel, median of {kernels} kernels (wall s)")
    figures = {}
    for label, code in [
        ("import ipywidgets", "import ipywidgets"),
        ("%load_ext pi_notebook", "%load_ext pi_notebook"),
        (
            "... + the schema validator (before)",
            "%load_ext pi_notebook\nimport pi_notebook.ai.json_schema",
        ),
    ]:
        figures[label] = statistics.median(kernel_cell(code) for _ in range(kernels))
        print(f"  {label:42} {figures[label]:8.3f}")
    ours = figures["%load_ext pi_notebook"]
    print(
        f"  %load_ext pi_notebook / import ipywidgets = {ours / figures['import ipywidgets']:.2f}x"
        f", before / now = {figures['... + the schema validator (before)'] / ours:.2f}x"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--kernels", type=int, default=3)
    args = parser.parse_args()
    import_rows(args.repeat)
    kernel_rows(args.kernels)


if __name__ == "__main__":
    main()

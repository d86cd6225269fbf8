"""Notebook context collection: its cost as the notebook grows, next to a full walk of the history.

    python bench/bench_context.py                   # 50, 500 and 5000 executed cells
    python bench/bench_context.py --cells 20 --repeat 3

An in-process IPython shell (history in memory) gets N executed cells the way IPython records
them (``history_manager.store_inputs``, ``Out``), every 10th one a failing cell (its error in the
cell log, from a real raised exception), every 25th an ``%%agent`` cell. Then, best of
``--repeat``:

* **ours, first run**: a conversation's first collection (the last few cells);
* **ours, N new**: a collection when all N cells are new since the conversation's last run (the
  worst case: it walks back from the newest cell and stops at the 8,000-character budget);
* **full walk**: every cell formatted the same way, then cut to the same budget (what a
  collector without a cursor and a budget-bounded walk does);
* **get_range**: IPython's own ``history_manager.get_range`` of the same N cells, with their
  outputs (the peer a collector reading IPython's history API would start from).

The ratios are full walk / ours and get_range / ours: they should grow with N, since ours does
not (its cost is bounded by the budget, not by the history).
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable
from typing import Any

from IPython.core.interactiveshell import InteractiveShell
from traitlets.config import Config

from pi_notebook.notebook.notebook_context import NotebookContext
from pi_notebook.settings import CONTEXT_CHARS
from pi_notebook.tools import CellLog, cell_at, cut_text


def make_shell(cells: int, log: CellLog) -> InteractiveShell:
    config = Config()
    config.HistoryManager.hist_file = ":memory:"
    InteractiveShell.clear_instance()
    shell = InteractiveShell.instance(config=config)
    history = shell.history_manager
    for number in range(1, cells + 1):
        if number % 25 == 0:
            source = f"%%agent\nwhat does cell {number - 1} do?"
        elif number % 10 == 0:
            source = f"frame_{number}['BMI']"
            try:
                {}["BMI"]
            except KeyError as exc:
                log.add(number, exc)
        else:
            source = f"frame_{number} = load(part={number})\nframe_{number}.describe()"
            history.output_hist[number] = {"rows": number, "columns": ["age", "bmi", "bp"]}
        history.store_inputs(number, source, source)
    shell.execution_count = cells + 1
    return shell


def best(fn: Callable[[], Any], repeat: int) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return min(times) * 1000


def full_walk(shell: InteractiveShell, log: CellLog, budget: int) -> str:
    texts = []
    for number in range(1, shell.execution_count):
        cell = cell_at(shell, number, log)
        if cell is not None:
            texts.append(cell.text())
    return cut_text("\n\n".join(texts), budget)


def measure(cells: int, repeat: int) -> dict[str, float]:
    log = CellLog(keep=cells)
    shell = make_shell(cells, log)
    budget = CONTEXT_CHARS.default

    def first() -> None:
        NotebookContext().collect(shell, log=log, budget=budget)

    def all_new() -> None:
        message = NotebookContext(seen=0).collect(shell, log=log, budget=budget)
        assert message is not None and len(message.content) <= budget

    def range_of_history() -> None:
        list(shell.history_manager.get_range(0, 1, cells + 1, raw=True, output=True))

    row = {
        "first": best(first, repeat),
        "new": best(all_new, repeat),
        "walk": best(lambda: full_walk(shell, log, budget), repeat),
        "range": best(range_of_history, repeat),
    }
    InteractiveShell.clear_instance()
    return row


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--cells", type=int, nargs="+", default=[50, 500, 5000])
    parser.add_argument("--repeat", type=int, default=20)
    args = parser.parse_args()
    print(f"notebook context collection, ms (best of {args.repeat})")
    header = (
        f"{'cells':>6} {'ours first':>11} {'ours N new':>11} {'full walk':>10} "
        f"{'get_range':>10} {'walk/ours':>10} {'range/ours':>11}"
    )
    print(header)
    for cells in args.cells:
        row = measure(cells, args.repeat)
        print(
            f"{cells:>6} {row['first']:>11.3f} {row['new']:>11.3f} {row['walk']:>10.3f} "
            f"{row['range']:>10.3f} {row['walk'] / row['new']:>10.1f} "
            f"{row['range'] / row['new']:>11.1f}"
        )


if __name__ == "__main__":
    main()

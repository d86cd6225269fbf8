"""The main job: execute ``notebooks/quickstart.ipynb`` headlessly and print its transcript.

``python -m pi_notebook.demo [NOTEBOOK] [--executed PATH]`` runs every cell of the notebook in a
fresh Jupyter kernel (nbclient, plain mode, the notebook's folder as working directory) and
prints each code cell with its output, as a reader would see it. No API key is needed: the
quickstart scripts its models or replays recorded runs. The exit status is 0 when every cell
ran, 1 when a cell failed and 2 when the notebook cannot be found or read. ``--executed PATH``
also writes the executed notebook there (CI compares it with the stored outputs instead of
executing the quickstart again).
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path
from typing import Any

from .settings import RECORD, UI

QUICKSTART = Path(__file__).resolve().parents[1] / "notebooks" / "quickstart.ipynb"
CELL_TIMEOUT = 120


def kernel_environment() -> dict[str, str]:
    """The caller's environment, in plain mode, never recording (replays stay offline)."""
    env = dict(os.environ)
    env[UI.variable] = "plain"
    env.pop(RECORD.variable, None)
    return env


def _output_text(output: Any) -> str:
    kind = output.get("output_type")
    if kind == "stream":
        return str(output.get("text", ""))
    if kind in ("execute_result", "display_data"):
        return str(output.get("data", {}).get("text/plain", "")) + "\n"
    if kind == "error":
        return f"{output.get('ename')}: {output.get('evalue')}\n"
    return ""


def print_headings(cell: Any) -> None:
    """A markdown cell's headings, so the transcript keeps the notebook's sections."""
    for line in str(cell.get("source", "")).splitlines():
        if line.startswith("#"):
            print("\n" + line)


def print_cell(number: int, cell: Any) -> None:
    source = str(cell.get("source", ""))
    prompt = f"In [{number}]: "
    print("\n" + prompt + source.replace("\n", "\n" + " " * len(prompt)))
    text = "".join(_output_text(output) for output in cell.get("outputs", []))
    if text.strip():
        print(text.rstrip("\n"))


def run_notebook(path: Path, executed: Path | None = None) -> int:
    """Execute ``path`` and print its transcript (and write the executed notebook to
    ``executed``, if given); the process exit status."""
    import nbformat
    from nbclient import NotebookClient
    from nbclient.exceptions import CellExecutionError

    if not path.is_file():
        print(
            f"error: notebook not found: {path} (the main job runs from a checkout of "
            "pi_notebook, installed with `pip install -e .`)",
            file=sys.stderr,
        )
        return 2
    try:
        notebook: Any = nbformat.read(str(path), as_version=4)  # type: ignore[no-untyped-call]
    except Exception as exc:
        print(f"error: cannot read notebook {path}: {exc}", file=sys.stderr)
        return 2
    for cell in notebook.cells:
        if cell.cell_type == "code":
            cell.outputs = []
    print(f"== {path.name}, executed headlessly in a fresh kernel (plain mode)")
    previous = os.environ.copy()
    os.environ.clear()
    os.environ.update(kernel_environment())  # the kernel inherits this process's environment
    client = NotebookClient(
        notebook,
        timeout=CELL_TIMEOUT,
        kernel_name="python3",
        resources={"metadata": {"path": str(path.parent)}},
    )
    failure: str | None = None
    try:
        client.execute()
    except CellExecutionError as exc:
        failure = str(exc).strip().splitlines()[-1] if str(exc).strip() else "a cell failed"
    except Exception as exc:  # the kernel could not start or died
        failure = f"{type(exc).__name__}: {exc}"
    finally:
        os.environ.clear()
        os.environ.update(previous)
    if executed is not None:
        executed.parent.mkdir(parents=True, exist_ok=True)
        nbformat.write(notebook, str(executed))  # type: ignore[no-untyped-call]
    number = 0
    for cell in notebook.cells:
        if cell.cell_type == "markdown":
            print_headings(cell)
        if cell.cell_type != "code":
            continue
        number += 1
        print_cell(number, cell)
        if cell.get("outputs") and any(o.get("output_type") == "error" for o in cell.outputs):
            break
    if failure is not None:
        print(f"\nFAILED: {failure}", file=sys.stderr)
        return 1
    print(f"\n== {number} cells ran")
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m pi_notebook.demo",
        description="Execute a notebook headlessly (the quickstart by default) and print it.",
    )
    parser.add_argument("notebook", nargs="?", type=Path, default=QUICKSTART)
    parser.add_argument(
        "--executed", type=Path, metavar="PATH", help="also write the executed notebook here"
    )
    args = parser.parse_args(sys.argv[1:] if argv is None else argv)
    return run_notebook(args.notebook.resolve(), args.executed)


if __name__ == "__main__":
    sys.exit(main())

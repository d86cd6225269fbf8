"""The README's main job executes the quickstart notebook headlessly, with no API key."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.kernel


def run_demo(*args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
    env.pop("PI_NOTEBOOK_MODEL", None)
    return subprocess.run(
        [sys.executable, "-m", "pi_notebook.demo", *args],
        capture_output=True,
        text=True,
        env=env,
        timeout=180,
    )


MAIN_JOB_OUTPUT = os.environ.get("PI_TESTS_MAIN_JOB_OUTPUT")
"""Set by .ci/run: what its main job printed (it failed the run if the job failed), so the
quickstart is not executed once more here."""


def test_main_job_runs_the_quickstart_without_keys() -> None:
    if MAIN_JOB_OUTPUT:
        out = Path(MAIN_JOB_OUTPUT).read_text(encoding="utf-8")
        stderr = ""
    else:
        done = run_demo()
        assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
        out, stderr = done.stdout, done.stderr
    assert out.startswith("== quickstart.ipynb, executed headlessly")
    assert "In [1]: %load_ext pi_notebook" in out
    assert "user: What is pi_notebook?\nassistant: pi_notebook runs the Pi agent" in out
    assert "model: faux/faux-1 (from use_model())" in out
    assert "skipped: set OPENAI_API_KEY" in out
    assert "model: replay/smollm2" in out  # the recorded llama.cpp run, replayed
    assert "replay complete" in out
    assert "Traceback" not in out + stderr
    cells = out.count("\nIn [")
    assert out.rstrip().endswith(f"== {cells} cells ran")


def test_main_job_fails_clearly_on_a_missing_notebook(tmp_path: Path) -> None:
    done = run_demo(str(tmp_path / "nowhere.ipynb"))
    assert done.returncode == 2
    assert "error: notebook not found:" in done.stderr
    assert "Traceback" not in done.stderr


def test_main_job_exits_non_zero_when_a_cell_fails(tmp_path: Path) -> None:
    import nbformat

    notebook = nbformat.v4.new_notebook()  # type: ignore[no-untyped-call]
    notebook.cells = [
        nbformat.v4.new_code_cell("print('first')"),  # type: ignore[no-untyped-call]
        nbformat.v4.new_code_cell("raise ValueError('broken cell')"),  # type: ignore[no-untyped-call]
        nbformat.v4.new_code_cell("print('never')"),  # type: ignore[no-untyped-call]
    ]
    path = tmp_path / "broken.ipynb"
    nbformat.write(notebook, str(path))  # type: ignore[no-untyped-call]
    done = run_demo(str(path))
    assert done.returncode == 1
    assert "In [1]: print('first')\nfirst" in done.stdout
    assert "ValueError: broken cell" in done.stdout
    assert "never" not in done.stdout.replace("print('never')", "")
    assert "FAILED" in done.stderr

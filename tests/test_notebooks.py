"""Every notebook in notebooks/ passes nbval in strict mode (not --nbval-lax), in plain mode.

Each notebook runs in its own ``pytest --nbval`` subprocess with a real kernel, no provider API
keys and no ``PI_NOTEBOOK_MODEL``: the stored outputs must be exactly what a fresh execution
prints (faux models scripted in the notebook, or recorded real runs replayed).
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.notebook.conftest import ROOT, kernel_env

NOTEBOOKS = sorted((ROOT / "notebooks").glob("*.ipynb"))


def test_the_notebooks_are_there() -> None:
    names = {path.name for path in NOTEBOOKS}
    assert "quickstart.ipynb" in names
    for number, name in [(2, "loop_lifecycle"), (3, "data_analysis"), (4, "tools_and_hooks")]:
        assert f"{number:02d}_{name}.ipynb" in names
    assert "05_agent_api.ipynb" in names


def test_the_readme_links_every_notebook() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    linked = set(re.findall(r"\(notebooks/([^)]+\.ipynb)\)", readme))
    assert linked == {path.name for path in NOTEBOOKS}


@pytest.mark.kernel
@pytest.mark.timeout(300)
@pytest.mark.parametrize("notebook", NOTEBOOKS, ids=[path.stem for path in NOTEBOOKS])
def test_notebook_passes_strict_nbval(notebook: Path, tmp_path: Path) -> None:
    completed = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "--nbval",
            "-p",
            "no:cacheprovider",
            "-q",
            "-o",
            "addopts=",
            str(notebook),
        ],
        cwd=ROOT,
        env=kernel_env(tmp_path),
        capture_output=True,
        text=True,
        timeout=280,
    )
    assert completed.returncode == 0, completed.stdout[-4000:] + completed.stderr[-2000:]
    assert " passed" in completed.stdout and "failed" not in completed.stdout

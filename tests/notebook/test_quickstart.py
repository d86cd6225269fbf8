"""The quickstart notebook passes nbval in strict mode (not --nbval-lax), in plain mode."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from .conftest import ROOT, kernel_env

NOTEBOOK = ROOT / "notebooks" / "quickstart.ipynb"


def test_quickstart_passes_strict_nbval(tmp_path: Path) -> None:
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
            str(NOTEBOOK),
        ],
        cwd=ROOT,
        env=kernel_env(tmp_path),
        capture_output=True,
        text=True,
        timeout=180,
    )
    assert completed.returncode == 0, completed.stdout[-4000:] + completed.stderr[-2000:]
    assert "passed" in completed.stdout

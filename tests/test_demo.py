"""The README's main job runs with no API key and shows both halves of the demo."""

from __future__ import annotations

import os
import subprocess
import sys


def test_main_job_runs_without_keys() -> None:
    env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
    env.pop("PI_NOTEBOOK_MODEL", None)
    done = subprocess.run(
        [sys.executable, "-m", "pi_notebook.demo"],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    out = done.stdout
    assert "In [2]: %%agent --model demo" in out
    assert "assistant: Hello! I am `demo`" in out
    assert "model: demo/demo (from --model)" in out
    assert "toolResult: 42" in out
    assert " assistant: 19 + 23 = 42." in out
    assert "Traceback" not in out + done.stderr

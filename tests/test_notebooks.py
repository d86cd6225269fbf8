"""Every notebook in notebooks/ passes nbval in strict mode (not --nbval-lax), in plain mode.

Each notebook runs in its own ``pytest --nbval`` subprocess with a real kernel, no provider API
keys and no ``PI_NOTEBOOK_MODEL``: the stored outputs must be exactly what a fresh execution
prints (faux models scripted in the notebook, or recorded real runs replayed).
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from pi_notebook.ai.replay import load_recording
from pi_notebook.notebook.system_prompt import DEFAULT_SYSTEM_PROMPT
from tests.notebook.conftest import ROOT, kernel_env

NOTEBOOKS = sorted((ROOT / "notebooks").glob("*.ipynb"))

QUICKSTART_EXECUTED = os.environ.get("PI_TESTS_QUICKSTART_EXECUTED")
"""Set by .ci/run: the quickstart as its main job executed it (``python -m pi_notebook.demo
--executed PATH``, a fresh kernel in plain mode with no keys, as nbval runs it), compared here
with the stored outputs instead of executing the quickstart a second time."""


def _code_outputs(notebook: dict[str, Any]) -> list[tuple[str, list[Any]]]:
    """Each code cell's source and outputs, without what nbval ignores too (execution counts
    and metadata)."""
    cells = []
    for cell in notebook["cells"]:
        if cell["cell_type"] != "code":
            continue
        outputs = []
        for out in cell.get("outputs", []):
            kept = {k: v for k, v in out.items() if k not in ("execution_count", "metadata")}
            for key in ("text", "traceback"):
                if isinstance(kept.get(key), list):
                    kept[key] = "".join(kept[key]) if key == "text" else kept[key]
            if "data" in kept:
                kept["data"] = {
                    mime: "".join(value) if isinstance(value, list) else value
                    for mime, value in kept["data"].items()
                }
            outputs.append(kept)
        source = cell["source"]
        cells.append(("".join(source) if isinstance(source, list) else source, outputs))
    return cells


def differences(stored: Path, executed: Path) -> list[str]:
    """Where ``executed``'s outputs differ from ``stored``'s, cell by cell (none: the same)."""
    want = _code_outputs(json.loads(stored.read_text(encoding="utf-8")))
    got = _code_outputs(json.loads(executed.read_text(encoding="utf-8")))
    if [source for source, _ in want] != [source for source, _ in got]:
        return ["the executed notebook's code cells are not the stored notebook's"]
    return [
        f"cell {number}: {source.splitlines()[0] if source else ''!r}\n"
        f"  stored:   {expected!r}\n  executed: {actual!r}"
        for number, ((source, expected), (_, actual)) in enumerate(zip(want, got, strict=True), 1)
        if expected != actual
    ]


def notebook_env(tmp: Path) -> dict[str, str]:
    """The test kernels' environment, with the notebook context as a user gets it (on): the
    stored outputs are what the README's nbconvert command writes."""
    env = kernel_env(tmp)
    env.pop("PI_NOTEBOOK_CONTEXT", None)
    return env


def test_a_changed_output_is_a_difference(tmp_path: Path) -> None:
    stored = ROOT / "notebooks" / "quickstart.ipynb"
    notebook = json.loads(stored.read_text(encoding="utf-8"))
    assert differences(stored, stored) == []
    streams = [
        out
        for cell in notebook["cells"]
        for out in cell.get("outputs", [])
        if out["output_type"] == "stream"
    ]
    streams[-1]["text"] = ["a different line\n"]
    changed = tmp_path / "changed.ipynb"
    changed.write_text(json.dumps(notebook), encoding="utf-8")
    found = differences(stored, changed)
    assert len(found) == 1 and "a different line" in found[0]


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


def test_the_data_analysis_recording_was_sent_the_failing_cell() -> None:
    """notebooks/03's recorded SmolLM2 run (replayed under nbval, which fails on any other
    request) was a real model's answer to a request that carried the default system prompt,
    the notebook context with the failing cell's source and its KeyError, then the question."""
    folder = ROOT / "notebooks"
    notebook = json.loads((folder / "03_data_analysis.ipynb").read_text(encoding="utf-8"))
    failing = [
        cell
        for cell in notebook["cells"]
        if "raises-exception" in cell.get("metadata", {}).get("tags", [])
    ]
    assert len(failing) == 1
    source = "".join(failing[0]["source"])
    described, calls = load_recording(folder / "03_data_analysis.smollm2.jsonl")
    assert described["name"] == "SmolLM2-135M-Instruct" and described["provider"] == "llamacpp"
    assert len(calls) == 1
    entries = [json.loads(entry) for entry in calls[0].entries]
    assert entries[0] == {"system": DEFAULT_SYSTEM_PROMPT}
    assert entries[-1] == {"tools": []}
    context, question = entries[1:-1]
    assert context["role"] == question["role"] == "user"
    context_text = context["content"][0]["text"]
    assert context_text.startswith("Notebook context:")
    assert source in context_text
    assert "KeyError: 'Price'" in context_text
    assert 'cell, line 2, in <module>: print(row["region"], row["units"] * row["Price"])' in (
        context_text
    )
    assert question["content"] == [{"type": "text", "text": "Why did the cell above fail?"}]
    reply = calls[0].message
    assert reply["stopReason"] in ("stop", "length") and reply["usage"]["output"] > 0
    assert "".join(block.get("text", "") for block in reply["content"]).strip()


@pytest.mark.kernel
@pytest.mark.timeout(300)
@pytest.mark.parametrize("notebook", NOTEBOOKS, ids=[path.stem for path in NOTEBOOKS])
def test_notebook_passes_strict_nbval(notebook: Path, tmp_path: Path) -> None:
    if notebook.name == "quickstart.ipynb" and QUICKSTART_EXECUTED:
        assert differences(notebook, Path(QUICKSTART_EXECUTED)) == []
        return
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
        env=notebook_env(tmp_path),
        capture_output=True,
        text=True,
        timeout=280,
    )
    assert completed.returncode == 0, completed.stdout[-4000:] + completed.stderr[-2000:]
    assert " passed" in completed.stdout and "failed" not in completed.stdout

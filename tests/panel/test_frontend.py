"""The front end the panel sends: the committed esbuild build of ``js/`` (assets.py).

The build is the one way the front end ships (the wheel, a checkout without node), so these
check that it is there, that it is one self-contained module, that no source in ``js/`` changed
after it was built (its banner names the sources' digest, as ``js/build.mjs`` computes it), and,
with node and esbuild at hand, that rebuilding reproduces it byte for byte.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path
from typing import Any

import pytest

from pi_notebook.notebook.panel import AgentPanel, assets
from pi_notebook.notebook.panel.assets import MODULE, STYLESHEET, FrontendMissingError, frontend

ROOT = Path(__file__).resolve().parents[2]
JS = ROOT / "js"
REBUILD = "cd js && npm ci && npm run build, then commit pi_notebook/notebook/panel/_build/"


def sources_digest(directory: Path) -> str:
    """The sha256 js/build.mjs writes in the banner: every *.js and *.css file directly in
    ``directory``, by name, each as "name\\n", its size, "\\n", its bytes."""
    digest = hashlib.sha256()
    names = sorted(p.name for p in directory.iterdir() if p.suffix in (".js", ".css"))
    for name in names:
        data = (directory / name).read_bytes()
        digest.update(f"{name}\n{len(data)}\n".encode())
        digest.update(data)
    return digest.hexdigest()


def test_the_front_end_is_one_module_without_relative_imports() -> None:
    esm, css = frontend()
    assert AgentPanel._esm == esm and ".pi-panel" in css
    assert not re.search(r"^\s*import\s", esm, re.MULTILINE)
    assert not re.search(r"""from\s*["']\.""", esm), "no relative import left"
    assert len(re.findall(r"\bas default\b|export default", esm)) == 1


def test_no_source_changed_after_the_committed_build() -> None:
    banner = re.match(r"/\* pi-notebook panel, built by js/build\.mjs; sources sha256:(\w+) \*/",
                      MODULE.read_text(encoding="utf-8"))  # fmt: skip
    assert banner, f"{MODULE} has no build banner: {REBUILD}"
    assert banner.group(1) == sources_digest(JS), f"js/ changed after the build: {REBUILD}"


def test_each_panel_sends_the_minified_module() -> None:
    esm, css = frontend()
    assert esm == MODULE.read_text(encoding="utf-8")
    assert css == STYLESHEET.read_text(encoding="utf-8")
    sources = sum(len(p.read_text(encoding="utf-8")) for p in JS.glob("*.js"))
    assert len(esm) < 0.7 * sources
    assert len(css) < 0.9 * len((JS / "panel.css").read_text(encoding="utf-8"))


def test_a_missing_build_says_how_to_make_it(tmp_path: Path, monkeypatch: Any) -> None:
    monkeypatch.setattr(assets, "MODULE", tmp_path / "panel.js")
    frontend.cache_clear()
    try:
        with pytest.raises(FrontendMissingError, match="npm run build"):
            frontend()
    finally:
        frontend.cache_clear()


@pytest.mark.kernel
@pytest.mark.skipif(
    shutil.which("node") is None
    or (not (JS / "node_modules" / "esbuild").is_dir() and os.environ.get("CI", "") != "true"),
    reason="node or esbuild is not installed (cd js && npm ci)",
)
def test_rebuilding_reproduces_the_committed_build() -> None:
    done = subprocess.run(
        ["node", "build.mjs", "--check"], cwd=JS, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr


@pytest.mark.kernel
@pytest.mark.timeout(300)
def test_the_wheel_ships_the_built_front_end_and_not_the_sources(tmp_path: Path) -> None:
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "-w", str(tmp_path), str(ROOT)],
        check=True,
        capture_output=True,
        timeout=240,
    )
    (wheel,) = tmp_path.glob("*.whl")
    with zipfile.ZipFile(wheel) as archive:
        names = set(archive.namelist())
        shipped = archive.read("pi_notebook/notebook/panel/_build/panel.js").decode()
        css = archive.read("pi_notebook/notebook/panel/_build/panel.css").decode()
    assert shipped == MODULE.read_text(encoding="utf-8")
    assert css == STYLESHEET.read_text(encoding="utf-8")
    assert not [n for n in names if n.endswith(".js") and "/_build/" not in n], "no raw sources"


@pytest.mark.kernel
@pytest.mark.skipif(shutil.which("node") is None, reason="node is not installed")
def test_node_imports_the_module(tmp_path: Path) -> None:
    path = tmp_path / "bundle.mjs"
    path.write_text(frontend()[0])
    code = f"const m = await import({json.dumps(path.as_uri())});"
    code += " console.log(typeof m.default.render)"
    done = subprocess.run(
        ["node", "--input-type=module", "-e", code],
        capture_output=True,
        text=True,
        timeout=30,
        check=True,
    )
    assert done.stdout.strip() == "function"

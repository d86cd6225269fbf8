"""Driving a notebook in JupyterLab or Notebook 7 through the real page.

Everything waits on conditions in the page (the app's ``started``/``restored`` promises, the
notebook's kernel status, a run-all promise, DOM states) with timeouts; nothing sleeps. The app
object is reachable because the servers run with ``expose_app_in_browser=True``.
"""

from __future__ import annotations

import importlib
import json
import os
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING, Any

import pytest

from .server import JupyterServer

if TYPE_CHECKING:  # imported at run time through import_playwright()
    from playwright.sync_api import ConsoleMessage, Error, Locator, Page

#: In CI a missing browser or Playwright fails the browser tests instead of skipping them.
IN_CI = os.environ.get("CI", "").strip().lower() in ("1", "true", "yes")


def import_playwright() -> ModuleType:
    """``playwright.sync_api``; without it skip (locally) or fail (CI) the calling module."""
    if IN_CI:
        return importlib.import_module("playwright.sync_api")
    module: ModuleType = pytest.importorskip(
        "playwright.sync_api", reason="playwright is not installed (pip install -e '.[test]')"
    )
    return module


#: Console errors both front ends log on every load; not ours.
HARMLESS_CONSOLE = ("reading 'schema'", "favicon", "Failed to load resource")

LOAD_TIMEOUT = 60_000
RUN_TIMEOUT = 60_000

_FIND_PANEL = """(name) => {
    const app = window.jupyterapp;
    if (!app || !app.shell) return false;
    const candidates = [app.shell.currentWidget, ...Array.from(app.shell.widgets('main'))];
    const w = candidates.find(c => c && c.context && c.context.path === name && c.content);
    if (!w) return false;
    window.__piNotebook = w;
    return true;
}"""

_KERNEL_IDLE = """() => {
    const w = window.__piNotebook;
    const kernel = w && w.sessionContext.session && w.sessionContext.session.kernel;
    return !!kernel && kernel.connectionStatus === 'connected' && kernel.status === 'idle';
}"""


def write_notebook(path: Path, cells: list[str]) -> str:
    """Write a notebook of the code ``cells`` (not run yet) to ``path``; returns its name."""
    notebook = {
        "cells": [
            {
                "id": f"cell-{i}",
                "cell_type": "code",
                "metadata": {},
                "source": source,
                "execution_count": None,
                "outputs": [],
            }
            for i, source in enumerate(cells)
        ],
        "metadata": {
            "kernelspec": {
                "name": "python3",
                "display_name": "Python 3 (ipykernel)",
                "language": "python",
            },
            "language_info": {"name": "python"},
        },
        "nbformat": 4,
        "nbformat_minor": 5,
    }
    path.write_text(json.dumps(notebook, indent=1) + "\n", encoding="utf-8")
    return path.name


@dataclass
class Notebook:
    """One open notebook in one browser page."""

    page: Page
    server: JupyterServer
    console: list[str] = field(default_factory=list)
    page_errors: list[str] = field(default_factory=list)
    name: str = ""
    artifacts: Path | None = None
    keep_snapshots: bool = False
    snapshots: list[Path] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.page.on("console", self._on_console)
        self.page.on("pageerror", self._on_page_error)

    def _on_console(self, message: ConsoleMessage) -> None:
        self.console.append(f"[{message.type}] {message.text}")

    def _on_page_error(self, error: Error) -> None:
        self.page_errors.append(f"{error.name}: {error.message}\n{error.stack or ''}")
        self.console.append(f"[pageerror] {error.message}")

    def snap(self, label: str, target: Locator | None = None) -> None:
        """Keep a screenshot (only with ``PI_BROWSER_SNAPSHOTS=1``), ``target`` scrolled in."""
        if not self.keep_snapshots or self.artifacts is None:
            return
        if target is not None:
            target.last.scroll_into_view_if_needed()
        self.artifacts.mkdir(parents=True, exist_ok=True)
        path = self.artifacts / f"{len(self.snapshots):02d}-{label}.png"
        self.page.screenshot(path=str(path))
        self.snapshots.append(path)

    @property
    def frontend(self) -> str:
        return self.server.frontend

    # -- opening -----------------------------------------------------------------------------

    def open(self, name: str) -> None:
        """Open ``name`` (in the server's root) and wait for an idle, connected kernel."""
        self.name = name
        workspace = "pi-" + "".join(c if c.isalnum() else "-" for c in name)
        self.page.goto(self.server.notebook_url(name, workspace), wait_until="domcontentloaded")
        self.wait_ready()

    def reopen(self, between: Callable[[], None] | None = None) -> None:
        """Close the page, run ``between`` (e.g. shut the kernels down), open a new page."""
        context = self.page.context
        self.page.close()
        if between is not None:
            between()
        self.page = context.new_page()
        self.__post_init__()
        self.open(self.name)

    def reload(self) -> None:
        self.page.reload(wait_until="domcontentloaded")
        self.wait_ready()

    def wait_ready(self) -> None:
        page = self.page
        page.wait_for_function("() => !!window.jupyterapp", timeout=LOAD_TIMEOUT)
        page.evaluate(
            "async () => { await window.jupyterapp.started; await window.jupyterapp.restored; }"
        )
        page.wait_for_function(_FIND_PANEL, arg=self.name, timeout=LOAD_TIMEOUT)
        page.evaluate(
            """async () => {
                const w = window.__piNotebook;
                await w.context.ready;
                await w.sessionContext.ready;
            }"""
        )
        page.wait_for_function(_KERNEL_IDLE, timeout=LOAD_TIMEOUT)

    # -- running -----------------------------------------------------------------------------

    def start_run_all(self) -> None:
        """Start ``notebook:run-all-cells`` (Shift+Enter would add a cell) without waiting."""
        self.page.evaluate(
            """() => {
                window.__piRunDone = false;
                window.__piRunResult = null;
                window.jupyterapp.commands.execute('notebook:run-all-cells').then(
                    r => { window.__piRunResult = r; window.__piRunDone = true; },
                    e => { window.__piRunResult = String(e); window.__piRunDone = true; },
                );
            }"""
        )

    def wait_run_done(self, timeout: float = RUN_TIMEOUT) -> None:
        """Wait until the run-all finished and the kernel is idle again."""
        self.page.wait_for_function("() => window.__piRunDone === true", timeout=timeout)
        self.page.wait_for_function(_KERNEL_IDLE, timeout=timeout)

    def run_all(self, timeout: float = RUN_TIMEOUT) -> None:
        self.start_run_all()
        self.wait_run_done(timeout)

    def save(self) -> dict[str, Any]:
        """Save through the app (as a user would) and return the file as written on disk."""
        self.page.evaluate(
            "async () => { await window.jupyterapp.commands.execute('docmanager:save'); }"
        )
        self.page.wait_for_function(
            "() => !window.__piNotebook.context.model.dirty", timeout=RUN_TIMEOUT
        )
        data: dict[str, Any] = json.loads(
            (self.server.root / self.name).read_text(encoding="utf-8")
        )
        return data

    # -- reading -----------------------------------------------------------------------------

    def cell(self, index: int) -> Locator:
        return self.page.locator(".jp-Notebook .jp-Cell").nth(index)

    def output(self, index: int) -> Locator:
        return self.cell(index).locator(".jp-OutputArea")

    def cell_outputs(self, index: int) -> list[dict[str, Any]]:
        """The outputs of cell ``index`` from the notebook model (nbformat JSON)."""
        outputs: list[dict[str, Any]] = self.page.evaluate(
            """(i) => window.__piNotebook.content.model.cells.get(i).toJSON().outputs || []""",
            index,
        )
        return outputs

    def execution_count(self, index: int) -> int | None:
        count: int | None = self.page.evaluate(
            "(i) => window.__piNotebook.content.model.cells.get(i).executionCount", index
        )
        return count

    def errors(self) -> list[dict[str, Any]]:
        """Error outputs of every cell."""
        found: list[dict[str, Any]] = self.page.evaluate(
            """() => {
                const cells = window.__piNotebook.content.model.cells;
                const out = [];
                for (let i = 0; i < cells.length; i++) {
                    for (const o of (cells.get(i).toJSON().outputs || [])) {
                        if (o.output_type === 'error') out.push({cell: i, ...o});
                    }
                }
                return out;
            }"""
        )
        return found

    def serious_page_errors(self) -> list[str]:
        return [e for e in self.page_errors if not any(h in e for h in HARMLESS_CONSOLE)]


# -- watching the panel ----------------------------------------------------------------------

_RECORDER = """() => {
    if (window.__piRecorder) { window.__piRecorder.reset(); return; }
    const rec = {
        states: [],        // every data-state value of .pi-panel, in order
        tools: {},         // tool call id -> every data-status value, in order
        lengths: [],       // length of the last assistant .pi-text at each change
        reset() { this.states = []; this.tools = {}; this.lengths = []; },
    };
    const push = (list, value) => {
        if (value !== null && value !== undefined && list[list.length - 1] !== value) {
            list.push(value);
        }
    };
    const toolList = (card) => {
        const id = card.getAttribute('data-tool-call-id') || '?';
        return (rec.tools[id] = rec.tools[id] || []);
    };
    const seen = (node) => {
        if (!(node instanceof Element)) return;
        const panels = node.matches('.pi-panel') ? [node] : node.querySelectorAll('.pi-panel');
        for (const p of panels) push(rec.states, p.getAttribute('data-state'));
        const cards = node.matches('.pi-tool-card')
            ? [node] : node.querySelectorAll('.pi-tool-card');
        for (const c of cards) push(toolList(c), c.getAttribute('data-status'));
    };
    const observer = new MutationObserver((records) => {
        const touched = new Set();
        for (const r of records) {
            if (r.type === 'attributes') {
                const el = r.target;
                if (r.attributeName === 'data-state' && el.matches('.pi-panel')) {
                    push(rec.states, r.oldValue);
                    touched.add(el);
                } else if (r.attributeName === 'data-status' && el.matches('.pi-tool-card')) {
                    push(toolList(el), r.oldValue);
                    touched.add(el);
                }
            } else if (r.type === 'childList') {
                r.addedNodes.forEach(seen);
            }
        }
        touched.forEach(seen);
        const texts = document.querySelectorAll(
            '.pi-panel .pi-message[data-role=assistant] .pi-text');
        if (texts.length) push(rec.lengths, texts[texts.length - 1].textContent.length);
    });
    observer.observe(document.body, {
        subtree: true, childList: true, characterData: true, attributes: true,
        attributeOldValue: true, attributeFilter: ['data-state', 'data-status'],
    });
    window.__piRecorder = rec;
}"""


def install_recorder(page: Page) -> None:
    """Record every panel state, tool-card status and text length the page shows from now."""
    page.evaluate(_RECORDER)


def recorded(page: Page) -> dict[str, Any]:
    data: dict[str, Any] = page.evaluate(
        "() => { const r = window.__piRecorder;"
        " return {states: r.states, tools: r.tools, lengths: r.lengths}; }"
    )
    return data

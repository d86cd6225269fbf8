"""Fixtures for the end-to-end tests: a real headless Chromium against real Jupyter servers.

- ``browser`` (session): Debian's Chromium driven by Playwright (``executable_path``; no
  ``playwright install``). Missing Chromium or Playwright skips these tests locally with the
  reason, and FAILS them in CI (``CI=true``).
- ``server`` (session, parametrized ``lab`` / ``notebook``): one JupyterLab 4 and one
  Notebook 7 server for the whole session (pytest groups the tests by front end, so only one
  runs at a time); kernels are shut down after every test.
- ``nb`` (function): a fresh browser context and page on that server, wrapped in
  :class:`~tests.browser.driver.Notebook`. On failure the screenshot, the browser console log
  and the server log go to ``.ci-artifacts/browser/<test>/`` (printed at the end of the run).
  ``PI_BROWSER_SNAPSHOTS=1`` also keeps the screenshots scenarios take along the way.
"""

from __future__ import annotations

import os
import re
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from .driver import IN_CI, Notebook, import_playwright
from .server import Frontend, JupyterServer

ROOT = Path(__file__).resolve().parents[2]
ARTIFACTS = Path(os.environ.get("PI_BROWSER_ARTIFACTS", ROOT / ".ci-artifacts" / "browser"))
CHROMIUM = os.environ.get("PI_CHROMIUM", "/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
SNAPSHOTS = os.environ.get("PI_BROWSER_SNAPSHOTS", "") not in ("", "0")
EVERY_FRONTEND = os.environ.get("PI_BROWSER_ALL", "") not in ("", "0")
"""``PI_BROWSER_ALL=1``: Notebook 7 runs every scenario too, not only its smoke subset."""

_reports = pytest.StashKey[dict[str, pytest.TestReport]]()
_saved: list[Path] = []


def _unavailable(reason: str) -> None:
    if IN_CI:
        pytest.fail(f"browser tests cannot run in CI: {reason}", pytrace=False)
    pytest.skip(reason)


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers",
        "notebook7: a browser scenario Notebook 7 runs too (its smoke subset); JupyterLab runs "
        "every scenario, Notebook 7 only these unless PI_BROWSER_ALL=1",
    )


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Notebook 7 runs the smoke subset: the scenarios marked ``notebook7``."""
    if EVERY_FRONTEND:
        return
    kept, dropped = [], []
    for item in items:
        callspec = getattr(item, "callspec", None)
        frontend = callspec.params.get("server") if callspec is not None else None
        smoke = item.get_closest_marker("notebook7") is not None
        (dropped if frontend == "notebook" and not smoke else kept).append(item)
    if dropped:
        config.hook.pytest_deselected(items=dropped)
        items[:] = kept


@pytest.hookimpl(wrapper=True, tryfirst=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Any:
    report = yield
    item.stash.setdefault(_reports, {})[report.when] = report
    return report


def pytest_terminal_summary(terminalreporter: Any) -> None:
    if _saved:
        terminalreporter.write_sep("-", "browser artifacts (screenshots, console, server log)")
        for path in _saved:
            terminalreporter.write_line(str(path))


# Package scope, not session: Playwright's sync API keeps an event loop running in this thread
# while it is open, and every asyncio test collected after tests/browser would then fail with
# "Runner.run() cannot be called from a running event loop".
@pytest.fixture(scope="package")
def browser() -> Iterator[Any]:
    if not Path(CHROMIUM).exists():
        _unavailable(f"{CHROMIUM} not found (apt-get install chromium; .ci/run does)")
    sync_api = import_playwright()
    sync_api.expect.set_options(timeout=20_000)
    with sync_api.sync_playwright() as playwright:
        chromium = playwright.chromium.launch(
            executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS
        )
        yield chromium
        chromium.close()


@pytest.fixture(scope="package", params=["lab", "notebook"])
def server(request: pytest.FixtureRequest) -> Iterator[JupyterServer]:
    frontend: Frontend = request.param
    base = Path(tempfile.mkdtemp(prefix=f"pi-browser-{frontend}-"))
    srv = JupyterServer(frontend, base)
    try:
        srv.start()
        yield srv
    finally:
        srv.stop()
        shutil.rmtree(base, ignore_errors=True)


def _slug(nodeid: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]+", "_", nodeid.split("::", 1)[-1])[:120]


@pytest.fixture
def nb(browser: Any, server: JupyterServer, request: pytest.FixtureRequest) -> Iterator[Notebook]:
    context = browser.new_context(viewport={"width": 1400, "height": 1000})
    context.set_default_timeout(30_000)
    page = context.new_page()
    folder = ARTIFACTS / _slug(request.node.nodeid)
    notebook = Notebook(page, server, artifacts=folder, keep_snapshots=SNAPSHOTS)
    log_start = len(server.log_lines)
    try:
        yield notebook
    finally:
        reports = request.node.stash.get(_reports, {})
        failed = any(r.failed for r in reports.values())
        if failed:
            folder.mkdir(parents=True, exist_ok=True)
            (folder / "error.txt").write_text(
                "\n\n".join(r.longreprtext for r in reports.values() if r.failed),
                encoding="utf-8",
            )
            try:
                notebook.page.screenshot(path=str(folder / "failure.png"), full_page=True)
            except Exception as exc:  # the page may be gone; keep the logs anyway
                notebook.console.append(f"[screenshot failed] {exc}")
            (folder / "console.log").write_text("\n".join(notebook.console), encoding="utf-8")
            try:  # the panels' DOM, for whoever debugs the front end
                html = notebook.page.evaluate(
                    "() => Array.from(document.querySelectorAll('.pi-panel'))"
                    ".map(p => p.outerHTML).join('\\n\\n')"
                )
                (folder / "panels.html").write_text(html, encoding="utf-8")
            except Exception as exc:
                notebook.console.append(f"[panel dump failed] {exc}")
            (folder / "server.log").write_text(
                "".join(server.log_lines[log_start:]), encoding="utf-8"
            )
            print(f"\nbrowser artifacts: {folder}")
        if (failed or notebook.snapshots) and folder not in _saved:
            _saved.append(folder)
        context.close()
        server.shutdown_kernels()


@pytest.fixture
def workdir(server: JupyterServer) -> Path:
    """The server's root folder (where scenario notebooks are written)."""
    return server.root

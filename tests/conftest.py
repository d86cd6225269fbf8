"""Test tiers, by what a test starts: every test gets exactly one tier marker.

=========  ==============================================================  =====================
tier       what the test starts                                            how it is marked
=========  ==============================================================  =====================
unit       nothing: no kernel, no subprocess, no browser, no node          the default
kernel     an ipykernel or any other process (MCP servers, nbval, pip)     kernel fixtures, or
                                                                           ``pytest.mark.kernel``
browser    headless Chromium against Jupyter servers                       ``tests/browser/``
oracle     Pi itself under node, to compare with                           ``pytest.mark.oracle``
bench      a benchmark script's smoke run                                  ``pytest.mark.bench``
live       a real model server or provider (opt-in: ``-m live``)          ``pytest.mark.live``
=========  ==============================================================  =====================

A test is ``unit`` unless its folder, a fixture it uses or its own marker says otherwise, so a
new test cannot be left unmarked; and a ``unit`` test that starts a process anyway (a kernel, a
subprocess, node, a browser) fails, named, with the marker it needs: a Python audit hook sees
every ``subprocess.Popen``, ``fork``, ``exec``, ``spawn`` and ``system`` while a unit test sets
up or runs. The hook only reads the events (and refuses the start); it changes no library.
"""

from __future__ import annotations

import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

TIERS = ("unit", "kernel", "browser", "oracle", "bench", "live")

KERNEL_FIXTURES = frozenset(
    {
        "kernel",  # tests/notebook: a real ipykernel
        "ui_kernel",
        "http_lab_url",  # tests/mcp: the lab MCP server as a process
        "http_lab",
        "lab",
    }
)
"""Fixtures that start a process: a test that uses one is a ``kernel`` test."""

BROWSER_FOLDER = Path(__file__).resolve().parent / "browser"

_PROCESS_EVENTS = frozenset(
    {
        "subprocess.Popen",
        "os.fork",
        "os.forkpty",
        "os.exec",
        "os.posix_spawn",
        "os.spawn",
        "os.system",
        "pty.spawn",
    }
)


class UnitTestStartedProcess(RuntimeError):
    """A test marked ``unit`` tried to start a process."""


class _ProcessGuard:
    """Refuses process starts from the thread of the unit test being run, and remembers them."""

    def __init__(self) -> None:
        self.active: pytest.Item | None = None
        self.started: list[str] = []

    def audit(self, event: str, args: tuple[Any, ...]) -> None:
        if self.active is None or event not in _PROCESS_EVENTS:
            return
        what = f"{event}{_describe(args)}"
        self.started.append(what)
        raise UnitTestStartedProcess(
            f"{self.active.nodeid} is marked unit but starts a process ({what}); "
            "mark it kernel (or oracle, bench, browser): see tests/conftest.py"
        )

    @contextmanager
    def watching(self, item: pytest.Item) -> Iterator[None]:
        self.active, self.started = item, []
        try:
            yield
        finally:
            self.active = None


def _describe(args: tuple[Any, ...]) -> str:
    if not args:
        return ""
    first = args[0]
    if isinstance(first, list | tuple):
        first = " ".join(str(part) for part in first[:3])
    return f": {str(first)[:80]}"


_guard = _ProcessGuard()
_hook_lock = threading.Lock()
_hook_installed = False


def _install_hook() -> None:
    global _hook_installed
    with _hook_lock:
        if not _hook_installed:
            sys.addaudithook(_guard.audit)  # (audit hooks cannot be removed; it idles when off)
            _hook_installed = True


def tier_of(item: pytest.Item) -> str:
    """The tier a test belongs to: its own marker, else its folder, else its fixtures."""
    own = [tier for tier in TIERS if item.get_closest_marker(tier) is not None]
    if own:
        return own[0]
    if BROWSER_FOLDER in Path(str(item.path)).resolve().parents:
        return "browser"
    if KERNEL_FIXTURES & set(getattr(item, "fixturenames", ())):
        return "kernel"
    return "unit"


def pytest_configure(config: pytest.Config) -> None:
    for tier, what in [
        ("unit", "starts nothing (no kernel, subprocess, browser or node); pytest -m unit"),
        ("kernel", "starts an ipykernel or another process"),
        ("browser", "drives headless Chromium against Jupyter servers"),
        ("oracle", "runs Pi under node to compare with"),
        ("bench", "a benchmark script's smoke run"),
    ]:
        config.addinivalue_line("markers", f"{tier}: {what}")
    _install_hook()


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:
        own = [tier for tier in TIERS if item.get_closest_marker(tier) is not None]
        if len(own) > 1:
            raise pytest.UsageError(f"{item.nodeid}: more than one tier marker: {', '.join(own)}")
        if not own:
            item.add_marker(getattr(pytest.mark, tier_of(item)))


_tier_seconds: dict[str, float] = {}
_tier_tests: dict[str, int] = {}


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    tier = next((k for k in TIERS if k in report.keywords), "unit")
    _tier_seconds[tier] = _tier_seconds.get(tier, 0.0) + report.duration
    if report.when == "call" or (report.when == "setup" and report.outcome != "passed"):
        _tier_tests[tier] = _tier_tests.get(tier, 0) + 1


def pytest_terminal_summary(terminalreporter: Any) -> None:
    """The time each tier took (set-up, call and tear-down of its tests), so a slow tier shows."""
    if not _tier_seconds:
        return
    terminalreporter.write_sep("-", "time per tier")
    for tier in TIERS:
        if tier in _tier_seconds:
            seconds = _tier_seconds[tier]
            count = _tier_tests.get(tier, 0)
            terminalreporter.write_line(
                f"{tier:8} {count:5} tests {seconds:8.1f} s ({seconds / 60:.1f} min)"
            )


@pytest.hookimpl(wrapper=True)
def pytest_runtest_setup(item: pytest.Item) -> Iterator[None]:
    if tier_of(item) != "unit":
        return (yield)
    with _guard.watching(item):
        return (yield)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item: pytest.Item) -> Iterator[None]:
    if tier_of(item) != "unit":
        return (yield)
    with _guard.watching(item):
        result = yield
    if _guard.started:  # refused even where the test's code caught the error
        pytest.fail(
            f"marked unit but started a process ({_guard.started[0]}); "
            "mark it kernel (or oracle, bench, browser): see tests/conftest.py",
            pytrace=False,
        )
    return result


pytest_plugins = ["pytester"]  # tests/test_tiers.py runs pytest on small test files

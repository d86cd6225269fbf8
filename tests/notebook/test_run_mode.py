"""How a ``%%agent`` cell runs for each ipykernel (pi_notebook.notebook.run_mode), without a
kernel: the version is the ``__version__`` of the ``ipykernel`` module already imported."""

from __future__ import annotations

import sys
import types

import pytest

from pi_notebook.notebook.run_mode import run_mode


class Shell:
    def __init__(self, autoawait: bool = True) -> None:
        self.autoawait = autoawait


def with_ipykernel(monkeypatch: pytest.MonkeyPatch, version: str | None) -> None:
    if version is None:
        monkeypatch.delitem(sys.modules, "ipykernel", raising=False)
    else:
        monkeypatch.setitem(sys.modules, "ipykernel", types.SimpleNamespace(__version__=version))


@pytest.mark.parametrize(
    ("version", "plain", "mode"),
    [
        ("7.4.0", False, "await"),
        ("7.10.1", False, "await"),
        ("8.0.0a1", False, "await"),
        ("7.3.0", False, "background"),  # the panel needs its messages during the run
        ("6.29.0", False, "background"),
        ("6.29.0", True, "await"),  # a plain run needs none
        ("7.3.0", True, "await"),
    ],
)
def test_mode_by_ipykernel_version(
    monkeypatch: pytest.MonkeyPatch, version: str, plain: bool, mode: str
) -> None:
    with_ipykernel(monkeypatch, version)
    found = run_mode(Shell(), plain=plain)
    assert found.mode == mode
    # Only the older kernels' texts name the version (a stored notebook output stays valid).
    assert (f"ipykernel {version}" in found.why) == version.startswith(("6.", "7.3"))


def test_background_explains_itself(monkeypatch: pytest.MonkeyPatch) -> None:
    with_ipykernel(monkeypatch, "6.29.0")
    found = run_mode(Shell(), plain=False)
    assert "reads widget messages only between cells" in found.why
    assert "await pi_notebook.notebook.wait()" in found.why
    assert found.note == "ipykernel 6.29.0 reads the panel's messages only between cells"


def test_autoawait_off_and_no_kernel(monkeypatch: pytest.MonkeyPatch) -> None:
    with_ipykernel(monkeypatch, "7.4.0")
    assert run_mode(Shell(autoawait=False), plain=True).mode == "background"
    with_ipykernel(monkeypatch, None)
    assert run_mode(Shell(), plain=False).mode == "blocking"

"""The panel's front end: the one ES module and the stylesheet anywidget sends to each view.

The sources are ES modules in ``js/`` at the repository root (one per region of the view;
``node --test js/`` tests them). ``js/build.mjs`` (esbuild: ``cd js && npm ci && npm run
build``) bundles and minifies them into ``_build/`` next to this file, and that build is
committed: the wheel ships it, and a checkout installed with ``pip install -e .`` has a working
panel without node. It is the one way the front end ships: after editing ``js/``, rebuild and
commit ``_build/`` with the sources. CI (``npm run check``) rebuilds it and fails when the
committed build is not what the sources build to; ``tests/panel/test_frontend.py`` checks,
without node, that no source changed after the build.
"""

from __future__ import annotations

import functools
from pathlib import Path

BUILD = Path(__file__).resolve().parent / "_build"
MODULE = BUILD / "panel.js"
STYLESHEET = BUILD / "panel.css"


class FrontendMissingError(RuntimeError):
    """The built front end is not in the package."""


@functools.cache
def frontend() -> tuple[str, str]:
    """(the ES module, the stylesheet) of the committed build."""
    try:
        return MODULE.read_text(encoding="utf-8"), STYLESHEET.read_text(encoding="utf-8")
    except FileNotFoundError as error:
        raise FrontendMissingError(
            f"pi_notebook: the panel's front end is missing ({error.filename}); reinstall the "
            "package, or in a checkout run: cd js && npm ci && npm run build"
        ) from None


__all__ = ["BUILD", "MODULE", "STYLESHEET", "FrontendMissingError", "frontend"]

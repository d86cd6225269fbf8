"""The panel's front end: the one ES module and the stylesheet anywidget sends to each view.

The module and stylesheet are sent on the comm with every panel, so they are minified:
``js/build.mjs`` (esbuild; ``cd js && npm ci && npm run build``, which ``.ci/run`` does) writes
them to ``_build/`` next to this file, which the wheel ships. Without that build (a checkout
without node), or when a source in ``js/`` is newer than it, :func:`bundle` joins the ES
modules from ``js/`` itself: anywidget imports ``_esm`` from a blob, where relative imports do
not resolve, so it inlines each ``import { … } from "./x.js";`` (dependencies first, ``export``
dropped from the inlined modules). The sources are found in the wheel (``_js`` next to this
file, put there by hatch's force-include) or in the source tree (``js/`` at the repository
root); ``node --test js/`` tests them.
"""

from __future__ import annotations

import functools
import re
from pathlib import Path

ENTRY = "panel.js"
STYLESHEET = "panel.css"
BUILD = Path(__file__).resolve().parent / "_build"
_IMPORT = re.compile(
    r"^import\s*\{[^}]*\}\s*from\s*[\"']\./([\w.-]+\.js)[\"'];?[ \t]*$", re.MULTILINE
)
_EXPORT = re.compile(r"^export\s+(?=(?:async\s+)?function|const|let|class)", re.MULTILINE)


class FrontendMissingError(RuntimeError):
    """The ``js/`` sources are neither in the package nor in the source tree."""


def js_directory() -> Path:
    here = Path(__file__).resolve().parent
    for candidate in (here / "_js", here.parents[2] / "js"):
        if (candidate / ENTRY).is_file():
            return candidate
    raise FrontendMissingError(
        f"pi_notebook: the panel's front end ({ENTRY}) is missing from {here / '_js'} "
        "and from the source tree; reinstall the package"
    )


def bundle(directory: Path, entry: str = ENTRY) -> str:
    """One ES module: ``entry`` with its relative imports inlined, dependencies first."""
    order: list[str] = []
    sources: dict[str, str] = {}
    visiting: set[str] = set()

    def visit(name: str) -> None:
        if name in sources or name in visiting:
            return
        visiting.add(name)
        source = (directory / name).read_text(encoding="utf-8")
        for match in _IMPORT.finditer(source):
            visit(match.group(1))
        sources[name] = source
        order.append(name)

    visit(entry)
    parts: list[str] = []
    for name in order:
        source = _IMPORT.sub("", sources[name])
        if name != entry:
            source = _EXPORT.sub("", source)
        parts.append(f"// ---- {name}\n{source.strip()}\n")
    return "\n".join(parts)


def built(sources: Path, build: Path = BUILD) -> tuple[str, str] | None:
    """The minified (module, stylesheet) from ``build``; None if it is missing or, in a
    checkout (``sources`` is ``js/``), older than a source there (edited since the build)."""
    module, css = build / ENTRY, build / STYLESHEET
    if not (module.is_file() and css.is_file()):
        return None
    if sources.name == "js":
        made = min(module.stat().st_mtime, css.stat().st_mtime)
        edited = [*sources.glob("*.js"), *sources.glob("*.css")]
        if any(source.stat().st_mtime > made for source in edited):
            return None
    return module.read_text(encoding="utf-8"), css.read_text(encoding="utf-8")


@functools.cache
def frontend() -> tuple[str, str]:
    """(the ES module, the stylesheet): the minified build, else the sources joined."""
    directory = js_directory()
    found = built(directory)
    if found is not None:
        return found
    css_path = directory / STYLESHEET
    css = css_path.read_text(encoding="utf-8") if css_path.is_file() else ""
    return bundle(directory), css


__all__ = ["BUILD", "ENTRY", "FrontendMissingError", "built", "bundle", "frontend", "js_directory"]

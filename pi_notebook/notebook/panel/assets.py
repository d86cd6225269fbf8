"""The panel's front end: ES modules from ``js/``, joined into the one module anywidget loads.

anywidget imports ``_esm`` from a blob, where relative imports do not resolve, so
:func:`bundle` inlines each ``import { … } from "./x.js";`` (dependencies first, ``export``
dropped from the inlined modules). No npm, no build step by hand: the same files are what
``node --test js/`` exercises. The modules are found in the wheel (``_js`` next to this file,
put there by hatch's force-include) or in the source tree (``js/`` at the repository root).
"""

from __future__ import annotations

import functools
import re
from pathlib import Path

ENTRY = "panel.js"
STYLESHEET = "panel.css"
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


@functools.cache
def frontend() -> tuple[str, str]:
    """(the bundled ES module, the stylesheet)."""
    directory = js_directory()
    css_path = directory / STYLESHEET
    css = css_path.read_text(encoding="utf-8") if css_path.is_file() else ""
    return bundle(directory), css


__all__ = ["ENTRY", "FrontendMissingError", "bundle", "frontend", "js_directory"]

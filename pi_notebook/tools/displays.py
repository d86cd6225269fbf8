"""What ``run_python`` code shows: figures, images and rich displays, kept for its tool result.

In a notebook, code that calls ``plt.show()``, ``display(df)`` or ``display(image)`` sends a
display message to the front end, below the running cell; a matplotlib figure left open is shown
at the end of the cell by the inline backend. Agent code that does the same would put its output
below the panel, after the run, and the model would never know. While a ``run_python`` call
runs, :data:`displays` routes the displays of *its thread* into a :class:`Shown` list instead
(the shell's ``display_pub`` is swapped for a thread-aware stand-in, as :mod:`.capture` does for
``sys.stdout``; every other thread's displays go through unchanged), and the figures the code
opened and left open are rendered to PNG and closed (under any backend, ``agg`` included), so
nothing of the call lands below the cell. The tool result then carries each image as an image
block and each display's text form, bounded, with a one-line note per figure ("a figure was
drawn: 1 axes, 3 lines") that is all a model without image input gets (Pi's message transform
puts a placeholder where the image was).

This module imports neither matplotlib nor IPython: it uses them only when the code already
did (``sys.modules``). It never shows anything itself.
"""

from __future__ import annotations

import base64
import sys
import threading
from dataclasses import dataclass, field
from typing import Any

from ..ai import ImageContent
from .results import figure_png
from .summary import bounded

IMAGE_TYPES = ("image/png", "image/jpeg", "image/gif", "image/webp")
DISPLAY_TEXT_CHARS = 2_000
"""At most this much of one display's text form goes to the model."""
RICH_TYPES = ("text/plain", "text/html", "text/markdown")
"""The forms of a rich display kept for the tool card (the panel shows its HTML or Markdown)."""
MOST_IMAGES = 4
"""A call keeps at most this many images (the rest are counted in a note)."""


@dataclass(slots=True)
class Shown:
    """What one ``run_python`` call displayed, in order."""

    images: list[ImageContent] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    """One line per image or display, in order (what a model without image input reads)."""
    rich: list[dict[str, str]] = field(default_factory=list)
    """The other displays' text, HTML and Markdown forms (a DataFrame's table), for the tool
    card (``details["displays"]``: the panel shows them rebuilt safe; the model reads their
    text form, bounded, in the result's text)."""
    dropped: int = 0
    figures_before: set[int] = field(default_factory=set)
    """The figures open when the call started (not the call's)."""
    described: set[int] = field(default_factory=set)
    """The call's figures already shown (a backend's ``show()`` displays them in order)."""

    def add_bundle(self, data: dict[str, Any]) -> None:
        plain = str(data.get("text/plain", "")).strip()
        for mime in IMAGE_TYPES:
            value = data.get(mime)
            if isinstance(value, str | bytes):
                encoded = value if isinstance(value, str) else base64.b64encode(value).decode()
                note = self._shown_figure_note() if plain.startswith("<Figure") else None
                image = ImageContent(data=encoded, mime_type=mime)
                self.add_image(image, note or _image_note(plain))
                return
        note = display_note(data)
        if note is None:
            return
        self.notes.append(note)
        kept = {m: str(data[m]) for m in RICH_TYPES if m in data}
        self.rich.append({m: bounded(v, 100_000) for m, v in kept.items()})

    def _shown_figure_note(self) -> str | None:
        """The note of the figure a ``show()`` is displaying now: the first of the call's
        open figures not shown yet (the inline backend shows them in order, then closes
        them)."""
        plt = _pyplot()
        if plt is None:
            return None
        for number in sorted(set(plt.get_fignums()) - self.figures_before - self.described):
            self.described.add(number)
            return figure_note(plt.figure(number))
        return None

    def add_image(self, image: ImageContent, note: str) -> None:
        if len(self.images) >= MOST_IMAGES:
            self.dropped += 1
            return
        self.images.append(image)
        self.notes.append(note)

    def text(self) -> str:
        notes = list(self.notes)
        if self.dropped:
            notes.append(f"({self.dropped} more images not kept)")
        return "\n".join(notes)


def display_note(data: dict[str, Any]) -> str | None:
    """What a model reads of one display that is not an image: ``displayed:`` and its text
    form, bounded (Markdown's own text for a Markdown object); ``None`` for one with nothing to
    show. The tool card takes this note out where it shows the display itself."""
    plain = str(data.get("text/plain", "")).strip()
    markdown = data.get("text/markdown")
    if isinstance(markdown, str) and markdown.strip() and (not plain or _default_repr(plain)):
        plain = markdown.strip()  # Markdown's own text, not "<...Markdown object>"
    if not plain and "text/html" not in data:
        return None
    text = bounded(plain, DISPLAY_TEXT_CHARS) if plain else "(an HTML display)"
    return f"displayed:\n{text}"


def _default_repr(plain: str) -> bool:
    """``<IPython.core.display.Markdown object>``: object's repr, which says nothing."""
    return plain.startswith("<") and plain.endswith(" object>") and "\n" not in plain


def _image_note(plain: str) -> str:
    if plain.startswith("<Figure"):  # matplotlib's text form: <Figure size 640x480 with 1 Axes>
        return f"a figure was drawn: {plain.strip('<>')}"
    return f"an image was displayed: {plain}" if plain else "an image was displayed"


def figure_note(figure: Any) -> str:
    """``a figure was drawn: 1 axes, 3 lines`` (and its axes' titles)."""
    axes = list(getattr(figure, "axes", []))
    counts = {
        "lines": sum(len(getattr(a, "lines", [])) for a in axes),
        "collections": sum(len(getattr(a, "collections", [])) for a in axes),
        "patches": sum(len(getattr(a, "patches", [])) for a in axes),
        "images": sum(len(getattr(a, "images", [])) for a in axes),
    }
    parts = [f"{len(axes)} axes", *(f"{n} {what}" for what, n in counts.items() if n)]
    titles = [t for a in axes if (t := str(a.get_title()).strip())]
    if titles:
        parts.append("titled " + ", ".join(repr(t) for t in titles[:4]))
    return "a figure was drawn: " + ", ".join(parts)


# -- figures ---------------------------------------------------------------------------------


def _pyplot() -> Any:
    return sys.modules.get("matplotlib.pyplot")


def open_figures() -> set[int]:
    """The numbers of the matplotlib figures open now (none when pyplot was never imported)."""
    plt = _pyplot()
    return set(plt.get_fignums()) if plt is not None else set()


def take_new_figures(shown: Shown) -> None:
    """Render the call's figures still open into ``shown`` and close them (so no backend
    shows them below the cell at its end)."""
    plt = _pyplot()
    if plt is None:
        return
    for number in sorted(set(plt.get_fignums()) - shown.figures_before):
        figure = plt.figure(number)
        try:
            png = figure_png(figure)
        except Exception as exc:  # a figure that cannot be drawn still says so
            shown.notes.append(f"a figure could not be drawn: {type(exc).__name__}: {exc}")
        else:
            encoded = base64.b64encode(png).decode("ascii")
            shown.add_image(ImageContent(data=encoded, mime_type="image/png"), figure_note(figure))
        plt.close(figure)


# -- displays --------------------------------------------------------------------------------


def _router_class() -> type[Any]:
    from IPython.core.displaypub import DisplayPublisher

    class DisplayRouter(DisplayPublisher):
        """Stands in for the shell's display publisher while calls run: a routed thread's
        displays go to its :class:`Shown`, everything else to the original publisher."""

        def __init__(self, original: Any, routes: dict[int, Shown]) -> None:
            super().__init__()  # type: ignore[no-untyped-call]
            self.original = original
            self.routes = routes

        def publish(self, data: Any, metadata: Any = None, *args: Any, **kwargs: Any) -> None:
            shown = self.routes.get(threading.get_ident())
            if shown is None:
                self.original.publish(data, metadata, *args, **kwargs)
            elif isinstance(data, dict):
                shown.add_bundle(data)

        def clear_output(self, wait: bool = False) -> None:
            if threading.get_ident() not in self.routes:
                self.original.clear_output(wait)

        @property
        def is_publishing(self) -> Any:
            return getattr(self.original, "is_publishing", False)

        def __getattr__(self, name: str) -> Any:  # set_parent, hooks... of ipykernel's
            if name in ("original", "routes"):
                raise AttributeError(name)
            return getattr(self.original, name)

    return DisplayRouter


class _Displays:
    """Installs the router on the shell while any call runs (like :mod:`.capture`)."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.users = 0
        self.routes: dict[int, Shown] = {}
        self.router: Any = None
        self.shell: Any = None

    def acquire(self) -> None:
        """One more call: put the router on the running shell (if there is one)."""
        if "IPython" not in sys.modules:
            return
        from IPython import get_ipython

        shell = get_ipython()
        with self.lock:
            self.users += 1
            if shell is None or getattr(shell, "display_pub", None) is None:
                return
            current = shell.display_pub
            if self.router is not None and current is self.router:
                return
            if self.router is None or self.shell is not shell:
                self.router = _router_class()(current, self.routes)
                self.shell = shell
            self.router.original = current
            shell.display_pub = self.router

    def release(self) -> None:
        """One call fewer: the last one puts the shell's publisher back."""
        with self.lock:
            self.users = max(0, self.users - 1)
            shell, router = self.shell, self.router
            if self.users == 0 and shell is not None and shell.display_pub is router:
                shell.display_pub = router.original

    def route(self, shown: Shown) -> None:
        """The calling thread's displays go to ``shown`` (until :meth:`unroute`)."""
        self.routes[threading.get_ident()] = shown

    def unroute(self) -> None:
        self.routes.pop(threading.get_ident(), None)


displays = _Displays()
"""The one display router of this process."""


__all__ = [
    "DISPLAY_TEXT_CHARS",
    "MOST_IMAGES",
    "Shown",
    "display_note",
    "displays",
    "figure_note",
    "open_figures",
    "take_new_figures",
]

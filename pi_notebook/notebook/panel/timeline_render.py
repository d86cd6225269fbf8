"""The timeline drawn: an SVG picture for the static transcript, and rows of text.

The picture must read where the panel's stylesheet does not reach, untrusted too. Jupyter's
HTML sanitizer drops inline ``<svg>`` elements (JupyterLab's allowed tags hold no SVG), keeping
their text as a jumble, but it keeps an ``<img>`` whose ``src`` is a data URL; and an SVG shown
as an image runs nothing (no script, no links, no external loads). So the static transcript
shows the SVG as ``<img src="data:image/svg+xml;base64,...">`` with an ``alt`` text, and the
same timeline as text rows beside it (:func:`timeline_rows`, also ``%agent timeline``).

The SVG carries its own background and colours, light or dark by the reader's colour scheme
(a ``prefers-color-scheme`` rule inside it), so it reads on either theme; kinds of span differ
by opacity and dash pattern too, not by colour alone. It is built only of ``svg``, ``style``,
``g``, ``rect``, ``line``, ``text`` and ``title``, every text escaped. Each tool call's lane is
named by its call's label and each model request by its number; each bar's ``<title>`` says
what it was and when. Pure.
"""

from __future__ import annotations

import base64
from collections.abc import Callable

from .contract import Timeline, TimelineSpan
from .markdown import escape_html

WIDTH = 760
LABEL_WIDTH = 190
ROW = 22
BAR = 12
TOP = 30
#: How each kind of span is drawn: (fill opacity, dash pattern of its outline or "").
LOOK = {
    "waiting": (0.15, "3 2"),
    "streaming": (0.65, ""),
    "prepared": (0.12, "3 2"),
    "running": (0.65, ""),
    "held": (0.35, "1 2"),
    "queued": (0.25, "4 2"),
}
WORDS = {
    "waiting": "waiting for the first token",
    "streaming": "streaming",
    "prepared": "prepared, not running",
    "running": "running",
    "held": "held (step mode)",
    "queued": "queued",
}


#: The colour of each kind of span (by class), and of text, rules and the background.
SPAN_CLASS = {
    "waiting": "model",
    "streaming": "model",
    "prepared": "tool",
    "running": "tool",
    "held": "held",
    "queued": "queue",
}
COLOURS = (
    ".bg{fill:#ffffff}.fg{fill:#1f2328}.rule{stroke:#59636e}.cursor{stroke:#cf222e}"
    ".model{fill:#8250df;stroke:#8250df}.tool{fill:#0969da;stroke:#0969da}"
    ".held{fill:#bc4c00;stroke:#bc4c00}.queue{fill:#1a7f37;stroke:#1a7f37}"
    "@media (prefers-color-scheme: dark){.bg{fill:#0d1117}.fg{fill:#e6edf3}"
    ".rule{stroke:#9198a1}.cursor{stroke:#ff7b72}.model{fill:#ab7df8;stroke:#ab7df8}"
    ".tool{fill:#4493f8;stroke:#4493f8}.held{fill:#f0883e;stroke:#f0883e}"
    ".queue{fill:#3fb950;stroke:#3fb950}}"
)


def _seconds(ms: float) -> str:
    return f"{ms / 1000:.2f}s"


def _end_of(timeline: Timeline) -> float:
    times = [0.0, *timeline["turns"]]
    for span in timeline["spans"]:
        times.append(span["start"])
        if span["end"] is not None:
            times.append(span["end"])
    return max(times)


def _ticks(end: float) -> list[float]:
    step = end / 5 if end > 0 else 1.0
    return [step * i for i in range(6)]


def timeline_svg(timeline: Timeline) -> str:
    """The timeline as one ``<svg>`` (see the module docstring); "" when it is empty."""
    lanes = timeline["lanes"]
    if not lanes:
        return ""
    end = _end_of(timeline) or 1.0
    plot = WIDTH - LABEL_WIDTH - 12

    def x(ms: float) -> float:
        return round(LABEL_WIDTH + plot * max(0.0, min(ms, end)) / end, 1)

    height = TOP + ROW * len(lanes) + 24
    row_of = {lane["id"]: n for n, lane in enumerate(lanes)}
    out = [
        f'<svg xmlns="http://www.w3.org/2000/svg" role="img" '
        f'width="{WIDTH}" height="{height}" viewBox="0 0 {WIDTH} {height}" '
        'font-family="sans-serif" font-size="11">',
        f"<title>Timeline of the run: {len(lanes)} lanes over {_seconds(end)}</title>",
        f"<style>{COLOURS}</style>",
        f'<rect class="bg" x="0" y="0" width="{WIDTH}" height="{height}" rx="4"/>',
    ]
    ticks = _ticks(end)
    for n, tick in enumerate(ticks):
        anchor = "start" if n == 0 else "end" if n == len(ticks) - 1 else "middle"
        out.append(
            f'<text class="fg" x="{x(tick)}" y="12" text-anchor="{anchor}" fill-opacity="0.7">'
            f"{_seconds(tick)}</text>"
        )
    bottom = TOP + ROW * len(lanes)
    for n, start in enumerate(timeline["turns"], start=1):
        out.append(
            f'<line class="rule" x1="{x(start)}" y1="16" x2="{x(start)}" '
            f'y2="{bottom}" stroke-opacity="0.6" stroke-dasharray="2 3"/>'
        )
        out.append(f'<text class="fg" x="{x(start) + 2}" y="25">turn {n}</text>')
    for n, lane in enumerate(lanes):
        y = TOP + ROW * n
        out.append(
            f'<g data-lane="{escape_html(lane["id"])}">'
            f'<text class="fg" x="4" y="{y + BAR}">{escape_html(_cut(lane["label"], 30))}</text>'
            f'<line class="rule" x1="{LABEL_WIDTH}" y1="{y + ROW - 3}" x2="{WIDTH - 12}" '
            f'y2="{y + ROW - 3}" stroke-opacity="0.2"/></g>'
        )
    named: set[str] = set()  # a request is named once (at its first span: waiting)
    for span in timeline["spans"]:
        row = row_of.get(span["lane"])
        if row is not None:
            name = span["lane"] == "model" and span["label"] not in named
            named.add(span["label"])
            out.append(_bar(span, TOP + ROW * row, x, end, name))
    cursor = next(
        (s for s in timeline["spans"] if s["kind"] == "held" and s["end"] is None), None
    )
    if cursor is not None:
        out.append(
            f'<line class="cursor" x1="{x(cursor["start"])}" y1="16" '
            f'x2="{x(cursor["start"])}" y2="{bottom}" stroke-width="2">'
            f"<title>held now: {escape_html(cursor['label'])}</title></line>"
        )
    legend = " · ".join(
        f"{word}: {'dashed' if LOOK[kind][1] else 'solid'}"
        for kind, word in (("prepared", "prepared"), ("running", "running"), ("held", "held"))
    )
    out.append(f'<text class="fg" x="4" y="{bottom + 16}" fill-opacity="0.8">{legend}</text>')
    out.append("</svg>")
    return "".join(out)


def _bar(
    span: TimelineSpan, y: float, scale: Callable[[float], float], end: float, name: bool
) -> str:
    start = span["start"]
    stop = span["end"] if span["end"] is not None else end
    left, right = scale(start), scale(stop)
    width = max(1.5, round(right - left, 1))
    opacity, dash = LOOK.get(span["kind"], (0.4, ""))
    outline = f' stroke-dasharray="{dash}"' if dash else ""
    what = WORDS.get(span["kind"], span["kind"])
    outcome = f", {span['outcome']}" if span["outcome"] else ""
    until = _seconds(stop) if span["end"] is not None else "now"
    title = f"{span['label']}: {what}{outcome}, {_seconds(start)} to {until}"
    label = ""
    if name and span["label"]:
        text = escape_html(span["label"])
        label = f'<text class="fg" x="{left + 2}" y="{y - 1}" font-size="9">{text}</text>'
    return (
        f'<g data-kind="{span["kind"]}" data-start="{start}" '
        f'data-end="{stop}" data-lane="{escape_html(span["lane"])}">'
        f'<rect class="{SPAN_CLASS.get(span["kind"], "tool")}" x="{left}" y="{y + 2}" '
        f'width="{width}" height="{BAR - 2}" fill-opacity="{opacity}" '
        f'stroke-opacity="0.9"{outline}><title>{escape_html(title)}</title></rect>{label}</g>'
    )


def _cut(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def timeline_box(timeline: Timeline) -> str:
    """The static transcript's timeline: the SVG as an image (see the module docstring) and
    its rows as text, in an open ``<details>`` ("" when there is no timeline)."""
    svg = timeline_svg(timeline)
    if not svg:
        return ""
    data = base64.b64encode(svg.encode("utf-8")).decode("ascii")
    names = ", ".join(lane["label"] for lane in timeline["lanes"])
    alt = escape_html(f"Timeline of the run, lanes: {names}")
    rows = escape_html(timeline_rows(timeline))
    return (
        '<details class="pi-timeline-box" open><summary>Timeline</summary>'
        f'<img class="pi-timeline" alt="{alt}" src="data:image/svg+xml;base64,{data}">'
        '<details class="pi-timeline-text"><summary>as text</summary>'
        f"<pre>{rows}</pre></details></details>"
    )


def timeline_rows(timeline: Timeline) -> str:
    """The timeline as text rows, one per span in time order, turn starts among them."""
    if not timeline["lanes"]:
        return "no timeline: no run was shown in a panel yet"
    names = {lane["id"]: lane["label"] for lane in timeline["lanes"]}
    width = max(len(name) for name in names.values())
    rows: list[tuple[float, int, str]] = []
    for n, start in enumerate(timeline["turns"], start=1):
        rows.append((start, 0, f"{start / 1000:>8.3f}s {'':>9} ── turn {n} starts"))
    for span in timeline["spans"]:
        stop = span["end"]
        until = f"{stop / 1000:>8.3f}s" if stop is not None else "     now "
        outcome = f" ({span['outcome']})" if span["outcome"] else ""
        what = WORDS.get(span["kind"], span["kind"])
        lane = names.get(span["lane"], span["lane"])
        rows.append(
            (
                span["start"],
                1,
                f"{span['start'] / 1000:>8.3f}s {until} {lane:<{width}}  {what}"
                f"{': ' + span['label'] if span['label'] != lane else ''}{outcome}",
            )
        )
    rows.sort(key=lambda row: (row[0], row[1]))
    head = f"{'start':>9} {'end':>9} {'lane':<{width}}  what"
    return "\n".join([head, *(text for _, _, text in rows)])


__all__ = ["timeline_box", "timeline_rows", "timeline_svg"]

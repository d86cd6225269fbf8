"""Lone surrogates out of text, where messages are made.

A Python ``str`` can hold a lone surrogate (``chr(0xd800)``, or ``'x\\udcff'`` from
``os.listdir`` on a non-UTF-8 file name, or a JSON ``"\\ud800"`` escape), but nothing that
encodes UTF-8 can carry one: the kernel's stdout, a widget's comm, a JSON request body. So
text is cleaned where a message or a block is created (content blocks on validation, streamed
deltas, tool results, prompts): each lone surrogate becomes U+FFFD; a high + low pair that sits
in the string as two code points is joined into the character it encodes.

:func:`clean_surrogates` costs nothing measurable for ASCII (``isascii`` is O(1) in CPython)
and one scan for other text; it never copies a text that has no surrogate.
"""

from __future__ import annotations

import re

REPLACEMENT = "\ufffd"
_SURROGATE = re.compile("[\ud800-\udfff]")


def has_surrogates(text: str) -> bool:
    return not text.isascii() and _SURROGATE.search(text) is not None


def clean_surrogates(text: str) -> str:
    """``text`` with lone surrogates replaced by U+FFFD (and split pairs joined)."""
    if text.isascii() or _SURROGATE.search(text) is None:
        return text
    return text.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "replace")


__all__ = ["REPLACEMENT", "clean_surrogates", "has_surrogates"]

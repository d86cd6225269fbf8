"""Why a tool call carried by a failed reply never ran, in the words its card and the plain
transcript share.

Pi's loop runs a reply's tool calls only when the reply ended well: a reply that ended in an
error carried calls that never ran, although their names and arguments may have streamed.
The common case is a local server that cannot parse what a small model wrote: llama.cpp's
server streams the tool call as it parses it and then, when the whole output does not match
the format it expects (a stray code fence, text after the call), ends the stream with
``{"error": {"code": 500, "message": "Failed to parse input at pos 12: ...",
"type": "server_error"}}`` (or answers HTTP 500 before streaming anything). Such a card must
not read as a tool that ran and failed: it says that nothing ran and why, and the server's
message is shown once, where the message's error is (not again in the card). The error texts
are recognised by what the servers write (llama.cpp's peg parser, Ollama's tool-call parser);
any other failed reply gets the general reason. This module must stay pure.
"""

from __future__ import annotations

import re

#: What servers write when they cannot parse the model's output as a tool call.
_UNPARSED = re.compile(
    r"failed to parse input|peg-native|error parsing tool call|failed to parse tool call"
    r"|could not parse tool call",
    re.IGNORECASE,
)

UNPARSED = "the server could not parse the model's tool call"
"""Why a call in a reply the server rejected as unparsable never ran."""
REPLY_FAILED = "the model's reply failed before the call could run"
"""Why a call in a reply that failed otherwise (a dropped connection, a server error) never
ran."""
NOTHING_RAN = "nothing ran"


def unparsed(error: str | None) -> bool:
    """The reply failed because the server could not parse the model's output."""
    return bool(error) and _UNPARSED.search(error or "") is not None


def never_ran_reason(error: str | None) -> str:
    """Why the calls of a reply that failed with ``error`` never ran."""
    return UNPARSED if unparsed(error) else REPLY_FAILED


def never_ran_line(reason: str) -> str:
    """``the server could not parse the model's tool call: nothing ran`` (as js/cards.js)."""
    return f"{reason}: {NOTHING_RAN}"


__all__ = [
    "NOTHING_RAN",
    "REPLY_FAILED",
    "UNPARSED",
    "never_ran_line",
    "never_ran_reason",
    "unparsed",
]

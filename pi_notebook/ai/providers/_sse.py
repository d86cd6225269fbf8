"""Incremental Server-Sent Events decoding, bytes in, ``(event, data)`` pairs out.

Pure and synchronous: it never parses the data (the providers do), never decodes the bytes of
a data field, never drops or reorders an event, and never holds more than one event's worth
of a server's bytes beyond :data:`MAX_EVENT_BYTES` (an endless line is an error, not memory).
"""

from __future__ import annotations

#: The largest server-sent event (its lines and their ends) a stream may carry: 16 MiB.
MAX_EVENT_BYTES = 16 * 1024 * 1024


class EventTooLarge(Exception):
    """A server-sent event (or an unterminated line) grew beyond the decoder's limit."""

    def __init__(self, limit: int) -> None:
        super().__init__(
            f"Server-sent event larger than the {format_size(limit)} limit; the stream was stopped"
        )
        self.limit = limit


def format_size(size: int) -> str:
    """``16 MiB``, ``64 KiB``, ``97.7 KiB``, ``900 bytes``."""
    for unit, scale in (("MiB", 1 << 20), ("KiB", 1 << 10)):
        if size >= scale:
            return f"{size // scale} {unit}" if size % scale == 0 else f"{size / scale:.1f} {unit}"
    return f"{size} bytes"


class SSEDecoder:
    """Incremental Server-Sent Events decoder.

    Feed raw bytes as they arrive; get back complete ``(event, data)`` pairs, ``data`` as the
    UTF-8 bytes of the field (JSON parsers take bytes; error texts decode them). Handles LF,
    CRLF and lone CR line ends (also split across reads), ``:`` comments (keep-alives) and
    multi-line ``data:`` fields (joined with newlines). An event always ends at an ASCII
    newline, so it never splits a UTF-8 sequence.

    Works on bytes: complete events are cut at blank lines with ``bytes.split``; a run of
    one-line ``data: ...`` events (what OpenAI-compatible servers send) is cut out whole, and
    an ``event: ...`` + ``data: ...`` pair (Anthropic's shape) takes one partition. Anything
    else goes through the general field rules.

    ``max_event_bytes`` bounds one event: an unterminated one that grows past it, or a complete
    one longer than it, raises :class:`EventTooLarge` (checked with one length test per feed;
    the events of a big read are measured only when the read itself exceeds the limit).
    """

    __slots__ = ("_buffer", "_held_cr", "_limit")

    def __init__(self, max_event_bytes: int = MAX_EVENT_BYTES) -> None:
        self._buffer = bytearray()
        self._held_cr = False
        self._limit = max(1, max_event_bytes)

    def feed(self, chunk: bytes) -> list[tuple[str, bytes]]:
        if self._held_cr:
            chunk = b"\r" + chunk
            self._held_cr = False
        if b"\r" in chunk:
            if chunk[-1:] == b"\r":  # a CRLF may be split across reads: decide on the next one
                chunk = chunk[:-1]
                self._held_cr = True
            chunk = chunk.replace(b"\r\n", b"\n").replace(b"\r", b"\n")
        buffer = self._buffer
        searched = max(0, len(buffer) - 1)  # the old part holds no blank line
        buffer += chunk
        end = buffer.rfind(b"\n\n", searched)
        if end < 0:
            if len(buffer) > self._limit:
                self._check_tail()
            return []
        complete = bytes(buffer[:end])
        del buffer[: end + 2]
        if end > self._limit or len(buffer) > self._limit:
            self._check_sizes(complete)
        if complete[:6] == b"data: " and complete.count(b"\n") == 2 * complete.count(b"\n\ndata: "):
            return [("message", data) for data in complete[6:].split(b"\n\ndata: ")]
        out: list[tuple[str, bytes]] = []
        for block in complete.split(b"\n\n"):
            if block[:7] == b"event: ":
                name, _, data = block.partition(b"\n")
                if data[:6] == b"data: " and b"\n" not in data:  # Anthropic's event shape
                    out.append((name[7:].decode("utf-8", "replace") or "message", data[6:]))
                    continue
            if block:
                _parse_block(block, out)
        return out

    def _check_sizes(self, complete: bytes) -> None:
        # Rare: this read is bigger than one event may be. Measure its events, then the tail.
        limit = self._limit
        start = 0
        while True:
            end = complete.find(b"\n\n", start)
            if (end if end >= 0 else len(complete)) - start > limit:
                self._overflow()
            if end < 0:
                break
            start = end + 2
        self._check_tail()

    def _check_tail(self) -> None:
        # The unterminated event held: over the limit, not counting its last line's newline.
        size = len(self._buffer)
        if size > self._limit and (size > self._limit + 1 or self._buffer[-1] != 0x0A):
            self._overflow()

    def _overflow(self) -> None:
        self._buffer.clear()  # the bytes held so far are let go now, not when the stream ends
        raise EventTooLarge(self._limit)

    def flush(self) -> list[tuple[str, bytes]]:
        """End of stream: the last unterminated line and event are delivered."""
        rest = bytes(self._buffer)
        self._buffer.clear()
        self._held_cr = False
        out: list[tuple[str, bytes]] = []
        if rest:
            _parse_block(rest, out)
        return out


def _parse_block(block: bytes, out: list[tuple[str, bytes]]) -> None:
    """The general SSE field rules for the lines of one event (blank lines dispatch)."""
    event = ""
    data: list[bytes] = []
    for line in [*block.split(b"\n"), b""]:
        if not line:
            if data:
                out.append((event or "message", b"\n".join(data)))
                data = []
            event = ""
            continue
        if line[:1] == b":":
            continue
        name, _, value = line.partition(b":")
        if value[:1] == b" ":
            value = value[1:]
        if name == b"event":
            event = value.decode("utf-8", "replace")
        elif name == b"data":
            data.append(value)

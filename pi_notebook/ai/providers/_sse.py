"""Incremental Server-Sent Events decoding, bytes in, ``(event, data)`` pairs out.

Pure and synchronous: it never parses the data (the providers do), never decodes the bytes of
a data field, and never drops or reorders an event.
"""

from __future__ import annotations


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
    """

    __slots__ = ("_buffer", "_held_cr")

    def __init__(self) -> None:
        self._buffer = bytearray()
        self._held_cr = False

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
            return []
        complete = bytes(buffer[:end])
        del buffer[: end + 2]
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

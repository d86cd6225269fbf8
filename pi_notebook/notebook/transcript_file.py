"""The conversation file: a header line, then one Pi message (JSON) per line.

::

    {"format": "pi_notebook.conversation", "version": 1, "conversation": "default", ...}
    {"role": "user", "content": "...", "timestamp": 1735812345678}
    {"role": "assistant", "content": [...], "api": "...", "provider": "...", ...}

Lines 2.. are exactly what ``dump_transcript(agent.state.messages)`` gives (Pi's camelCase
JSON, every text redacted), so a transcript moves to and from Pi; :func:`read` also takes a
file without the header (one message per line) and a JSON array of messages (Pi's
``JSON.stringify(agent.state.messages)``). The header says which format version wrote the file,
the conversation, its model (``provider/id``, never a key, header or base URL), system prompt
(redacted), thinking level, how many messages follow, when it was saved and by which kernel
process. :func:`read_header` reads that line only (``%load_ext`` lists saved conversations
without reading their bodies, whatever their size); :func:`read` reads the whole file.

:func:`write` is atomic: the whole file goes to a temporary file in the same folder, is flushed
to disk, then renamed over the old one (``os.replace``), so a crash mid-write leaves the earlier
save whole. :class:`LineCache` keeps each message's line from the last save, so a save costs the
new messages' serialisation plus one write. A file that is corrupt, or from another format
version, raises :class:`TranscriptFileError` (one line) and is never written over by this module.

This module never reads the notebook namespace, never prints and never holds a key.
"""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, ValidationError

from ..ai import AgentMessage, dump_transcript, parse_agent_message

FORMAT = "pi_notebook.conversation"
VERSION = 1


class TranscriptFileError(ValueError):
    """A conversation file that cannot be read (or is not ours to write); one readable line."""


class FileHeader(BaseModel):
    """The first line of a conversation file."""

    model_config = ConfigDict(extra="allow", populate_by_name=True)

    format: str = FORMAT
    version: int = VERSION
    conversation: str = "default"
    notebook: str | None = None
    model: str | None = None
    """``provider/id``."""
    system_prompt: str | None = None
    thinking_level: str | None = None
    saved_at: str | None = None
    """ISO 8601, UTC."""
    kernel: str | None = None
    """The kernel process that wrote it (a random id per process)."""
    messages: int | None = None
    """How many messages follow (:func:`write` sets it; older files do not have it)."""

    def line(self) -> str:
        data = {
            "format": self.format,
            "version": self.version,
            "conversation": self.conversation,
            "notebook": self.notebook,
            "model": self.model,
            "systemPrompt": self.system_prompt,
            "thinkingLevel": self.thinking_level,
            "savedAt": self.saved_at,
            "kernel": self.kernel,
            "messages": self.messages,
        }
        return json.dumps({k: v for k, v in data.items() if v is not None}, ensure_ascii=False)

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> FileHeader:
        aliases = {"systemPrompt": "system_prompt", "thinkingLevel": "thinking_level"}
        aliases["savedAt"] = "saved_at"
        return cls.model_validate({aliases.get(k, k): v for k, v in data.items()})

    def saved_time(self) -> datetime | None:
        try:
            return datetime.fromisoformat(self.saved_at) if self.saved_at else None
        except ValueError:
            return None


def now_iso() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


@dataclass
class Loaded:
    """What a file holds: its header (``None`` for a headerless Pi transcript) and messages."""

    header: FileHeader | None
    messages: list[AgentMessage]


# -- reading -------------------------------------------------------------------------------------


def _where(path: Path) -> str:
    return str(path)


def _header_of(first: Any, path: Path) -> FileHeader | None:
    """The header if ``first`` (the first line's JSON) is one; raises for another format."""
    if not isinstance(first, dict) or "role" in first:
        return None
    if first.get("format") != FORMAT:
        raise TranscriptFileError(
            f"{_where(path)}: not a pi_notebook conversation file (its first line is neither "
            "a header nor a message)"
        )
    version = first.get("version")
    if version != VERSION:
        raise TranscriptFileError(
            f"{_where(path)}: written by another pi_notebook version (format version "
            f"{version!r}; this one reads version {VERSION}); it is left as it is"
        )
    try:
        return FileHeader.from_json(first)
    except ValidationError as exc:
        raise TranscriptFileError(f"{_where(path)}: corrupt header ({_first_error(exc)})") from None


def _first_error(exc: ValidationError) -> str:
    errors = exc.errors()
    if not errors:
        return "invalid"
    error = errors[0]
    location = ".".join(str(part) for part in error.get("loc", ())) or "message"
    return f"{location}: {error.get('msg', 'invalid')}"


def _message(data: Any, path: Path, line: int) -> AgentMessage:
    if not isinstance(data, dict) or not isinstance(data.get("role"), str):
        raise TranscriptFileError(f"{_where(path)}: line {line} is not a message (no role)")
    try:
        return parse_agent_message(data)
    except ValidationError as exc:
        raise TranscriptFileError(
            f"{_where(path)}: line {line} is not a valid {data['role']} message "
            f"({_first_error(exc)})"
        ) from None


def read_text(text: str, path: Path) -> Loaded:
    """Parse a file's text (see the module docstring for what is accepted)."""
    stripped = text.lstrip()
    if not stripped:
        raise TranscriptFileError(f"{_where(path)}: empty file, no conversation in it")
    if stripped.startswith("["):  # a JSON array of messages (Pi's state.messages)
        try:
            items = json.loads(text)
        except json.JSONDecodeError as exc:
            raise TranscriptFileError(f"{_where(path)}: not valid JSON ({exc.msg})") from None
        if not isinstance(items, list):
            raise TranscriptFileError(f"{_where(path)}: expected a list of messages")
        return Loaded(None, [_message(item, path, i + 1) for i, item in enumerate(items)])
    header: FileHeader | None = None
    messages: list[AgentMessage] = []
    # Lines end at "\n" only: JSON written with ensure_ascii=False keeps U+2028, U+0085 and
    # the other characters str.splitlines() would also break at inside its strings.
    for number, raw in enumerate(text.split("\n"), 1):
        if not raw.strip():
            continue
        try:
            data = json.loads(raw)
        except json.JSONDecodeError as exc:
            raise TranscriptFileError(
                f"{_where(path)}: line {number} is not valid JSON ({exc.msg}); the file is corrupt"
            ) from None
        if number == 1:
            header = _header_of(data, path)
            if header is not None:
                continue
        messages.append(_message(data, path, number))
    return Loaded(header, messages)


def read(path: Path) -> Loaded:
    """Read a conversation file; raises :class:`TranscriptFileError` (one line)."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise TranscriptFileError(f"{_where(path)}: no such file") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise TranscriptFileError(f"{_where(path)}: cannot read it ({exc})") from None
    return read_text(text, path)


HEADER_BYTES = 1 << 20
"""A first line longer than this is no header of ours (it is never read further)."""


def read_header(path: Path) -> FileHeader:
    """The header of one of our files, from its first line alone (the body is not read, so
    neither its size nor its state matters here); raises :class:`TranscriptFileError` for
    anything else."""
    try:
        with path.open("rb") as handle:
            first = handle.readline(HEADER_BYTES).decode("utf-8")
    except FileNotFoundError:
        raise TranscriptFileError(f"{_where(path)}: no such file") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise TranscriptFileError(f"{_where(path)}: cannot read it ({exc})") from None
    try:
        data = json.loads(first) if first.strip() else None
    except json.JSONDecodeError:
        data = None
    header = _header_of(data, path) if data is not None else None
    if header is None:
        raise TranscriptFileError(f"{_where(path)}: not a pi_notebook conversation file")
    return header


def check_writable(path: Path) -> None:
    """Raise unless ``path`` is absent or one of our files of this version (never overwrite a
    corrupt file, another version's, or someone's data file)."""
    if path.exists():
        read_header(path)


# -- writing -------------------------------------------------------------------------------------


def message_line(message: AgentMessage) -> str:
    """One message as a line: Pi's JSON, redacted (details that are not JSON are dropped)."""
    try:
        data = dump_transcript([message])[0]
    except Exception:
        if getattr(message, "details", None) is None:
            raise
        data = dump_transcript([message.model_copy(update={"details": None})])[0]
    return json.dumps(data, ensure_ascii=False, separators=(",", ":"))


class LineCache:
    """The lines of the last save, by message object: a message is serialised once."""

    def __init__(self) -> None:
        self._saved: list[tuple[AgentMessage, str]] = []

    def lines(self, messages: Sequence[AgentMessage]) -> list[str]:
        saved = self._saved
        same = 0
        limit = min(len(saved), len(messages))
        while same < limit and saved[same][0] is messages[same]:
            same += 1
        fresh = [(m, message_line(m)) for m in messages[same:]]
        self._saved = saved[:same] + fresh
        return [line for _, line in self._saved]


_BATCH_LINES = 500


def write(path: Path, header: FileHeader, lines: Sequence[str]) -> None:
    """Write the file atomically (temporary file in the same folder, fsync, ``os.replace``);
    the header says how many messages follow."""
    header = header.model_copy(update={"messages": len(lines)})
    path.parent.mkdir(parents=True, exist_ok=True)
    descriptor, temporary = tempfile.mkstemp(
        dir=path.parent, prefix=f".{path.name}.", suffix=".tmp"
    )
    try:
        with os.fdopen(descriptor, "w", encoding="utf-8") as handle:
            handle.write(header.line() + "\n")
            batch: list[str] = []
            for line in lines:  # a few writes: a write per line costs more than the fsync
                batch.append(line)
                if len(batch) == _BATCH_LINES:
                    handle.write("\n".join(batch) + "\n")
                    batch.clear()
            if batch:
                handle.write("\n".join(batch) + "\n")
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(temporary, path)
    except BaseException:
        try:
            os.unlink(temporary)
        except OSError:
            pass
        raise


__all__ = [
    "FORMAT",
    "HEADER_BYTES",
    "VERSION",
    "FileHeader",
    "LineCache",
    "Loaded",
    "TranscriptFileError",
    "check_writable",
    "message_line",
    "now_iso",
    "read",
    "read_header",
    "read_text",
    "write",
]

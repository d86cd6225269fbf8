"""Two kernels on one notebook: a saved conversation is overwritten only by the kernel that
wrote it last.

The same notebook open twice (VS Code and JupyterLab, two browser windows) runs two kernels,
and both save their conversation to the same file after every run. Each would overwrite the
other's, turn by turn, and after restarts one conversation would be lost.

:class:`FileGuard` remembers, per file, the stamp (modification time in nanoseconds, size,
inode) it had right after this kernel wrote it or read it to resume it. Before the next
overwrite, :meth:`FileGuard.written_since` compares the stamp: the same stamp is this kernel's
own file; another stamp is checked against the header's kernel id (the first line only), and
a file another kernel wrote (or one that is no longer ours to read) is left as it is. This
kernel's conversation then goes beside it, under a name that says which kernel wrote it
(:meth:`FileGuard.divert`: ``<notebook>.<conversation>.kernel-<id>.jsonl``, never a name
``%agent resume`` lists), and every later save of that conversation goes there too. Nothing is
overwritten that this kernel did not write, so nothing is lost.

The check and the write are not one atomic step: two saves within the same instant can still
cross. The guard is for notebooks open twice by one person, not for concurrent writers.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from .transcript_file import TranscriptFileError, read_header


@dataclass(frozen=True, slots=True)
class Stamp:
    mtime_ns: int
    size: int
    inode: int


def stamp_of(path: Path) -> Stamp | None:
    """The file's stamp now; ``None`` when there is no file."""
    try:
        info = os.stat(path)
    except OSError:
        return None
    return Stamp(info.st_mtime_ns, info.st_size, info.st_ino)


class FileGuard:
    """The files this kernel wrote last (by stamp) and where its saves were diverted."""

    def __init__(self, kernel_id: str) -> None:
        self.kernel_id = kernel_id
        self._stamps: dict[Path, Stamp] = {}
        self._diverted: dict[Path, Path] = {}

    def remember(self, path: Path, stamp: Stamp | None = None) -> None:
        """``path`` is this kernel's as it is now (just written), or as it was at ``stamp``
        (taken before it was read to resume it)."""
        current = stamp if stamp is not None else stamp_of(path)
        if current is not None:
            self._stamps[path] = current

    def written_since(self, path: Path) -> bool:
        """Whether something other than this kernel wrote ``path`` since it last did."""
        now = stamp_of(path)
        if now is None:
            return False  # gone: writing it afresh loses nothing
        if self._stamps.get(path) == now:
            return False
        try:
            header = read_header(path)
        except TranscriptFileError:
            return True  # not a file of ours any more: left as it is
        return header.kernel != self.kernel_id

    def target(self, path: Path) -> Path:
        """Where the conversation saved as ``path`` goes now (itself unless diverted)."""
        return self._diverted.get(path, path)

    def divert(self, path: Path) -> Path:
        """From now on, save what was saved as ``path`` beside it: the new path."""
        base = path.name.removesuffix(".jsonl")
        candidate = path.with_name(f"{base}.kernel-{self.kernel_id[:8]}.jsonl")
        number = 1
        while candidate.exists():
            candidate = path.with_name(f"{base}.kernel-{self.kernel_id[:8]}-{number}.jsonl")
            number += 1
        self._diverted[path] = candidate
        return candidate

    def forget_diversion(self, path: Path) -> None:
        """``path`` was resumed: this kernel's conversation is saved there again."""
        self._diverted.pop(path, None)


__all__ = ["FileGuard", "Stamp", "stamp_of"]

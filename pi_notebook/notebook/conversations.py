"""Conversations that survive a kernel restart: saved beside the notebook, resumed on request.

Where: ``.pi_notebook/<notebook name>.<conversation>.jsonl`` in the notebook's folder, where the
conversation is ``default`` or the ``--agent NAME`` variable. The notebook's path is what the
front end gives the kernel: ``$JPY_SESSION_NAME`` (Jupyter Server) or ``__vsc_ipynb_file__`` in
the namespace (VS Code); without one nothing is saved automatically (``%agent save PATH`` still
works). ``PI_NOTEBOOK_SESSIONS=off`` (or ``pi_notebook.notebook.settings.sessions = False``)
turns saving off.

When: :meth:`Conversations.track` subscribes a :class:`Saver` (which the conversation keeps) to
each agent a ``%%agent`` cell uses;
after every ``agent_end`` the whole conversation is written (:mod:`.transcript_file`: atomic,
one message per line, keys never in it, texts redacted). A file this kernel neither wrote nor
resumed (one saved before a restart) is never written over: on the first save it is renamed
aside (``<name>.<conversation>.<saved time>.jsonl``) and a note says where it went. A file
another kernel saved since this one did (the notebook open twice) is not overwritten either:
this kernel's conversation goes beside it from then on (:mod:`.file_guard`). A file that
is corrupt or from another version is left alone and saving that conversation stops, with one
line saying why.

Back: :meth:`Conversations.summary` is the line ``%load_ext`` prints (from each file's header
line alone); :meth:`resume` / :meth:`load` restore the messages (repaired:
:mod:`.history_repair`), the model (by ``provider/id``: the current one if it matches, a Model or
faux provider in the namespace, the catalogue), the system prompt and thinking level (checked:
:mod:`.resume_checks`, which also keeps the file's cost out of the budget). Tools and the
approval policy are not in the file: the conversation keeps the ones it has in this kernel
(none after a restart) until a cell's ``--tools`` / ``--no-tools`` / ``--approve`` sets them
(:mod:`.conversation_settings`).

This module never prints (its notes go to the callback the magic gives), never saves a key, a
header or a base URL, and never overwrites a file that is not its own.
"""

from __future__ import annotations

import os
import re
import uuid
import weakref
from collections.abc import Callable, Mapping, MutableMapping
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..agent import Agent, AgentEndEvent, AgentEvent, format_usd
from ..ai import FauxProvider, Model, redact
from ..settings import NOTEBOOK_PATH
from .config import settings
from .file_guard import FileGuard, stamp_of
from .history_repair import close_unanswered_calls, drop_unanswering_results
from .models import ModelError, model_from_name
from .resume_checks import prompt_preview, thinking_level, uncounted_cost
from .system_prompt import DEFAULT_SYSTEM_PROMPT
from .transcript_file import (
    FileHeader,
    LineCache,
    Loaded,
    TranscriptFileError,
    check_writable,
    now_iso,
    read,
    read_header,
    write,
)

if TYPE_CHECKING:
    from .conversation import Conversation
    from .session import NotebookSession

DEFAULT = "default"
FOLDER = ".pi_notebook"
VSCODE_VARIABLE = "__vsc_ipynb_file__"
KERNEL_ID = uuid.uuid4().hex
"""This kernel process (in each file it writes): a file with another id is from before."""

Report = Callable[[str], None]


class ConversationError(ValueError):
    """A resume / load / save that cannot be done; one readable line."""


# -- where the files go --------------------------------------------------------------------------


def notebook_path(namespace: Mapping[str, Any]) -> Path | None:
    """The notebook's file, from VS Code's variable or Jupyter Server's session name."""
    vscode = namespace.get(VSCODE_VARIABLE)
    if isinstance(vscode, str) and vscode.strip():
        return Path(vscode)
    name = NOTEBOOK_PATH.value()
    if not name:
        return None
    path = Path(name)
    if not path.is_absolute():
        path = Path.cwd() / path
    # A console's session name is not a file: only a notebook (or a file opened as one).
    if path.suffix == ".ipynb" or path.is_file():
        return path
    return None


def key_of(agent_name: str | None) -> str:
    """The conversation's name in file names: ``default``, or the ``--agent`` variable."""
    if agent_name is None:
        return DEFAULT
    return f"{agent_name}-agent" if agent_name == DEFAULT else agent_name


def file_for(notebook: Path, key: str) -> Path:
    return notebook.parent / FOLDER / f"{notebook.stem}.{key}.jsonl"


def saved_files(notebook: Path) -> list[tuple[str, Path]]:
    """The conversations saved for ``notebook`` (not the ones set aside), by name."""
    folder = notebook.parent / FOLDER
    pattern = re.compile(re.escape(notebook.stem) + r"\.([A-Za-z_][\w-]*)\.jsonl")
    found: list[tuple[str, Path]] = []
    try:
        entries = sorted(folder.iterdir())
    except OSError:
        return []
    for entry in entries:
        match = pattern.fullmatch(entry.name)
        if match and entry.is_file():
            found.append((match.group(1), entry))
    found.sort(key=lambda item: (item[0] != DEFAULT, item[0]))
    return found


def _when(header: FileHeader) -> str:
    saved = header.saved_time()
    return saved.astimezone().strftime("%Y-%m-%d %H:%M") if saved else "unknown time"


def _set_aside_name(path: Path, header: FileHeader | None) -> Path:
    saved = header.saved_time() if header is not None else None
    stamp = (saved or datetime.now().astimezone()).astimezone().strftime("%Y%m%d-%H%M%S")
    base = path.name.removesuffix(".jsonl")
    candidate = path.with_name(f"{base}.{stamp}.jsonl")
    number = 1
    while candidate.exists():
        candidate = path.with_name(f"{base}.{stamp}-{number}.jsonl")
        number += 1
    return candidate


def _model_name(model: Model) -> str:
    return f"{model.provider}/{model.id}"


# -- restoring -----------------------------------------------------------------------------------


def _find_model(spec: str, namespace: Mapping[str, Any]) -> Model | None:
    """A Model (or faux provider's model) in the namespace whose ``provider/id`` is ``spec``."""
    for value in list(namespace.values()):
        candidates: list[Model] = []
        if isinstance(value, Model):
            candidates = [value]
        elif isinstance(value, FauxProvider):
            candidates = list(value.models)
        for model in candidates:
            if _model_name(model) == spec:
                return model
    return None


def _restore_model(
    agent: Agent, spec: str, session: NotebookSession, namespace: Mapping[str, Any]
) -> str:
    """Give ``agent`` the model named ``spec`` if it can be had; a note on what happened."""
    current = agent.state.model
    if _model_name(current) == spec:
        return f"model {spec}"
    found = _find_model(spec, namespace)
    try:
        model = found if found is not None else model_from_name(spec, namespace)
        session.set_model(agent, model, "%agent resume")
    except ModelError as exc:
        keeping = "no model yet" if current.provider == "unknown" else _model_name(current)
        return f"model {spec} is not available here ({exc}); keeping {keeping}"
    return f"model {spec}"


@dataclass
class Saver:
    """Writes one conversation's file after each of its runs; the
    :class:`~.conversation.Conversation` keeps it (``conversation.saver``)."""

    key: str
    agent: weakref.ref[Agent]
    unsubscribe: Callable[[], None]
    namespace: MutableMapping[str, Any]
    report: Report
    cache: LineCache = field(default_factory=LineCache)


class Conversations:
    """The kernel's saved conversations: which agent saves where, and what it may overwrite."""

    def __init__(self) -> None:
        self._savers: dict[str, Saver] = {}
        """The saver writing each conversation name's file (one agent per name)."""
        self._owned: set[Path] = set()
        """Files this kernel wrote or resumed: its own to overwrite."""
        self._stopped: set[Path] = set()
        """Files not written (corrupt, another version, not writable): said once."""
        self._guard = FileGuard(KERNEL_ID)
        """Which files this kernel wrote last: another kernel's save is never overwritten."""

    # -- saving ------------------------------------------------------------------------------

    def track(
        self, key: str, agent: Agent, namespace: MutableMapping[str, Any], report: Report
    ) -> Saver:
        """Save ``agent`` as conversation ``key`` after each of its runs (idempotent); the
        :class:`Saver` doing it."""
        tracked = self._savers.get(key)
        if tracked is not None:
            if tracked.agent() is agent:
                tracked.namespace, tracked.report = namespace, report
                return tracked
            tracked.unsubscribe()  # ``--new``: the name now belongs to another agent

        def on_event(event: AgentEvent) -> None:
            match event:
                case AgentEndEvent():
                    self.save(key)
                case _:
                    pass

        unsubscribe = agent.subscribe(on_event)
        saver = Saver(key, weakref.ref(agent), unsubscribe, namespace, report)
        self._savers[key] = saver
        return saver

    def path_of(self, key: str, namespace: Mapping[str, Any]) -> Path | None:
        """Where ``key`` is saved automatically; ``None`` without a notebook path."""
        notebook = notebook_path(namespace)
        return file_for(notebook, key) if notebook is not None else None

    def save(self, key: str) -> Path | None:
        """Write conversation ``key`` to its file now (the ``agent_end`` listener calls it)."""
        tracked = self._savers.get(key)
        agent = tracked.agent() if tracked is not None else None
        if tracked is None or agent is None or not settings.sessions_on():
            return None
        path = self.path_of(key, tracked.namespace)
        if path is None or path in self._stopped:
            return None
        try:
            path = self._unclobbered(path, tracked.report)
            if path not in self._owned and path.exists():
                self._claim(path, tracked.report)
            lines = tracked.cache.lines(agent.state.messages)
            write(path, self._header(key, agent, tracked.namespace), lines)
            self._guard.remember(path)
        except TranscriptFileError as exc:
            self._stop(path, f"{exc}; not saving this conversation there", tracked.report)
            return None
        except Exception as exc:  # a full disk, a read-only folder, a message that is not JSON
            self._stop(path, f"cannot save the conversation to {path}: {exc}", tracked.report)
            return None
        self._owned.add(path)
        return path

    def _unclobbered(self, path: Path, report: Report) -> Path:
        """Where to save what belongs at ``path``: there, unless another kernel (the notebook
        open twice) saved there since this one did; then beside it, said once."""
        target = self._guard.target(path)
        if target != path or path not in self._owned or not self._guard.written_since(path):
            return target
        beside = self._guard.divert(path)
        self._owned.add(beside)
        report(
            f"pi_notebook: another kernel (is the notebook open twice?) saved this conversation "
            f"to {path.name} after this kernel did; that file is kept as it is, and this "
            f"kernel's conversation is saved as {beside.name} from now on "
            f"(%agent load {beside} restores it)"
        )
        return beside

    def _claim(self, path: Path, report: Report) -> None:
        """A file from before this kernel: set it aside (never overwritten); raise if it is
        not a conversation file of this version (then it is left alone)."""
        header = read(path).header  # the whole file: a corrupt one is left alone
        if header is not None and header.kernel == KERNEL_ID:
            return
        aside = _set_aside_name(path, header)
        os.replace(path, aside)
        when = _when(header) if header is not None else "unknown time"
        report(
            f"pi_notebook: the conversation saved in {path.name} ({when}) was not "
            f"resumed, so it is kept as {aside.name}; %agent load {aside} restores it"
        )

    def _stop(self, path: Path, text: str, report: Report) -> None:
        if path not in self._stopped:
            self._stopped.add(path)
            report(f"pi_notebook: {redact(text)}")

    def _header(self, key: str, agent: Agent, namespace: Mapping[str, Any]) -> FileHeader:
        state = agent.state
        notebook = notebook_path(namespace)
        return FileHeader(
            conversation=key,
            notebook=notebook.name if notebook is not None else None,
            model=_model_name(state.model) if state.model.provider != "unknown" else None,
            system_prompt=redact(state.system_prompt) if state.system_prompt else None,
            thinking_level=str(state.thinking_level),
            saved_at=now_iso(),
            kernel=KERNEL_ID,
        )

    def save_to(self, path: Path, agent: Agent, key: str, namespace: Mapping[str, Any]) -> int:
        """``%agent save PATH``: write ``agent``'s conversation to any file; the message count.
        An existing file must be one of ours of this version (anything else is left alone)."""
        try:
            check_writable(path)
            write(
                path, self._header(key, agent, namespace), LineCache().lines(agent.state.messages)
            )
        except TranscriptFileError as exc:
            raise ConversationError(f"{exc}; not written over") from None
        except OSError as exc:
            raise ConversationError(f"cannot write {path}: {exc}") from None
        return len(agent.state.messages)

    # -- restoring -----------------------------------------------------------------------------

    def summary(self, namespace: Mapping[str, Any]) -> str | None:
        """The ``%load_ext`` line: the saved conversations of this notebook, or ``None``."""
        if not settings.sessions_on():
            return None
        notebook = notebook_path(namespace)
        if notebook is None:
            return None
        parts: list[str] = []
        keys: list[str] = []
        for key, path in saved_files(notebook):
            keys.append(key)
            try:
                header = read_header(path)  # the first line only: the body is read on resume
            except TranscriptFileError:
                parts.append(f"{key} (unreadable: %agent resume {key} says why)")
                continue
            count = header.messages
            counted = "" if count is None else f"{count} message{'' if count == 1 else 's'}, "
            parts.append(f"{key} ({counted}saved {_when(header)})")
        if not parts:
            return None
        if len(parts) == 1:
            command = "%agent resume" + ("" if keys[0] == DEFAULT else f" {keys[0]}")
            return (
                f"pi_notebook: a saved conversation for {notebook.name}: {parts[0]}; "
                f"{command} loads it"
            )
        return (
            f"pi_notebook: saved conversations for {notebook.name}: {', '.join(parts)}; "
            "%agent resume [NAME] loads one"
        )

    def restore(
        self,
        conversation: Conversation,
        loaded: Loaded,
        session: NotebookSession,
        namespace: Mapping[str, Any],
        *,
        count_cost: bool = False,
    ) -> str:
        """Put ``loaded`` into the conversation's Agent; what was restored, as one line's tail
        (see :mod:`.resume_checks` for what is checked). Unless ``count_cost``, the
        conversation's budget does not count what the loaded messages cost
        (``Conversation.budget_baseline``)."""
        agent = conversation.agent
        messages, dropped = drop_unanswering_results(loaded.messages)
        messages, repairs = close_unanswered_calls(messages)
        agent.state.messages = messages
        notes = [f"{len(messages)} message{'' if len(messages) == 1 else 's'}"]
        header = loaded.header
        if header is not None:
            if header.saved_at:
                notes[0] += f" saved {_when(header)}"
            if header.model:
                notes.append(_restore_model(agent, header.model, session, namespace))
            if header.system_prompt is not None:
                agent.state.system_prompt = header.system_prompt
                if header.system_prompt != DEFAULT_SYSTEM_PROMPT:  # the default goes unsaid
                    notes.append(f"system prompt {prompt_preview(header.system_prompt)}")
            level, refused = thinking_level(header.thinking_level)
            if level is not None:
                agent.state.thinking_level = level
            if refused:
                notes.append(f"{refused} (kept {agent.state.thinking_level})")
        if dropped:
            notes.append(
                f"{dropped} tool result{'' if dropped == 1 else 's'} answering no call dropped"
            )
        if repairs:
            notes.append(
                f"{repairs} tool call{'' if repairs == 1 else 's'} left without a result closed"
            )
        conversation.budget_baseline = uncounted_cost(agent.spent, count_cost)
        if conversation.budget_baseline > 0:
            notes.append(
                f"its recorded cost ({format_usd(conversation.budget_baseline)}) is not counted "
                "against a budget (--count-cost counts it)"
            )
        return ", ".join(notes)

    def resume(
        self,
        key: str,
        conversation: Conversation,
        session: NotebookSession,
        namespace: MutableMapping[str, Any],
        report: Report,
        *,
        count_cost: bool = False,
    ) -> str:
        """``%agent resume [NAME]``: load conversation ``key``'s file into ``conversation``."""
        notebook = notebook_path(namespace)
        if notebook is None:
            raise ConversationError(
                f"%agent resume: the notebook's path is unknown (no {NOTEBOOK_PATH.variable} or "
                "__vsc_ipynb_file__), so nothing was saved automatically; use %agent load PATH"
            )
        path = file_for(notebook, key)
        if not path.exists():
            others = [name for name, _ in saved_files(notebook)]
            listed = f" (saved: {', '.join(others)})" if others else ""
            raise ConversationError(f"%agent resume: no saved conversation {key!r}{listed}")
        stamp = stamp_of(path)  # before reading: a save by another kernel meanwhile shows
        try:
            loaded = read(path)
        except TranscriptFileError as exc:
            raise ConversationError(f"%agent resume: {exc}") from None
        text = self.restore(conversation, loaded, session, namespace, count_cost=count_cost)
        self._owned.add(path)  # it continues here: the next save overwrites it
        self._guard.remember(path, stamp)
        self._guard.forget_diversion(path)
        self._stopped.discard(path)
        self.track(key, conversation.agent, namespace, report)
        return (
            f"resumed {key}: {text} "
            "(tools and approvals are not saved: set them with --tools / --approve)"
        )

    def load(
        self,
        path: Path,
        conversation: Conversation,
        session: NotebookSession,
        namespace: MutableMapping[str, Any],
        key: str | None = None,
        *,
        count_cost: bool = False,
    ) -> str:
        """``%agent load PATH``: any conversation file (ours, or a Pi transcript) into
        ``conversation``; ``key`` is the name the conversation saves under, if it saves."""
        stamp = stamp_of(path)
        try:
            loaded = read(path)
        except TranscriptFileError as exc:
            raise ConversationError(f"%agent load: {exc}") from None
        text = self.restore(conversation, loaded, session, namespace, count_cost=count_cost)
        own = self.path_of(key, namespace) if key is not None else None
        if own is not None and own.resolve() == path.resolve():
            self._owned.add(own)  # the conversation's own file, loaded by path: as a resume
            self._guard.remember(own, stamp)
            self._guard.forget_diversion(own)
        return f"loaded {path.name}: {text}"


_conversations = Conversations()


def get_conversations() -> Conversations:
    return _conversations


__all__ = [
    "DEFAULT",
    "FOLDER",
    "KERNEL_ID",
    "ConversationError",
    "Conversations",
    "Saver",
    "file_for",
    "get_conversations",
    "key_of",
    "notebook_path",
    "saved_files",
]

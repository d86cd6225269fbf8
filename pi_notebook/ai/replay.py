"""Record a real provider's streamed replies to a file, and replay them as a scripted model.

``record(model, path)`` returns a model that talks to ``model``'s real provider and writes every
call to ``path`` (JSON lines): the request's conversation (system prompt, messages, tools, with
timestamps and usage left out) and the streamed events of the reply. ``replay(path)`` returns a
model that answers from that file with no network and no key: each request must match the
recorded conversation entry for entry, or the reply is an ``error`` event naming the first
difference ("replay diverged ..."). ``recorded(path, model)`` records when
``PI_NOTEBOOK_RECORD=1`` is set and replays otherwise, so a notebook written against a real model
stays testable (strict nbval) without keys. ``write_recording(path, model, system_prompt,
messages, tools)`` writes the recording a conversation would have made (a saved transcript:
one delta per block), so it replays the same way.

Like every provider these never raise out of a stream. A recording holds message contents, never
API keys or request headers, and every text in it is redacted (``pi_notebook.ai.redact``): the
conversation entries (on both sides, so a replay of a conversation that carried a secret still
matches), the final message, and the deltas of a block whose text held one (collapsed into one
redacted delta, since a secret is usually split across deltas).
"""

from __future__ import annotations

import hashlib
import itertools
import json
import os
from collections.abc import AsyncIterator, Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..settings import RECORD
from .awaitables import maybe_await
from .event_stream import AssistantMessageEventStream, final_message, is_terminal, terminal_event
from .events import (
    AssistantMessageEvent,
    DoneEvent,
    ErrorEvent,
    StartEvent,
    TextDeltaEvent,
    TextEndEvent,
    TextStartEvent,
    ThinkingDeltaEvent,
    ThinkingEndEvent,
    ThinkingStartEvent,
    ToolCallDeltaEvent,
    ToolCallEndEvent,
    ToolCallStartEvent,
    dump_event,
)
from .partial import (
    RawArguments,
    aborted_event,
    end_event,
    grow_text,
    grow_thinking,
    grow_tool_call,
)
from .registry import register_api_provider, stream, unregister_api_provider
from .secrets import redact, redact_data
from .types import (
    AssistantMessage,
    Context,
    Model,
    StreamOptions,
    TextContent,
    ThinkingContent,
    Tool,
    ToolCall,
    empty_reply,
    now_ms,
)

FORMAT = "pi-notebook-replay"
VERSION = 2
"""2: event records in Pi's camelCase (``contentIndex``, ``toolCall``); 1: snake_case."""
RECORD_ENV = RECORD.variable
REPLAY_PROVIDER = "replay"

#: Message fields that differ between two runs of the same conversation.
_VOLATILE = frozenset({"timestamp", "usage", "responseId", "responseModel", "diagnostics"})
_SHOWN = 160


class ReplayError(ValueError):
    """A recording cannot be read (missing, not a recording, or a newer format)."""


class ReplayDivergence(AssertionError):
    """A replayed conversation differs from its recording (raised by :func:`check_replay`)."""


DIVERGENCE = "replayDivergence"
"""The ``diagnostics`` entry type marking a reply that reports a divergence."""


# -- the conversation fingerprint --------------------------------------------------------------


def _canonical(value: Any) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def _message_entry(message: Any) -> dict[str, Any]:
    if hasattr(message, "to_json_dict"):
        data: dict[str, Any] = message.to_json_dict()
    else:
        data = dict(message)
    role = data.get("role")
    kept = {k: v for k, v in data.items() if k not in _VOLATILE}
    if role == "assistant":
        # Which API/provider/model wrote a reply is metadata, not conversation.
        for name in ("api", "provider", "model"):
            kept.pop(name, None)
    if role == "toolResult":
        kept.pop("details", None)  # app data for UIs; a model never sees it
    return kept


def conversation_entries(context: Context) -> list[str]:
    """A request as comparable lines: the system prompt, each message, the tools (redacted)."""
    entries = [_canonical({"system": context.system_prompt or ""})]
    entries.extend(_canonical(_message_entry(m)) for m in context.messages)
    tools = [
        {"name": t.name, "description": t.description, "parameters": t.json_schema()}
        for t in context.tools or []
    ]
    entries.append(_canonical({"tools": tools}))
    return [redact(entry) for entry in entries]


def fingerprint(entries: list[str]) -> str:
    return hashlib.sha256("\n".join(entries).encode("utf-8")).hexdigest()


def _short(text: str) -> str:
    return text if len(text) <= _SHOWN else text[: _SHOWN - 3] + "..."


def describe_divergence(recorded: list[str], actual: list[str]) -> str:
    """One line naming the first entry where two conversations differ."""
    for index, (want, got) in enumerate(zip(recorded, actual, strict=False)):
        if want != got:
            return f"entry {index}: recorded {_short(want)} but got {_short(got)}"
    if len(actual) > len(recorded):
        return f"entry {len(recorded)}: unexpected extra {_short(actual[len(recorded)])}"
    return f"entry {len(actual)}: missing {_short(recorded[len(actual)])}"


# -- event records ---------------------------------------------------------------------------------


def _event_record(event: AssistantMessageEvent) -> dict[str, Any]:
    """An event's Pi JSON without its ``partial`` (rebuilt on replay from the deltas) and
    without the final message of a terminal event (the call's ``message`` holds it)."""
    record = dump_event(event)
    for name in ("partial", "message", "error"):
        record.pop(name, None)
    return record


_V1_NAMES = {"content_index": "contentIndex", "tool_call": "toolCall"}


def _v1_record(record: dict[str, Any]) -> dict[str, Any]:
    """A version-1 event record (snake_case names) in today's spelling."""
    return {_V1_NAMES.get(name, name): value for name, value in record.items()}


_DELTAS = frozenset(("text_delta", "thinking_delta", "toolcall_delta"))


def _redacted_events(records: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """``records`` with secrets out: a block whose joined deltas held one gets one redacted
    delta (the first one's place) instead of its deltas; end records are redacted as they are."""
    joined: dict[tuple[str, int], list[str]] = {}
    for record in records:
        if record["type"] in _DELTAS:
            joined.setdefault((record["type"], record["contentIndex"]), []).append(record["delta"])
    collapsed: dict[tuple[str, int], str] = {}
    for key, parts in joined.items():
        text = "".join(parts)
        redacted = redact(text)
        if redacted != text:
            collapsed[key] = redacted
    out: list[dict[str, Any]] = []
    written: set[tuple[str, int]] = set()
    for record in records:
        if record["type"] in _DELTAS:
            key = (record["type"], record["contentIndex"])
            if key in collapsed:
                if key not in written:  # the block's first delta carries all of it
                    out.append({**record, "delta": collapsed[key]})
                    written.add(key)
                continue
        elif "content" in record or "toolCall" in record:
            record = redact_data(record)
        out.append(record)
    return out


@dataclass
class RecordedCall:
    """One model call of a recording."""

    entries: list[str]
    events: list[dict[str, Any]]
    message: dict[str, Any]

    def to_line(self, index: int) -> str:
        return _canonical(
            {
                "kind": "call",
                "index": index,
                "fingerprint": fingerprint(self.entries),
                "context": self.entries,
                "events": self.events,
                "message": self.message,
            }
        )


# -- recording -----------------------------------------------------------------------------------

_registered = itertools.count(1)


def _header(model: Model) -> str:
    described = model.to_json_dict()
    described.pop("headers", None)  # may carry credentials
    header = {"kind": "header", "format": FORMAT, "version": VERSION}
    return _canonical({**header, "model": redact_data(described)})


@dataclass
class Recorder:
    """The handle of a :func:`record` model: where it writes and how many calls it wrote."""

    model: Model
    target: Model
    path: Path
    calls: int = 0

    def assert_complete(self) -> None:
        """What :meth:`Player.assert_complete` checks on replay; a recording cannot diverge."""
        if self.calls == 0:
            raise AssertionError(f"recording {self.path.name}: no model call was recorded")

    def _append(self, call: RecordedCall) -> None:
        with self.path.open("a", encoding="utf-8") as file:
            file.write(call.to_line(self.calls) + "\n")
        self.calls += 1

    def stream(
        self, model: Model, context: Context, options: StreamOptions | None = None
    ) -> AssistantMessageEventStream:
        return AssistantMessageEventStream.from_events(self._tee(context, options))

    async def _tee(
        self, context: Context, options: StreamOptions | None
    ) -> AsyncIterator[AssistantMessageEvent]:
        entries = conversation_entries(context)
        try:
            response = await maybe_await(stream(self.target, context, options))
        except Exception as exc:  # e.g. no provider for the wrapped model's API: never raise
            text = f"recording failed: {exc or type(exc).__name__}"
            yield _failure(self.model, text, diverged=False)
            return
        events: list[dict[str, Any]] = []
        async for event in response:
            events.append(_event_record(event))
            if is_terminal(event):
                message = redact_data(final_message(event).to_json_dict())
                self._append(RecordedCall(entries, _redacted_events(events), message))
            yield event


def record(model: Model, path: str | os.PathLike[str]) -> Model:
    """A model that streams from ``model``'s provider and records each call to ``path``.

    The file is started afresh. The returned model keeps ``model``'s provider, id and costs
    (so API-key checks still apply); only its ``api`` names the recording wrapper.
    """
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(_header(model) + "\n", encoding="utf-8")
    api = f"record-{next(_registered)}"
    wrapper = model.model_copy(update={"api": api})
    recorder = Recorder(wrapper, model, target)
    register_api_provider(api, recorder.stream)
    _handles[api] = recorder
    return wrapper


def _reply_events(message: AssistantMessage) -> list[AssistantMessageEvent]:
    """The events a provider would have streamed for ``message``: one delta per block."""
    events: list[AssistantMessageEvent] = [StartEvent(message)]
    for index, block in enumerate(message.content):
        if isinstance(block, TextContent):
            events.append(TextStartEvent(index, message))
            if block.text:
                events.append(TextDeltaEvent(index, block.text, message))
            events.append(TextEndEvent(index, block.text, message))
        elif isinstance(block, ThinkingContent):
            events.append(ThinkingStartEvent(index, message))
            if block.thinking:
                events.append(ThinkingDeltaEvent(index, block.thinking, message))
            events.append(ThinkingEndEvent(index, block.thinking, message))
        elif isinstance(block, ToolCall):
            events.append(ToolCallStartEvent(index, message))
            arguments = json.dumps(block.arguments, ensure_ascii=False)
            events.append(ToolCallDeltaEvent(index, arguments, message))
            events.append(ToolCallEndEvent(index, block, message))
    reason = message.stop_reason
    if reason == "aborted" or reason == "error":
        events.append(ErrorEvent(reason, message))
    else:
        events.append(DoneEvent(reason, message))
    return events


def write_recording(
    path: str | os.PathLike[str],
    model: Model,
    system_prompt: str,
    messages: Sequence[Any],
    tools: Sequence[Tool] = (),
) -> int:
    """Write a recording of a conversation that was not recorded (a saved transcript, say):
    a call per assistant message of ``messages`` (LLM messages), its request the conversation
    before it with ``tools``, its reply streamed as one delta per block. Returns the number of
    calls; the file is started afresh and redacted as :func:`record` redacts."""
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    lines = [_header(model)]
    for position, message in enumerate(messages):
        if not isinstance(message, AssistantMessage):
            continue
        context = Context(
            system_prompt=system_prompt, messages=list(messages[:position]), tools=list(tools)
        )
        events = [_event_record(event) for event in _reply_events(message)]
        reply = redact_data(message.to_json_dict())
        call = RecordedCall(conversation_entries(context), _redacted_events(events), reply)
        lines.append(call.to_line(len(lines) - 1))
    target.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    return len(lines) - 1


# -- replay --------------------------------------------------------------------------------------


def load_recording(path: str | os.PathLike[str]) -> tuple[dict[str, Any], list[RecordedCall]]:
    """The header's model description and the recorded calls; raises :class:`ReplayError`."""
    source = Path(path)
    try:
        lines = source.read_text(encoding="utf-8").splitlines()
    except OSError as exc:
        raise ReplayError(f"cannot read recording {str(source)!r}: {exc.strerror}") from None
    try:
        records = [json.loads(line) for line in lines if line.strip()]
    except json.JSONDecodeError as exc:
        raise ReplayError(
            f"{source.name}: not a recording (line {exc.lineno}: {exc.msg})"
        ) from None
    if not records or records[0].get("kind") != "header" or records[0].get("format") != FORMAT:
        raise ReplayError(f"{source.name}: not a {FORMAT} recording (no header line)")
    if records[0].get("version", 0) > VERSION:
        raise ReplayError(f"{source.name}: format version {records[0]['version']} is newer")
    upgrade = _v1_record if records[0].get("version", 0) < 2 else dict
    calls = [
        RecordedCall(list(r["context"]), [upgrade(e) for e in r["events"]], dict(r["message"]))
        for r in records[1:]
        if r.get("kind") == "call"
    ]
    return dict(records[0].get("model") or {}), calls


@dataclass
class Player:
    """The handle of a :func:`replay` model: the recording and how far the replay got."""

    model: Model
    path: Path
    calls: list[RecordedCall]
    position: int = 0
    divergences: list[str] = field(default_factory=list)

    @property
    def remaining(self) -> int:
        return len(self.calls) - self.position

    def assert_complete(self) -> None:
        """Raise :class:`AssertionError` if the replay diverged or left recorded calls unused."""
        if self.divergences:
            raise AssertionError(self.divergences[0])
        if self.remaining:
            raise AssertionError(
                f"replay of {self.path.name}: {self.remaining} recorded call(s) never requested"
            )

    def stream(
        self, model: Model, context: Context, options: StreamOptions | None = None
    ) -> AssistantMessageEventStream:
        entries = conversation_entries(context)
        index = self.position
        problem: str | None = None
        call: RecordedCall | None = None
        if index >= len(self.calls):
            problem = (
                f"replay diverged from {self.path.name}: call {index + 1} was requested but "
                f"only {len(self.calls)} were recorded"
            )
        else:
            call = self.calls[index]
            if call.entries != entries:
                problem = (
                    f"replay diverged from {self.path.name} at call {index + 1}, "
                    + describe_divergence(call.entries, entries)
                )
        if problem is not None or call is None:
            text = problem or "replay diverged"
            self.divergences.append(text)
            return AssistantMessageEventStream.from_events(_single(_failure(model, text)))
        self.position += 1
        return AssistantMessageEventStream.from_events(_play(call, options))


async def _single(event: AssistantMessageEvent) -> AsyncIterator[AssistantMessageEvent]:
    yield event


def _failure(model: Model, text: str, *, diverged: bool = True) -> ErrorEvent:
    """An ``error`` event; ``diverged`` marks it as a replay divergence (see check_replay)."""
    diagnostics = [{"type": DIVERGENCE, "message": text}] if diverged else None
    message = empty_reply(model, "error", text, diagnostics=diagnostics)
    return ErrorEvent("error", message)


def check_replay(messages: Sequence[Any]) -> None:
    """Raise :class:`ReplayDivergence` if one of ``messages`` is a replay's divergence report.

    The ``%%agent`` magic calls it after a run, so a diverged replay fails the cell.
    """
    for message in messages:
        for entry in getattr(message, "diagnostics", None) or []:
            if isinstance(entry, dict) and entry.get("type") == DIVERGENCE:
                raise ReplayDivergence(str(entry.get("message", "replay diverged")))


async def _play(
    call: RecordedCall, options: StreamOptions | None
) -> AsyncIterator[AssistantMessageEvent]:
    """Re-stream a recorded reply, rebuilding the partial message from the deltas."""
    final = AssistantMessage.model_validate(call.message)
    final.timestamp = now_ms()
    partial = final.model_copy(update={"content": []})
    content = partial.content
    raw_arguments: RawArguments = {}
    signal = options.signal if options else None
    for record in call.events:
        if signal is not None and signal.aborted:
            yield aborted_event(partial)
            return
        kind = record["type"]
        index = record.get("contentIndex", 0)
        if kind == "start":
            yield StartEvent(partial)
        elif kind in _STARTS:
            start_event, make = _STARTS[kind]
            content.append(make(final, index))
            yield start_event(index, partial)
        elif kind == "text_delta":
            yield grow_text(partial, index, record["delta"])
        elif kind == "thinking_delta":
            yield grow_thinking(partial, index, record["delta"])
        elif kind == "toolcall_delta":
            yield grow_tool_call(partial, index, raw_arguments, record["delta"])
        elif kind in ("text_end", "thinking_end"):
            # The final block's text is the recorded ``content`` (the recorder saw both).
            content[index] = final.content[index].model_copy()
            yield end_event(partial, index)
        elif kind == "toolcall_end":
            content[index] = ToolCall.model_validate(record["toolCall"])
            yield end_event(partial, index)
        elif kind == "done":
            yield DoneEvent(record["reason"], final)
            return
        elif kind == "error":
            yield ErrorEvent(record["reason"], final)
            return
    # A recording cut short (the recorded stream never ended): end it as the protocol demands.
    yield terminal_event(final)


def _text_block(final: AssistantMessage, index: int) -> TextContent:
    return TextContent(text="")


def _thinking_block(final: AssistantMessage, index: int) -> ThinkingContent:
    return ThinkingContent(thinking="")


def _tool_block(final: AssistantMessage, index: int) -> ToolCall:
    recorded = final.content[index] if index < len(final.content) else None
    if isinstance(recorded, ToolCall):
        return ToolCall(id=recorded.id, name=recorded.name, arguments={})
    return ToolCall(id="", name="", arguments={})


_STARTS: dict[
    str,
    tuple[
        Callable[[int, AssistantMessage], AssistantMessageEvent],
        Callable[[AssistantMessage, int], TextContent | ThinkingContent | ToolCall],
    ],
] = {
    "text_start": (TextStartEvent, _text_block),
    "thinking_start": (ThinkingStartEvent, _thinking_block),
    "toolcall_start": (ToolCallStartEvent, _tool_block),
}


def replay(path: str | os.PathLike[str]) -> Model:
    """A keyless model that replays the recording at ``path``; raises :class:`ReplayError`.

    Its id, name, costs and limits are the recorded model's; its provider is ``replay``.
    """
    source = Path(path)
    described, calls = load_recording(source)
    api = f"replay-{next(_registered)}"
    fields = {k: v for k, v in described.items() if k not in ("api", "provider", "baseUrl")}
    fields.setdefault("id", source.stem)
    model = Model.model_validate(
        {**fields, "api": api, "provider": REPLAY_PROVIDER, "baseUrl": "replay://" + source.name}
    )
    player = Player(model, source, calls)
    register_api_provider(api, player.stream)
    _handles[api] = player
    return model


def recorded(path: str | os.PathLike[str], model: Model | Callable[[], Model]) -> Model:
    """Record ``model`` to ``path`` when ``PI_NOTEBOOK_RECORD`` is on (``1``), else replay ``path``.

    ``model`` may be a callable, so the real model (and its key check) is only built when
    recording.
    """
    if RECORD.value():
        real = model() if callable(model) else model
        return record(real, path)
    return replay(path)


_handles: dict[str, Recorder | Player] = {}


def handle_of(model: Model) -> Recorder | Player:
    """The :class:`Recorder` or :class:`Player` behind a :func:`record` / :func:`replay` model."""
    try:
        return _handles[model.api]
    except KeyError:
        raise ValueError(f"{model.provider}/{model.id} is not a record or replay model") from None


def forget(model: Model) -> None:
    """Unregister a record or replay model."""
    _handles.pop(model.api, None)
    unregister_api_provider(model.api)


__all__ = [
    "DIVERGENCE",
    "RECORD_ENV",
    "Player",
    "RecordedCall",
    "Recorder",
    "ReplayDivergence",
    "ReplayError",
    "check_replay",
    "conversation_entries",
    "describe_divergence",
    "forget",
    "handle_of",
    "load_recording",
    "record",
    "recorded",
    "replay",
    "write_recording",
]

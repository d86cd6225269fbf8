"""``%agent replay PATH``: a recorded run played back through the same loop and panel, no model.

A recording (``pi_notebook.ai.replay``) holds each model call: the conversation the model was
sent and the streamed reply. That is enough to rebuild the run: the first request gives the
system prompt, the history and the prompt; the replay model answers each request from the file
(and reports a divergence if the loop asks something else); stand-in tools with the recorded
names and schemas return the recorded results; a user message that entered the conversation
between two calls (a steer, a follow-up, the next cell's prompt) is queued as steering while
the earlier reply's turn runs, so the loop delivers it at the same turn boundary.

What a model call cannot show (which tool finished first in a parallel batch, a tool's progress
updates, a ``terminate``, the results of a last batch no model call saw) comes from ``tool``
lines, which the ``%%agent`` magic appends to a recording while a run on a :func:`record`
model executes tools (:class:`ToolRecorder`; the recorder's readers skip them), with how long
each call ran (``durationMs``, :mod:`.tool_clock`: the panel's cards and timeline show it, as
the replay runs no tool). Without them the tools finish in call order and a last batch's
results are marked as not recorded; a line without ``durationMs`` (older) still reads.

A saved conversation (:mod:`.transcript_file`) replays through a recording written from its
messages (``pi_notebook.ai.replay.write_recording``) plus a ``tool`` line per tool result, in a
temporary folder: see :func:`_plan_saved` for what such a file cannot give.

The replay is deterministic: no pacing, no clock. This module must never call a provider or run
a user's tool, and never write to a recording it replays.
"""

from __future__ import annotations

import asyncio
import json
import math
import os
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..agent import (
    AfterToolCallContext,
    AfterToolCallResult,
    Agent,
    AgentEvent,
    AgentTool,
    AgentToolResult,
    MessageEndEvent,
    ToolExecutionEndEvent,
    ToolExecutionUpdateEvent,
    TurnContext,
)
from ..ai import (
    AbortSignal,
    AgentMessage,
    AssistantMessage,
    Model,
    Tool,
    ToolCall,
    ToolResultMessage,
    parse_agent_message,
    redact_data,
)
from ..ai.replay import (
    Player,
    RecordedCall,
    Recorder,
    ReplayError,
    handle_of,
    load_recording,
    replay,
    write_recording,
)
from .tool_clock import ToolClock
from .transcript_file import TranscriptFileError
from .transcript_file import read as read_conversation

TOOL_LINE = "tool"
#: Progress updates kept per tool call in a ``tool`` line (the first ones).
MAX_UPDATES = 50
NOT_RECORDED = "[replay: no result was recorded for this tool call]"
STAND_IN = "(replayed from a saved conversation, which keeps no tool schemas)"
_LLM_ROLES = ("user", "assistant", "toolResult")


# -- recording the tools of a run ---------------------------------------------------------------


class ToolRecorder:
    """An agent listener appending a ``tool`` line per finished tool call to a recording."""

    def __init__(self, agent: Agent, path: Path, clock: ToolClock | None = None) -> None:
        self.agent = agent
        self.path = path
        self.order = 0
        self.clock = clock or ToolClock(agent)
        self._updates: dict[str, list[Any]] = {}

    def __call__(self, event: AgentEvent) -> None:
        self.clock(event)
        match event:
            case ToolExecutionUpdateEvent():
                kept = self._updates.setdefault(event.tool_call_id, [])
                if len(kept) < MAX_UPDATES:
                    kept.append(_content(event.partial_result))
            case ToolExecutionEndEvent():
                self._write(event)
            case _:
                pass

    def _write(self, event: ToolExecutionEndEvent) -> None:
        result = event.result
        tool = next((t for t in self.agent.state.tools if t.name == event.tool_name), None)
        line: dict[str, Any] = {
            "kind": TOOL_LINE,
            "order": self.order,
            "toolCallId": event.tool_call_id,
            "toolName": event.tool_name,
            "content": _content(result),
            "isError": bool(event.is_error),
            "terminate": bool(getattr(result, "terminate", False)),
            "details": getattr(result, "details", None),
            "updates": self._updates.pop(event.tool_call_id, []),
            "toolExecution": self.agent.tool_execution,
            "executionMode": tool.execution_mode if tool is not None else None,
            "durationMs": self.clock.duration_ms(event.tool_call_id),
        }
        self.order += 1
        with self.path.open("a", encoding="utf-8") as file:
            file.write(_tool_line_text(line) + "\n")


def _tool_line_text(line: dict[str, Any]) -> str:
    plain = json.loads(json.dumps(line, default=str))  # then every text is redacted
    return json.dumps(redact_data(plain), ensure_ascii=False)


def _content(result: Any) -> list[Any]:
    blocks = getattr(result, "content", None) or []
    return [b.to_json_dict() if hasattr(b, "to_json_dict") else b for b in blocks]


def record_tools(agent: Agent) -> ToolRecorder | None:
    """A :class:`ToolRecorder` for ``agent``'s run if its model records (else None)."""
    try:
        handle = handle_of(agent.state.model)
    except ValueError:
        return None
    return ToolRecorder(agent, handle.path) if isinstance(handle, Recorder) else None


# -- reading a recording -------------------------------------------------------------------------


@dataclass
class RecordedResult:
    content: list[Any]
    is_error: bool = False
    terminate: bool = False
    details: Any = None
    updates: list[list[Any]] = field(default_factory=list)
    order: float = math.inf
    usage: Any = None
    added_tool_names: list[str] | None = None
    duration_ms: float | None = None
    """How long the call ran when recorded (None: an older recording, or no ``tool`` line)."""


@dataclass
class ReplayPlan:
    """Everything a replay needs, read from one recording."""

    path: Path
    model: Model
    system_prompt: str
    history: list[AgentMessage]
    prompts: list[AgentMessage]
    tools: list[AgentTool]
    results: dict[str, RecordedResult]
    injections: dict[int, list[AgentMessage]]
    """Per reply (0-based): the user messages the next request had on top of the results."""
    tool_execution: str = "parallel"
    driver: ReplayDriver | None = None

    @property
    def durations(self) -> dict[str, float]:
        """Tool call id -> the milliseconds it ran when recorded (the panel shows them)."""
        return {k: r.duration_ms for k, r in self.results.items() if r.duration_ms is not None}

    @property
    def player(self) -> Player:
        handle = handle_of(self.model)
        assert isinstance(handle, Player)
        return handle


def _tool_lines(path: Path) -> list[dict[str, Any]]:
    lines = []
    for text in path.read_text(encoding="utf-8").splitlines():
        if '"kind"' in text and f'"{TOOL_LINE}"' in text:
            record = json.loads(text)
            if record.get("kind") == TOOL_LINE:
                lines.append(record)
    return lines


def _parse(entry: str, described: dict[str, Any]) -> AgentMessage:
    data = json.loads(entry)
    if data.get("role") == "assistant":  # the recording leaves out who wrote a reply
        data.setdefault("api", str(described.get("api", "replay")))
        data.setdefault("provider", str(described.get("provider", "replay")))
        data.setdefault("model", str(described.get("id", "replay")))
    return parse_agent_message(data)


def plan_replay(path: str | os.PathLike[str]) -> ReplayPlan:
    """Read ``path`` (a recording, or a saved conversation: see :func:`_plan_saved`) into a
    :class:`ReplayPlan`; raises :class:`ReplayError` (one line)."""
    source = Path(path)
    try:
        described, calls = load_recording(source)
    except ReplayError as error:
        if not source.is_file():
            raise
        try:
            conversation = read_conversation(source)
        except TranscriptFileError:
            raise ReplayError(f"{error}, nor a saved conversation") from None
        return _plan_saved(source, conversation.header, conversation.messages)
    return _plan_recording(source, described, calls)


def _plan_saved(source: Path, header: Any, messages: list[AgentMessage]) -> ReplayPlan:
    """A saved conversation (``.pi_notebook/*.jsonl``, ``%agent save``, a Pi transcript) as a
    recording: a call per assistant message (its reply as one delta per block), a ``tool`` line
    per tool result in the file's order, stand-in tool schemas (the file keeps none: each tool
    takes any object). It ends at the first reply that was aborted or failed (the run ended
    there). The recording is written to a temporary folder under the file's own name and
    read back; the file itself is only read."""
    kept: list[AgentMessage] = []
    for message in messages:
        if message.role not in _LLM_ROLES:
            continue
        kept.append(message)
        if isinstance(message, AssistantMessage) and message.stop_reason in ("aborted", "error"):
            break
    replies = [m for m in kept if isinstance(m, AssistantMessage)]
    if not replies:
        raise ReplayError(f"{source.name}: the conversation has no model reply to replay")
    spec = getattr(header, "model", None) or f"{replies[0].provider}/{replies[0].model}"
    provider, _, model_id = str(spec).partition("/")
    model = Model(id=model_id or provider, provider=provider, api="saved-conversation")
    names = dict.fromkeys(b.name for m in replies for b in m.content if isinstance(b, ToolCall))
    tools = [Tool(name=n, description=STAND_IN, parameters={"type": "object"}) for n in names]
    system_prompt = str(getattr(header, "system_prompt", None) or "")
    with tempfile.TemporaryDirectory(prefix="pi-notebook-replay-") as folder:
        recording = Path(folder) / source.name
        write_recording(recording, model, system_prompt, kept, tools)
        results = [m for m in kept if isinstance(m, ToolResultMessage)]
        with recording.open("a", encoding="utf-8") as file:
            for order, result in enumerate(results):
                line: dict[str, Any] = {
                    "kind": TOOL_LINE,
                    "order": order,
                    "toolCallId": result.tool_call_id,
                    "toolName": result.tool_name,
                    "content": _content(result),
                    "isError": bool(result.is_error),
                    "terminate": False,
                    "details": result.details,
                    "updates": [],
                }
                file.write(_tool_line_text(line) + "\n")
        plan = _plan_recording(recording, *load_recording(recording))
    plan.path = source
    return plan


def _plan_recording(
    source: Path, described: dict[str, Any], calls: list[RecordedCall]
) -> ReplayPlan:
    if not calls:
        raise ReplayError(f"{source.name}: the recording has no model call to replay")
    conversations = [call.entries[1:-1] for call in calls]
    first = conversations[0]
    roles = [json.loads(e).get("role") for e in first]
    last = max((i for i, r in enumerate(roles) if r in ("assistant", "toolResult")), default=-1)
    if last == len(first) - 1:
        raise ReplayError(
            f"{source.name}: the first recorded request does not end with a user message"
        )
    for k in range(1, len(calls)):
        before, now = conversations[k - 1], conversations[k]
        if now[: len(before)] != before:
            raise ReplayError(
                f"{source.name}: call {k + 1} does not continue the conversation of call {k} "
                "(a reset or a new conversation); a replay plays one conversation"
            )
    results: dict[str, RecordedResult] = {}
    injections: dict[int, list[AgentMessage]] = {}
    for k in range(1, len(calls)):
        added = conversations[k][len(conversations[k - 1]) + 1 :]  # after the reply
        extra = []
        for entry in added:
            data = json.loads(entry)
            if data.get("role") == "toolResult":
                results[str(data.get("toolCallId"))] = RecordedResult(
                    content=list(data.get("content") or []),
                    is_error=bool(data.get("isError")),
                    usage=data.get("usage"),
                    added_tool_names=data.get("addedToolNames"),
                )
            else:
                extra.append(_parse(entry, described))
        if extra:
            injections[k - 1] = extra
    tool_execution = "parallel"
    modes: dict[str, str] = {}
    for line in _tool_lines(source):
        call_id = str(line.get("toolCallId"))
        previous = results.get(call_id)
        results[call_id] = RecordedResult(
            content=list(line.get("content") or []),
            is_error=bool(line.get("isError")),
            terminate=bool(line.get("terminate")),
            details=line.get("details"),
            updates=[list(u) for u in line.get("updates") or []],
            order=float(line.get("order", math.inf)),
            usage=previous.usage if previous is not None else None,
            added_tool_names=previous.added_tool_names if previous is not None else None,
            duration_ms=_milliseconds(line.get("durationMs")),
        )
        if line.get("toolExecution") == "sequential":
            tool_execution = "sequential"
        if line.get("executionMode"):
            modes[str(line.get("toolName"))] = str(line["executionMode"])
    definitions: dict[str, dict[str, Any]] = {}
    for call in calls:
        for tool in json.loads(call.entries[-1]).get("tools", []):
            definitions.setdefault(str(tool["name"]), tool)
    model = replay(source)
    plan = ReplayPlan(
        path=source,
        model=model,
        system_prompt=str(json.loads(calls[0].entries[0]).get("system") or ""),
        history=[_parse(e, described) for e in first[: last + 1]],
        prompts=[_parse(e, described) for e in first[last + 1 :]],
        tools=[],
        results=results,
        injections=injections,
        tool_execution=tool_execution,
    )
    plan.tools = [_stand_in(plan, d, modes.get(name)) for name, d in definitions.items()]
    return plan


def _milliseconds(value: Any) -> float | None:
    ok = isinstance(value, int | float) and not isinstance(value, bool) and value >= 0
    return float(value) if ok else None


# -- playing it back -----------------------------------------------------------------------------


def _stand_in(plan: ReplayPlan, definition: dict[str, Any], mode: str | None) -> AgentTool:
    async def execute(tool_call_id: str, params: Any, signal: Any, on_update: Any) -> Any:
        recorded = plan.results.get(tool_call_id)
        if recorded is None:
            missing = [{"type": "text", "text": NOT_RECORDED}]
            return AgentToolResult.model_validate({"content": missing})
        for update in recorded.updates:
            on_update(AgentToolResult.model_validate({"content": update}))
        driver = plan.driver
        if driver is not None:
            await driver.turn_of(tool_call_id, signal)
        data: dict[str, Any] = {
            "content": recorded.content,
            "details": recorded.details,
            "terminate": recorded.terminate,
        }
        if recorded.usage is not None:
            data["usage"] = recorded.usage
        if recorded.added_tool_names:
            data["addedToolNames"] = recorded.added_tool_names
        return AgentToolResult.model_validate(data)

    return AgentTool(
        name=str(definition["name"]),
        description=str(definition.get("description") or ""),
        parameters=dict(definition.get("parameters") or {"type": "object", "properties": {}}),
        execute=execute,
        execution_mode=mode if mode in ("sequential", "parallel") else None,
    )


class ReplayDriver:
    """Drives a replayed run: queues the recorded user messages, orders the tools' ends as
    recorded, restores error flags and stops when the recording has no call left.

    Subscribe it after the panel, so a tool waits for the previous one's end event to have
    been shown (and, in step mode, released) before it ends."""

    def __init__(self, plan: ReplayPlan) -> None:
        self.plan = plan
        self.agent: Agent | None = None
        self.replies = 0
        self._batch: list[str] = []
        self._ended: dict[str, asyncio.Event] = {}

    def agent_options(self) -> dict[str, Any]:
        """The replay Agent's constructor settings: every message recorded at one boundary
        arrives there, the recorded tool execution, the recorded error flags, and a stop when
        the recording has no call left."""
        sequential = self.plan.tool_execution == "sequential"
        return {
            "steering_mode": "all",
            "tool_execution": "sequential" if sequential else "parallel",
            "after_tool_call": self.after_tool_call,
            "should_stop_after_turn": self.should_stop,
        }

    def install(self, agent: Agent) -> None:
        """Drive ``agent`` (made with :meth:`agent_options`) through the plan's run."""
        self.plan.driver = self
        self.agent = agent

    def uninstall(self) -> None:
        self.plan.driver = None

    def __call__(self, event: AgentEvent) -> None:
        match event:
            case MessageEndEvent(message=AssistantMessage() as message):
                calls = [b.id for b in message.content if isinstance(b, ToolCall)]
                self._batch = calls
                self._ended = {call_id: asyncio.Event() for call_id in calls}
                if self.agent is not None:
                    for queued in self.plan.injections.get(self.replies, []):
                        self.agent.steer(queued)
                self.replies += 1
            case ToolExecutionEndEvent():
                ended = self._ended.get(event.tool_call_id)
                if ended is not None:
                    ended.set()
            case _:
                pass

    async def turn_of(self, tool_call_id: str, signal: AbortSignal | None) -> None:
        """Wait until every tool of the batch recorded as finishing earlier has ended."""
        results = self.plan.results

        def rank(call_id: str) -> tuple[float, int]:
            recorded = results.get(call_id)
            order = recorded.order if recorded is not None else math.inf
            return order, self._batch.index(call_id)

        if tool_call_id not in self._batch:
            return
        mine = rank(tool_call_id)
        earlier = [self._ended[c] for c in self._batch if rank(c) < mine]
        waits = [asyncio.ensure_future(e.wait()) for e in earlier if not e.is_set()]
        if not waits:
            return
        aborted = asyncio.ensure_future(signal.wait()) if signal is not None else None
        try:
            everything: asyncio.Future[Any] = asyncio.gather(*waits)
            pending: set[asyncio.Future[Any]] = {everything}
            if aborted is not None:
                pending.add(aborted)
            await asyncio.wait(pending, return_when="FIRST_COMPLETED")
        finally:
            for wait in waits:
                wait.cancel()
            if aborted is not None:
                aborted.cancel()

    def after_tool_call(self, context: AfterToolCallContext, signal: Any) -> Any:
        recorded = self.plan.results.get(context.tool_call.id)
        if recorded is not None and recorded.is_error:
            return AfterToolCallResult(is_error=True)
        return None

    def should_stop(self, turn: TurnContext, signal: Any) -> bool:
        return self.plan.player.remaining == 0  # nothing recorded to answer a next request


__all__ = [
    "NOT_RECORDED",
    "TOOL_LINE",
    "RecordedResult",
    "ReplayDriver",
    "ReplayError",
    "ReplayPlan",
    "ToolRecorder",
    "plan_replay",
    "record_tools",
]

"""The panel's wire contract as types: the state tree, the delta ops, the messages both ways.

``docs/panel-protocol.md`` explains it; ``tests/panel/contract_fixture.py`` turns these types
into the JSON fixture the front end's tests read (``tests/panel/fixtures/panel_contract.json``),
and ``tests/panel/test_contract.py`` checks that real panel states match them key for key.
Change a key here, in the reducer (``reducer.py`` and the modules it writes through) /
``widget.py`` and in ``js/`` together, then regenerate the fixture.

Type-only: this module must never hold behaviour (no I/O, no widgets, nothing the reducer calls
per token). The runtime values stay plain dicts and lists, built by the reducer, which is typed
with these TypedDicts (so mypy checks the paths it writes).
"""

from __future__ import annotations

from typing import Any, Literal, NotRequired, TypeAlias

# typing_extensions' TypedDict: pydantic (which the fixture script uses to write JSON Schema)
# refuses typing.TypedDict before Python 3.12.
from typing_extensions import TypedDict

# -- the state tree (what a snapshot carries, what ops change) -------------------------------

RunState: TypeAlias = Literal[
    "idle",
    "waiting",
    "streaming",
    "running-tools",
    "awaiting-approval",
    "aborted",
    "error",
    "done",
]
ToolStatus: TypeAlias = Literal[
    "pending",
    "prepared",
    "running",
    "awaiting-approval",
    "progress",
    "done",
    "error",
    "rejected",
    "aborted",
    "reply-failed",
]
"""``prepared``: announced (``tool_execution_start``) but not executing yet (a parallel batch
runs once every call is prepared); ``aborted``: the run was aborted before the tool ran;
``reply-failed``: the reply carrying the call ended in an error (the server could not parse the
model's tool call, say), so the call never ran."""


class Status(TypedDict):
    """The status line: run state, model, turn, tokens (reported, or estimated while live)."""

    state: RunState
    model: str
    turn: int
    tokens_in: int
    tokens_out: int
    cost: float
    elapsed_ms: float
    error: str | None
    note: str | None
    """A one-line message to the user (a control's answer, say)."""
    waiting_since: float | None
    """Run-relative ms at which the request was sent, while no token has come back."""
    est_in: int
    est_out: int
    estimated: bool
    """Some token count of the run is an estimate (the provider did not report it)."""
    max_tokens: int | None
    held: str | None
    """What step mode holds, in words, while it holds (the view reads "held (step mode)")."""
    held_ms: float
    """Time held in step mode so far; ``elapsed_ms`` is the run's own time, holds left out."""


class Image(TypedDict):
    mime: str
    data: str
    """Base64; only PNG, JPEG, GIF and WebP are kept (SVG can carry script)."""


class TextBlock(TypedDict):
    """A text or thinking block: finished top-level blocks as HTML, the streaming tail."""

    type: Literal["text", "thinking"]
    html: list[str]
    """Sanitised HTML of each finished top-level Markdown block, in order; never changed."""
    tail: str
    """HTML of the part still streaming ("" once the block ended)."""
    raw: str | None
    """The streaming part as plain text instead of ``tail``, when it is too long to render."""


class ToolCallBlock(TypedDict):
    """Where a tool call sits in its message; its card is ``tools[id]``."""

    type: Literal["toolCall"]
    id: str
    name: str


AssistantBlock: TypeAlias = TextBlock | ToolCallBlock


class AssistantEntry(TypedDict):
    role: Literal["assistant"]
    blocks: list[AssistantBlock]
    stop_reason: str | None
    error: str | None
    note: str | None


class UserEntry(TypedDict):
    role: Literal["user"]
    html: str
    images: list[Image]
    queued: Literal["steer", "followup"] | None
    """A queued message delivered during the run: how it was queued."""
    entered: str | None
    """Where a queued message entered the run, in words ("after turn 1's tools")."""


class ToolResultEntry(TypedDict):
    role: Literal["toolResult"]
    tool_call_id: str
    tool_name: str
    text: str
    images: list[Image]
    is_error: bool


class CustomEntry(TypedDict):
    role: Literal["custom"]
    custom_role: str
    html: str
    images: list[Image]


class ContextCell(TypedDict):
    """One cell of a notebook context entry, as the model was sent it (redacted, cut)."""

    number: int
    source: str
    result: str | None
    """``Out[n]``'s short repr, when the cell had a result."""
    error: str | None
    """The error: type and message, then the cell's frame and the last ones."""


class NotebookContextEntry(TypedDict):
    """The notebook context a run sent (``context_sent.py``): collapsed, at the turn's start."""

    role: Literal["notebookContext"]
    title: str
    """``notebook context: 3 cells, 1 error (KeyError)``."""
    cells: list[ContextCell]
    left_out: str | None
    """``In [1]–[3] left out to keep it short``, when the budget left cells out."""


class CompactionEntry(TypedDict):
    """A marker: the model now sees a summary in place of the first ``count`` messages."""

    role: Literal["compaction"]
    count: int
    text: str


MessageEntry: TypeAlias = (
    AssistantEntry
    | UserEntry
    | ToolResultEntry
    | CustomEntry
    | NotebookContextEntry
    | CompactionEntry
)


class NamespaceDiff(TypedDict):
    created: list[str]
    changed: list[str]
    deleted: list[str]
    imported: NotRequired[list[str]]  # new names the code's imports bound to modules, if any


class ToolCard(TypedDict):
    """One tool call's card, keyed by its id in ``tools``."""

    id: str
    name: str
    args_text: str
    """The arguments as streamed, then the final arguments as indented JSON (redacted)."""
    status: ToolStatus
    start: float | None
    duration_ms: float | None
    result_text: str
    images: list[Image]
    is_error: bool
    diff: NamespaceDiff | None
    displays: list[str]
    """The call's rich displays (a DataFrame's table, Markdown) as sanitised HTML, in order
    (``rich_html.py``); the model got their text form, in ``result_text``."""
    not_run: str | None
    """Why the tool did not run: the loop refused the malformed call (``rejected``), the run's
    abort stopped it (``aborted``), or the reply carrying it failed (``reply-failed``)."""
    label: str
    """The call told apart from same-named calls of its message: ``read_station (north)`` or
    ``read_station #2``; the name alone when it is the only call of that name."""
    approval: str | None
    """What the approval did, when the policy covered the call: ``approved by the user``,
    ``allowed (always allow read_file)``, ``denied by the user``, ``denied and stopped by the
    user``..."""


LifecycleKind: TypeAlias = Literal["run", "turn", "message", "tool"]


class NodeTarget(TypedDict, total=False):
    message: int
    """An index into ``messages``."""
    tool: str
    """A key of ``tools``."""


class LifecycleNode(TypedDict):
    """A node of the run's tree: run > turns > messages and tool executions."""

    id: int
    parent: int | None
    kind: LifecycleKind
    label: str
    detail: str
    start: float
    end: float | None
    held: float
    """Step-mode time held while the node was open (its duration without it: end - start - held)."""
    updates: int
    target: NodeTarget | None
    """What the node points at in the transcript, for the tree's links."""


class QueueItem(TypedDict):
    kind: Literal["interrupt", "steer", "followup"]
    text: str


class StepState(TypedDict):
    enabled: bool
    granularity: str
    held: str | None
    """The point the run is held at, in step mode."""
    what: str | None
    """What is held, in words."""
    next: str | None
    """What comes next, in words."""
    count: int


class ApprovalCard(TypedDict):
    tool_call_id: str
    tool_name: str
    summary: str
    args_text: str


TimelineLaneKind: TypeAlias = Literal["model", "tool", "listeners", "steer", "followup"]
TimelineSpanKind: TypeAlias = Literal[
    "waiting", "streaming", "prepared", "running", "held", "queued"
]


class TimelineLane(TypedDict):
    """One row of the timeline: the model's requests, one tool call, the listeners (step-mode
    holds), or a queue."""

    id: str
    kind: TimelineLaneKind
    label: str


class TimelineSpan(TypedDict):
    """A stretch of time on a lane (run-relative ms, holds included: a hold is time too)."""

    lane: str
    """The ``id`` of its lane."""
    kind: TimelineSpanKind
    label: str
    start: float
    end: float | None
    """None while it lasts (a held span without an end is the current hold: the cursor)."""
    outcome: str
    """How it ended, in words, when that matters ("error", "not run (aborted)"); else ""."""


class Timeline(TypedDict):
    """The run's time as swimlanes (``timeline.py``); the static transcript draws it as SVG."""

    lanes: list[TimelineLane]
    spans: list[TimelineSpan]
    turns: list[float]
    """When each turn started (vertical rules)."""


class PanelData(TypedDict):
    """The whole view state (``PanelState.data``)."""

    v: Literal[1]
    status: Status
    messages: list[MessageEntry]
    tools: dict[str, ToolCard]
    lifecycle: list[LifecycleNode]
    queue: list[QueueItem]
    step: StepState
    approvals: list[ApprovalCard]
    context: dict[str, Any] | None
    """What the model is (about to be) sent: the latest request's readable view (messages,
    tools, token estimates, ``held``, ``json``), built by the widget; left open here."""
    timeline: Timeline


class SyncedState(PanelData):
    """The widget's synced ``state`` trait: the state, the seq it is at, whether it ended."""

    seq: int
    finished: bool


# -- delta ops ---------------------------------------------------------------------------------

Path: TypeAlias = list[str | int]
"""Dict keys and list indexes from the root of the state."""

SetOp: TypeAlias = tuple[Literal["s"], Path, Any]
AppendOp: TypeAlias = tuple[Literal["a"], Path, str]
PushOp: TypeAlias = tuple[Literal["p"], Path, Any]
SpliceOp: TypeAlias = tuple[Literal["t"], Path, tuple[int, str]]
"""Keep the first ``int`` UTF-16 code units of the string, append the text."""
MoveOp: TypeAlias = tuple[Literal["m"], Path, int]
"""Move the first ``int`` UTF-16 code units of the block's ``tail`` onto its ``html`` list."""
AnyOp: TypeAlias = SetOp | AppendOp | PushOp | SpliceOp | MoveOp
"""One op as JSON: a three-item list (``ops.Op`` is its untyped runtime form)."""

# -- kernel -> view (custom widget messages) ---------------------------------------------------


class SnapshotMessage(PanelData):
    """The whole state; the view re-bases on it. Deltas ``seq + 1`` on follow."""

    type: Literal["snapshot"]
    seq: int


class DeltasMessage(TypedDict):
    """One frame of ops, numbered; a gap in ``seq`` makes the view ask for a ``resync``."""

    type: Literal["deltas"]
    seq: int
    ops: list[AnyOp]


class ClosingMessage(TypedDict):
    """The run ended: the view sends its final draft (``draft`` with ``final``)."""

    type: Literal["closing"]


KernelMessage: TypeAlias = SnapshotMessage | DeltasMessage | ClosingMessage

# -- view -> kernel ------------------------------------------------------------------------------


class HelloMessage(TypedDict):
    """A view listens; ``seq`` is the state it already shows (-1 for none)."""

    type: Literal["hello"]
    seq: NotRequired[int]


class ResyncMessage(TypedDict):
    """The view missed a frame: send a snapshot."""

    type: Literal["resync"]


class AbortMessage(TypedDict):
    type: Literal["abort"]


class SendMessage(TypedDict):
    """A message typed in the panel: steer the run, follow up after it, or interrupt and send."""

    type: Literal["steer", "followup", "interrupt_send"]
    text: str


class DraftMessage(TypedDict):
    """The box's text as it is typed (debounced); ``final`` answers ``closing``."""

    type: Literal["draft"]
    text: str
    final: NotRequired[bool]


class ClearQueueMessage(TypedDict):
    type: Literal["clear_queue"]


class StepMessage(TypedDict):
    """Step mode: release the held event, or stop holding."""

    type: Literal["next", "run_to_end"]


ApprovalAnswer: TypeAlias = Literal["approve", "always", "deny", "stop"]


class ApprovalMessage(TypedDict):
    """An approval card's answer: ``answer`` says which button (``always``: *Always allow* the
    tool for the conversation; ``stop``: *Deny and stop* the run); without it ``approved``."""

    type: Literal["approval"]
    tool_call_id: str
    approved: bool
    answer: NotRequired[ApprovalAnswer]


class ContextJsonMessage(TypedDict):
    """The context view's raw JSON was opened: send the request as JSON (``context.json``)."""

    type: Literal["context_json"]


ViewMessage: TypeAlias = (
    HelloMessage
    | ResyncMessage
    | AbortMessage
    | SendMessage
    | DraftMessage
    | ClearQueueMessage
    | StepMessage
    | ApprovalMessage
    | ContextJsonMessage
)

__all__ = [
    "AnyOp",
    "AppendOp",
    "ApprovalAnswer",
    "ApprovalCard",
    "ApprovalMessage",
    "AssistantBlock",
    "AssistantEntry",
    "ClearQueueMessage",
    "ClosingMessage",
    "CompactionEntry",
    "ContextCell",
    "ContextJsonMessage",
    "CustomEntry",
    "DeltasMessage",
    "DraftMessage",
    "HelloMessage",
    "Image",
    "KernelMessage",
    "LifecycleKind",
    "LifecycleNode",
    "MessageEntry",
    "MoveOp",
    "NamespaceDiff",
    "NodeTarget",
    "NotebookContextEntry",
    "PanelData",
    "Path",
    "PushOp",
    "QueueItem",
    "ResyncMessage",
    "RunState",
    "SendMessage",
    "SetOp",
    "SnapshotMessage",
    "SpliceOp",
    "Status",
    "StepMessage",
    "StepState",
    "SyncedState",
    "TextBlock",
    "Timeline",
    "TimelineLane",
    "TimelineLaneKind",
    "TimelineSpan",
    "TimelineSpanKind",
    "ToolCallBlock",
    "ToolCard",
    "ToolResultEntry",
    "ToolStatus",
    "UserEntry",
    "ViewMessage",
]

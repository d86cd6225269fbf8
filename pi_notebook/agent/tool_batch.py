"""Running one assistant message's tool calls (reference 2.4).

Each call is prepared (lookup, argument validation, ``before_tool_call``), executed, and
finalised (``after_tool_call``). A parallel batch prepares every call in source order, runs the
prepared ones concurrently (``tool_execution_end`` in completion order) and emits the result
messages in source order; a sequential batch does one call at a time. A tool's failure never
escapes: it becomes an error result and the run goes on.

Every result leaves the batch through :func:`outbound_result`, before any listener or the model
sees it (progress updates too): its text has secrets redacted (``pi_notebook.ai.redact``: the
model is told ``[redacted: GITHUB_TOKEN]``, never given the value) and lone surrogates replaced,
whatever tool made it (``run_python`` printing ``os.environ``, ``inspect_variable``, your own),
and a final result's text is capped (:mod:`.result_cap`: the whole text stays in its details).

One deliberate difference from Pi 0.82, which awaits a tool however long it ignores an abort:
once the run's signal is aborted, a tool gets ``TOOL_ABORT_GRACE_SECONDS`` to finish; then its
task is cancelled and the call ends with the error result :data:`TOOL_ABANDONED`, so the run's
events still close (``tool_execution_end``, ``turn_end``, ``agent_end``) and the transcript
stays valid.
"""

from __future__ import annotations

import asyncio
import inspect
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from ..ai import (
    AbortSignal,
    AssistantMessage,
    TextContent,
    ToolCall,
    ToolResultMessage,
    clean_surrogates,
    maybe_await,
    now_ms,
    redact,
    validate_tool_arguments,
)
from ._hooks import field_of
from .events import (
    AgentEvent,
    MessageEndEvent,
    MessageStartEvent,
    ToolExecutionEndEvent,
    ToolExecutionStartEvent,
    ToolExecutionUpdateEvent,
)
from .result_cap import cap_result, tool_result_chars
from .types import (
    AfterToolCallContext,
    AgentContext,
    AgentLoopConfig,
    AgentTool,
    AgentToolResult,
    BeforeToolCallContext,
    ToolFailure,
)

Emit = Callable[[AgentEvent], Awaitable[None]]

OPERATION_ABORTED = "Operation aborted"
TOOL_ABORT_GRACE_SECONDS = 2.0
TOOL_ABANDONED = "Tool execution was aborted: the tool did not stop within {grace:g} s of the abort"
BLOCKED = "Tool execution was blocked"


def truncated_call_text(name: str) -> str:
    return (
        f'Tool call "{name}" was not executed: the response hit the output token limit, '
        "so its arguments may be truncated. Re-issue the tool call with complete arguments."
    )


@dataclass
class Outcome:
    """A finished call: its result and whether it is an error."""

    result: AgentToolResult
    is_error: bool


@dataclass
class Prepared:
    """A call ready to run: its tool and validated arguments."""

    tool: AgentTool
    args: Any


@dataclass
class BatchResult:
    messages: list[ToolResultMessage]
    terminate: bool


def outbound_result(result: AgentToolResult) -> AgentToolResult:
    """``result`` with secrets redacted and lone surrogates replaced in its text blocks.

    The same object when nothing changed; otherwise a shallow copy with new text blocks.
    """
    content = getattr(result, "content", None)
    if not content or not isinstance(result, AgentToolResult):
        return result
    cleaned: list[Any] | None = None
    for position, block in enumerate(content):
        text = getattr(block, "text", None)
        if not isinstance(text, str):
            continue
        new = redact(clean_surrogates(text))
        if new != text:
            if cleaned is None:
                cleaned = list(content)
            cleaned[position] = block.model_copy(update={"text": new})
    if cleaned is None:
        return result
    return result.model_copy(update={"content": cleaned})


def error_result(message: str, details: Any = None) -> AgentToolResult:
    return AgentToolResult(
        content=[TextContent(text=message)], details={} if details is None else details
    )


class ToolBatch:
    """The tool calls of one assistant message, run against the current context."""

    def __init__(
        self,
        config: AgentLoopConfig,
        context: AgentContext,
        assistant: AssistantMessage,
        emit: Emit,
        signal: AbortSignal | None,
    ) -> None:
        self.config = config
        self.context = context
        self.assistant = assistant
        self.emit = emit
        self.signal = signal
        self.tools: dict[str, AgentTool] = {}
        """The context's tools by name; of tools sharing a name the first wins (Pi's ``find``)."""
        for tool in context.tools:
            self.tools.setdefault(tool.name, tool)

    @property
    def aborted(self) -> bool:
        return self.signal is not None and self.signal.aborted

    # -- entry points ----------------------------------------------------------------------

    async def run(self, calls: list[ToolCall]) -> BatchResult:
        tools = self.tools
        sequential = self.config.tool_execution == "sequential" or any(
            tools[c.name].execution_mode == "sequential" for c in calls if c.name in tools
        )
        if sequential:
            return await self._sequential(calls)
        return await self._parallel(calls)

    async def fail_truncated(self, calls: list[ToolCall]) -> BatchResult:
        """A ``length`` stop: every call fails without validation, hooks or execution."""
        results = []
        for call in calls:
            await self._emit_start(call)
            outcome = Outcome(error_result(truncated_call_text(call.name)), True)
            outcome = await self._emit_end(call, outcome)
            results.append(await self._emit_message(call, outcome))
        return BatchResult(results, terminate=False)

    # -- batch strategies --------------------------------------------------------------------

    async def _sequential(self, calls: list[ToolCall]) -> BatchResult:
        messages: list[ToolResultMessage] = []
        outcomes: list[Outcome] = []
        for call in calls:
            await self._emit_start(call)
            prepared = await self._prepare(call)
            outcome = prepared if isinstance(prepared, Outcome) else await self._run(call, prepared)
            outcome = await self._emit_end(call, outcome)
            messages.append(await self._emit_message(call, outcome))
            outcomes.append(outcome)
            if self.aborted:
                break
        return BatchResult(messages, _terminates(outcomes))

    async def _parallel(self, calls: list[ToolCall]) -> BatchResult:
        slots: list[tuple[ToolCall, Outcome | Prepared]] = []
        for call in calls:
            await self._emit_start(call)
            prepared = await self._prepare(call)
            if isinstance(prepared, Outcome):
                prepared = await self._emit_end(call, prepared)
            slots.append((call, prepared))
            if self.aborted:
                break

        async def settle(call: ToolCall, slot: Outcome | Prepared) -> Outcome:
            if isinstance(slot, Outcome):
                return slot
            if self.aborted:
                outcome = Outcome(error_result(OPERATION_ABORTED), True)
            else:
                outcome = await self._run(call, slot)
            return await self._emit_end(call, outcome)

        outcomes: list[Outcome] = list(
            await asyncio.gather(*(settle(call, slot) for call, slot in slots))
        )
        messages = [
            await self._emit_message(call, outcome)
            for (call, _), outcome in zip(slots, outcomes, strict=True)
        ]
        return BatchResult(messages, _terminates(outcomes))

    # -- one call ----------------------------------------------------------------------------

    async def _prepare(self, call: ToolCall) -> Outcome | Prepared:
        tool = self.tools.get(call.name)
        if tool is None:
            return Outcome(error_result(f"Tool {call.name} not found"), True)
        try:
            target = call
            if tool.prepare_arguments is not None:
                prepared_args = tool.prepare_arguments(call.arguments)
                if prepared_args is not call.arguments:
                    target = call.model_copy(update={"arguments": prepared_args})
            args = validate_tool_arguments(tool, target)
            if self.config.before_tool_call is not None:
                decision = await maybe_await(
                    self.config.before_tool_call(
                        BeforeToolCallContext(self.assistant, call, args, self.context),
                        self.signal,
                    )
                )
                if self.aborted:
                    return Outcome(error_result(OPERATION_ABORTED), True)
                if field_of(decision, "block", False):
                    reason = field_of(decision, "reason") or BLOCKED
                    return Outcome(error_result(reason), True)
            if self.aborted:
                return Outcome(error_result(OPERATION_ABORTED), True)
        except Exception as exc:
            return Outcome(error_result(_text_of(exc)), True)
        return Prepared(tool, args)

    async def _run(self, call: ToolCall, prepared: Prepared) -> Outcome:
        updates: list[asyncio.Future[None]] = []
        accepting = True

        def on_update(partial: AgentToolResult) -> None:
            if not accepting:
                return
            event = ToolExecutionUpdateEvent(
                call.id, call.name, call.arguments, outbound_result(partial)
            )
            previous = updates[-1] if updates else None
            updates.append(asyncio.ensure_future(self._emit_after(previous, event)))

        try:
            result = await self._execute(prepared.tool, call.id, prepared.args, on_update)
            if not isinstance(result, AgentToolResult):
                result = AgentToolResult.model_validate(result)
            outcome = Outcome(result, False)
        except ToolFailure as exc:
            outcome = Outcome(error_result(_text_of(exc), exc.details), True)
        except Exception as exc:
            outcome = Outcome(error_result(_text_of(exc)), True)
        finally:
            accepting = False
        if updates:
            await asyncio.gather(*updates)
        return await self._finalize(call, prepared, outcome)

    async def _execute(
        self,
        tool: AgentTool,
        call_id: str,
        args: Any,
        on_update: Callable[[AgentToolResult], None],
    ) -> Any:
        """``tool.execute(...)``; cancelled and an error if it outlives an abort's grace."""
        signal = self.signal
        result = tool.execute(call_id, args, signal, on_update)
        if not inspect.isawaitable(result):
            return result
        if signal is None:
            return await result
        task = asyncio.ensure_future(result)
        try:
            if not signal.aborted:
                aborted = asyncio.ensure_future(signal.wait())
                try:
                    await asyncio.wait({task, aborted}, return_when=asyncio.FIRST_COMPLETED)
                finally:
                    aborted.cancel()
            if not task.done():
                await asyncio.wait({task}, timeout=TOOL_ABORT_GRACE_SECONDS)
        except asyncio.CancelledError:
            task.cancel()
            raise
        if not task.done():
            task.cancel()
            raise RuntimeError(TOOL_ABANDONED.format(grace=TOOL_ABORT_GRACE_SECONDS))
        return task.result()

    async def _emit_after(self, previous: asyncio.Future[None] | None, event: AgentEvent) -> None:
        if previous is not None:
            await asyncio.shield(previous)
        await self.emit(event)

    async def _finalize(self, call: ToolCall, prepared: Prepared, outcome: Outcome) -> Outcome:
        hook = self.config.after_tool_call
        if hook is None:
            return outcome
        try:
            context = AfterToolCallContext(
                self.assistant, call, prepared.args, outcome.result, outcome.is_error, self.context
            )
            override = await maybe_await(hook(context, self.signal))
        except Exception as exc:
            return Outcome(error_result(_text_of(exc)), True)
        if override is None:
            return outcome
        result = outcome.result.model_copy()
        for name in ("content", "details", "usage", "terminate"):
            value = field_of(override, name)
            if value is not None:
                setattr(result, name, value)
        is_error = field_of(override, "is_error")
        return Outcome(result, outcome.is_error if is_error is None else bool(is_error))

    # -- events ----------------------------------------------------------------------------

    async def _emit_start(self, call: ToolCall) -> None:
        await self.emit(ToolExecutionStartEvent(call.id, call.name, call.arguments))

    def _result_chars(self, call: ToolCall) -> int:
        tool = self.tools.get(call.name)
        limit = tool.max_result_chars if tool is not None else None
        return limit if limit is not None else tool_result_chars()

    async def _emit_end(self, call: ToolCall, outcome: Outcome) -> Outcome:
        """Emit ``tool_execution_end`` with the outbound result; returns the outcome emitted."""
        result = cap_result(outbound_result(outcome.result), self._result_chars(call))
        if result is not outcome.result:
            outcome = Outcome(result, outcome.is_error)
        await self.emit(ToolExecutionEndEvent(call.id, call.name, outcome.result, outcome.is_error))
        return outcome

    def _message_for(self, call: ToolCall, outcome: Outcome) -> ToolResultMessage:
        result = outcome.result
        return ToolResultMessage(
            tool_call_id=call.id,
            tool_name=call.name,
            content=list(result.content or []),
            details=result.details,
            usage=result.usage,
            added_tool_names=result.added_tool_names or None,
            is_error=outcome.is_error,
            timestamp=now_ms(),
        )

    async def _emit_message(self, call: ToolCall, outcome: Outcome) -> ToolResultMessage:
        message = self._message_for(call, outcome)
        await self.emit(MessageStartEvent(message))
        await self.emit(MessageEndEvent(message))
        return message


def _terminates(outcomes: list[Outcome]) -> bool:
    """A batch ends the run only when every one of its results asks for it."""
    return bool(outcomes) and all(o.result.terminate for o in outcomes)


def _text_of(exc: BaseException) -> str:
    return str(exc) if str(exc) else type(exc).__name__


__all__ = ["BatchResult", "ToolBatch", "outbound_result", "truncated_call_text"]

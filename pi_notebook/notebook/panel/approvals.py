"""The panel's approval cards: one per tool call waiting for an answer.

:meth:`Approvals.ask` shows a card and waits for the view's answer: Approve, *Always allow* the
tool (for the conversation: the gate remembers it), Deny, or *Deny and stop* (the gate ends the
run; the other waits here end as denials, step mode stops holding as for Abort, and the status
line says why): ``True``, ``"always"``,
``False``, ``"stop"`` (an :data:`~pi_notebook.tools.Approver`'s answers). It answers ``False``
when the run is aborted and raises :class:`~pi_notebook.tools.ApprovalTimeout` after
:func:`~pi_notebook.tools.approval_timeout` seconds with no answer (the call is refused and the
panel says so); :meth:`answer` is the view's click; :meth:`deny_all` ends every wait (the run
ended). The cards reach the state through the reducer and go out in the next frame.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from typing import Any

from ...ai import AbortSignal, redact
from ...tools import ApprovalAnswer, ApprovalTimeout, approval_timeout, as_answer, format_seconds
from .contract import ApprovalCard
from .reducer import PanelState


class Approvals:
    """The calls awaiting approval, each with the future its answer sets."""

    __slots__ = ("_flush", "_on_stop", "_state", "_waiting")

    def __init__(
        self,
        state: PanelState,
        flush: Callable[[], None],
        on_stop: Callable[[], None] | None = None,
    ) -> None:
        self._state = state
        self._flush = flush
        self._on_stop = on_stop
        """Called on *Deny and stop* (the widget's: stop holding in step mode, as Abort does)."""
        self._waiting: dict[str, tuple[ApprovalCard, asyncio.Future[bool | ApprovalAnswer]]] = {}

    async def ask(self, request: Any, signal: AbortSignal | None = None) -> bool | ApprovalAnswer:
        loop = asyncio.get_running_loop()
        future: asyncio.Future[bool | ApprovalAnswer] = loop.create_future()
        card: ApprovalCard = {
            "tool_call_id": request.tool_call_id,
            "tool_name": request.tool_name,
            # Redacted as the tool card's arguments are: the model may have put a key in them.
            "summary": redact(request.summary),
            "args_text": redact(
                json.dumps(request.args, indent=2, default=str, ensure_ascii=False)
            ),
        }
        self._waiting[request.tool_call_id] = (card, future)
        self._state.set_tool_status(request.tool_call_id, "awaiting-approval")
        self._publish()

        def deny() -> None:
            if not future.done():
                future.set_result(False)

        remove = signal.add_listener(deny) if signal is not None else None
        timeout = approval_timeout()
        try:
            return await asyncio.wait_for(future, timeout)
        except TimeoutError:
            self._state.set_note(
                f"no answer to the approval of {request.tool_name} within "
                f"{format_seconds(timeout)}: the call was refused"
            )  # (sent with the approvals, below)
            raise ApprovalTimeout(timeout) from None
        finally:
            if remove is not None:
                remove()
            self._waiting.pop(request.tool_call_id, None)
            self._state.approval_answered(request.tool_call_id)
            self._publish()

    def answer(self, message: dict[str, Any]) -> None:
        """The view's ``approval`` message for one call: its ``answer`` (approve, always, deny,
        stop) when it has one, else Approve for ``approved`` true and Deny for anything else."""
        entry = self._waiting.get(str(message.get("tool_call_id", "")))
        if entry is None or entry[1].done():
            return
        answer = message.get("answer")
        chosen = as_answer(answer if answer is not None else message.get("approved") is True)
        entry[1].set_result({"approve": True, "deny": False}.get(chosen, chosen))
        if chosen == "stop":
            self._state.set_note(f"you denied {entry[0]['tool_name']} and stopped the run")
            self.deny_all()
            if self._on_stop is not None:
                self._on_stop()

    def deny_all(self) -> None:
        for _, future in self._waiting.values():
            if not future.done():
                future.set_result(False)

    def _publish(self) -> None:
        self._state.set_approvals([card for card, _ in self._waiting.values()])
        self._flush()


__all__ = ["Approvals"]

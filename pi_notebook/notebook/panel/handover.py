"""What the user typed in the panel that must outlive the moment: the draft in the input box
and an *Interrupt & send* message waiting for the stream to stop.

The view sends its draft as it is typed (debounced) and, when the kernel announces that the
run is closing (``{"type": "closing"}``), once more with ``final``; :meth:`Handover.final_draft`
waits (briefly) for that last word, so text typed up to the end of the run is never lost even
though the view is about to be replaced by the static transcript. The magic then queues the
draft as a follow-up for the conversation's next ``%%agent`` cell. An *Interrupt & send*
message is held here, not in the agent's steering queue, because it must become the next
prompt at once (after the aborted run's ``agent_end``), not wait for a turn boundary.

This module must never drop text it was given, and never block: it only awaits a future with
a timeout, on the panel's event loop.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable

#: Seconds the end of a run waits for a connected view's final draft (a live view answers in
#: milliseconds; this bounds the wait when the view went away without saying so).
FINAL_DRAFT_WAIT = 2.0


class Handover:
    def __init__(self) -> None:
        self.draft = ""
        """The latest draft a view reported (the box's text, possibly empty)."""
        self._final: asyncio.Future[str] | None = None
        self._interrupt: list[str] = []

    # -- the draft -------------------------------------------------------------------------

    def on_draft(self, text: str, *, final: bool) -> None:
        self.draft = text
        if final and self._final is not None and not self._final.done():
            self._final.set_result(text)

    def sent(self) -> None:
        """A message was sent from the box: the view cleared it."""
        self.draft = ""

    async def final_draft(
        self, announce: Callable[[], None], timeout: float = FINAL_DRAFT_WAIT
    ) -> str:
        """Ask the view for its last draft (``announce`` sends ``closing``) and return the
        draft (stripped): the view's final word, else the latest one it sent."""
        loop = asyncio.get_running_loop()
        self._final = loop.create_future()
        announce()
        try:
            await asyncio.wait_for(asyncio.shield(self._final), timeout)
        except TimeoutError:
            pass
        finally:
            self._final = None
        return self.take_draft()

    def take_draft(self) -> str:
        text, self.draft = self.draft.strip(), ""
        return text

    # -- interrupt and send ----------------------------------------------------------------

    def interrupt_with(self, text: str) -> None:
        self._interrupt.append(text)

    @property
    def interrupting(self) -> list[str]:
        return list(self._interrupt)

    def take_interrupt(self) -> str | None:
        """The text to send as the next prompt (several clicks join), or None."""
        if not self._interrupt:
            return None
        text = "\n\n".join(self._interrupt)
        self._interrupt = []
        return text


__all__ = ["FINAL_DRAFT_WAIT", "Handover"]

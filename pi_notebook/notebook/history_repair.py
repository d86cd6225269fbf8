"""A loaded transcript made safe to continue: no tool call is left without its result.

A saved file ends where a run ended, and a run that was aborted or failed can end on an
assistant message whose tool calls never ran; a file from elsewhere may stop between a call and
its result. The providers' history hygiene (``pi_notebook.ai`` transform, Pi's
``transformMessages``) already drops aborted / failed assistant messages and answers missing
results at request time, but only providers that run it are covered (the faux model, a custom
stream function, a ``convert_to_llm`` of the user's are not). So a resumed transcript is repaired
once, when it is loaded:

- an ``aborted`` or ``error`` assistant message keeps its text, and loses the tool calls that
  have no result (they never ran);
- any other call without a result gets Pi's synthetic error result, ``No result provided``,
  right after the results that exist, as ``transformMessages`` would insert it;
- a tool result that answers no call (none of the last assistant message's calls, or one
  already answered) is dropped (:func:`drop_unanswering_results`): providers refuse a request
  with one.

This module never changes the messages it is given (it returns new ones where it must).
"""

from __future__ import annotations

from collections.abc import Sequence

from ..ai import AgentMessage, AssistantMessage, TextContent, ToolResultMessage

NO_RESULT = "No result provided"


def close_unanswered_calls(messages: Sequence[AgentMessage]) -> tuple[list[AgentMessage], int]:
    """``messages`` with every tool call answered (see the module doc); (messages, repairs)."""
    out: list[AgentMessage] = []
    pending: dict[str, str] = {}  # call id -> tool name, of the last assistant message
    owner = -1  # index in ``out`` of that assistant message
    repairs = 0

    def close() -> None:
        nonlocal repairs
        if not pending:
            return
        assistant = out[owner]
        assert isinstance(assistant, AssistantMessage)
        repairs += len(pending)
        if assistant.stop_reason in ("aborted", "error"):
            kept = [b for b in assistant.content if not (b.type == "toolCall" and b.id in pending)]
            out[owner] = assistant.model_copy(update={"content": kept})
        else:
            out.extend(
                ToolResultMessage(
                    tool_call_id=call_id,
                    tool_name=name,
                    content=[TextContent(text=NO_RESULT)],
                    is_error=True,
                    timestamp=assistant.timestamp,
                )
                for call_id, name in pending.items()
            )
        pending.clear()

    for message in messages:
        role = getattr(message, "role", None)
        if role in ("user", "assistant"):
            close()
        if isinstance(message, AssistantMessage):
            owner = len(out)
            pending.update((b.id, b.name) for b in message.content if b.type == "toolCall")
        elif isinstance(message, ToolResultMessage):
            pending.pop(message.tool_call_id, None)
        out.append(message)
    close()
    return out, repairs


def drop_unanswering_results(messages: Sequence[AgentMessage]) -> tuple[list[AgentMessage], int]:
    """``messages`` without the tool results that answer no call; (messages, how many)."""
    out: list[AgentMessage] = []
    open_calls: set[str] = set()  # the last assistant message's calls not answered yet
    dropped = 0
    for message in messages:
        if isinstance(message, AssistantMessage):
            open_calls = {b.id for b in message.content if b.type == "toolCall"}
        elif isinstance(message, ToolResultMessage):
            if message.tool_call_id not in open_calls:
                dropped += 1
                continue
            open_calls.discard(message.tool_call_id)
        elif getattr(message, "role", None) == "user":
            open_calls = set()
        out.append(message)
    return out, dropped


__all__ = ["NO_RESULT", "close_unanswered_calls", "drop_unanswering_results"]

"""Turn and cost limits of the ``Agent``, checked at turn boundaries through the loop's hook.

The ``Agent`` runs :class:`RunLimits` as its ``should_stop_after_turn`` (after the user's own
hook): when the run would go on to another model request and a limit is reached (turns of this
run, dollars spent in this run, dollars spent in the conversation), it stops the run there and
keeps a note saying which ("budget of $0.50 reached: $0.52 spent"). Stopping at that boundary
polls no steering or follow-up message, so queued ones stay queued. A run that ends by itself is
not noted, spent or not.

Between turns is not enough for dollars: one reply can spend far past the limit. So before each
request :meth:`RunLimits.remaining` gives the dollars left, and the Agent asks for no more output
than they buy at the model's output price (:func:`affordable_output`), after the request's
estimated input, and for at least one token; a request whose estimated input alone would spend
them is not sent (:func:`refusal_note`). A model with no price has nothing to clamp.

Costs come from each reply's reported usage: its ``usage.cost`` when the provider priced it,
else its token counts priced with the model's rates, else (no usage at all) an estimate of 4
characters a token over the request and the reply (:mod:`.sizes`). This module must never make
a request or touch the transcript.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from ..ai import AgentMessage, AssistantMessage, Model, Usage, calculate_cost
from .sizes import estimate_tokens, message_chars
from .types import TurnContext


class BudgetExceededError(RuntimeError):
    """``prompt()`` / ``continue_()`` when the conversation's budget is already spent."""


def format_usd(amount: float) -> str:
    """``$0.50``; amounts under a cent keep four decimals (``$0.0031``)."""
    if 0 < abs(amount) < 0.01:
        return f"${amount:.4f}"
    return f"${amount:.2f}"


def budget_note(limit: float, spent: float, *, scope: str = "") -> str:
    """``budget of $0.50 reached: $0.52 spent`` (``scope`` prefixes ``budget``)."""
    prefix = f"{scope} " if scope else ""
    return f"{prefix}budget of {format_usd(limit)} reached: {format_usd(spent)} spent"


def turn_note(limit: int, turns: int) -> str:
    return f"turn limit of {limit} reached: {turns} turn{'s' if turns != 1 else ''} run"


def _has_usage(usage: Usage) -> bool:
    return bool(usage.input or usage.output or usage.cache_read or usage.cache_write)


def reply_cost(message: AssistantMessage, model: Model, prompt_chars: int) -> float:
    """What one reply cost: reported, priced from reported tokens, or estimated.

    ``prompt_chars`` is the size of the request that produced it (used only for the estimate).
    """
    usage = message.usage
    if usage.cost.total > 0:
        return float(usage.cost.total)
    if not _has_usage(usage):
        usage = Usage(
            input=estimate_tokens(prompt_chars), output=estimate_tokens(message_chars(message))
        )
    else:
        usage = usage.model_copy()  # calculate_cost sets .cost: not on the transcript's object
    return float(calculate_cost(model, usage).total)


def conversation_cost(
    messages: Sequence[AgentMessage], model: Model, system_prompt: str = ""
) -> float:
    """The dollars a transcript's replies cost (and its tool results reported), in total."""
    total = 0.0
    estimating = any(
        isinstance(m, AssistantMessage) and not _has_usage(m.usage) and m.usage.cost.total <= 0
        for m in messages
    )
    chars = len(system_prompt)
    for message in messages:
        if isinstance(message, AssistantMessage):
            total += reply_cost(message, model, chars)
        else:
            usage = getattr(message, "usage", None)
            if isinstance(usage, Usage):
                total += usage.cost.total
        if estimating:  # the request size matters only to an estimate
            chars += message_chars(message)
    return total


class RunLimits:
    """One run's limits (see the module docstring); ``note`` says which one ended the run."""

    def __init__(
        self,
        *,
        max_turns: int | None,
        max_cost: float | None,
        budget: float | None,
        spent: Callable[[], float],
        continues: Callable[[TurnContext], bool],
    ) -> None:
        """``spent()`` is the conversation's cost now; ``continues(turn)`` whether the loop
        would make another request after ``turn``."""
        self.max_turns = max_turns
        self.max_cost = max_cost
        self.budget = budget
        self._spent = spent
        self._continues = continues
        self._spent_before = spent() if max_cost is not None else 0.0
        self.turns = 0
        self.note: str | None = None

    def remaining(self) -> float | None:
        """The dollars left before a dollar limit (the run's or the conversation's) is
        reached; ``None`` when there is none."""
        left: list[float] = []
        if self.max_cost is not None or self.budget is not None:
            spent = self._spent()
            if self.max_cost is not None:
                left.append(self.max_cost - (spent - self._spent_before))
            if self.budget is not None:
                left.append(self.budget - spent)
        return min(left) if left else None

    @property
    def active(self) -> bool:
        return self.max_turns is not None or self.max_cost is not None or self.budget is not None

    def after_turn(self, turn: TurnContext) -> bool:
        """True (and ``note`` set) when the run must stop before its next request."""
        self.turns += 1
        if not self._continues(turn):
            return False
        if self.max_cost is not None or self.budget is not None:
            spent = self._spent()
            run_spent = spent - self._spent_before
            if self.max_cost is not None and run_spent >= self.max_cost:
                self.note = budget_note(self.max_cost, run_spent)
            elif self.budget is not None and spent >= self.budget:
                self.note = budget_note(self.budget, spent, scope="conversation")
        if self.note is None and self.max_turns is not None and self.turns >= self.max_turns:
            self.note = turn_note(self.max_turns, self.turns)
        return self.note is not None


def affordable_output(remaining: float, model: Model, input_tokens: int) -> int | None:
    """The output tokens ``remaining`` dollars buy after a request of ``input_tokens`` at the
    model's prices: ``None`` when output has no price (nothing to clamp); 0 or less when the
    input alone would spend them."""
    rates = model.cost
    if rates.output <= 0:
        return None
    left = remaining - input_tokens * rates.input / 1e6
    return int(left / (rates.output / 1e6))


def refusal_note(remaining: float, input_tokens: int, model: Model) -> str:
    cost = input_tokens * model.cost.input / 1e6
    return (
        f"request not sent: its input alone (about {input_tokens} tokens, {format_usd(cost)}) "
        f"would spend more than the {format_usd(max(remaining, 0.0))} left of the limit"
    )


def would_continue(turn: TurnContext, queued: Callable[[], bool]) -> bool:
    """Whether the loop would request again after ``turn``: tool results to answer, or queued
    steering / follow-up messages."""
    return bool(turn.tool_results) or queued()


__all__ = [
    "BudgetExceededError",
    "RunLimits",
    "affordable_output",
    "budget_note",
    "conversation_cost",
    "format_usd",
    "refusal_note",
    "reply_cost",
    "turn_note",
    "would_continue",
]

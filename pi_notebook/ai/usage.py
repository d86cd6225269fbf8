"""Token usage arithmetic: totals and cost from a model's prices (reference 1.3)."""

from __future__ import annotations

from .types import Model, ModelCost, ModelCostTier, Usage, UsageCost


def _rates_for(cost: ModelCost, usage: Usage) -> ModelCost | ModelCostTier:
    """The prices that apply: the tier with the highest threshold below the prompt, if any."""
    if not cost.tiers:
        return cost
    prompt = usage.input + usage.cache_read + usage.cache_write
    best = None
    for tier in cost.tiers:
        if tier.input_tokens_above < prompt and (
            best is None or tier.input_tokens_above > best.input_tokens_above
        ):
            best = tier
    return cost if best is None else best


def calculate_cost(model: Model, usage: Usage) -> UsageCost:
    """Set ``usage.cost`` from ``model.cost`` ($ per million tokens) and return it."""
    rates = _rates_for(model.cost, usage)
    one_hour = usage.cache_write_1h or 0
    cost = UsageCost(
        input=rates.input / 1e6 * usage.input,
        output=rates.output / 1e6 * usage.output,
        cache_read=rates.cache_read / 1e6 * usage.cache_read,
        cache_write=(
            rates.cache_write * (usage.cache_write - one_hour) + rates.input * 2 * one_hour
        )
        / 1e6,
    )
    cost.total = cost.input + cost.output + cost.cache_read + cost.cache_write
    usage.cost = cost
    return cost


def finalize_usage(model: Model, usage: Usage) -> Usage:
    """Fill ``total_tokens`` and ``cost``; returns the same object."""
    usage.total_tokens = usage.input + usage.output + usage.cache_read + usage.cache_write
    calculate_cost(model, usage)
    return usage

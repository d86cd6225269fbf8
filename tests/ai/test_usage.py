"""Tests for calculate_cost / finalize_usage (reference 1.3, Pi's calculateCost)."""

from __future__ import annotations

import pytest

from pi_notebook.ai import Model, ModelCost, ModelCostTier, Usage, calculate_cost, finalize_usage


def model(cost: ModelCost) -> Model:
    return Model(id="m", api="test", provider="test", cost=cost)


BASE = ModelCost(input=3.0, output=15.0, cache_read=0.3, cache_write=3.75)


def test_cost_is_rate_per_million_times_tokens() -> None:
    usage = Usage(input=1000, output=500, cache_read=2000, cache_write=400)
    cost = calculate_cost(model(BASE), usage)
    assert cost.input == pytest.approx(3.0 / 1e6 * 1000)
    assert cost.output == pytest.approx(15.0 / 1e6 * 500)
    assert cost.cache_read == pytest.approx(0.3 / 1e6 * 2000)
    assert cost.cache_write == pytest.approx(3.75 / 1e6 * 400)


def test_total_is_the_sum_of_the_four_parts() -> None:
    usage = Usage(input=1000, output=500, cache_read=2000, cache_write=400)
    cost = calculate_cost(model(BASE), usage)
    assert cost.total == pytest.approx(0.003 + 0.0075 + 0.0006 + 0.0015)
    assert cost.total == cost.input + cost.output + cost.cache_read + cost.cache_write


def test_cost_is_set_on_the_usage_in_place() -> None:
    usage = Usage(input=1_000_000)
    cost = calculate_cost(model(BASE), usage)
    assert usage.cost is cost
    assert usage.cost.input == pytest.approx(3.0)


def test_cache_write_1h_is_charged_at_twice_the_input_rate() -> None:
    # cacheWrite = 1000 of which 300 are 1h writes:
    # (3.75 * (1000 - 300) + 3.0 * 2 * 300) / 1e6 = (2625 + 1800) / 1e6
    usage = Usage(cache_write=1000, cache_write_1h=300)
    cost = calculate_cost(model(BASE), usage)
    assert cost.cache_write == pytest.approx(4425 / 1e6)
    assert cost.total == pytest.approx(4425 / 1e6)


def test_all_cache_writes_1h() -> None:
    usage = Usage(cache_write=500, cache_write_1h=500)
    cost = calculate_cost(model(BASE), usage)
    assert cost.cache_write == pytest.approx(3.0 * 2 * 500 / 1e6)


def test_missing_cache_write_1h_counts_as_zero() -> None:
    usage = Usage(cache_write=1000)
    assert usage.cache_write_1h is None
    cost = calculate_cost(model(BASE), usage)
    assert cost.cache_write == pytest.approx(3.75 * 1000 / 1e6)


def test_zero_rates_give_zero_cost() -> None:
    usage = Usage(input=123, output=456, cache_read=7, cache_write=8, cache_write_1h=2)
    cost = calculate_cost(model(ModelCost()), usage)
    parts = (cost.input, cost.output, cost.cache_read, cost.cache_write, cost.total)
    assert parts == (0, 0, 0, 0, 0)


TIERED = ModelCost(
    input=1.0,
    output=2.0,
    cache_read=0.1,
    cache_write=1.25,
    tiers=[
        ModelCostTier(
            input_tokens_above=200_000, input=4.0, output=8.0, cache_read=0.4, cache_write=5.0
        ),
        ModelCostTier(
            input_tokens_above=100_000, input=2.0, output=4.0, cache_read=0.2, cache_write=2.5
        ),
    ],
)


def test_base_rates_apply_below_every_tier() -> None:
    usage = Usage(input=50_000, output=1_000_000)
    cost = calculate_cost(model(TIERED), usage)
    assert cost.input == pytest.approx(0.05)
    assert cost.output == pytest.approx(2.0)


def test_tier_threshold_is_strict() -> None:
    # exactly 100_000 prompt tokens: not *above* the first tier's threshold
    usage = Usage(input=100_000, output=1_000_000)
    cost = calculate_cost(model(TIERED), usage)
    assert cost.output == pytest.approx(2.0)


def test_tier_applies_just_above_its_threshold() -> None:
    usage = Usage(input=100_001, output=1_000_000)
    cost = calculate_cost(model(TIERED), usage)
    assert cost.input == pytest.approx(2.0 / 1e6 * 100_001)
    assert cost.output == pytest.approx(4.0)


def test_highest_matching_tier_wins_regardless_of_list_order() -> None:
    usage = Usage(input=250_000, output=1_000_000)
    cost = calculate_cost(model(TIERED), usage)
    assert cost.input == pytest.approx(4.0 / 1e6 * 250_000)
    assert cost.output == pytest.approx(8.0)


def test_tier_selection_counts_input_plus_cache_read_plus_cache_write() -> None:
    # 10k input + 60k cache read + 40k cache write = 110k prompt tokens > 100k
    usage = Usage(
        input=10_000, output=0, cache_read=60_000, cache_write=40_000, cache_write_1h=10_000
    )
    cost = calculate_cost(model(TIERED), usage)
    assert cost.input == pytest.approx(2.0 / 1e6 * 10_000)
    assert cost.cache_read == pytest.approx(0.2 / 1e6 * 60_000)
    # 1h writes use twice the *tier's* input rate
    assert cost.cache_write == pytest.approx((2.5 * 30_000 + 2.0 * 2 * 10_000) / 1e6)


def test_output_tokens_do_not_count_towards_the_tier() -> None:
    usage = Usage(input=1_000, output=500_000)
    cost = calculate_cost(model(TIERED), usage)
    assert cost.output == pytest.approx(2.0 / 1e6 * 500_000)


def test_finalize_usage_fills_total_tokens_and_cost() -> None:
    usage = Usage(input=10, output=20, cache_read=30, cache_write=40, total_tokens=0)
    returned = finalize_usage(model(BASE), usage)
    assert returned is usage
    assert usage.total_tokens == 100
    assert usage.cost.total == pytest.approx((3.0 * 10 + 15.0 * 20 + 0.3 * 30 + 3.75 * 40) / 1e6)

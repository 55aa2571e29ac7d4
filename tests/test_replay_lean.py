"""Round 2 of replay's speed (branch s6b-replay): the step budget reads the clock once per
``lib.CLOCK_EVERY`` items, arguments are validated straight into a dict, and records returned
by a tool are validated by pydantic-core alone — each with the general path's answers."""

from __future__ import annotations

import time

import pytest

from contractsim.compiler import lib


def test_a_step_of_few_items_does_not_read_the_clock(monkeypatch: pytest.MonkeyPatch) -> None:
    reads = []
    real = time.monotonic
    monkeypatch.setattr(lib.time, "monotonic", lambda: reads.append(1) or real())
    with lib.step_budget(10.0):
        start = len(reads)  # (the budget itself reads it once, on entering)
        for _ in range(lib.CLOCK_EVERY - 1):
            lib.charge(1)
        assert len(reads) == start
        lib.charge(1)  # the CLOCK_EVERY-th item: the clock is read
        assert len(reads) == start + 1
        lib.charge(lib.CLOCK_EVERY - 1)
        assert len(reads) == start + 1
        lib.charge(1)
        assert len(reads) == start + 2


def test_a_step_past_its_deadline_stops_within_clock_every_items() -> None:
    with lib.step_budget(10.0):
        lib.BUDGET.deadline = time.monotonic() - 1.0  # (as if the step had run 11 s)
        with pytest.raises(lib.EvalError, match="the step ran longer than 10 s"):
            for _ in range(lib.CLOCK_EVERY):
                lib.charge(1)
        assert lib.BUDGET.iterations == lib.CLOCK_EVERY


def test_a_whole_run_past_its_deadline_stops_within_clock_every_items() -> None:
    with lib.run_budget(time.monotonic() - 1.0), lib.step_budget(10.0):
        with pytest.raises(lib.OutOfTime):
            lib.charge(lib.CLOCK_EVERY)


def test_the_item_limit_is_exact_between_clock_readings() -> None:
    with lib.step_budget(10.0):
        lib.charge(lib.MAX_ITERATIONS)
        with pytest.raises(lib.EvalError, match="visited more than 5,000,000 items"):
            lib.charge(1)


def test_nested_budgets_restore_the_outer_clock_count() -> None:
    with lib.step_budget(10.0):
        lib.charge(100)
        outer = (lib.BUDGET.iterations, lib.BUDGET.next_clock, lib.BUDGET.deadline)
        with lib.step_budget(1.0):
            lib.charge(lib.CLOCK_EVERY + 5)
            assert lib.BUDGET.next_clock == 2 * lib.CLOCK_EVERY + 5
        assert (lib.BUDGET.iterations, lib.BUDGET.next_clock, lib.BUDGET.deadline) == outer

"""Second stranger review of the state-file walker (`_MarkedValues`, s7-states): each defect a
value that a state file took although it does not fit its declared type."""

from __future__ import annotations

import json
from typing import Any

import pytest

import contractsim
from contractsim.compiler.values import Bounded, FMap
from contractsim.diagnostics import ContractError
from contractsim.simulator.values import validate_state_overrides

CONTRACT = """contract r2 version "1.0.0"
type Info = record { size: int min 0, name: str }
state {
  n: int min 0 max 10 = 0
  level: float min 0.0 = 0.0
  info: Info | null = null
  sizes: list[int min 0] = []
}
"""

SIM = contractsim.loads(CONTRACT)


def read(**values: Any) -> dict[str, Any]:
    return validate_state_overrides(SIM.compiled, values, "s.json", json.dumps(values))


def problems(**values: Any) -> list[str]:
    with pytest.raises(ContractError) as info:
        read(**values)
    return [f"{d.code} {d.message}" for d in info.value.diagnostics]


def bounded(lo: Any, hi: Any) -> dict[str, Any]:
    return {"$unknown": {"min": lo, "max": hi}}


def test_a_bounded_unknown_outside_the_types_constraints_is_refused() -> None:
    # `n: int min 0 max 10` took {"$unknown": {"min": -9, "max": -5}}: a value the type forbids
    assert problems(n=bounded(-9, -5)) == [
        "E0702 `n`: the bound -9 does not fit the type: must be at least 0 (got -9)"
    ]
    assert problems(n=bounded(2, 30)) == [
        "E0702 `n`: the bound 30 does not fit the type: must be at most 10 (got 30)"
    ]
    assert problems(level=bounded(-1.5, 2)) == [
        "E0702 `level`: the bound -1.5 does not fit the type: must be at least 0.0 (got -1.5)"
    ]
    # the same below the top: a record field, a list item
    assert problems(info={"size": bounded(-3, 4), "name": "a"}) == [
        "E0702 `info.size`: the bound -3 does not fit the type: must be at least 0 (got -3)"
    ]
    assert problems(sizes=[1, bounded(-3, 4)]) == [
        "E0702 `sizes.1`: the bound -3 does not fit the type: must be at least 0 (got -3)"
    ]
    # from Python too
    with pytest.raises(ContractError):
        validate_state_overrides(SIM.compiled, {"n": Bounded(-9, -5, True)}, "<python>", "")


def test_a_bounded_unknown_inside_the_constraints_still_reads() -> None:
    assert read(n=bounded(0, 10)) == {"n": Bounded(0, 10, True)}
    assert read(info={"size": bounded(1, 4), "name": "a"}) == {
        "info": FMap({"size": Bounded(1, 4, True), "name": "a"})
    }
    assert read(sizes=[bounded(0, 3)]) == {"sizes": (Bounded(0, 3, True),)}

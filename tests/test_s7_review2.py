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


LISTS = contractsim.loads(
    """contract r2l version "1.0.0"
state {
  few: list[int] max_items 2 = []
  many: list[int] min_items 3 = [0, 0, 0]
  one: map[str, int] max_items 1 = {}
  tags: set[str] max_items 1 = {}
}
"""
)


def list_problems(**values: Any) -> list[str]:
    with pytest.raises(ContractError) as info:
        validate_state_overrides(LISTS.compiled, values, "s.json", json.dumps(values))
    return [f"{d.code} {d.message}" for d in info.value.diagnostics]


def test_a_count_constraint_next_to_a_mark_reports_the_value_given() -> None:
    # the count was checked on placeholders, and the message showed them:
    # "is too long: at most 2 items (got [null, null, null])"
    assert list_problems(few=[1, 2, "$unknown"]) == [
        'E0702 `few`: is too long: at most 2 items (got [1, 2, "$unknown"])'
    ]
    assert list_problems(few=[1, 2, 3]) == [
        "E0702 `few`: is too long: at most 2 items (got [1, 2, 3])"
    ]
    assert list_problems(many=["$unknown"]) == [
        'E0702 `many`: is too short: at least 3 items (got ["$unknown"])'
    ]
    assert list_problems(one={"a": 1, "$unknown": 2}) == [
        'E0702 `one`: is too long: at most 1 items (got {"$unknown": 2, "a": 1})'
    ]
    assert list_problems(tags=["a", "$unknown"]) == [
        'E0702 `tags`: is too long: at most 1 items (got ["a", "$unknown"])'
    ]


TUPLES = contractsim.loads(
    """contract r2t version "1.0.0"
state {
  pair: tuple[int, str] = (0, "")
  rows: list[tuple[int, str, bool]] = []
}
"""
)


def tuple_problems(**values: Any) -> list[str]:
    with pytest.raises(ContractError) as info:
        validate_state_overrides(TUPLES.compiled, values, "s.json", json.dumps(values))
    return [f"{d.code} {d.message}" for d in info.value.diagnostics]


def test_a_short_tuple_holding_a_mark_reports_only_the_missing_items() -> None:
    # the mark itself was reported as a wrong value: "`pair.0`: must be an integer (got
    # "$unknown")", next to the missing item; without the mark only the missing item is
    assert tuple_problems(pair=[1]) == ["E0702 `pair.1`: is required but missing"]
    assert tuple_problems(pair=["$unknown"]) == ["E0702 `pair.1`: is required but missing"]
    assert tuple_problems(rows=[["$unknown"]]) == [
        "E0702 `rows.0.1`: is required but missing",
        "E0702 `rows.0.2`: is required but missing",
    ]
    # a wrong item next to the mark is still named
    assert tuple_problems(rows=[["$unknown", 5]]) == [
        "E0702 `rows.0.1`: must be a string (got 5)",
        "E0702 `rows.0.2`: is required but missing",
    ]
    # too long: the length, as without marks
    assert tuple_problems(pair=["$unknown", "a", 3]) == [
        'E0702 `pair`: is too long: at most 2 items (got ["$unknown", "a", 3])'
    ]


TEXTS = contractsim.loads(
    """contract r2s version "1.0.0"
type Note = record { text: str }
state {
  note: Note | null = null
  counts: map[str, int] = {}
}
"""
)


def test_the_text_dollar_unknown_reads_as_unknown_as_documented() -> None:
    # docs/cli.md "State files" and docs/embedding.md now say it: a `str` given the text
    # "$unknown" (a value, a map key) is unknown at any depth; below the top it used to be text
    values = {"note": {"text": "$unknown"}, "counts": {"$unknown": 1, "a": 2}}
    out = validate_state_overrides(TEXTS.compiled, values, "s.json", json.dumps(values))
    assert out["note"] == FMap({"text": contractsim.UNKNOWN})
    assert out["counts"] == FMap({contractsim.UNKNOWN: 1, "a": 2})


ANYS = contractsim.loads(
    """contract r2a version "1.0.0"
state {
  j: any = null
  est: int = 0
  lvl: float = 0.0
}
tool estimate() {
  effect {
    est = unknown in [1, 5]
    lvl = unknown in [0.5, 2]
    j = {"n": est, "l": [est], "x": lvl}
  }
}
tool build() {
  effect { j = {"$unknown": 5} }
}
"""
)


def any_read(**values: Any) -> dict[str, Any]:
    return validate_state_overrides(ANYS.compiled, values, "s.json", json.dumps(values))


def test_a_bounded_unknown_under_any_reads_back() -> None:
    # a simulated state wrote {"j": {"n": {"$unknown": {"min": 1, "max": 5}}, …}} and reading
    # it back was E0702 "`j.n`: only an int or float variable can hold a bounded unknown"
    sim = ANYS.simulator(now="2024-06-01T12:00:00Z")
    (branch,) = sim.step(sim.initial_state(), "estimate", {}).branches
    written = branch.state.to_json()
    again = any_read(**written)
    assert again["j"] == FMap(
        {"n": Bounded(1, 5, True), "l": (Bounded(1, 5, True),), "x": Bounded(0.5, 2, False)}
    )
    assert sim.state_with(again).to_json() == written
    assert any_read(j=bounded(3, 4)) == {"j": Bounded(3, 4, True)}
    # the form's own errors are still named
    with pytest.raises(ContractError, match="empty range"):
        any_read(j={"a": bounded(5, 1)})


def test_a_map_key_dollar_unknown_under_any_is_an_unknown_key_as_in_a_map_type() -> None:
    # {"$unknown": 5} under `any` was E0702 (not a bounded unknown's form), and in
    # {"$unknown": 1, "a": 2} the key stayed text, where `map[str, int]` and the docs ("a map
    # value or key") read an unknown key: a simulated `j = {s: 1}` with `s` unknown writes it so
    U = contractsim.UNKNOWN
    assert any_read(j={"$unknown": 5}) == {"j": FMap({U: 5})}
    assert any_read(j={"$unknown": 1, "a": 2}) == {"j": FMap({U: 1, "a": 2})}
    assert any_read(j=[{"$unknown": [1]}]) == {"j": (FMap({U: (1,)}),)}

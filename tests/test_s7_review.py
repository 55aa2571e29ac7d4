"""Defects found reviewing session 7's change (parser, lowering and checking speed-ups; simulated
open records written with ``"$open": true`` and three-valued equality, membership and lookups).
Each test failed on the merged change and passes with its fix."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from conftest import write

import contractsim
from contractsim.cli import main
from contractsim.compiler import lib
from contractsim.compiler.values import UNKNOWN, FMap, Fresh, OpenRecord

NOW = "2024-06-01T12:00:00Z"

# ------------------------------------------------------------------ "$open" in state files

UNION = """contract u version "1.0.0"
type Note = record { id: str, ... }
state {
  u: map[str, bool] | Note = {}
}
tool put() {
  effect u = {"$open": true}
}
tool use() {
  require u == {"$open": true} else CHANGED "u is not the map put wrote"
}
"""


def _read_state(contract: contractsim.Contract, values: dict[str, Any]) -> dict[str, Any]:
    from contractsim.simulator.values import validate_state_overrides

    return validate_state_overrides(contract.compiled, values, "s.json", json.dumps(values))


def test_a_map_in_a_union_with_an_open_record_is_not_read_back_as_that_record() -> None:
    """A `map[str, bool]` holding the key "$open" (true), in a union with an open record type,
    was restored as a simulated `Note` without its declared field `id` (a value of no option
    of the union): `_reopen` tried every option and took the first that turned the value
    into an open record, whatever fields the record declares."""
    c = contractsim.loads(UNION)
    sim = c.simulator(now=NOW)
    (branch,) = sim.step(sim.initial_state(), "put", {}).branches
    saved = branch.state.to_json()
    assert saved == {"u": {"$open": True}}
    got = _read_state(c, saved)
    assert got == {"u": FMap({"$open": True})}
    assert type(got["u"]) is FMap
    # a record with every declared field is still restored as a simulated open record
    reopened = _read_state(c, {"u": {"id": "a", "$open": True}})["u"]
    assert type(reopened) is OpenRecord and reopened == OpenRecord({"id": "a"})


def test_a_state_file_of_a_map_in_a_union_keeps_its_verdict(tmp_path: Path) -> None:
    contract = write(tmp_path, "c.contract", UNION)
    state = write(tmp_path, "s.json", json.dumps({"u": {"$open": True}}))
    plan = write(tmp_path, "p.yaml", "- tool: use\n")
    res = CliRunner().invoke(
        main, ["simulate", contract, plan, "--now", NOW, "--state", state, "--format", "json"]
    )
    assert res.exit_code == 0, res.output
    assert json.loads(res.output)["verdict"] == "ok"


# ------------------------------------------------------------------ lookups, three-valued


def test_a_lookup_hit_by_a_key_holding_unknowns_is_unknown_as_membership_is() -> None:
    """`m[k]` with a key holding unknowns that Python finds among the map's keys gave that
    entry's value confidently, though `k in m` and `k == key` are unknown (two unknowns are
    not known to be equal; two open records with the same declared fields may differ in the
    others)."""
    held = FMap({"n": UNKNOWN})
    m = FMap({held: 1})
    key = FMap({"n": UNKNOWN})
    assert lib.safe_contains(key, m) is UNKNOWN
    assert lib.index(m, key) is UNKNOWN
    r = OpenRecord({"id": "a"})
    assert lib.safe_compare("==", OpenRecord({"id": "a"}), r) is UNKNOWN
    assert lib.index(FMap({r: 1}), OpenRecord({"id": "a"})) is UNKNOWN
    assert lib.index(FMap({(UNKNOWN, 1): 5}), (UNKNOWN, 1)) is UNKNOWN
    # one call's result (a fresh field) is itself: the lookup is exact
    fresh = OpenRecord({"id": Fresh("call.id", 1)})
    assert lib.index(FMap({fresh: 7}), OpenRecord({"id": Fresh("call.id", 1)})) == 7
    assert lib.index(FMap({(1, "a"): 2}), (1, "a")) == 2


def test_get_with_a_key_that_may_be_one_of_the_map_s_keys_is_unknown() -> None:
    """`get(m, k, d)` answered the default (or the value) confidently where `k in m` is unknown:
    a key holding unknowns, or a known key where the map's keys hold unknowns."""
    get = lib.SAFE_FUNCS["get"]
    assert get(FMap({FMap({"n": 2}): 1}), FMap({"n": UNKNOWN}), 0) is UNKNOWN
    assert get(FMap({FMap({"n": UNKNOWN}): 1}), FMap({"n": UNKNOWN}), 0) is UNKNOWN
    assert get(FMap({(UNKNOWN,): 5}), (1,), 0) is UNKNOWN
    # known apart, or known equal: exact
    assert get(FMap({(1, 2): 5}), (UNKNOWN,), 0) == 0
    assert get(FMap({(1,): 5}), (1,), 0) == 5
    assert get(FMap({"a": 5}), "b", 0) == 0


@pytest.mark.xfail(strict=True, reason="not fixed: the JSON form cannot tell the two apart")
def test_a_built_map_with_the_key_open_in_an_any_variable_round_trips() -> None:
    """A map the contract builds, `{"$open": true}`, in a variable of type `any` (or a value
    of a `map[str, any]`) is written as `{"$open": true}` and read back as an empty simulated
    open record: `j == {"$open": true}` turns from true to unknown across --state. Under
    `any` the reader has no type to go by, and `{"$entries": …}` is not read there either;
    an unambiguous form is a format decision (left to the lead)."""
    c = contractsim.loads(
        'contract a version "1.0.0"\nstate {\n  j: any = null\n  ma: map[str, any] = {}\n}\n'
        'tool put() {\n  effect {\n    j = {"$open": true}\n    ma = {"k": {"$open": true}}\n'
        "  }\n}\n"
    )
    sim = c.simulator(now=NOW)
    (branch,) = sim.step(sim.initial_state(), "put", {}).branches
    got = _read_state(c, branch.state.to_json())
    assert type(got["j"]) is FMap and type(got["ma"]["k"]) is FMap


def test_the_open_mark_hint_is_only_for_a_closed_record_s_extra_field() -> None:
    """A `map[str, int]` whose key "$open" holds a value of the wrong type was told that a
    closed record holds exactly its fields and to remove the key (the hint of an extra field
    named "$open"), instead of the value's own hint."""
    from contractsim.diagnostics import ContractError

    c = contractsim.loads(
        'contract h version "1.0.0"\ntype Shut = record { id: str }\n'
        "state {\n  f: map[str, int] = {}\n  sh: Shut | null = null\n}\n"
    )
    with pytest.raises(ContractError) as info:
        _read_state(c, {"f": {"$open": True}})
    (problem,) = info.value.diagnostics
    assert problem.message == "`f.$open`: must be an integer (got true)"
    assert problem.hint is not None and "closed record" not in problem.hint
    with pytest.raises(ContractError) as info:
        _read_state(c, {"sh": {"id": "a", "$open": True}})
    (problem,) = info.value.diagnostics
    assert problem.message == "`sh.$open`: is not a declared field"
    assert problem.hint == (
        '"$open": true marks a simulated open record (reports write it so); a value of a '
        "closed record type holds exactly its fields: remove the key"
    )


def test_a_union_of_open_records_restores_the_fields_a_later_option_declares() -> None:
    """`A | B` of open record types, a simulated `B` written to a state file: `_reopen` took
    `A` (its declared fields are there) and left the fields only `B` declares as read, so a
    simulated record in one stayed a closed map holding a field "$open"."""
    c = contractsim.loads(
        'contract n version "1.0.0"\ntype Note = record { id: str, ... }\n'
        "type A = record { id: str, ... }\ntype B = record { id: str, inner: Note, ... }\n"
        "state {\n  ab: A | B | null = null\n  nested: map[str, bool] | B | null = null\n}\n"
    )
    value = {"id": "b1", "inner": {"id": "n1", "$open": True}, "$open": True}
    expected = OpenRecord({"id": "b1", "inner": OpenRecord({"id": "n1"})})
    got = _read_state(c, {"ab": value})["ab"]
    assert got == expected
    assert type(got) is OpenRecord and type(got["inner"]) is OpenRecord
    assert _read_state(c, {"nested": value})["nested"] == expected
    # a map is not taken for the record: its key "$open" stays a key
    assert type(_read_state(c, {"nested": {"$open": True}})["nested"]) is FMap


# ------------------------------------------------------------------ "one call's result"

EDITED = """contract f version "1.0.0"
type Note = record { id: str, ... }
state {
  a: Note | null = null
  b: Note | null = null
}
tool create() -> Note {
  effect a = result
}
tool again() -> Note {
  require a != null
  effect {
    var n = result
    n.id = a.id
    b = n
  }
}
tool differ() {
  require a != b else SAME "the two notes are one"
}
"""


def test_a_result_given_another_call_s_fresh_field_is_not_that_call_s_result() -> None:
    """`equal3` took two simulated open records with the same fields, one a fresh value, for
    one call's result. A result whose field is set to another result's fresh value holds the
    same fields but its undeclared ones come from its own call: `a != b` was confidently
    false (the step failed) where it is unknown (may fail)."""
    c = contractsim.loads(EDITED)
    sim = c.simulator(now=NOW)
    state = sim.initial_state()
    for tool in ("create", "again"):
        (branch,) = sim.step(state, tool, {}).branches
        state = branch.state
    assert state["a"] == state["b"]  # (as Python values)
    assert lib.safe_compare("==", state["a"], state["b"]) is UNKNOWN
    step = sim.step(state, "differ", {})
    assert step.verdict == "may_fail"
    assert [[v.code for v in b.violations] for b in step.branches] == [["SAME"], []]
    # the same record, edited or not, is itself; an unedited result is found by its fresh value
    edited = state["b"]
    assert lib.safe_compare("==", edited, edited) is True
    one = OpenRecord({"id": Fresh("call.id", 1)})
    assert lib.safe_compare("==", one, OpenRecord({"id": Fresh("call.id", 1)})) is True
    assert lib.safe_compare("==", one.set("id", one["id"]), one) is True


def test_an_edited_result_read_from_python_stays_edited() -> None:
    """`contract_value` (values handed in from Python: initial states, guard errors) rebuilt a
    simulated open record from its fields and so dropped the mark of an edit."""
    from contractsim.compiler.foreign import contract_value

    one = OpenRecord({"id": Fresh("call.id", 1)})
    edited = OpenRecord({"id": Fresh("other.id", 2)}).set("id", one["id"])
    read = contract_value([edited]).value[0]
    assert type(read) is OpenRecord and read.edited
    assert lib.safe_compare("==", read, one) is UNKNOWN
    assert not getattr(contract_value(one).value, "edited", False)

"""JSON writes a simulated open record with `"$open": true` after its declared fields (it wrote
the declared fields only, so a reader could not tell that the value may hold more), and a state
file reads the mark back as an open record where the type is an open record type (or `any`);
a closed record type refuses it with a hint."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result
from conftest import write

import contractsim
from contractsim import UNKNOWN
from contractsim.cli import main
from contractsim.compiler.foreign import contract_value
from contractsim.compiler.values import FMap, Fresh, OpenRecord, json_ready, thaw
from contractsim.diagnostics import ContractError

NOW = "2024-06-01T12:00:00Z"

CONTRACT = """contract oj version "1.0.0"
type Note = record { id: str, ... }
type Shut = record { id: str }
state {
  last: Note | null = null
  seen: set[Note] = {}
  shut: Shut | null = null
  j: any = null
}
tool call() -> Note {
  effect {
    last = result
    seen.add(result)
    j = result
  }
}
tool use() {
  require last != null and get(last, "x", 0) == 0 else EXTRA "the reply holds x"
}
"""

OPEN_NOTE = {"id": "$fresh:call.id#1", "$open": True}
FINAL = {"last": OPEN_NOTE, "seen": [OPEN_NOTE], "shut": None, "j": OPEN_NOTE}


@pytest.fixture
def d(tmp_path: Path) -> Path:
    (tmp_path / "c.contract").write_text(CONTRACT, encoding="utf-8")
    return tmp_path


def simulate(d: Path, plan: str, *extra: str) -> Result:
    return CliRunner().invoke(main, ["simulate", str(d / "c.contract"), plan, "--now", NOW, *extra])


def test_thaw_marks_a_simulated_open_record() -> None:
    value = OpenRecord({"n": UNKNOWN, "id": Fresh("call.id", 1)})
    assert thaw(value) == {"id": "$fresh:call.id#1", "n": "$unknown", "$open": True}
    assert list(thaw(value)) == ["id", "n", "$open"]  # the mark comes after the fields
    assert thaw(OpenRecord()) == {"$open": True}
    assert thaw(FMap({"id": "a"})) == {"id": "a"}  # a real or built record: exactly its fields
    assert thaw((value, frozenset({value}), FMap({"r": value}))) == [
        {"id": "$fresh:call.id#1", "n": "$unknown", "$open": True},
        [{"id": "$fresh:call.id#1", "n": "$unknown", "$open": True}],
        {"r": {"id": "$fresh:call.id#1", "n": "$unknown", "$open": True}},
    ]


def test_guard_json_keeps_the_mark() -> None:
    """Guard errors write values through contract_value, which read an open record as an
    object and so lost the mark."""
    value = OpenRecord({"id": "a"})
    assert type(contract_value(value).value) is OpenRecord
    assert json_ready(thaw(contract_value([value]).value)) == [{"id": "a", "$open": True}]


def test_simulate_json_writes_the_mark(d: Path) -> None:
    res = simulate(d, write(d, "p.yaml", "- tool: call\n"), "--format", "json")
    assert res.exit_code == 0, res.output
    report = json.loads(res.output)
    (branch,) = report["branches"]
    assert branch["final_state"] == {
        "last": OPEN_NOTE,
        "seen": [OPEN_NOTE],
        "shut": None,
        "j": OPEN_NOTE,
    }
    changes = {c["var"]: c["after"] for c in report["steps"][0]["changes"]}
    assert changes == {"last": OPEN_NOTE, "seen": [OPEN_NOTE], "j": OPEN_NOTE}


def test_state_to_json_writes_the_mark() -> None:
    sim = contractsim.loads(CONTRACT).simulator(now=NOW)
    (b,) = sim.step(sim.initial_state(), "call", {}).branches
    assert b.state.to_json() == {
        "last": OPEN_NOTE,
        "seen": [OPEN_NOTE],
        "shut": None,
        "j": OPEN_NOTE,
    }


OPEN_A = {"id": "a1", "$open": True}


def test_a_state_file_reads_the_mark_back(d: Path) -> None:
    """Read back, the record may hold fields nobody has seen again: `get(last, "x", 0)` is
    unknown (may fail); without the mark it is a record holding exactly `id` (ok)."""
    plan = write(d, "p.yaml", "- tool: use\n")
    marked = write(d, "s.json", json.dumps({"last": OPEN_A, "seen": [OPEN_A], "j": OPEN_A}))
    res = simulate(d, plan, "--state", marked, "--format", "json")
    assert res.exit_code == 3, res.output
    report = json.loads(res.output)
    assert report["verdict"] == "may_fail"
    assert [v["code"] for v in report["steps"][0]["violations"]] == ["EXTRA"]
    assert report["branches"][0]["final_state"] == {
        "last": OPEN_A,
        "seen": [OPEN_A],
        "shut": None,
        "j": OPEN_A,
    }
    plain = write(d, "s2.json", json.dumps({"last": {"id": "a1"}}))
    assert simulate(d, plan, "--state", plain).exit_code == 0


def test_a_state_file_restores_open_records_by_type() -> None:
    from contractsim.simulator.values import validate_state_overrides

    c = contractsim.loads(
        'contract r version "1.0.0"\n'
        "type Note = record { id: str, ... }\n"
        'state {\n  one: Note = Note(id="a")\n  many: map[str, list[Note]] = {}\n'
        '  pair: tuple[int, Note] = (1, Note(id="a"))\n  flags: map[str, bool] = {}\n'
        "  keyed: map[Note, int] = {}\n  j: any = null\n}\n"
    )

    def read(**values: Any) -> dict[str, Any]:
        return validate_state_overrides(c.compiled, values, "s.json", json.dumps(values))

    got = read(
        one=OPEN_A,
        many={"k": [OPEN_A]},
        pair=[1, OPEN_A],
        flags={"$open": True},
        keyed={"$entries": [[OPEN_A, 1]]},
        j={"r": [OPEN_A]},
    )
    a1 = OpenRecord({"id": "a1"})
    assert got == {
        "one": a1,
        "many": FMap({"k": (a1,)}),
        "pair": (1, a1),
        "flags": FMap({"$open": True}),  # a map's key like any other
        "keyed": FMap({a1: 1}),
        "j": FMap({"r": (a1,)}),
    }
    assert type(got["one"]) is OpenRecord and type(got["flags"]) is FMap
    assert [type(k) for k in got["keyed"]] == [OpenRecord]
    # from Python the mark is a field like any other (as "$unknown" is a string there)
    sim = c.simulator(now=NOW)
    assert type(sim.initial_state({"one": OPEN_A})["one"]) is not OpenRecord


def test_a_closed_record_refuses_the_mark(d: Path) -> None:
    state = write(d, "s.json", '{"shut": {"id": "a", "$open": true}}')
    res = simulate(d, write(d, "p.yaml", "- tool: use\n"), "--state", state)
    assert res.exit_code == 2, res.output
    assert f"{state}:1:1: error[E0702]: `shut.$open`: is not a declared field" in res.output
    assert (
        'hint: "$open": true marks a simulated open record (reports write it so); a value of '
        "a closed record type holds exactly its fields: remove the key"
    ) in res.output
    from contractsim.simulator.values import validate_state_overrides

    c = contractsim.loads(CONTRACT)
    with pytest.raises(ContractError) as info:
        validate_state_overrides(c.compiled, {"shut": {"id": "a", "$open": True}}, "s.json")
    assert [x.code for x in info.value.diagnostics] == ["E0702"]

"""A simulated final state, written as `simulate --format json` writes it, reads back as a state
file to the same state: `"$unknown"`, `{"$unknown": {"min": LO, "max": HI}}`, `"$fresh:…"` and
`"$open": true` are read at any depth (record fields, list/tuple/set items, map values and keys),
where they used to be read only as a whole variable's value (E0702 for a nested `"$unknown"`)."""

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
from contractsim.compiler.values import Bounded, FMap, OpenRecord
from contractsim.diagnostics import ContractError
from contractsim.simulator.values import validate_state_overrides

NOW = "2024-06-01T12:00:00Z"
EXAMPLES = Path(__file__).resolve().parent.parent / "examples"
PLANS = sorted(EXAMPLES.glob("*/plans/*.yaml"))


def simulate(contract: Path | str, plan: str, *extra: str) -> Result:
    return CliRunner().invoke(
        main, ["simulate", str(contract), plan, "--now", NOW, "--format", "json", *extra]
    )


def final_states(res: Result) -> list[dict[str, Any]]:
    return [b["final_state"] for b in json.loads(res.output)["branches"]]


@pytest.mark.parametrize("plan", PLANS, ids=lambda p: f"{p.parent.parent.name}/{p.stem}")
def test_every_examples_final_state_reads_back_as_written(plan: Path, tmp_path: Path) -> None:
    (contract,) = plan.parent.parent.glob("*.contract")
    res = simulate(contract, str(plan))
    if res.exit_code == 2:
        pytest.skip("the plan does not simulate")
    assert res.exit_code in (0, 1, 3), res.output
    empty = write(tmp_path, "empty.yaml", "steps: []\n")
    for i, state in enumerate(final_states(res)):
        saved = write(tmp_path, f"state{i}.json", json.dumps(state))
        again = simulate(contract, empty, "--state", saved)
        assert again.exit_code == 0, again.output
        assert final_states(again) == [state]


CONTRACT = """contract rt version "1.0.0"
type Info = record { size: int, name: str, tags: list[str] = [] }
type Box = record { id: str, ... }
type Leaf = record { n: int }
type Node = union by op { leaf: Leaf, box: Box }
state {
  files: map[str, Info] = {}
  counts: list[int] = []
  sizes: set[int] = {}
  pair: tuple[int, str] = (0, "")
  keyed: map[int, str] = {}
  maybe: Info | null = null
  j: any = null
  boxes: list[Box] = []
  deep: map[str, list[map[str, Info]]] = {}
  nodes: list[Node] = []
  few: list[int] min_items 2 = [0, 0]
  level: float = 0.0
  est: int = 0
  score: int | null = null
  shut: Leaf | null = null
}
tool estimate() {
  effect {
    est = unknown in [1, 5]
    counts.append(est)
    files["e"] = Info(size=est, name="e")
  }
}
tool stat(path: str) -> Info {
  effect { files[path] = result }
}
tool open() -> Box {
  effect { boxes.append(result) }
}
tool count() -> int {
  effect {
    counts.append(result)
    sizes.add(result)
    keyed[result] = "seen"
    pair = (result, "x")
    j = {"n": result}
  }
}
"""

SIM = contractsim.loads(CONTRACT)


def read(**values: Any) -> dict[str, Any]:
    return validate_state_overrides(SIM.compiled, values, "s.json", json.dumps(values))


def problems(**values: Any) -> list[str]:
    with pytest.raises(ContractError) as info:
        read(**values)
    return [f"{d.code} {d.message} | {d.hint}" for d in info.value.diagnostics]


def info(size: Any = 1, name: Any = "a", **more: Any) -> dict[str, Any]:
    return {"size": size, "name": name, **more}


def test_unknown_in_a_record_field_of_a_map_value() -> None:
    """The brief's case: `files: map[str, Info]` with an unknown size (was E0702)."""
    got = read(files={"a.txt": info(size="$unknown")})
    assert got == {"files": FMap({"a.txt": FMap({"size": UNKNOWN, "name": "a", "tags": ()})})}


def test_unknown_in_every_kind_of_place() -> None:
    got = read(
        counts=[1, "$unknown"],
        sizes=["$unknown", 2],
        pair=["$unknown", "x"],
        keyed={"1": "$unknown"},
        maybe=info(name="$unknown"),
        j={"r": ["$unknown", {"s": "$unknown"}]},
        deep={"k": [{"f": info(tags=["t", "$unknown"])}]},
        nodes=[{"op": "leaf", "n": "$unknown"}, {"op": "box", "id": "$unknown", "$open": True}],
    )
    assert got == {
        "counts": (1, UNKNOWN),
        "sizes": frozenset({UNKNOWN, 2}),
        "pair": (UNKNOWN, "x"),
        "keyed": FMap({1: UNKNOWN}),
        "maybe": FMap({"size": 1, "name": UNKNOWN, "tags": ()}),
        "j": FMap({"r": (UNKNOWN, FMap({"s": UNKNOWN}))}),
        "deep": FMap({"k": (FMap({"f": FMap({"size": 1, "name": "a", "tags": ("t", UNKNOWN)})}),)}),
        "nodes": (
            FMap({"op": "leaf", "n": UNKNOWN}),
            OpenRecord({"op": "box", "id": UNKNOWN}),
        ),
    }
    assert type(got["nodes"][1]) is OpenRecord


def test_unknown_map_keys_in_both_forms() -> None:
    assert read(keyed={"$unknown": "a", "2": "b"}) == {"keyed": FMap({UNKNOWN: "a", 2: "b"})}
    assert read(keyed={"$entries": [["$unknown", "a"], [2, "$unknown"]]}) == {
        "keyed": FMap({UNKNOWN: "a", 2: UNKNOWN})
    }
    assert read(files={"$unknown": info()})["files"] == FMap(
        {UNKNOWN: FMap({"size": 1, "name": "a", "tags": ()})}
    )


def test_a_set_of_several_unknown_items_is_what_the_simulator_builds() -> None:
    """Kept as it was: unknown is one value, so a set holds it once (as `{x, y}` with both
    unknown does in a simulation)."""
    assert read(sizes=["$unknown", "$unknown", 1]) == {"sizes": frozenset({UNKNOWN, 1})}


def test_bounded_unknowns_below_the_top() -> None:
    got = read(
        files={"a": info(size={"$unknown": {"min": 1, "max": 3}})},
        counts=[{"$unknown": {"min": 0, "max": 9}}],
        j=None,
    )
    assert got["files"]["a"]["size"] == Bounded(1, 3, True)
    assert type(got["files"]["a"]["size"]) is Bounded
    assert got["counts"] == (Bounded(0, 9, True),)
    assert read(level={"$unknown": {"min": 0.5, "max": 1}})["level"] == Bounded(0.5, 1.0, False)


def test_bounded_unknowns_where_the_type_is_not_a_number() -> None:
    hint = 'write a bounded unknown as {"$unknown": {"min": 10, "max": 20}} on a number variable'
    assert problems(files={"a": info(name={"$unknown": {"min": 1, "max": 3}})}) == [
        f"E0702 `files.a.name`: only an int or float variable can hold a bounded unknown | {hint}"
    ]
    # (under `any` it is a number, as a simulation writes one there: tests/test_s7_review2.py)
    assert read(j=[{"$unknown": {"min": 1, "max": 3}}]) == {"j": (Bounded(1, 3, True),)}
    assert problems(counts=[{"$unknown": {"min": 3, "max": 1}}]) == [
        "E0702 `counts.0`: `unknown in [3, 1]` is an empty range: 3 > 1 | " + hint
    ]


def test_fresh_values_stay_text_at_any_depth() -> None:
    got = read(files={"a": info(name="$fresh:stat.name#1")}, j={"x": "$fresh:t#2"})
    assert got["files"]["a"]["name"] == "$fresh:stat.name#1"
    assert got["j"] == FMap({"x": "$fresh:t#2"})


def test_wrong_values_next_to_marks_are_still_errors() -> None:
    assert problems(files={"a": info(size="$unknown", x=1), "b": info(size="q")}) == [
        "E0702 `files.a.x`: is not a declared field | remove it, or check the field names",
        'E0702 `files.b.size`: must be an integer (got "q") | give an integer',
    ]
    assert problems(files={"a": {"size": "$unknown"}}) == [
        "E0702 `files.a.name`: is required but missing | add `name` to the arguments"
    ]
    assert problems(pair=["$unknown", 1]) == [
        "E0702 `pair.1`: must be a string (got 1) | give a string"
    ]
    assert problems(few=["$unknown"])[0].startswith("E0702 `few`: ")
    assert problems(nodes=[{"op": "twig", "n": "$unknown"}])[0].startswith("E0702 `nodes.0")


def test_wrong_values_without_marks_read_as_before() -> None:
    """Values without any mark take the same path as before: the same messages."""
    assert problems(files={"a": info(x=1)}) == [
        "E0702 `files.a.x`: is not a declared field | remove it, or check the field names"
    ]
    assert problems(files={"b": info(size="q")}) == [
        'E0702 `files.b.size`: must be an integer (got "q") | give an integer'
    ]


def test_a_simulated_state_round_trips_through_the_cli(tmp_path: Path) -> None:
    contract = write(tmp_path, "rt.contract", CONTRACT)
    plan = write(
        tmp_path,
        "p.yaml",
        "steps:\n  - tool: stat\n    args: {path: a.txt}\n  - tool: open\n  - tool: count\n"
        "  - tool: estimate\n",
    )
    res = simulate(contract, plan)
    assert res.exit_code == 0, res.output
    (state,) = final_states(res)
    one_to_five = {"$unknown": {"min": 1, "max": 5}}
    assert state == {
        "files": {
            "a.txt": {"name": "$fresh:stat.name#1", "size": "$unknown", "tags": "$unknown"},
            "e": {"name": "e", "size": one_to_five, "tags": []},
        },
        "counts": ["$unknown", one_to_five],
        "sizes": ["$unknown"],
        "pair": ["$unknown", "x"],
        "keyed": "$unknown",
        "maybe": None,
        "j": {"n": "$unknown"},
        "boxes": [{"id": "$fresh:open.id#2", "$open": True}],
        "deep": {},
        "nodes": [],
        "few": [0, 0],
        "level": 0.0,
        "est": one_to_five,
        "score": None,
        "shut": None,
    }
    saved = write(tmp_path, "s.json", json.dumps(state))
    again = simulate(contract, write(tmp_path, "e.yaml", "steps: []\n"), "--state", saved)
    assert again.exit_code == 0, again.output
    assert final_states(again) == [state]


def test_a_nested_unknown_in_a_state_file_reports_the_file_and_line(tmp_path: Path) -> None:
    contract = write(tmp_path, "rt.contract", CONTRACT)
    saved = write(tmp_path, "s.yaml", 'counts: [1]\nfiles: {a: {size: "$unknown", name: 3}}\n')
    res = CliRunner().invoke(
        main, ["simulate", contract, write(tmp_path, "e.yaml", "steps: []\n"), "--state", saved]
    )
    assert res.exit_code == 2, res.output
    assert f"{saved}:2:1: error[E0702]: `files.a.name`: must be a string (got 3)" in res.output


def test_a_plans_state_reads_nested_marks(tmp_path: Path) -> None:
    contract = write(tmp_path, "rt.contract", CONTRACT)
    plan = write(
        tmp_path,
        "p.yaml",
        'state:\n  files: {a: {size: "$unknown", name: n}}\n'
        '  counts: [{"$unknown": {min: 2, max: 4}}]\nsteps: []\n',
    )
    res = simulate(contract, plan)
    assert res.exit_code == 0, res.output
    (state,) = final_states(res)
    assert state["files"] == {"a": {"name": "n", "size": "$unknown", "tags": []}}
    assert state["counts"] == [{"$unknown": {"min": 2, "max": 4}}]


def test_marks_in_a_union_take_the_option_that_reads_them() -> None:
    assert read(score={"$unknown": {"min": 1, "max": 2}}) == {"score": Bounded(1, 2, True)}
    assert read(shut={"n": "$unknown"}) == {"shut": FMap({"n": UNKNOWN})}
    # none does: the problems of the option of the value's shape, else the union's message
    assert problems(shut={"n": "$unknown", "$open": True}) == [
        'E0702 `shut.$open`: is not a declared field | "$open": true marks a simulated open '
        "record (reports write it so); a value of a closed record type holds exactly its "
        "fields: remove the key"
    ]
    assert problems(shut=["$unknown"]) == [
        'E0702 `shut`: must be one of Leaf | null (got ["$unknown"]) | give a value of one of '
        "the types Leaf | null"
    ]

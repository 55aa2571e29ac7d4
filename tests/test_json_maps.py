"""Maps with non-string keys read from JSON (issue 11, item 4): state files, plan arguments,
trace files, the guard's ``state=``. JSON writes every object key as a string; a key's type is
never changed silently."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

import contractsim
from contractsim.cli import main
from contractsim.compiler.values import FMap
from contractsim.replay import read_runs, replay_runs
from contractsim.simulator.json_maps import JsonMaps, KeyProblem, entries_for_keys
from contractsim.simulator.values import validate_state_overrides

SOURCE = """\
contract keys version "1.0.0"

type Order = record { amount: float, notes?: map[int, str] }

state {
  names: map[int, str] = {}
  orders: map[int | str, Order] = {}
  rates: map[float, str] = {}
  flags: map[bool, int] = {}
  pairs: map[list[int], str] = {}
}

tool cancel(order_id: int | str) {
  require order_id in orders else NO_SUCH_ORDER "no order {order_id}"
  effect orders.remove(order_id)
}

tool rename(names_by_id: map[int, str]) -> map[int, str] {
  require len(names_by_id) > 0 else EMPTY "nothing to rename"
  effect names = result
}
"""


@pytest.fixture(scope="module")
def contract() -> contractsim.Contract:
    return contractsim.loads(SOURCE, "keys.contract")


def state(contract: contractsim.Contract, **values: Any) -> dict[str, Any]:
    return validate_state_overrides(contract.compiled, values, "s.json")


def problems(contract: contractsim.Contract, **values: Any) -> list[tuple[str, str | None]]:
    with pytest.raises(contractsim.ContractError) as info:
        state(contract, **values)
    return [(d.message, d.hint) for d in info.value.diagnostics]


def test_numeric_string_keys_are_integers_where_the_key_type_is_int(
    contract: contractsim.Contract,
) -> None:
    got = state(contract, names={"0": "a", "-12": "b"})
    assert got["names"] == {0: "a", -12: "b"}
    assert all(type(k) is int for k in got["names"])


def test_keys_of_float_and_bool_maps(contract: contractsim.Contract) -> None:
    assert state(contract, rates={"1.5": "x", "2": "y"})["rates"] == {1.5: "x", 2.0: "y"}
    assert state(contract, flags={"true": 1, "false": 0})["flags"] == {True: 1, False: 0}


def test_nested_maps_are_read_too(contract: contractsim.Contract) -> None:
    got = state(contract, orders={"$entries": [[7, {"amount": 1.0, "notes": {"3": "late"}}]]})
    assert got["orders"] == {7: FMap({"amount": 1.0, "notes": FMap({3: "late"})})}
    assert type(next(iter(got["orders"]))) is int


def test_a_key_that_is_no_number_is_still_refused(contract: contractsim.Contract) -> None:
    assert problems(contract, names={"one": "a"}) == [
        ('`names.one.[key]`: must be an integer (got "one")', "give an integer")
    ]
    # 1.0 is a float, not an integer: not silently truncated
    assert problems(contract, names={"1.0": "a"})[0][0].startswith("`names.1.0.[key]`")


def test_an_ambiguous_key_is_an_error_not_a_guess(contract: contractsim.Contract) -> None:
    (problem,) = problems(contract, orders={"12446": {"amount": 10.0}})
    assert problem == (
        '`orders.12446`: the key "12446" could be the string "12446" or the integer 12446: the '
        "key type int | str takes both, and JSON writes every object key as a string",
        'write the map as {"$entries": [[KEY, VALUE], ...]} with each key as a JSON value of its '
        "own type (a number, a string, …)",
    )


def test_keys_that_are_only_strings_stay_strings(contract: contractsim.Contract) -> None:
    # "007" is no canonical JSON number, "x1" is no number: the union can only mean the string
    got = state(contract, orders={"007": {"amount": 1.0}, "x1": {"amount": 2.0}})
    assert set(got["orders"]) == {"007", "x1"}


def test_the_explicit_entries_form(contract: contractsim.Contract) -> None:
    got = state(
        contract,
        orders={"$entries": [[12446, {"amount": 10.0}], ["12446", {"amount": 5.0}]]},
        pairs={"$entries": [[[1, 2], "a"]]},
    )
    assert got["orders"] == {
        12446: FMap({"amount": 10.0, "notes": None}),
        "12446": FMap({"amount": 5.0, "notes": None}),
    }
    assert got["pairs"] == {(1, 2): "a"}


@pytest.mark.parametrize(
    ("value", "message"),
    [
        ({"$entries": [[1]]}, "`names.$entries[0]`: must be a [key, value] pair (got [1])"),
        ({"$entries": {"1": "a"}}, "`names.$entries`: an object with `$entries` holds only a"),
        ({"$entries": [], "2": "b"}, "`names`: an object with `$entries` holds only a list"),
        ({"$entries": [[1, "a"], [1, "b"]]}, "`names.$entries[1]`: the key 1 appears twice"),
    ],
)
def test_bad_entries(contract: contractsim.Contract, value: Any, message: str) -> None:
    (got,) = problems(contract, names=value)
    assert got[0].startswith(message)


def test_keys_that_read_as_the_same_value_are_refused(contract: contractsim.Contract) -> None:
    assert problems(contract, rates={"1": "a", "1.0": "b"})[0][0] == (
        '`rates`: the keys "1" and "1.0" are the same float 1.0'
    )


def test_the_state_file_of_simulate(tmp_path: Path) -> None:
    (tmp_path / "c.contract").write_text(SOURCE, encoding="utf-8")
    (tmp_path / "s.json").write_text(json.dumps({"orders": {"12446": {"amount": 1.0}}}))
    (tmp_path / "ok.json").write_text(
        json.dumps({"orders": {"$entries": [[12446, {"amount": 1.0}]]}})
    )
    (tmp_path / "p.json").write_text(json.dumps([{"tool": "cancel", "args": {"order_id": 12446}}]))
    run = [str(tmp_path / "c.contract"), str(tmp_path / "p.json"), "--format", "json"]
    bad = CliRunner().invoke(main, ["simulate", *run, "--state", str(tmp_path / "s.json")])
    assert bad.exit_code == 2
    (d,) = json.loads(bad.output)["diagnostics"]
    assert (d["code"], d["line"]) == ("E0702", 1)
    good = CliRunner().invoke(main, ["simulate", *run, "--state", str(tmp_path / "ok.json")])
    assert good.exit_code == 0, good.output
    assert json.loads(good.output)["verdict"] == "ok"


def test_plan_arguments(tmp_path: Path) -> None:
    (tmp_path / "c.contract").write_text(SOURCE, encoding="utf-8")
    plan = tmp_path / "p.json"
    plan.write_text(
        json.dumps(
            {
                "state": {"names": {"5": "e"}},
                "steps": [{"tool": "rename", "args": {"names_by_id": {"1": "a"}}}],
            }
        )
    )
    res = CliRunner().invoke(main, ["simulate", str(tmp_path / "c.contract"), str(plan)])
    assert res.exit_code == 0, res.output
    assert 'rename(names_by_id={1: "a"})' in res.output
    bad_plan = [{"tool": "rename", "args": {"names_by_id": {"x": "a"}}}]
    plan.write_text(json.dumps(bad_plan))
    res = CliRunner().invoke(main, ["simulate", str(tmp_path / "c.contract"), str(plan)])
    assert res.exit_code == 1  # a step whose arguments the contract refuses
    assert 'must be an integer (got "x")' in res.output


def test_plan_arguments_ambiguous_key(tmp_path: Path) -> None:
    source = SOURCE + "tool tag(by_id: map[int | str, str]) { }\n"
    (tmp_path / "c.contract").write_text(source, encoding="utf-8")
    plan = tmp_path / "p.json"
    plan.write_text('[\n  {"tool": "tag", "args": {"by_id": {"1": "a"}}}\n]\n')
    res = CliRunner().invoke(
        main, ["simulate", str(tmp_path / "c.contract"), str(plan), "--format", "json"]
    )
    assert res.exit_code == 2
    (d,) = json.loads(res.output)["diagnostics"]
    assert (d["code"], d["line"]) == ("E0701", 2)
    assert d["message"].startswith('step 1: `args.by_id.1`: the key "1" could be the string')


def test_trace_files(tmp_path: Path, contract: contractsim.Contract) -> None:
    ok = {"tool": "rename", "args": {"names_by_id": {"1": "a"}}, "outcome": "ok"}
    ok["result"] = {"1": "a", "2": "b"}
    cancel = {"tool": "cancel", "args": {"order_id": 12446}, "outcome": "ok"}
    runs = [{"state": {"orders": {"$entries": [[12446, {"amount": 1.0}]]}}, "steps": [ok, cancel]}]
    path = tmp_path / "t.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in runs))
    (run,) = read_runs(path, contract.compiled)
    assert run.steps[0].args == {"names_by_id": {1: "a"}}
    assert run.steps[0].result == {1: "a", 2: "b"}
    result = replay_runs(contract, [run])
    assert result.steps == 2 and not result.disagreements and not result.result_mismatches
    # the ambiguous key of the issue: a replay refuses it instead of reading a string
    runs[0]["state"] = {"orders": {"12446": {"amount": 1.0}}}
    path.write_text("".join(json.dumps(r) + "\n" for r in runs))
    with pytest.raises(contractsim.ContractError) as info:
        read_runs(path, contract.compiled)
    (d,) = info.value.diagnostics
    assert d.code == "E0906"
    assert 'could be the string "12446" or the integer 12446' in d.message


def test_an_adapters_integer_keys_survive(tmp_path: Path, contract: contractsim.Contract) -> None:
    adapter = tmp_path / "ad.py"
    adapter.write_text(
        "def conv(r):\n"
        "    return {'state': {'orders': {12446: {'amount': 1.0}}},\n"
        "            'steps': [{'tool': 'rename', 'args': {'names_by_id': {1: 'a'}},\n"
        "                       'outcome': 'ok', 'result': {1: 'a'}},\n"
        "                      {'tool': 'cancel', 'args': {'order_id': 12446}, 'outcome': 'ok'}]}\n"
    )
    path = tmp_path / "t.jsonl"
    path.write_text("{}\n")
    from contractsim.replay import load_adapter

    (run,) = read_runs(path, contract.compiled, load_adapter(f"{adapter}:conv"))
    assert run.steps[0].args == {"names_by_id": {1: "a"}}
    assert run.steps[0].result == {1: "a"}
    result = replay_runs(contract, [run])
    assert not result.disagreements


def test_the_guard_state(contract: contractsim.Contract) -> None:
    guard = contract.guard(state={"names": {"3": "c"}})
    assert guard.state["names"] == {3: "c"}
    with pytest.raises(ValueError, match="could be the string"):
        contract.guard(state={"orders": {"1": {"amount": 1.0}}})
    guard = contract.guard(state={"orders": {1: {"amount": 1.0}}})  # Python keys keep their type
    assert list(guard.state["orders"]) == [1]


def test_initial_state_overrides(contract: contractsim.Contract) -> None:
    sim = contract.simulator(now="2024-06-01T00:00:00Z")
    assert sim.initial_state({"names": {"3": "c"}})["names"] == {3: "c"}


def test_entries_for_keys() -> None:
    assert entries_for_keys({"a": {1: "x"}}) == ({"a": {"$entries": [[1, "x"]]}}, True)
    assert entries_for_keys({"a": [1]}) == ({"a": [1]}, False)


def test_reader_leaves_other_data_alone(contract: contractsim.Contract) -> None:
    maps = JsonMaps(contract.compiled)
    assert maps.read_args("nope", {"x": {"1": 2}}) == {"x": {"1": 2}}
    assert maps.read_args("cancel", {"order_id": "12"}) == {"order_id": "12"}
    (orders,) = [v.type for v in contract.compiled.ir.state if v.name == "orders"]
    with pytest.raises(KeyProblem, match="could be the string"):
        maps.read({"1": {"amount": 1.0}}, orders, "m")


def test_an_ambiguous_key_in_a_recorded_result(tmp_path: Path) -> None:
    source = SOURCE + "tool totals() -> map[int | str, int] { }\n"
    contract = contractsim.loads(source, "keys.contract")
    good = {"tool": "totals", "outcome": "ok", "result": {"$entries": [[1, 2], ["1", 3]]}}
    bad = {"tool": "totals", "outcome": "ok", "result": {"1": 2}}
    path = tmp_path / "t.jsonl"
    path.write_text(json.dumps({"steps": [good]}) + "\n" + json.dumps({"steps": [bad]}) + "\n")
    with pytest.raises(contractsim.ContractError) as info:
        read_runs(path, contract.compiled)
    (d,) = info.value.diagnostics
    assert (d.code, d.span.line) == ("E0904", 2)
    assert d.message.startswith('run 2, step 1: `result.1`: the key "1" could be the string "1"')
    path.write_text(json.dumps({"steps": [good]}) + "\n")
    (run,) = read_runs(path, contract.compiled)
    assert run.steps[0].result == {1: 2, "1": 3}


def test_observers_read_live_python_keys(contract: contractsim.Contract) -> None:
    """An observer reads the real tool's Python objects: a string key is a string there, so an
    ambiguous key stays a string (the guard's `state=` is read like a state file instead)."""
    guard = contract.guard()
    live = {"12446": {"amount": 1.0}, 7: {"amount": 2.0}}
    guard.add_observer("orders", lambda: live)
    assert guard.check("cancel", {"order_id": "12446"}) is None
    assert set(guard.state["orders"]) == {"12446", 7}
    assert guard.check("cancel", {"order_id": 12446}) is not None

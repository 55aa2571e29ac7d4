"""contractsim learn (issue 17): preconditions, error codes, effects and the safety of --safe."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st

import contractsim
from contractsim.api import check_text, learn_from_runs, loads
from contractsim.cli import main
from contractsim.learning import skeleton_of
from contractsim.learning.infer import state_type
from contractsim.learning.messages import cluster, code_for, template_for
from contractsim.learning.walks import first_failure, random_plans, random_runs
from contractsim.replay import read_runs, replay_runs

TOY = "tests/data/learn/toy.contract"
GORILLA = "examples/gorilla_fs/gorilla_fs.contract"
SNAPSHOTS = "tests/data/bfcl/GorillaFileSystem.snapshots.jsonl"
BLOCKS = ("tests/data/pddl/blocks/domain.pddl", "tests/data/pddl/blocks/probBLOCKS-4-0.pddl")
PANTRY = Path("examples/pantry")
GRIPPER = ("tests/data/pddl/gripper/domain.pddl", "tests/data/pddl/gripper/prob01.pddl")


def _step(tool: str, key: str, before: list[str], ok: bool) -> dict[str, Any]:
    after = sorted(set(before) | {key}) if tool == "put" and ok else before
    if tool == "drop" and ok:
        after = sorted(set(before) - {key})
    message = None
    if not ok:
        message = f"put: key '{key}' exists" if tool == "put" else f"drop: no key '{key}'"
    return {
        "tool": tool,
        "args": {"key": key},
        "outcome": "ok" if ok else "error",
        "error": message,
        "result": None,
        "state_after": {"keys": after},
    }


def _toy_runs(tmp_path: Path) -> str:
    """put(k) fails when k is there; drop(k) fails when it is not."""
    runs = []
    for n in range(6):
        keys: list[str] = []
        steps = []
        for tool, key in [
            ("put", f"a{n}"),
            ("put", f"a{n}"),
            ("put", "b"),
            ("drop", f"a{n}"),
            ("drop", f"a{n}"),
            ("drop", "c"),
            ("put", "c"),
        ]:
            ok = (key not in keys) if tool == "put" else (key in keys)
            steps.append(_step(tool, key, keys, ok))
            keys = steps[-1]["state_after"]["keys"]
        runs.append({"name": f"r{n}", "steps": steps})
    path = tmp_path / "toy.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in runs))
    return str(path)


def test_messages_become_codes_and_templates() -> None:
    assert code_for("rm: cannot remove '…': No such file or directory", "rm", set()) == (
        "NO_SUCH_FILE_DIRECTORY"
    )
    assert code_for("TypeError: unhashable type: '…'", "rm", set()) == "TYPE_ERROR"
    taken = {"FILE_EXISTS"}
    assert code_for("touch: '…': File exists", "touch", taken) == "FILE_EXISTS_2"
    assert template_for("cat: 'a.txt': No {such}", {"name": "a.txt"}, ["name"]) == (
        "cat: '{name}': No {{such}}"
    )
    clusters, which = cluster(
        "cat",
        [("cat: 'x1': gone", {"f": "x1"}), ("cat: 'y22': gone", {"f": "y22"}), ("boom", {})],
        ["f"],
        set(),
    )
    assert [(c.code, c.template, c.steps) for c in clusters] == [
        ("GONE", "cat: '{f}': gone", [0, 1]),
        ("BOOM", "boom", [2]),
    ]
    assert which == [0, 0, 1]


def test_default_mode_learns_the_clause_with_code_and_evidence(tmp_path: Path) -> None:
    result = contractsim.learn(_toy_runs(tmp_path), TOY)
    text = result.text
    assert (
        "  # learned: holds before 18/18 successes, violated before 6/6 failures\n"
        "  require key not in keys\n"
        "    else KEY_EXISTS \"put: key '{key}' exists\"\n"
    ) in text
    assert "  require key in keys\n    else NO_KEY \"drop: no key '{key}'\"\n" in text
    assert "  effect keys.add(key)\n" in text
    assert "  effect keys.remove(key)\n" in text
    assert [d for d in check_text(text, "l.contract") if d.severity == "error"] == []
    report = result.report()
    put = report["tools"]["put"]
    assert put["clauses"][0]["require"] == "key not in keys"
    assert put["clauses"][0]["confidence"] == 1.0
    assert put["unexplained_failures"] == []
    # the learned contract replays its own data with no disagreement and exact effects
    replayed = replay_runs(
        result.contract, read_runs(_toy_runs(tmp_path), result.contract.compiled)
    )
    assert replayed.agree
    assert replayed.effects.carried == 1.0


def test_safe_mode_keeps_every_atom_that_held(tmp_path: Path) -> None:
    result = contractsim.learn(_toy_runs(tmp_path), TOY, safe=True)
    put = [c["require"] for c in result.report()["tools"]["put"]["clauses"]]
    assert "key not in keys" in put
    assert "not locked" in put  # held before every success: kept, although nothing failed on it
    assert result.learned.mode == "safe"


def test_without_a_skeleton_types_are_inferred(tmp_path: Path) -> None:
    result = contractsim.learn(_toy_runs(tmp_path))
    assert "  keys: set[str] = {}\n" in result.text
    assert "tool put(key: str) {" in result.text
    assert "require key not in keys" in result.text
    assert state_type([[["a", "b"]], []]) == ("set[tuple[str, str]]", "{}")
    assert state_type([{"a": 1}]) == ("map[str, int]", "{}")
    assert state_type([["a", "a"]]) == ("list[str]", "[]")


def test_cli_learn_writes_contract_and_report(tmp_path: Path) -> None:
    out, rep = tmp_path / "o.contract", tmp_path / "r.json"
    res = CliRunner().invoke(
        main,
        ["learn", _toy_runs(tmp_path), "--skeleton", TOY, "-o", str(out), "--report", str(rep)],
    )
    assert res.exit_code == 0, res.output
    assert "require key not in keys" in out.read_text()
    assert json.loads(rep.read_text())["tools"]["drop"]["clauses"][0]["require"] == "key in keys"
    check = CliRunner().invoke(main, ["check", str(out)])
    assert check.exit_code == 0, check.output
    strict = CliRunner().invoke(
        main,
        ["learn", _toy_runs(tmp_path), "--skeleton", TOY, "--effect-exceptions", "0"],
    )
    assert strict.exit_code == 0, strict.output
    assert "require key not in keys" in strict.output
    negative = CliRunner().invoke(
        main, ["learn", _toy_runs(tmp_path), "--skeleton", TOY, "--effect-exceptions", "-1"]
    )
    assert negative.exit_code == 2 and "--effect-exceptions" in negative.output


def test_cli_learn_bad_trace_is_exit_2(tmp_path: Path) -> None:
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"steps": [{"tool": "put"}]}\n')
    res = CliRunner().invoke(main, ["learn", str(bad), "--skeleton", TOY])
    assert res.exit_code == 2
    assert "E0905" in res.output
    both = CliRunner().invoke(main, ["learn", str(bad), "--skeleton", TOY, "--refine", TOY])
    assert both.exit_code == 2
    assert "give --skeleton or --refine, not both" in both.output


def test_refine_keeps_clauses_and_adds_only_what_is_missing(tmp_path: Path) -> None:
    hand = tmp_path / "hand.contract"
    hand.write_text(
        Path(TOY)
        .read_text()
        .replace(
            "tool put(key: str) {\n}",
            "tool put(key: str) {\n"
            '  require key not in keys else TAKEN "taken"\n'
            "  effect keys.add(key)\n}",
        )
    )
    result = contractsim.learn(_toy_runs(tmp_path), str(hand), refine=True)
    assert 'require key not in keys else TAKEN "taken"' in result.text
    assert result.text.count("key not in keys") == 1  # nothing added to put
    assert result.text.count("keys.add(key)") == 1
    assert "require key in keys" in result.text  # drop had nothing: learned


def _walk_file(tmp_path: Path, contract: contractsim.Contract, n: int, seed: int) -> str:
    path = tmp_path / f"walk{seed}.jsonl"
    runs = random_runs(contract, n, 15, seed)
    path.write_text("".join(json.dumps(r) + "\n" for r in runs))
    return str(path)


@pytest.mark.slow
@settings(max_examples=6, deadline=None)
@given(seed=st.integers(0, 10_000), n=st.integers(1, 12), domain=st.sampled_from([BLOCKS, GRIPPER]))
def test_safe_never_approves_what_the_true_contract_refuses(
    tmp_path_factory: pytest.TempPathFactory, seed: int, n: int, domain: tuple[str, str]
) -> None:
    """SAM's safety property, at any number of traces: on the true contract's states, a call the
    true contract refuses is refused by the --safe contract too."""
    tmp = tmp_path_factory.mktemp("walks")
    true = contractsim.from_pddl(*domain)
    skeleton = loads(skeleton_of(true), "skeleton.contract")
    runs = read_runs(_walk_file(tmp, true, n, seed), skeleton.compiled)
    learned = learn_from_runs(skeleton, runs, safe=True).contract.simulator()
    sim = true.simulator()
    for plan in random_plans(true, 40, 10, seed + 1):
        state = sim.initial_state()
        for tool, args in plan:
            truth = sim.step(state, tool, args)
            mine = learned.step(learned.state_with(dict(state)), tool, args)
            if truth.verdict != "ok":
                assert mine.verdict != "ok", (tool, args, dict(state))
                break
            state = truth.branches[0].state


def test_learned_never_refuses_a_call_that_worked_in_the_data(tmp_path: Path) -> None:
    true = contractsim.from_pddl(*BLOCKS)
    skeleton = loads(skeleton_of(true), "skeleton.contract")
    runs = read_runs(_walk_file(tmp_path, true, 20, 7), skeleton.compiled)
    for safe in (False, True):
        learned = learn_from_runs(skeleton, runs, safe=safe).contract.simulator()
        sim = true.simulator()
        for run in runs:
            state = sim.initial_state()
            for step in run.steps:
                if step.outcome == "ok":
                    assert (
                        learned.step(learned.state_with(dict(state)), step.tool, step.args).verdict
                        == "ok"
                    )
                if step.state_after is not None:
                    state = sim.state_with(step.state_after)


@pytest.mark.slow
def test_blocks_learned_from_100_walks_agrees_with_the_true_contract(tmp_path: Path) -> None:
    true = contractsim.from_pddl(*BLOCKS)
    skeleton = loads(skeleton_of(true), "skeleton.contract")
    runs = read_runs(_walk_file(tmp_path, true, 100, 3), skeleton.compiled)
    learned = learn_from_runs(skeleton, runs).contract.simulator()
    sim = true.simulator()
    plans = random_plans(true, 200, 10, 11)
    # The default mode keeps only clauses that explain observed failures: a cause of failure the
    # walks never hit (here `unstack` while holding another block, once in 200 plans) is not
    # learned, so agreement is near total rather than total; `--safe` is the mode that never
    # approves such a call (test_safe_never_approves_what_the_true_contract_refuses).
    agree = sum(first_failure(sim, p) == first_failure(learned, p) for p in plans)
    assert agree >= 0.99 * len(plans)


@pytest.mark.slow
def test_gorilla_skeleton_200_runs_replayed_on_the_other_100() -> None:
    """Issue 17's measurement: the shipped contract without require/should/effects, learned
    from runs 1-200, replayed on runs 201-300 (figures in docs/learn.md)."""
    skeleton = loads(skeleton_of(contractsim.load(GORILLA)), "skeleton.contract")
    runs = read_runs(SNAPSHOTS, skeleton.compiled)
    result = learn_from_runs(skeleton, runs[:200])
    assert [d for d in check_text(result.text, "g.contract") if d.severity == "error"] == []
    held_out = read_runs(SNAPSHOTS, result.contract.compiled)[200:]
    replayed = replay_runs(result.contract, held_out)
    # measured 0.997 / 0.974 (the goal: 0.95; was 0.846 / 0.781 before the subtree,
    # str(p), special-name and optional-parameter templates: see docs/learn.md)
    assert replayed.precision is not None and replayed.precision >= 0.99
    assert replayed.recall is not None and replayed.recall >= 0.97


def test_type_tests_and_truthy_atoms_for_a_parameter_of_several_kinds() -> None:
    from contractsim.learning.atoms import conversion_terms, type_atoms

    values: list[Any] = ["a", 1, 2.5, None, ["x"], [], True, ""]
    texts = [a.text for a in type_atoms("p", values)]
    assert "p is str" in texts and "p is not str" in texts
    assert "p is int" in texts and "p is number" in texts and "p is null" in texts
    assert "p is list" in texts and "truthy(p)" in texts and "not truthy(p)" in texts
    by_text = {a.text: a for a in type_atoms("p", values)}
    assert by_text["p is number"]({"p": 3}, {}) and not by_text["p is number"]({"p": True}, {})
    assert not by_text["truthy(p)"]({"p": []}, {}) and by_text["truthy(p)"]({"p": "x"}, {})
    # one kind only: the checker already knows the answer (W0630/W0631), no atoms
    assert type_atoms("p", ["a", "b"]) == []
    terms = conversion_terms(["q", "n"], [({"q": "2", "n": " Tea"}, {}), ({"q": 3, "n": "x"}, {})])
    assert [(t.text, t.let) for t in terms] == [
        ("q_number", "let q_number = float(q)"),
        ("n_key", "let n_key = lower(strip(str(n)))"),
    ]
    assert terms[0]({"q": " 2 "}, {}) == 2.0 and terms[0]({"q": "two"}, {}) is None
    assert terms[1]({"n": " Tea "}, {}) == "tea"


def _pantry_runs(tmp_path: Path, runs: int, seed: int) -> str:
    import importlib.util

    spec = importlib.util.spec_from_file_location("pantry_record", PANTRY / "record.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    out = tmp_path / f"pantry-{seed}.jsonl"
    assert module.main(["--runs", str(runs), "--seed", str(seed), "-o", str(out)]) == 0
    return str(out)


@pytest.mark.slow
@pytest.mark.parametrize(
    ("with_skeleton", "min_precision", "min_recall"), [(True, 0.95, 0.90), (False, 0.88, 0.93)]
)
def test_pantry_learned_from_200_runs_replayed_on_100_others(
    tmp_path: Path, with_skeleton: bool, min_precision: float, min_recall: float
) -> None:
    """A dynamically typed tool (examples/pantry): learned from 200 recorded runs (seed 11),
    with the hand-written contract stripped of its clauses as the skeleton or with none,
    replayed on 100 others (seed 12); figures in docs/learn.md."""
    train, test = _pantry_runs(tmp_path, 200, 11), _pantry_runs(tmp_path, 100, 12)
    if with_skeleton:
        skeleton = loads(skeleton_of(contractsim.load(PANTRY / "pantry.contract")), "s.contract")
        result = learn_from_runs(skeleton, read_runs(train, skeleton.compiled))
    else:
        result = contractsim.learn(train)
    assert [d for d in check_text(result.text, "p.contract") if d.severity == "error"] == []
    replayed = replay_runs(result.contract, read_runs(test, result.contract.compiled))
    # measured 0.960 / 0.907 with the skeleton, 0.891 / 0.937 without
    assert replayed.precision is not None and replayed.precision >= min_precision
    assert replayed.recall is not None and replayed.recall >= min_recall


def test_numeric_updates_and_a_parameter_hiding_the_state_variable(tmp_path: Path) -> None:
    skeleton = loads(
        'contract wallet version "1.0.0"\n'
        "state { budget: number = 0 }\n"
        "tool spend(cost: number) {\n}\n"
        "tool set_budget(budget: number) {\n}\n",
        "wallet.contract",
    )
    runs = []
    for n in range(6):
        start, cost, new = 10 * n + 5, n + 1, 3 * n
        runs.append(
            {
                "name": f"r{n}",
                "state": {"budget": start},
                "steps": [
                    _ok("spend", {"cost": cost}, {"budget": start - cost}),
                    _ok("set_budget", {"budget": new}, {"budget": new}),
                ],
            }
        )
    path = tmp_path / "wallet.jsonl"
    path.write_text("\n".join(json.dumps(r) for r in runs) + "\n")
    result = learn_from_runs(skeleton, read_runs(str(path), skeleton.compiled))
    assert "  effect budget -= cost\n" in result.text
    assert "  effect state.budget = budget\n" in result.text


def _ok(tool: str, args: dict[str, Any], after: dict[str, Any]) -> dict[str, Any]:
    return {"tool": tool, "args": args, "outcome": "ok", "result": None, "state_after": after}


def test_inferred_enums_only_on_request_and_for_small_closed_sets() -> None:
    from contractsim.learning.infer import enum_members, skeleton_text

    units = ["kg", "g", "pcs"] * 10
    assert enum_members(units) == ["g", "kg", "pcs"]
    assert enum_members(units[:27]) is None  # too few calls to call the set closed
    assert enum_members([*units, "l"]) is None  # a value seen once: the set is not closed
    assert enum_members([f"v{i % 7}" for i in range(70)]) is None  # more than 6 members
    runs = [
        {
            "state": {},
            "steps": [{"tool": "add", "args": {"unit": u, "n": str(i)}, "outcome": "ok"}],
        }
        for i, u in enumerate(units)
    ]
    assert "tool add(unit: str, n: str)" in skeleton_text(runs)
    text = skeleton_text(runs, enums=True)
    assert 'type AddUnit = enum { "g", "kg", "pcs" }\n' in text
    assert "tool add(unit: AddUnit, n: str)" in text
    assert [d for d in check_text(text, "e.contract") if d.severity == "error"] == []


def test_a_parameter_the_tool_takes_in_other_kinds_gets_accepts_any(tmp_path: Path) -> None:
    skeleton = loads(
        'contract tally version "1.0.0"\n'
        "state { total: number = 0 }\n"
        'tool add(n: number, label: str = "x") {\n}\n',
        "tally.contract",
    )
    runs = [
        {"name": "r1", "state": {}, "steps": [_ok("add", {"n": 2}, {"total": 2})]},
        {"name": "r2", "state": {}, "steps": [_ok("add", {"n": "3"}, {"total": 3})]},
        {"name": "r3", "state": {}, "steps": [_ok("add", {"n": 1, "label": "y"}, {"total": 1})]},
    ]
    path = tmp_path / "tally.jsonl"
    path.write_text("\n".join(json.dumps(r) for r in runs) + "\n")
    result = learn_from_runs(skeleton, read_runs(str(path), skeleton.compiled))
    assert 'tool add(n: number accepts any, label: str = "x") {' in result.text
    assert result.report()["accepts_any"] == ["add.n"]


def test_a_list_parameter_passed_one_item_gets_accepts_any(tmp_path: Path) -> None:
    skeleton = loads(
        'contract tags version "1.0.0"\nstate { n: int = 0 }\n'
        "tool tag(tags: list[str], size: list[int]) {\n}\n",
        "tags.contract",
    )
    steps = [
        _ok("tag", {"tags": ["a"], "size": [1]}, {"n": 1}),
        _ok("tag", {"tags": "b", "size": [2]}, {"n": 1}),
    ]
    path = tmp_path / "tags.jsonl"
    path.write_text(json.dumps({"name": "r", "state": {}, "steps": steps}) + "\n")
    result = learn_from_runs(skeleton, read_runs(str(path), skeleton.compiled))
    assert "tool tag(tags: list[str] accepts any, size: list[int]) {" in result.text


def test_true_and_one_are_two_constants() -> None:
    from contractsim.learning.atoms import atoms_for, terms_for

    calls: list[tuple[dict[str, Any], dict[str, Any]]] = [({"q": True}, {})] * 3
    calls += [({"q": 1}, {})] * 2 + [({"q": "a"}, {})] * 2
    terms = terms_for(["q"], calls, {}, (), 64)
    texts = [a.text for a in atoms_for(["q"], terms, calls, {}, 400, 2)]
    assert "q == true" in texts and "q == 1" in texts and 'q == "a"' in texts

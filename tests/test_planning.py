"""contractsim.planning: plan, repair and select (issue 18)."""

from __future__ import annotations

import importlib
import itertools
import json
import random
from pathlib import Path

import pytest
from click.testing import CliRunner

import contractsim
from contractsim.cli import main
from contractsim.planning.select import harmonic, select_cover

ROOT = Path(__file__).resolve().parents[1]
PDDL = ROOT / "tests" / "data" / "pddl"
NOW = "2024-05-20T12:00:00Z"

ROOMS = """
contract rooms version "1.0.0"

type Room = enum { a, b, c, d }

const DOORS: set[tuple[Room, Room]] = {("a", "b"), ("b", "c"), ("c", "d"), ("b", "a"), ("d", "a")}

state {
  lit: set[Room] = {}
  at: set[Room] = {"a"}
}

tool go(src: Room, dst: Room) {
  require src in at else NOT_THERE "not in {src}"
  require (src, dst) in DOORS else NO_DOOR "no door"
  effect { at.remove(src); at.add(dst) }
}

tool light(r: Room)
  cost 2
{
  require r in at else NOT_THERE "not in {r}"
  effect lit.add(r)
}
"""


def blocks4() -> contractsim.Contract:
    return contractsim.from_pddl(
        PDDL / "blocks" / "domain.pddl", PDDL / "blocks" / "probBLOCKS-4-0.pddl"
    )


class TooBig(Exception):
    """The brute-force search met more states than it may expand."""


def brute_force_cost(
    sim: contractsim.simulator.engine.Simulator,
    goal: str,
    start: object = None,
    limit: int | None = None,
) -> float | None:
    """Dijkstra over every grounded call, without heuristic or pruning (from ``start``, default
    the initial state; :class:`TooBig` past ``limit`` expansions)."""
    import heapq

    from contractsim.planning.grounding import ground

    if start is None:
        start = sim.initial_state()
    calls = ground(sim, start).calls  # type: ignore[arg-type]
    expanded = 0
    best = {start: 0.0}
    heap = [(0.0, 0, start)]
    tie = itertools.count(1)
    while heap:
        g, _, s = heapq.heappop(heap)
        if g > best[s]:
            continue
        if sim.goal(s, goal) is True:
            return g
        expanded += 1
        if limit is not None and expanded > limit:
            raise TooBig
        for call in calls:
            step = sim.step(s, call.tool, call.args)
            if step.verdict != "ok" or len({b.state for b in step.branches}) != 1:
                continue
            nxt = step.branches[0].state
            ng = g + (step.cost if step.cost is not None else 1.0)
            if ng < best.get(nxt, float("inf")):
                best[nxt] = ng
                heapq.heappush(heap, (ng, next(tie), nxt))
    return None


def test_blocks4_astar_hmax_finds_the_optimal_plan_and_it_simulates_ok() -> None:
    sim = blocks4().simulator(now=NOW)
    result = sim.plan(None, "solved")
    assert result.method == "astar-hmax" and result.optimal
    assert result.cost == 6.0
    report = sim.run(result.steps, goal="solved")
    assert report.verdict == "ok" and report.goal_results["reached"] is True


def test_fast_plans_are_valid_but_not_claimed_optimal() -> None:
    sim = blocks4().simulator(now=NOW)
    result = sim.plan(None, "solved", fast=True)
    assert result.method == "greedy-hff" and not result.optimal
    report = sim.run(result.steps, goal="solved")
    assert report.verdict == "ok" and report.goal_results["reached"] is True


@pytest.mark.parametrize("seed", range(8))
def test_random_goals_plans_simulate_ok_and_are_optimal(seed: int) -> None:
    rng = random.Random(seed)
    atoms = [f'"{r}" in lit' for r in "abcd"] + [f'"{r}" in at' for r in "abcd"]
    goal = " and ".join(rng.sample(atoms, rng.randint(1, 3)))
    c = contractsim.loads(ROOMS + f"\ngoal g = {goal}\n")
    sim = c.simulator(now=NOW)
    result = sim.plan(None, "g", max_states=5000)
    expected = brute_force_cost(sim, "g")
    if expected is None:
        assert not result.found and result.stopped_by == "exhausted"
        return
    assert result.found and result.cost == expected, goal
    report = sim.run(result.steps, goal="g")
    assert report.verdict == "ok" and report.goal_results["reached"] is True


def test_file_system_example_plan_is_two_steps_from_the_mounted_state() -> None:
    c = contractsim.load(ROOT / "examples" / "file_system" / "file_system.contract")
    sim = c.simulator(now=NOW)
    state = sim.initial_state({"backup_mounted": True})
    result = sim.plan(state, "notes_archived")
    assert result.found and len(result.steps) == 2
    assert result.method == "uniform-cost"
    report = sim.run(result.steps, state, goal="notes_archived")
    assert report.verdict == "ok" and report.goal_results["reached"] is True


def test_a_bound_that_stops_the_search_is_named() -> None:
    sim = blocks4().simulator(now=NOW)
    assert sim.plan(None, "solved", max_depth=3).stopped_by == "max_depth"
    assert sim.plan(None, "solved", max_states=2).stopped_by == "max_states"


def test_repair_inserts_the_missing_calls_and_every_step_succeeds() -> None:
    sim = blocks4().simulator(now=NOW)
    broken = [
        ("stack", {"x": "b", "y": "a"}),  # needs pick_up(b) first
        ("pick_up", {"x": "c"}),
        ("stack", {"x": "c", "y": "b"}),
    ]
    assert sim.run(broken).verdict == "fails"
    fixed = sim.repair(broken)
    assert fixed.found and fixed.cost == 1.0
    assert fixed.inserted == [{"before": 1, "at": 1, "tool": "pick_up", "args": {"x": "b"}}]
    report = sim.run(fixed.plan)
    assert report.verdict == "ok"
    assert [s.verdict for s in report.steps] == ["ok"] * 4


# ------------------------------------------------------------------ select
def _brute_cover(tools, needs):  # type: ignore[no-untyped-def]
    best = None
    for r in range(len(tools) + 1):
        for combo in itertools.combinations(tools, r):
            tags = [t for _, ts, _ in combo for t in ts]
            if all(any(t == n or t.startswith(n + ".") for t in tags) for n in needs):
                key = (round(sum(c for _, _, c in combo), 9), len(combo))
                if best is None or key < best:
                    best = key
    return best


@pytest.mark.parametrize("seed", range(30))
def test_select_exact_matches_brute_force(seed: int) -> None:
    rng = random.Random(seed)
    vocab = ["data", "data.sql", "web", "viz", "compute", "compute.math", "mail"]
    tools = [
        (f"t{i}", frozenset(rng.sample(vocab, rng.randint(1, 3))), float(rng.randint(1, 5)))
        for i in range(rng.randint(2, 9))
    ]
    needs = rng.sample(["data", "web", "viz", "compute", "mail", "compute.math"], 3)
    got = select_cover(tools, needs)
    expected = _brute_cover(tools, needs)
    if expected is None:
        assert got is None
        return
    assert got is not None and got.method == "exact"
    assert (round(got.cost, 9), len(got.tools)) == expected
    for need, by in got.covers.items():
        assert by, need


def test_greedy_cover_is_within_its_bound(monkeypatch: pytest.MonkeyPatch) -> None:
    sel = importlib.import_module("contractsim.planning.select")

    monkeypatch.setattr(sel, "EXACT_LIMIT", 0)
    rng = random.Random(7)
    needs = [f"n{i}" for i in range(6)]
    for _ in range(30):
        tools = [
            (f"t{i}", frozenset(rng.sample(needs, rng.randint(1, 3))), float(rng.randint(1, 9)))
            for i in range(8)
        ]
        expected = _brute_cover(tools, needs)
        got = sel.select_cover(tools, needs)
        if expected is None:
            assert got is None
            continue
        assert got is not None and got.method == "greedy"
        assert got.bound == pytest.approx(harmonic(6))
        assert got.cost <= expected[0] * harmonic(6) + 1e-9


def test_select_on_the_tool_selection_example() -> None:
    c = contractsim.load(ROOT / "examples" / "tool_selection" / "tool_selection.contract")
    got = c.select(["data", "viz"])
    assert got is not None
    assert got.to_json() == {
        "tools": ["PlotChart", "QueryDatabase"],
        "cost": 4.0,  # QueryDatabase costs 3; PythonInterpreter `5 + len(code) / 10000` at least 5
        "method": "exact",
        "covers": {"data": ["QueryDatabase"], "viz": ["PlotChart"]},
    }


# ------------------------------------------------------------------ CLI
@pytest.fixture()
def blocks_file(tmp_path: Path) -> Path:
    out = tmp_path / "b4.contract"
    out.write_text(blocks4().source)
    return out


def test_cli_plan_format_plan_runs_unchanged_in_simulate(blocks_file: Path, tmp_path: Path) -> None:
    runner = CliRunner()
    plan_file = tmp_path / "plan.json"
    r = runner.invoke(
        main,
        ["plan", str(blocks_file), "--goal", "solved", "--format", "plan", "-o", str(plan_file)],
    )
    assert r.exit_code == 0, r.output
    assert json.loads(plan_file.read_text())["goal"] == "solved"
    r = runner.invoke(main, ["simulate", str(blocks_file), str(plan_file)])
    assert r.exit_code == 0, r.output


def test_cli_plan_exit_codes(blocks_file: Path) -> None:
    runner = CliRunner()
    r = runner.invoke(main, ["plan", str(blocks_file), "--goal", "solved", "--max-depth", "2"])
    assert r.exit_code == 3
    assert "stopped by --max-depth" in r.output
    r = runner.invoke(main, ["plan", str(blocks_file), "--goal", "solvd"])
    assert r.exit_code == 2
    assert "error[E0703]: the contract declares no goal `solvd`" in r.output
    assert "did you mean `solved`?" in r.output
    r = runner.invoke(main, ["plan", str(blocks_file), "--goal", "solved", "--values", "pick_up"])
    assert r.exit_code == 2
    assert "error[E0707]: `pick_up` is not TOOL.PARAM=VALUE[,VALUE…]" in r.output
    r = runner.invoke(main, ["plan", str(blocks_file), "--goal", '"a" in holding'])
    assert r.exit_code == 0, r.output
    assert '1. pick_up(x="a")' in r.output


def test_cli_select_unknown_need_has_a_did_you_mean() -> None:
    runner = CliRunner()
    path = str(ROOT / "examples" / "tool_selection" / "tool_selection.contract")
    r = runner.invoke(main, ["select", path, "--need", "data.sqll"])
    assert r.exit_code == 2
    assert "error[E0708]: no tool has a tag `data.sqll` or `data.sqll.*`" in r.output
    assert "did you mean `data.sql`?" in r.output
    r = runner.invoke(main, ["select", path, "--need", "data", "--format", "json"])
    assert r.exit_code == 0
    assert json.loads(r.output)["method"] == "exact"


def test_cli_simulate_repair_shows_the_diff_and_json(blocks_file: Path, tmp_path: Path) -> None:
    plan = tmp_path / "broken.txt"
    plan.write_text("(stack b a)\n(pick-up c)\n(stack c b)\n")
    runner = CliRunner()
    r = runner.invoke(main, ["simulate", str(blocks_file), str(plan), "--repair"])
    assert r.exit_code == 1  # the plan as given still fails
    assert 'repair: insert 1 call(s), cost 1\n  + pick_up(x="b")\n    1. stack(' in r.output
    r = runner.invoke(
        main, ["simulate", str(blocks_file), str(plan), "--repair", "--format", "json"]
    )
    fixed = json.loads(r.output)["repair"]
    assert fixed["cost"] == 1.0
    assert [s["tool"] for s in fixed["plan"]] == ["pick_up", "stack", "pick_up", "stack"]
    assert fixed["inserted"] == [{"before": 1, "at": 1, "tool": "pick_up", "args": {"x": "b"}}]


def test_cli_values_replace_the_grounded_candidates_and_causal_select() -> None:
    runner = CliRunner()
    path = str(ROOT / "examples" / "tool_selection" / "tool_selection.contract")
    sql = "SELECT month, sum(amount) FROM sales GROUP BY 1"
    r = runner.invoke(
        main, ["plan", path, "--goal", "revenue_chart", "--values", f'QueryDatabase.sql="{sql}"']
    )
    assert r.exit_code == 0, r.output
    assert f'1. QueryDatabase(sql="{sql}", into="monthly_revenue")' in r.output
    r = runner.invoke(main, ["select", path, "--goal", "revenue_chart", "--format", "json"])
    assert r.exit_code == 0, r.output
    got = json.loads(r.output)
    assert got["tools"] == ["PlotChart", "QueryDatabase"] and got["method"] == "causal"
    assert got["necessary"] == {
        "PlotChart": "necessary: no plan without it",
        "QueryDatabase": "necessary: no plan without it",
    }


# ---------------------------------------------------------------- the STRIPS fast path

ROOMS_WITH_NEGATION = (
    ROOMS
    + """
tool darken(r: Room) {
  require r in at else NOT_THERE "not in {r}"
  require r in lit else DARK "already dark"
  effect lit.remove(r)
}

tool lock(r: Room) {
  require r not in at and not (r in lit) else BUSY "someone is there"
  effect { lit.discard(r); lit.add(r); lit.remove(r) }
}
"""
)


def search_both_ways(c: contractsim.Contract, goal: str, **bounds: object) -> tuple[object, object]:
    from contractsim.planning.search import plan

    sim = c.simulator(now=NOW)
    start = sim.initial_state()
    return (
        plan(sim, start, goal, strips=True, **bounds),  # type: ignore[arg-type]
        plan(sim, start, goal, strips=False, **bounds),  # type: ignore[arg-type]
    )


def test_a_pddl_style_contract_is_searched_as_strips_with_the_same_optimal_cost() -> None:
    for domain, problem in (("blocks", "probBLOCKS-4-0.pddl"), ("gripper", "prob01.pddl")):
        c = contractsim.from_pddl(PDDL / domain / "domain.pddl", PDDL / domain / problem)
        fast, slow = search_both_ways(c, "solved")
        assert fast.found and slow.found  # type: ignore[attr-defined]
        assert fast.cost == slow.cost  # type: ignore[attr-defined]
        assert any("STRIPS" in n for n in fast.notes)  # type: ignore[attr-defined]
        assert not any("STRIPS" in n for n in slow.notes)  # type: ignore[attr-defined]


@pytest.mark.parametrize("seed", range(12))
def test_strips_reading_with_negations_and_static_consts_matches_brute_force(seed: int) -> None:
    rng = random.Random(seed)
    atoms = [f'"{r}" in lit' for r in "abcd"] + [f'"{r}" in at' for r in "abcd"]
    atoms += [f'not ("{r}" in lit)' for r in "abcd"] + [f'"{r}" not in at' for r in "ab"]
    goal = " and ".join(rng.sample(atoms, rng.randint(1, 4)))
    c = contractsim.loads(ROOMS_WITH_NEGATION + f"\ngoal g = {goal}\n")
    sim = c.simulator(now=NOW)
    fast, slow = search_both_ways(c, "g", max_states=5000)
    expected = brute_force_cost(sim, "g")
    if fast.steps:  # type: ignore[attr-defined]
        assert any("STRIPS" in n for n in fast.notes), fast.notes  # type: ignore[attr-defined]
    if expected is None:
        assert not fast.found and not slow.found  # type: ignore[attr-defined]
        return
    assert fast.cost == slow.cost == expected, goal  # type: ignore[attr-defined]
    report = sim.run(fast.steps, goal="g")  # type: ignore[attr-defined]
    assert report.verdict == "ok" and report.goal_results["reached"] is True


def test_a_contract_that_is_not_strips_is_searched_with_the_simulator() -> None:
    c = contractsim.loads(
        ROOMS
        + """
event dark "the light fails"

tool flaky(r: Room) {
  require r in at
  outcome done success { lit.add(r) }
  outcome lost fails LOST "lost" on dark probability 0.1
}
goal g = "b" in lit
"""
    )
    fast, slow = search_both_ways(c, "g")
    assert fast.cost == slow.cost == 3.0  # type: ignore[attr-defined]
    assert not any("STRIPS" in n for n in fast.notes)  # type: ignore[attr-defined]


@pytest.mark.slow
def test_logistics4_is_solved_optimally_thanks_to_relevance_analysis() -> None:
    c = contractsim.from_pddl(
        PDDL / "logistics00" / "domain.pddl", PDDL / "logistics00" / "probLOGISTICS-4-0.pddl"
    )
    sim = c.simulator(now=NOW)
    result = sim.plan(None, "solved", max_seconds=120)
    assert result.found and result.cost == 20.0 and result.optimal
    report = sim.run(result.steps, goal="solved")
    assert report.verdict == "ok" and report.goal_results["reached"] is True


# ------------------------------------------------------------------ --allow-may-fail
DOOR = """
contract door version "1.0.0"

event jam "the lock jams"

state {
  open: bool = false
  lit: bool = false
  powered: bool = unknown
}

tool unlock() {
  outcome done success { open = true }
  outcome jammed fails JAMMED "the lock jammed" on jam probability 0.2
}

tool switch_on() {
  require powered else NO_POWER "no power"
  effect lit = true
}

goal inside = open
goal bright = lit and open
"""


def test_allow_may_fail_takes_environment_and_unknown_failures_and_reports_the_risks() -> None:
    sim = contractsim.loads(DOOR).simulator(now=NOW)
    for goal in ("inside", "bright"):
        refused = sim.plan(None, goal)
        assert not refused.found and refused.stopped_by == "exhausted"
        assert refused.probability is None and refused.assumptions == []
    inside = sim.plan(None, "inside", allow_may_fail=True)
    assert inside.steps == [("unlock", {})] and inside.cost == 1.0
    assert inside.probability == pytest.approx(0.8)
    assert inside.assumptions == ["`unlock` fails when event `jam` happens (probability 0.2)"]
    bright = sim.plan(None, "bright", allow_may_fail=True)
    assert bright.steps == [("unlock", {}), ("switch_on", {})] and bright.cost == 2.0
    assert bright.probability is None  # `powered` has no probability
    assert bright.assumptions == [
        "`unlock` fails when event `jam` happens (probability 0.2)",
        "`switch_on` fails when `powered` is false",
    ]


def test_cli_allow_may_fail_text_and_json(tmp_path: Path) -> None:
    path = tmp_path / "door.contract"
    path.write_text(DOOR)
    runner = CliRunner()
    r = runner.invoke(main, ["plan", str(path), "--goal", "inside"])
    assert r.exit_code == 1
    assert r.output.startswith(
        "no plan for goal `inside`: no plan exists with the grounded calls (every reachable "
        "state was expanded)\n"
    )
    r = runner.invoke(main, ["plan", str(path), "--goal", "inside", "--allow-may-fail"])
    assert r.exit_code == 0, r.output
    assert r.output.startswith(
        "plan for goal `inside`: 1 step(s), cost 1 (A* with h_max: optimal)\n"
        "  1. unlock()\n"
        "success probability: 80%\n"
        "  risk: `unlock` fails when event `jam` happens (probability 0.2)\n"
    )
    r = runner.invoke(
        main, ["plan", str(path), "--goal", "bright", "--allow-may-fail", "--format", "json"]
    )
    assert r.exit_code == 0, r.output
    got = json.loads(r.output)
    assert got["steps"] == [{"tool": "unlock", "args": {}}, {"tool": "switch_on", "args": {}}]
    assert got["probability"] is None
    assert got["assumptions"] == [
        "`unlock` fails when event `jam` happens (probability 0.2)",
        "`switch_on` fails when `powered` is false",
    ]


# ------------------------------------------------------------------ properties over the examples
def _example_starts() -> list[tuple[str, str, str]]:
    """(contract, goal, plan file or "") for every goal of every example, from the initial state
    and from each example plan's `state:` block."""
    from contractsim.simulator.formats import load_plan

    out = []
    for path in sorted((ROOT / "examples").glob("*/*.contract")):
        goals = [g.name for g in contractsim.load(path).ir.goals]
        plans = [p for p in sorted((path.parent / "plans").glob("*.yaml")) if load_plan(p).state]
        for goal in goals:
            out.append((str(path.relative_to(ROOT)), goal, ""))
            out += [(str(path.relative_to(ROOT)), goal, str(p.relative_to(ROOT))) for p in plans]
    return out


EXAMPLE_STARTS = [
    pytest.param(*start, marks=pytest.mark.slow) if "file_system" in start[0] else start
    for start in _example_starts()
]  # file_system's search takes seconds per start: run in CI's slow pass


def test_the_examples_have_goals_to_plan_for() -> None:
    starts = _example_starts()
    assert {c for c, _, _ in starts} >= {
        "examples/file_system/file_system.contract",
        "examples/session_protocol/session_protocol.contract",
        "examples/tool_selection/tool_selection.contract",
    }
    assert any(p for _, _, p in starts)


@pytest.mark.parametrize(("contract", "goal", "plan_file"), EXAMPLE_STARTS)
def test_example_plans_simulate_ok_reach_the_goal_and_match_brute_force(
    contract: str, goal: str, plan_file: str
) -> None:
    from contractsim.simulator.formats import load_plan, read_text
    from contractsim.simulator.values import validate_state_overrides

    c = contractsim.load(ROOT / contract)
    sim = c.simulator(now=NOW)
    start = sim.initial_state()
    if plan_file:
        raw = load_plan(ROOT / plan_file).state
        text = read_text(ROOT / plan_file, "plan")
        start = sim.state_with(validate_state_overrides(c.compiled, raw, plan_file, text))
    result = sim.plan(start, goal, max_states=2000, max_seconds=10)
    if result.found:
        report = sim.run(result.steps, start, goal=goal)
        assert [s.verdict for s in report.steps] == ["ok"] * len(result.steps)
        assert report.verdict == "ok" and report.goal_results["reached"] is True
    else:
        assert result.stopped_by in ("exhausted", "max_states", "max_seconds")
    if not result.optimal or result.stopped_by not in (None, "exhausted"):
        return
    try:
        expected = brute_force_cost(sim, goal, start, limit=3000)
    except TooBig:
        return  # not a small contract: validity above is all that is checked
    assert result.cost == expected, (contract, goal, plan_file)


def _random_goals(atoms: list[str], rng: random.Random, count: int) -> list[str]:
    goals = []
    for _ in range(count):
        parts = rng.sample(atoms, rng.randint(1, 3))
        goals.append(" and ".join(p if rng.random() < 0.7 else f"not ({p})" for p in parts))
    return goals


def _literal(value: object) -> str:
    if isinstance(value, tuple):
        return "(" + ", ".join(_literal(v) for v in value) + ")"
    return json.dumps(value)


def _pddl_atoms(c: contractsim.Contract) -> list[str]:
    """`ITEM in VAR` for every fact the problem's initial state or grounded calls mention."""
    from contractsim.planning.grounding import ground
    from contractsim.planning.search import Successors
    from contractsim.planning.strips import read_strips

    sim = c.simulator(now=NOW)
    calls = ground(sim, sim.initial_state()).calls
    task, why = read_strips(sim, calls, "solved", Successors(sim, calls, False).fixed_cost)
    assert task is not None, why
    atoms = []
    for var, item in sorted(task.index, key=repr):
        if item is True:
            atoms.append(var)
        else:
            atoms.append(f"{_literal(item)} in {var}")
    return atoms


@pytest.mark.parametrize(
    ("domain", "problem", "count"),
    [
        ("blocks", "probBLOCKS-4-0.pddl", 4),
        pytest.param("gripper", "prob01.pddl", 4, marks=pytest.mark.slow),  # brute force: ~10 s
        pytest.param("gripper", "prob01.pddl", 25, marks=pytest.mark.slow),
        pytest.param("blocks", "probBLOCKS-4-0.pddl", 25, marks=pytest.mark.slow),
    ],
)
def test_random_goals_on_pddl_problems_strips_and_simulator_agree_with_brute_force(
    domain: str, problem: str, count: int
) -> None:
    base = contractsim.from_pddl(PDDL / domain / "domain.pddl", PDDL / domain / problem)
    atoms = _pddl_atoms(base)
    assert len(atoms) > 10
    for goal in _random_goals(atoms, random.Random(f"{domain}{count}"), count):
        c = contractsim.loads(base.source + f"\ngoal g = {goal}\n")
        fast, slow = search_both_ways(c, "g", max_states=20000)
        expected = brute_force_cost(c.simulator(now=NOW), "g")
        if expected is None:
            assert not fast.found and not slow.found, goal  # type: ignore[attr-defined]
            continue
        assert fast.cost == slow.cost == expected, goal  # type: ignore[attr-defined]
        for found in (fast, slow):
            report = c.simulator(now=NOW).run(found.steps, goal="g")  # type: ignore[attr-defined]
            assert report.verdict == "ok" and report.goal_results["reached"] is True


def test_grounding_reuses_one_validation_per_all_enum_tool_without_changing_the_calls() -> None:
    from contractsim.planning.grounding import ground

    for domain, problem in (("blocks", "probBLOCKS-4-0.pddl"), ("gripper", "prob01.pddl")):
        sim = contractsim.from_pddl(
            PDDL / domain / "domain.pddl", PDDL / domain / problem
        ).simulator(now=NOW)
        calls = ground(sim, sim.initial_state()).calls
        assert len(calls) > 10
        for call in calls:
            bound = sim.bind(call.tool, dict(call.args))
            assert (call.tool, dict(call.args), dict(call.values), call.references) == (
                bound.tool,
                dict(bound.args),
                dict(bound.values),
                bound.references,
            )
            assert call.fast is bound.fast

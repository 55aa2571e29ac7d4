"""PDDL import: the emitted contracts, `import-pddl`, IPC plans, and diagnostics for bad PDDL."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

import contractsim
from contractsim.api import check_text
from contractsim.cli import main
from contractsim.diagnostics import ContractError
from contractsim.pddl import pddl_to_contract

DATA = Path(__file__).parent / "data" / "pddl"
SUPPORTED = [
    ("blocks", "probBLOCKS-8-0.pddl"),
    ("gripper", "prob05.pddl"),
    ("logistics00", "probLOGISTICS-10-0.pddl"),
    ("depot", "p05.pddl"),
    ("childsnack", "p02.pddl"),
    ("adl/airport-adl", "problem.pddl"),
    ("adl/citycar-adl", "problem.pddl"),
    ("adl/miconic-fulladl", "problem.pddl"),
    ("adl/psr-small", "problem.pddl"),
]

DOMAIN = """(define (domain d)
  (:requirements :strips :typing)
  (:types block - object)
  (:predicates (on ?x - block ?y - block) (clear ?x - block) (handempty))
  (:action stack :parameters (?x - block ?y - block)
    :precondition (and (clear ?y) (handempty))
    :effect (and (on ?x ?y) (not (clear ?y)))))
"""
PROBLEM = """(define (problem p) (:domain d)
  (:objects a b - block)
  (:init (clear a) (clear b) (handempty))
  (:goal (on a b)))
"""


def _diag(domain: str = DOMAIN, problem: str = PROBLEM) -> tuple[str, str, int, int]:
    with pytest.raises(ContractError) as info:
        pddl_to_contract(domain, problem, "d.pddl", "p.pddl")
    d = info.value.diagnostics[0]
    assert d.hint, d
    return d.code, d.span.file, d.span.line, d.span.col


@pytest.mark.parametrize(("folder", "problem"), SUPPORTED, ids=[f for f, _ in SUPPORTED])
def test_every_shipped_domain_imports_and_checks_clean(folder: str, problem: str) -> None:
    text = pddl_to_contract(
        (DATA / folder / "domain.pddl").read_text(), (DATA / folder / problem).read_text()
    )
    assert check_text(text, "x.contract") == []
    assert text.splitlines()[3].startswith("contract ")


def test_blocks_contract_reads_like_a_hand_written_one() -> None:
    text = pddl_to_contract(
        (DATA / "blocks" / "domain.pddl").read_text(),
        (DATA / "blocks" / "probBLOCKS-4-0.pddl").read_text(),
    )
    assert "type Object = enum { d, b, a, c }" in text
    assert "  on_: set[tuple[Object, Object]] = {}" in text
    assert "  handempty: bool = true" in text
    assert 'goal solved = ("d", "c") in on_\n  and ("c", "b") in on_' in text
    assert (
        'tool unstack(x: Object, y: Object) "PDDL action `unstack`" {\n'
        "  require (x, y) in on_\n"
        '    else NOT_ON "(on {x} {y}) does not hold"\n'
        '    hint "made true by stack"\n'
    ) in text
    assert (
        "  effect {\n    holding.add(x)\n" not in text
    )  # deletes come first: PDDL applies deletes, then adds
    assert (
        "  effect {\n    clear.remove(x)\n    handempty = false\n"
        "    on_.remove((x, y))\n    holding.add(x)\n" in text
    )


def test_type_hierarchy_becomes_unions_of_enums() -> None:
    domain = """(define (domain t) (:requirements :typing)
      (:types truck plane - vehicle vehicle place - object)
      (:predicates (at ?v - vehicle ?p - place))
      (:action go :parameters (?t - truck ?from ?to - place)
        :precondition (and (at ?t ?from) (not (= ?from ?to)))
        :effect (and (not (at ?t ?from)) (at ?t ?to))))"""
    problem = """(define (problem q) (:domain t)
      (:objects t1 - truck p1 - plane home work - place)
      (:init (at t1 home) (at p1 work)) (:goal (at t1 work)))"""
    text = pddl_to_contract(domain, problem)
    assert "type Vehicle = Truck | Plane" in text
    assert "type Truck = enum { t1 }" in text
    assert 'at: set[tuple[Vehicle, Place]] = {("t1", "home"), ("p1", "work")}' in text
    assert 'tool go(t: Truck, from: Place, to: Place) "PDDL action `go`" {' in text
    assert '    else SAME_OBJECT "{from} and {to} are the same object"' in text
    sim = contractsim.loads(text).simulator(now="2024-01-01T00:00:00Z")
    report = sim.run([("go", {"t": "t1", "from": "home", "to": "work"})], goal="solved")
    assert (report.verdict, report.goal_results["reached"]) == ("ok", True)


def test_conditional_effects_read_the_state_before_the_action() -> None:
    # PDDL: every `when` is decided in the state before the action; the later `when` must not
    # see the earlier one's delete
    domain = """(define (domain c) (:requirements :conditional-effects)
      (:predicates (a) (b))
      (:action flip :parameters ()
        :effect (and (when (a) (not (a))) (when (a) (b)))))"""
    problem = "(define (problem p) (:domain c) (:init (a)) (:goal (b)))"
    text = pddl_to_contract(domain, problem)
    assert "    let was_a = a\n    if was_a {\n      a = false\n    }\n" in text
    sim = contractsim.loads(text).simulator(now="2024-01-01T00:00:00Z")
    report = sim.run([("flip", {})], goal="solved")
    assert report.goal_results["reached"] is True
    assert report.paths[0].state["a"] is False


def test_action_costs_become_tool_costs() -> None:
    domain = """(define (domain k) (:requirements :typing :action-costs)
      (:types loc) (:predicates (at ?l - loc))
      (:functions (dist ?a ?b - loc) - number (total-cost) - number)
      (:action go :parameters (?a ?b - loc) :precondition (at ?a)
        :effect (and (not (at ?a)) (at ?b) (increase (total-cost) (dist ?a ?b))))
      (:action wait :parameters () :effect (increase (total-cost) 2)))"""
    problem = """(define (problem p) (:domain k) (:objects x y - loc)
      (:init (at x) (= (dist x y) 7) (= (dist y x) 3) (= (total-cost) 0))
      (:goal (at y)) (:metric minimize (total-cost)))"""
    text = pddl_to_contract(domain, problem)
    assert 'const DIST: map[tuple[Loc, Loc], int] = {("x", "y"): 7, ("y", "x"): 3}' in text
    assert 'tool go(a: Loc, b: Loc) "PDDL action `go`" cost DIST[(a, b)] {' in text
    assert 'tool wait() "PDDL action `wait`" cost 2 {' in text
    # (dist x x) and (dist y y) have no value: PDDL cannot apply `go` there
    assert (
        '  require (a, b) in DIST\n    else COST_UNDEFINED "(dist {a} {b}) has no value in :init"\n'
    ) in text
    sim = contractsim.loads(text).simulator(now="2024-01-01T00:00:00Z")
    report = sim.run([("go", {"a": "x", "b": "y"}), ("wait", {})], goal="solved")
    assert [s.cost for s in report.steps] == [7, 2]


def test_cli_writes_a_contract_that_simulate_runs_with_ipc_plans(tmp_path: Path) -> None:
    out = tmp_path / "blocks.contract"
    runner = CliRunner()
    result = runner.invoke(
        main,
        [
            "import-pddl",
            str(DATA / "blocks" / "domain.pddl"),
            str(DATA / "blocks" / "probBLOCKS-4-0.pddl"),
            "-o",
            str(out),
        ],
    )
    assert result.exit_code == 0, result.output
    assert runner.invoke(main, ["check", str(out)]).exit_code == 0
    plan = tmp_path / "p.plan"
    # IPC 2000 writes upper case; a ; comment; the optimal plan of probBLOCKS-4-0
    plan.write_text(
        "; optimal\n(PICK-UP B)\n(STACK B A)\n(PICK-UP C)\n(STACK C B)\n(PICK-UP D)\n(STACK D C)\n"
    )
    result = runner.invoke(main, ["simulate", str(out), str(plan), "--goal", "solved"])
    assert result.exit_code == 0, result.output
    assert "goal solved: reached" in result.output
    plan.write_text("(pick-up b)\n(pick-up c)\n")
    result = runner.invoke(main, ["simulate", str(out), str(plan), "--goal", "solved"])
    assert result.exit_code == 1
    assert "NOT_HANDEMPTY" in result.output and "goal solved: NOT reached" in result.output


def test_cli_reports_bad_pddl_as_a_located_diagnostic(tmp_path: Path) -> None:
    domain = tmp_path / "d.pddl"
    domain.write_text(DOMAIN.replace(":effect", ":efect"))
    problem = tmp_path / "p.pddl"
    problem.write_text(PROBLEM)
    result = CliRunner().invoke(main, ["import-pddl", str(domain), str(problem)])
    assert result.exit_code == 2
    assert f"{domain}:7:5: error[E0804]: unknown keyword `:efect` here" in result.output
    assert "did you mean `:effect`?" in result.output
    result = CliRunner().invoke(main, ["import-pddl", str(tmp_path / "no.pddl"), str(problem)])
    assert result.exit_code == 2 and "E0801" in result.output


@pytest.mark.parametrize(
    ("domain", "problem", "expected"),
    [
        (DOMAIN + ")", PROBLEM, ("E0802", "d.pddl", 8, 1)),
        (DOMAIN[:-2], PROBLEM, ("E0802", "d.pddl", 1, 1)),
        ("", PROBLEM, ("E0803", "d.pddl", 1, 1)),
        ("(define (problem d))", PROBLEM, ("E0803", "d.pddl", 1, 9)),
        (DOMAIN.replace(":strips", ":strps"), PROBLEM, ("E0804", "d.pddl", 2, 18)),
        (DOMAIN.replace(":strips", ":durative-actions"), PROBLEM, ("E0805", "d.pddl", 2, 18)),
        (DOMAIN.replace(":typing", ":typing :fluents"), PROBLEM, ("E0805", "d.pddl", 2, 34)),
        (
            DOMAIN.replace("(clear ?y) (handempty)", "(> (x) 1)"),
            PROBLEM,
            ("E0805", "d.pddl", 6, 25),
        ),
        (
            DOMAIN.replace("(handempty))\n    :eff", "(hand))\n    :eff"),
            PROBLEM,
            ("E0806", "d.pddl", 6, 36),
        ),
        (
            DOMAIN.replace("(clear ?y) (handempty)", "(clear ?z)"),
            PROBLEM,
            ("E0806", "d.pddl", 6, 31),
        ),
        (
            DOMAIN.replace("(clear ?y) (handempty)", "(clear ?x ?y)"),
            PROBLEM,
            ("E0807", "d.pddl", 6, 24),
        ),
        (DOMAIN.replace("(?x - block ?y", "(?x - blok ?y"), PROBLEM, ("E0806", "d.pddl", 5, 36)),
        (
            DOMAIN.replace(
                "(handempty))\n  (:action",
                "(handempty))\n  (:derived (handempty) (clear a))\n  (:action",
            ),
            PROBLEM,
            ("E0805", "d.pddl", 5, 4),
        ),
        (DOMAIN, PROBLEM.replace("(clear a)", "(clear z)"), ("E0806", "p.pddl", 3, 17)),
        (DOMAIN, PROBLEM.replace("(:domain d)", "(:domain e)"), ("E0809", "p.pddl", 1, 30)),
        (DOMAIN, PROBLEM.replace("(:init", "(:inti"), ("E0804", "p.pddl", 3, 4)),
        (DOMAIN, PROBLEM.replace("(on a b)", "(on a)"), ("E0807", "p.pddl", 4, 10)),
        (
            DOMAIN,
            PROBLEM.replace("a b - block", "a - block b - object"),
            ("E0808", "p.pddl", 3, 27),
        ),
        (
            DOMAIN,
            PROBLEM.replace("(:goal (on a b))", "(:goal (on a b)) (:metric maximize (x))"),
            ("E0805", "p.pddl", 4, 20),
        ),
        (PROBLEM, DOMAIN, ("E0803", "d.pddl", 1, 9)),
        (DOMAIN, "(define (problem p) (:domain d) (:init (clear a)", ("E0802", "p.pddl", 1, 33)),
        (DOMAIN, "(define (problem p) (:domain d)) (extra)", ("E0803", "p.pddl", 1, 34)),
        (DOMAIN, "hello", ("E0803", "p.pddl", 1, 1)),
        ("(" * 500, PROBLEM, ("E0802", "d.pddl", 1, 65)),
    ],
)
def test_bad_pddl_gives_a_located_diagnostic(
    domain: str, problem: str, expected: tuple[str, str, int, int]
) -> None:
    assert _diag(domain, problem) == expected


def test_random_garbage_never_gives_a_traceback() -> None:
    import random

    rng = random.Random(3)
    pieces = ["(", ")", "and", "not", "?x", ":action", ":init", "-", "a", ":parameters", "when"]
    for _ in range(300):
        text = " ".join(rng.choice(pieces) for _ in range(rng.randrange(1, 30)))
        for domain, problem in ((text, PROBLEM), (DOMAIN, text)):
            try:
                pddl_to_contract(domain, problem)
            except ContractError as exc:
                assert exc.diagnostics and exc.diagnostics[0].code.startswith("E08")


# ------------------------------------------------------------------ IPC plans (review findings)


def _blocks_contract(tmp_path: Path) -> Path:
    out = tmp_path / "blocks.contract"
    out.write_text(
        contractsim.from_pddl(
            DATA / "blocks" / "domain.pddl", DATA / "blocks" / "probBLOCKS-4-0.pddl"
        ).source
    )
    return out


def _simulate(contract: Path, plan_text: str, tmp_path: Path) -> tuple[int, str]:
    plan = tmp_path / "p.plan"
    plan.write_text(plan_text)
    result = CliRunner().invoke(main, ["simulate", str(contract), str(plan), "--goal", "solved"])
    return result.exit_code, result.output


def test_ipc_steps_with_too_many_or_too_few_arguments_are_located(tmp_path: Path) -> None:
    contract = _blocks_contract(tmp_path)
    code, output = _simulate(contract, "; extra\n(pick-up b zz qq)\n(stack b a)\n", tmp_path)
    assert code == 2
    assert (
        f"{tmp_path / 'p.plan'}:2:1: error[E0701]: `pick-up` takes 1 argument(s) (x), 3 given: "
        "`(pick-up b zz qq)`"
    ) in output
    assert "hint: write `(pick-up X)`" in output
    code, output = _simulate(contract, "(pick-up b)\n(STACK b)\n", tmp_path)
    assert code == 2
    assert "p.plan:2:1: error[E0701]: `stack` takes 2 argument(s) (x, y), 1 given" in output


def test_ipc_plan_formats(tmp_path: Path) -> None:
    contract = _blocks_contract(tmp_path)
    # a planner's empty plan: only a comment
    code, output = _simulate(contract, "; cost = 0 (unit cost)\n", tmp_path)
    assert code == 1 and "0 step(s)" in output and "goal solved: NOT reached" in output
    # two steps on one line, and one step over two lines
    code, output = _simulate(contract, "(pick-up b)(stack b a)\n(pick-up\n  c)\n", tmp_path)
    assert code == 1 and "3 step(s)" in output and "pick_up:ok → stack:ok → pick_up:ok" in output
    # planner output and timed steps are not IPC steps: each is reported at its line
    code, output = _simulate(
        contract, "solution found\n(pick-up b)\n0: (stack b a) [1]\n", tmp_path
    )
    assert code == 2
    assert "p.plan:1:1: error[E0701]: not an IPC plan step: solution found" in output
    assert "p.plan:3:1: error[E0701]: not an IPC plan step: 0: (stack b a) [1]" in output


def test_plan_actions_are_found_by_their_pddl_names(tmp_path: Path) -> None:
    domain = """(define (domain acts) (:requirements :strips)
     (:predicates (p ?x) (q ?x))
     (:action über :parameters (?x) :precondition (p ?x) :effect (not (p ?x)))
     (:action 2nd-step :parameters (?x) :precondition (not (p ?x)) :effect (q ?x))
     (:action move.fast :parameters (?x) :precondition (q ?x) :effect (p ?x)))"""
    problem = "(define (problem ap) (:domain acts) (:objects a) (:init (p a)) (:goal (p a)))"
    text = pddl_to_contract(domain, problem)
    assert (
        "# Renamed from PDDL: action über → tool _ber, action 2nd-step → tool n_2nd_step," in text
    )
    assert 'tool move_fast(x: Object) "PDDL action `move.fast`" {' in text
    contract = tmp_path / "a.contract"
    contract.write_text(text)
    code, output = _simulate(contract, "(ÜBER a)\n(2nd-step a)\n(move.fast a)\n", tmp_path)
    assert code == 0 and "_ber:ok → n_2nd_step:ok → move_fast:ok" in output
    # only PDDL names: the tool name `move_fast` is not an action of the domain
    code, output = _simulate(contract, "(move_fast a)\n", tmp_path)
    assert code == 2
    assert "p.plan:1:1: error[E0701]: the PDDL domain has no action `move_fast`" in output
    assert "did you mean `move.fast`?" in output


# ------------------------------------------------------- valid PDDL always gives a valid contract


def test_equality_with_a_constant_of_an_unrelated_type_is_decided_by_the_types() -> None:
    domain = """(define (domain eq) (:requirements :typing :equality)
      (:types depot - place truck place)
      (:constants home - place)
      (:predicates (at ?t - truck ?p - place))
      (:action go :parameters (?t - truck ?from - place ?to - depot)
        :precondition (and (at ?t ?from) (not (= ?to home)) (or (= ?to home) (at ?t ?from)))
        :effect (and (not (at ?t ?from)) (at ?t ?to))))"""
    problem = """(define (problem eq1) (:domain eq) (:objects t - truck d1 d2 - depot)
      (:init (at t home)) (:goal (at t d2)))"""
    text = pddl_to_contract(domain, problem)
    assert check_text(text, "x.contract") == []
    assert "SAME_OBJECT" not in text  # (not (= ?to home)) always holds: no `require true`
    assert "  require false or (t, from) in at\n" in text
    sim = contractsim.loads(text).simulator(now="2024-01-01T00:00:00Z")
    report = sim.run([("go", {"t": "t", "from": "home", "to": "d2"})], goal="solved")
    assert (report.verdict, report.goal_results["reached"]) == ("ok", True)


def test_names_the_contract_language_reserves_are_renamed() -> None:
    preds = ["set", "map", "str", "int", "bool", "float", "list", "tuple", "len", "any", "union"]
    domain = (
        "(define (domain names) (:predicates "
        + " ".join(f"({p} ?x)" for p in preds)
        + ") (:action drop :parameters (?x) :precondition (and "
        + " ".join(f"({p} ?x)" for p in preds)
        + ") :effect (and "
        + " ".join(f"(not ({p} ?x))" for p in preds)
        + ")))"
    )
    problem = "(define (problem pn) (:domain names) (:objects a) (:init (set a)) (:goal (set a)))"
    text = pddl_to_contract(domain, problem)
    assert check_text(text, "x.contract") == []
    assert '  set_: set[Object] = {"a"}' in text
    assert 'tool drop(x: Object) "PDDL action `drop`" {' in text  # a tool may be named `drop`


def test_nesting_is_limited_as_the_contract_language_limits_it() -> None:
    def goal(depth: int) -> str:
        return "(not " * depth + "(p b1)" + ")" * depth

    domain = "(define (domain d) (:predicates (p ?x)) (:action a :parameters () :effect (and)))"

    def problem(depth: int) -> str:
        return f"(define (problem q) (:domain d) (:objects b1) (:goal {goal(depth)}))"

    # 61 `not`s: the goal's atom is at depth 64 (inside define, :goal and the nots)
    assert check_text(pddl_to_contract(domain, problem(61)), "x.contract") == []
    # one more: the atom's `(` (column 54 + 62 * 5) is too deep
    assert _diag(domain, problem(62)) == ("E0802", "p.pddl", 1, 364)


def test_a_contract_the_importer_gets_wrong_is_reported_at_the_pddl(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import contractsim.pddl as pddl

    (tmp_path / "d.pddl").write_text(DOMAIN)
    (tmp_path / "p.pddl").write_text(PROBLEM)
    monkeypatch.setattr(
        pddl,
        "pddl_to_contract",
        lambda *_: 'contract c version "1.0.0"\nstate { set: int = 0 }\n',
    )
    with pytest.raises(ContractError) as info:
        contractsim.from_pddl(tmp_path / "d.pddl", tmp_path / "p.pddl")
    (d,) = info.value.diagnostics
    assert (d.code, d.span.file, d.span.line) == ("E0811", str(tmp_path / "d.pddl"), 1)
    assert d.message == (
        "the importer wrote a contract that does not check: line 2: E0203 `set` is a reserved name"
    )


def test_add_effects_of_the_wrong_type_are_refused() -> None:
    domain = """(define (domain sem4) (:requirements :adl :typing)
      (:types block - thing thing)
      (:predicates (p ?x - block) (q ?x - thing))
      (:action a :parameters (?x - thing) :effect (and (p ?x) (q ?x)))
      (:action b :parameters (?x - thing) :precondition (p ?x) :effect (not (p ?x))))"""
    problem = "(define (problem s) (:domain sem4) (:objects b - block) (:goal (p b)))"
    with pytest.raises(ContractError) as info:
        pddl_to_contract(domain, problem, "d.pddl", "p.pddl")
    (d,) = info.value.diagnostics  # the precondition and the delete of `b` are fine
    assert (d.code, d.span.line, d.span.col) == ("E0808", 4, 59)
    assert d.message == (
        "this effect adds `p` for `?x` of type `thing`, but `p` holds only a `block` there"
    )


def test_problems_of_one_file_are_reported_together_in_order() -> None:
    domain = DOMAIN.replace("(clear ?y) (handempty)", "(hand ?y) (clear ?z) (on ?x)")
    with pytest.raises(ContractError) as info:
        pddl_to_contract(domain, PROBLEM, "d.pddl", "p.pddl")
    assert [(d.code, d.span.line, d.span.col) for d in info.value.diagnostics] == [
        ("E0806", 6, 25),
        ("E0806", 6, 41),
        ("E0807", 6, 45),
    ]
    problem = PROBLEM.replace("(clear a) (clear b)", "(clear z) (clear z) (on z a)")
    with pytest.raises(ContractError) as info:
        pddl_to_contract(DOMAIN, problem, "d.pddl", "p.pddl")
    assert [(d.code, d.span.col) for d in info.value.diagnostics] == [
        ("E0806", 17),
        ("E0806", 27),
        ("E0806", 34),
    ]


@pytest.mark.parametrize(
    ("domain", "problem", "expected"),
    [
        # two :parameters, a second :precondition / :effect
        (
            DOMAIN.replace(":precondition", ":parameters (?z - block) :precondition"),
            PROBLEM,
            ("E0810", "d.pddl", 6, 5),
        ),
        (DOMAIN.replace(":effect", ":effect (and) :effect"), PROBLEM, ("E0810", "d.pddl", 7, 19)),
        # actions: the same name in another case, names that become the same tool
        (
            DOMAIN.replace("  (:action stack", "  (:action STACK :parameters ()) (:action stack"),
            PROBLEM,
            ("E0810", "d.pddl", 5, 43),
        ),
        (
            DOMAIN.replace("  (:action stack", "  (:action pick-up) (:action pick_up) (:action s"),
            PROBLEM,
            ("E0810", "d.pddl", 5, 30),
        ),
        # problem sections
        (DOMAIN, PROBLEM.replace("(:init", "(:init) (:init"), ("E0810", "p.pddl", 3, 12)),
        (DOMAIN, PROBLEM.replace("(:goal (on a b))", ""), ("E0803", "p.pddl", 1, 9)),
        (DOMAIN, PROBLEM.replace("(:domain d)", ""), ("E0803", "p.pddl", 1, 9)),
        (DOMAIN, PROBLEM.replace("a b - block", "?a b - block"), ("E0803", "p.pddl", 2, 13)),
        # costs: negative, not finite, no value
        (
            DOMAIN.replace("(not (clear ?y))", "(not (clear ?y)) (increase (total-cost) -1)"),
            PROBLEM,
            ("E0803", "d.pddl", 7, 69),
        ),
        (
            DOMAIN.replace("(not (clear ?y))", "(not (clear ?y)) (increase (total-cost) inf)"),
            PROBLEM,
            ("E0803", "d.pddl", 7, 69),
        ),
        (
            DOMAIN.replace(
                "(handempty))\n  (:action", "(handempty)) (:functions (c))\n  (:action"
            ).replace("(not (clear ?y))", "(not (clear ?y)) (increase (total-cost) (c))"),
            PROBLEM,
            ("E0803", "p.pddl", 3, 4),
        ),
    ],
)
def test_more_bad_pddl_gives_a_located_diagnostic(
    domain: str, problem: str, expected: tuple[str, str, int, int]
) -> None:
    assert _diag(domain, problem) == expected


def test_types_are_read_before_the_sections_that_use_them() -> None:
    # `thing` is declared only as a parent; :predicates comes before :types
    domain = """(define (domain o) (:requirements :typing)
      (:predicates (p ?x - thing))
      (:constants k - thing)
      (:types block - thing)
      (:action a :parameters (?x - block) :precondition (p ?x) :effect (not (p ?x))))"""
    problem = (
        "(define (problem q) (:domain o) (:objects b - block) (:init (p b) (p k)) (:goal (p k)))"
    )
    text = pddl_to_contract(domain, problem)
    assert check_text(text, "x.contract") == []
    assert "type Thing = enum { k } | Block" in text


def test_the_emitted_contract_drops_dead_code_and_brackets_mixed_and_or() -> None:
    domain = """(define (domain r) (:requirements :adl :typing)
      (:types thing none)
      (:predicates (p ?x - thing) (q ?x - thing) (f))
      (:action a :parameters (?x - thing)
        :precondition (or (and (p ?x) (q ?x)) (f))
        :effect (and (when (exists (?n - none) (f)) (not (f))) (p ?x)
                     (when (q ?x) (not (q ?x))))))"""
    problem = "(define (problem q) (:domain r) (:objects t - thing) (:init (f)) (:goal (p t)))"
    text = pddl_to_contract(domain, problem)
    assert check_text(text, "x.contract") == []
    assert "  require (x in p and x in q) or f\n" in text
    assert "if false" not in text and "let was_f" not in text
    assert "    let was_q = q\n    if x in was_q {\n      q.remove(x)\n    }\n" in text
    assert "    }\n    p.add(x)\n  }\n" in text


@pytest.mark.parametrize(
    ("where", "name", "line", "col"),
    [
        ("problem", 'evil","x-2', 2, 15),  # was a third enum member: a plan naming it was ok
        ("problem", "x{y}", 2, 15),
        ("problem", "back\\slash", 2, 15),
        ("problem", "esc\x1b]0:t\x07", 2, 15),
        ("domain", 'bl"ock', 3, 11),
        ("domain", "cl{ear}", 4, 44),
        ("domain", "cl,ear", 4, 44),
        ("domain", "cl\u202eear", 4, 44),
        ("domain", "st'ack", 5, 12),
    ],
)
def test_names_that_are_not_pddl_names_are_refused(
    where: str, name: str, line: int, col: int
) -> None:
    if where == "problem":
        domain, problem = DOMAIN, PROBLEM.replace("a b - block", f"a {name} - block")
    else:
        old = {"bl": "block", "cl": "clear", "st": "stack"}[name[:2]]
        domain, problem = DOMAIN.replace(old, name), PROBLEM
    with pytest.raises(ContractError) as info:
        pddl_to_contract(domain, problem, "d.pddl", "p.pddl")
    d = info.value.diagnostics[0]
    assert (d.code, d.span.file[0], d.span.line, d.span.col) == ("E0803", where[0], line, col)
    assert d.message.startswith(f"`{name}` is not a PDDL name (")
    assert d.hint is not None and d.hint.startswith("write a name of letters, digits, `-` and `_`")


def test_object_names_are_quoted_in_the_contract() -> None:
    problem = PROBLEM.replace("a b - block", "a b x-1 and 2x - block")
    text = pddl_to_contract(DOMAIN, problem)
    assert 'type Block = enum { a, b, "x-1", and_, "2x" }' in text or (
        'type Block = enum { a, b, "x-1", "and", "2x" }' in text
    )
    c = contractsim.loads(text, "x.contract")
    members = c.ir.types[0].type.members  # type: ignore[union-attr]
    assert [m.value for m in members] == ["a", "b", "x-1", "and", "2x"]


def test_expected_an_object_has_its_article() -> None:
    problem = PROBLEM.replace("a b - block", "a (b) - block")
    with pytest.raises(ContractError) as info:
        pddl_to_contract(DOMAIN, problem, "d.pddl", "p.pddl")
    assert info.value.diagnostics[0].message == "expected an object"
    problem = PROBLEM.replace("a b - block", "- block")
    with pytest.raises(ContractError) as info:
        pddl_to_contract(DOMAIN, problem, "d.pddl", "p.pddl")
    assert info.value.diagnostics[0].message == "`-` without an object before it"


def test_emitted_names_are_escaped_even_when_the_reader_is_bypassed() -> None:
    from contractsim.pddl.emit import lit, member

    assert member('evil","x-2') == lit('evil","x-2') == '"evil\\",\\"x-2"'
    assert member("a\\b") == '"a\\\\b"'

"""PDDL import: the emitted contracts, `import-pddl`, IPC plans, and diagnostics for bad PDDL."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

import contractsim
from contractsim.api import check_text
from contractsim.cli import main
from contractsim.dsl.diagnostics import ContractError
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
        "tool unstack(x: Object, y: Object) {\n"
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
    assert "tool go(t: Truck, from: Place, to: Place) {" in text
    assert '    else SAME_OBJECT "(not (= {from} {to})) does not hold"' in text
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
    assert "tool go(a: Loc, b: Loc) cost DIST[(a, b)] {" in text
    assert "tool wait() cost 2 {" in text
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
        ("(" * 500, PROBLEM, ("E0802", "d.pddl", 1, 201)),
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

"""What keeps start-up fast: the stored LALR tables, lazy imports, lazily built IR validators.

Timings themselves live in benchmarks/ (never timed assertions here); these tests pin down the
mechanisms and that they change no result.
"""

from __future__ import annotations

import random
import subprocess
import sys
from pathlib import Path

import pytest
from lark import Lark, Token, Tree
from lark.exceptions import UnexpectedInput
from pydantic import BaseModel

import contractsim
from contractsim.diagnostics import ContractError, Diagnostic
from contractsim.dsl import ir
from contractsim.dsl.lower import lower
from contractsim.grammar import literals, tables
from contractsim.grammar.parse import _keywords, grammar_text, parse, parser

ROOT = Path(__file__).resolve().parent.parent
SOURCES = sorted(ROOT.glob("examples/*/*.contract")) + sorted(ROOT.glob("tests/golden/*.contract"))


@pytest.fixture(scope="module")
def built() -> Lark:
    return tables.build(grammar_text())


def test_stored_tables_are_up_to_date() -> None:
    stored = tables.load_stored(grammar_text())
    assert stored is not None, (
        "contractsim/grammar/contract_tables.py does not belong to contract.lark (or to this "
        "lark version): run `python -m contractsim.grammar.tables` and commit the file"
    )
    assert parser() is not None


def _shape(tree: Tree[Token] | Token) -> object:
    """A tree with every token's type, text and position (what lowering reads)."""
    if isinstance(tree, Token):
        return (tree.type, str(tree), tree.line, tree.column, tree.end_line, tree.end_column)
    if tree is None:
        return None
    meta = tree.meta
    where = (meta.line, meta.column, meta.end_line, meta.end_column) if not meta.empty else None
    return (tree.data, where, [_shape(c) for c in tree.children])


def _error(exc: UnexpectedInput) -> object:
    expected = getattr(exc, "expected", None) or getattr(exc, "allowed", None) or ()
    return (type(exc).__name__, exc.line, exc.column, sorted(expected))


def test_stored_parser_parses_like_the_grammar(built: Lark) -> None:
    stored = tables.load_stored(grammar_text())
    assert stored is not None
    for path in SOURCES:
        text = path.read_text("utf-8")
        try:
            expected: object = _shape(built.parse(text, start="start"))
        except UnexpectedInput as exc:  # a golden file with a syntax error: the same error
            expected = _error(exc)
        try:
            got: object = _shape(stored.parse(text, start="start"))
        except UnexpectedInput as exc:
            got = _error(exc)
        assert got == expected, path
    for expr in ('a + b * c in {"x"}', "all(p in files for p in keys(dirs)) or not x.y[1]"):
        assert _shape(stored.parse(expr, start="expr")) == _shape(built.parse(expr, start="expr"))
    assert {t.name for t in stored.terminals} == {t.name for t in built.terminals}


def test_stale_tables_fall_back_to_the_grammar() -> None:
    assert tables.load_stored(grammar_text() + "\n// changed\n") is None


def _imported_after(code: str) -> set[str]:
    out = subprocess.run(
        [sys.executable, "-c", code + "; import sys; print(' '.join(sorted(sys.modules)))"],
        capture_output=True,
        text=True,
        check=True,
        cwd=ROOT,
    ).stdout.split()
    return set(out)


def test_version_imports_neither_pydantic_nor_the_parser() -> None:
    mods = _imported_after("import contractsim, contractsim.cli")
    assert not {m for m in mods if m.startswith(("pydantic", "lark", "contractsim.dsl"))}


def test_check_does_not_import_the_simulator() -> None:
    mods = _imported_after(
        "from contractsim import check_text; check_text('contract c version \"1.0.0\"')"
    )
    assert "contractsim.dsl.ir" in mods
    assert not {m for m in mods if m.startswith(("contractsim.simulator", "contractsim.runtime"))}


# ------------------------------------------------------------------ the fast path for literals


def _element(rng: random.Random, depth: int) -> str:
    kind = rng.randrange(12 if depth < 3 else 7)
    if kind == 0:
        body = rng.choice(["a", "", "x y", 'say \\"hi\\"', "tab\\t", "é", "{1, 2}", "# no", "=["])
        return f'"{body}"'
    if kind == 1:
        return str(rng.randrange(100000))
    if kind == 2:
        return rng.choice(["1.5", "0.25e3", "2E-2", "10e5"])
    if kind == 3:
        return rng.choice(["-3", "- 4.5", "-0"])
    if kind == 4:
        return rng.choice(["true", "false", "null", "none", "True", "NAME_1", "_x"])
    if kind == 5:
        return rng.choice(["Block.a", "Color.red", "E.true"[:5], "S.member_2"])
    if kind == 6:
        # things the fast path must leave to lark (or refuse exactly as lark does)
        return rng.choice(
            ['"""long"""', 'r"raw"', "(1)", "in", "a.b.c", "f(x)", "1 + 2", "x[1]", "1.a", "not x"]
        )
    sep = rng.choice([", ", ",", " ,\n  ", ", # note\n"])
    items = [_element(rng, depth + 1) for _ in range(rng.randrange(4))]
    trailing = rng.choice(["", ","]) if items else ""
    if kind == 7:
        if not items:
            items = [_element(rng, depth + 1)]
            trailing = ","
        elif len(items) == 1:
            trailing = ","
        return "(" + sep.join(items) + trailing + ")"
    if kind == 8:
        return "[" + sep.join(items) + trailing + "]"
    if kind in (9, 10):
        return "{" + sep.join(items) + trailing + "}"
    entries = [f"{_element(rng, depth + 1)}: {_element(rng, depth + 1)}" for _ in items]
    return "{" + sep.join(entries) + trailing + "}"


def _parsed(text: str) -> object:
    try:
        return _shape(parse(text, "t.contract"))
    except ContractError as exc:
        return [d.model_dump() for d in exc.diagnostics]


@pytest.mark.parametrize("seed", range(8))
def test_fast_literals_parse_exactly_like_lark(seed: int, monkeypatch: pytest.MonkeyPatch) -> None:
    rng = random.Random(seed)
    for _ in range(40):
        body = _element(rng, 0)
        if not body.startswith(("{", "[")):
            body = "[" + body + "]"
        text = (
            'contract c version "1.0.0"\n'
            f"state {{\n  xs: set[int] = {body}\n  n: int = 0\n}}\n"
            f"const K = {{1, 2}}\ntool t() {{ effect n = n + 1 }}\n"
        )
        monkeypatch.setattr(literals, "FAST_LITERAL_MIN", 10**9)
        expected = _parsed(text)
        monkeypatch.setattr(literals, "FAST_LITERAL_MIN", 1)
        assert _parsed(text) == expected, text


def test_every_example_and_golden_file_parses_the_same_with_fast_literals(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    used = 0
    for path in SOURCES:
        text = path.read_text("utf-8")
        monkeypatch.setattr(literals, "FAST_LITERAL_MIN", 10**9)
        expected = _parsed(text)
        monkeypatch.setattr(literals, "FAST_LITERAL_MIN", 1)
        used += bool(literals.blank_literals(text, _keywords())[1])
        assert _parsed(text) == expected, path
    assert used > 10  # the fast path really read literals of these files


def test_a_large_literal_takes_the_fast_path() -> None:
    pairs = ", ".join(f'("k{i}", "v{i}")' for i in range(2000))
    text = f'contract c version "1.0.0"\nstate {{\n  p: set[tuple[str, str]] = {{{pairs}}}\n}}\n'
    blanked, found = literals.blank_literals(text, _keywords())
    assert len(found) == 1 and len(blanked) == len(text)
    assert blanked.count("\n") == text.count("\n")
    tree = parse(text)
    assert _shape(tree) == _shape(parser().parse(text, start="start"))


# ------------------------------------------------------------------ replay explains lazily


def test_replay_explains_exactly_the_disagreements() -> None:
    """Replay skips explaining failed conditions (a third of its time) except for the steps it
    reports, which get the same violations, values included, as a simulator that explains all."""
    from contractsim.api import load
    from contractsim.replay import Run, Step, replay_runs

    contract = load(ROOT / "examples/gorilla_fs/gorilla_fs.contract")
    steps = [
        Step("cat", {"file_name": "ghost.txt"}, "ok", None, None),  # predicted to fail
        Step("touch", {"file_name": "a.txt"}, "ok", None, None),
        Step("cat", {"file_name": "a.txt"}, "ok", None, None),
        Step("mkdir", {"dir_name": "a.txt"}, "ok", None, None),  # predicted to fail too
    ]
    run = Run(name="r", index=1, line=1, state={}, now=None, steps=steps)
    result = replay_runs(contract, [run])
    assert [d.step for d in result.disagreements] == [1, 4]
    sim = contract.simulator(now="2000-01-01T00:00:00Z")
    assert sim.explain
    state = sim.state_with({})
    expected = []
    for s in steps:
        step = sim.step(state, s.tool, s.args)
        if step.verdict != "ok":
            expected.append([v.to_json() for v in step.violations])
        state = sim.observe(state, s.tool, s.args, contractsim.Observation("ok", None, None)).state
    assert [d.violations for d in result.disagreements] == expected
    assert any(v.get("values") for vs in expected for v in vs)  # there was something to explain


# ------------------------------------------------------------------- IR built without validation


def _same_tree(built: object, validated: object, path: str = "contract") -> None:
    """Equal types and values all the way down, spans included (``==`` ignores spans)."""
    assert type(built) is type(validated), f"{path}: {type(built).__name__} vs {type(validated)}"
    if isinstance(validated, BaseModel):
        assert isinstance(built, BaseModel)
        assert list(built.__dict__) == list(validated.__dict__), path
        assert built.model_fields_set == validated.model_fields_set, path
        for name, value in validated.__dict__.items():
            _same_tree(built.__dict__[name], value, f"{path}.{name}")
    elif isinstance(validated, (tuple, list)):
        assert isinstance(built, (tuple, list))
        assert len(built) == len(validated), path
        for i, (b, v) in enumerate(zip(built, validated)):
            _same_tree(b, v, f"{path}[{i}]")
    else:
        assert built == validated, path


def _lower_both_ways(
    text: str, name: str, monkeypatch: pytest.MonkeyPatch
) -> tuple[tuple[ir.Contract, list[Diagnostic]], tuple[ir.Contract, list[Diagnostic]]]:
    tree = parse(text, name)
    monkeypatch.setattr(ir, "VALIDATE", False)
    built = lower(tree, name)
    monkeypatch.setattr(ir, "VALIDATE", True)
    validated = lower(tree, name)
    return built, validated


@pytest.mark.parametrize("path", SOURCES, ids=lambda p: p.stem)
def test_lowering_builds_exactly_what_validation_builds(
    path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    text = path.read_text(encoding="utf-8")
    try:
        built, validated = _lower_both_ways(text, str(path), monkeypatch)
    except ContractError:
        return  # a syntax error: nothing is lowered
    _same_tree(built[0], validated[0])
    assert built[1] == validated[1]
    assert built[0].model_dump() == validated[0].model_dump()


def test_a_large_literal_lowers_exactly_like_validation(monkeypatch: pytest.MonkeyPatch) -> None:
    pairs = ", ".join(f'("o{i}", "t{i % 7}")' for i in range(400))
    text = (
        'contract big version "1"\n'
        "type P = enum { a, b }\n"
        f"state {{\n  facts: set[tuple[str, str]] = {{{pairs}}}\n"
        "  nums: list[float] = [1, -2.5, 3e2, 0]\n"
        '  m: map[str, P] = {"x": P.a, "y": P.b}\n'
        "}\n"
    )
    built, validated = _lower_both_ways(text, "big.contract", monkeypatch)
    _same_tree(built[0], validated[0])


def test_trusted_construction_rejects_unknown_and_missing_fields() -> None:
    with pytest.raises(TypeError, match="unknown field"):
        ir.construct(ir.Name, name="x", nmae="y")
    with pytest.raises(TypeError, match=r"missing field\(s\) name"):
        ir.construct(ir.Name)
    node = ir.construct(ir.Name, name="x")
    assert node == ir.Name(name="x")
    assert node.model_fields_set == ir.Name(name="x").model_fields_set
    assert hash(node) == hash(ir.Name(name="x"))


# ----------------------------------------------------------- replay steps an inert result once


def test_replay_reuses_the_prediction_exactly_where_a_second_run_builds_the_same(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Over the 300 recorded GorillaFileSystem runs, every observed step (state, outcome,
    branch, notes) and the whole report are the same whether the prediction is reused for a
    result the tool never reads or the step is simulated again along the real result."""
    from contractsim.api import load
    from contractsim.replay import load_adapter, read_runs, render_json, replay_runs
    from contractsim.simulator import observe

    contract = load(ROOT / "examples/gorilla_fs/gorilla_fs.contract")
    adapter = load_adapter(str(ROOT / "examples/gorilla_fs/adapter.py") + ":from_bfcl")
    runs = read_runs(ROOT / "tests/data/bfcl/GorillaFileSystem.jsonl", contract.compiled, adapter)
    assert sum(len(r.steps) for r in runs) == 3600

    def observed_steps() -> list[tuple[object, ...]]:
        sim = contract.simulator(now="2000-01-01T00:00:00Z")
        out: list[tuple[object, ...]] = []
        for run in runs:
            state = sim.state_with(run.state)
            for s in run.steps:
                seen = contractsim.Observation(s.outcome, s.result, s.error)  # type: ignore[arg-type]
                obs = sim.observe(state, s.tool, s.args, seen)
                branch = obs.branch
                out.append(
                    (
                        obs.state.to_json(),
                        obs.state.data,
                        obs.outcome,
                        obs.notes,
                        obs.ambiguities,
                        obs.result_problem,
                        None if branch is None else (branch.kind, branch.report, branch.warnings),
                        None if branch is None else [v.to_json() for v in branch.violations],
                    )
                )
                state = obs.state
        return out

    reused_calls = 0
    inert = observe._result_is_inert

    def counting(*args: object) -> bool:
        nonlocal reused_calls
        answer = inert(*args)  # type: ignore[arg-type]
        reused_calls += answer
        return answer

    monkeypatch.setattr(observe, "_result_is_inert", counting)
    fast_steps = observed_steps()
    fast_report = render_json(replay_runs(contract, runs), "c", "t")
    assert reused_calls > 1000  # the shortcut is taken on most steps
    monkeypatch.setattr(observe, "_result_is_inert", lambda *args: False)
    slow_steps = observed_steps()
    slow_report = render_json(replay_runs(contract, runs), "c", "t")
    assert fast_steps == slow_steps
    assert fast_report == slow_report


def test_a_tool_that_reads_its_result_is_simulated_along_the_real_one() -> None:
    from contractsim.api import loads
    from contractsim.simulator import observe

    contract = loads(
        'contract c version "1.0.0"\n'
        'state {\n  last: str = ""\n  n: int = 0\n}\n'
        "tool get() -> str {\n  effect {\n    last = result\n  }\n}\n"
        "tool bump() {\n  effect {\n    n += 1\n  }\n}\n"
        "tool label() -> str {\n  effect {\n    n += 1\n  }\n}\n"
    )
    sim = contract.simulator()
    state = sim.state_with({})
    seen = contractsim.Observation("ok", "hello", None)
    assert not observe._result_is_inert(sim, sim.compiled.tools["get"], "hello")
    assert observe._result_is_inert(sim, sim.compiled.tools["bump"], "hello")
    # a made-up `str` is a fresh id, but no expression reads it: it does not choose the code's
    # (three-valued) flavour either, so the prediction is reused
    assert observe._result_is_inert(sim, sim.compiled.tools["label"], "hello")
    labelled = sim.observe(state, "label", {}, seen)
    assert labelled.state.to_json()["n"] == 1
    assert labelled.branch is not None and labelled.branch.result == "hello"
    assert sim.observe(state, "get", {}, seen).state.to_json()["last"] == "hello"
    assert sim.observe(state, "bump", {}, seen).state.to_json()["n"] == 1

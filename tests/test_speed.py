"""What keeps start-up fast: the stored LALR tables, lazy imports, an IR of plain dataclasses.

Timings themselves live in benchmarks/ (never timed assertions here); these tests pin down the
mechanisms and that they change no result.
"""

from __future__ import annotations

import dataclasses
import json
import random
import subprocess
import sys
from pathlib import Path

import pytest
from lark import Lark, Token, Tree
from lark.exceptions import UnexpectedInput

import contractsim
from contractsim.diagnostics import ContractError, Diagnostic, Span
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
        return [d.dump() for d in exc.diagnostics]


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


# ---------------------------------------------------- the IR: plain dataclasses, pydantic on demand


def _same_tree(built: object, validated: object, path: str = "contract") -> None:
    """Equal types and values all the way down, spans included (``==`` ignores spans)."""
    assert type(built) is type(validated), f"{path}: {type(built).__name__} vs {type(validated)}"
    if isinstance(validated, Span):
        assert isinstance(built, Span) and built.same_place(validated), path
    elif dataclasses.is_dataclass(validated):
        for f in dataclasses.fields(validated):
            _same_tree(getattr(built, f.name), getattr(validated, f.name), f"{path}.{f.name}")
    elif isinstance(validated, (tuple, list)):
        assert isinstance(built, (tuple, list))
        assert len(built) == len(validated), path
        for i, (b, v) in enumerate(zip(built, validated)):
            _same_tree(b, v, f"{path}[{i}]")
    else:
        assert built == validated, path


@pytest.mark.parametrize("path", SOURCES, ids=lambda p: p.stem)
def test_the_ir_validates_and_round_trips_through_pydantic(path: Path) -> None:
    """Every example's and golden file's IR has its declared field types (pydantic validates it
    strictly through the IR's TypeAdapter) and survives dump → validate unchanged, spans
    included."""
    text = path.read_text(encoding="utf-8")
    try:
        contract, _ = lower(parse(text, str(path)), str(path))
    except ContractError:
        return  # a syntax error: nothing is lowered
    assert ir.validate_node(contract) is contract
    dumped = ir.dump(contract)
    again = ir.load(ir.Contract, dumped)
    _same_tree(again, contract)
    assert again == contract and hash(again) == hash(contract)
    as_json = ir.load(ir.Contract, json.loads(ir.dump_json(contract)))
    _same_tree(as_json, contract)


def test_validating_while_lowering_builds_the_same_ir(monkeypatch: pytest.MonkeyPatch) -> None:
    pairs = ", ".join(f'("o{i}", "t{i % 7}")' for i in range(400))
    text = (
        'contract big version "1"\n'
        "type P = enum { a, b }\n"
        f"state {{\n  facts: set[tuple[str, str]] = {{{pairs}}}\n"
        "  nums: list[float] = [1, -2.5, 3e2, 0]\n"
        '  m: map[str, P] = {"x": P.a, "y": P.b}\n'
        "}\n"
    )
    tree = parse(text, "big.contract")
    monkeypatch.setattr(ir, "VALIDATE", False)
    built = lower(tree, "big.contract")
    monkeypatch.setattr(ir, "VALIDATE", True)
    validated = lower(tree, "big.contract")
    _same_tree(built[0], validated[0])
    assert built[1] == validated[1]


def test_literal_elements_lower_as_the_rules_lower_them(monkeypatch: pytest.MonkeyPatch) -> None:
    """``_items`` builds plain strings and integers itself: exactly what ``_string`` and
    ``_number`` build, spans included, for every example and golden file and for elements
    that must take the general path (escapes, private-use braces, long integers)."""
    from contractsim.dsl import lower as lower_module

    odd = '"a\\nb", "", "\ue000x\ue001", 007, 12345678901234567890123, 1.5, -3, "é", r"\\d"'
    texts = [(p.read_text("utf-8"), str(p)) for p in SOURCES] + [
        (f'contract c version "1"\nstate {{\n  xs: list[any] = [{odd}, ("k", 1)]\n}}\n', "o")
    ]
    fast: list[tuple[ir.Contract, list[Diagnostic]] | None] = []
    for text, name in texts:
        try:
            fast.append(lower(parse(text, name), name))
        except ContractError:
            fast.append(None)
    assert fast[-1] is not None and len(fast[-1][0].state[0].init.items) == 10  # type: ignore[union-attr]

    def every_item_by_its_rule(self: object, tree: Tree[Token]) -> tuple[ir.Expr, ...]:
        return tuple(self.lower(c) for c in tree.children if c is not None)  # type: ignore[attr-defined]

    monkeypatch.setattr(lower_module._Lowerer, "_items", every_item_by_its_rule)
    for (text, name), built in zip(texts, fast):
        if built is None:
            continue
        expected = lower(parse(text, name), name)
        _same_tree(built[0], expected[0])
        assert built[1] == expected[1]


def test_validation_names_a_field_of_the_wrong_type() -> None:
    from pydantic import ValidationError

    listed = ir.Call(func="f", args=[ir.Name(name="x")])  # type: ignore[arg-type]
    with pytest.raises(TypeError, match=r"invalid IR: Call.args: list is not tuple"):
        ir.validate_node(listed)
    as_int = ir.EventRef(name="e", probability=1)
    with pytest.raises(TypeError, match=r"EventRef.probability: int is not float"):
        ir.validate_node(as_int)
    with pytest.raises(ValidationError, match="op"):
        ir.validate_node(ir.Unary(op="~", operand=ir.Name(name="x")))  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="unexpected keyword argument 'nmae'"):
        ir.Name(name="x", nmae="y")  # type: ignore[call-arg]
    with pytest.raises(TypeError, match="missing 1 required keyword-only argument: 'name'"):
        ir.Name()  # type: ignore[call-arg]


def test_nodes_are_frozen_slotted_and_compare_without_spans() -> None:
    a = ir.Name(name="x", span=Span(line=3))
    b = ir.Name(name="x")
    assert a == b and hash(a) == hash(b)
    assert not hasattr(a, "__dict__")
    with pytest.raises(dataclasses.FrozenInstanceError):
        a.name = "y"  # type: ignore[misc]
    moved = dataclasses.replace(a, name="y")
    assert moved.name == "y" and moved.span.same_place(a.span)


def test_check_imports_no_pydantic_models() -> None:
    """The IR, spans and diagnostics are dataclasses and constants of plain types are validated by
    pydantic-core alone: checking the file-system example never loads pydantic's model
    machinery (``pydantic.main``)."""
    text = (ROOT / "examples/file_system/file_system.contract").read_text("utf-8")
    mods = _imported_after(f"from contractsim import check_text; check_text({text!r})")
    assert "contractsim.dsl.ir" in mods and "contractsim.compiler.checks" in mods
    assert "pydantic.main" not in mods
    assert "pydantic.type_adapter" not in mods


BAD_CONSTANTS = """contract bad version "1.0.0"
type Path = str pattern r"^/" max_length 8
state {
  dirs: set[Path] = {"/", "tmp"}
  files: map[Path, int] = {"/a": 1, "/very/long/name": 2}
  sizes: list[int] max_items 1 = [1, 2]
}
"""


def test_a_cold_check_validates_plain_constants_without_pydantic_models(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The constants' problems (E0404) are the same whether pydantic-core validates them with
    the plain schema (a fresh process, which then never imports ``pydantic.main``) or pydantic
    builds the validator from the type's annotation."""
    from contractsim.api import check_text
    from contractsim.compiler import checks

    code = (
        "import json, sys; from contractsim import check_text; "
        f"print(json.dumps([d.to_json() for d in check_text({BAD_CONSTANTS!r})])); "
        "print('pydantic.main' in sys.modules)"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=ROOT
    ).stdout.splitlines()
    assert out[1] == "False"
    cold = json.loads(out[0])
    assert [d["message"] for d in cold if d["code"] == "E0404"] == [
        "the initial value of `dirs` does not satisfy its type: does not match the pattern "
        'r"^/" (got "tmp")',
        "the initial value of `files` does not satisfy its type: is too long: at most 8 "
        'characters (got "/very/long/name")',
        "the initial value of `sizes` does not satisfy its type: is too long: at most 1 items "
        "(got [1, 2])",
    ]
    monkeypatch.setattr(checks, "plain_validator", lambda t, decls: None)
    assert cold == [d.to_json() for d in check_text(BAD_CONSTANTS)]


def test_compiling_and_simulating_build_no_ir_validator() -> None:
    """Compiling a tool built IR nodes with validation, which made pydantic build the
    validators of the whole IR union tree in every ``simulate``: nodes are dataclasses now, and
    no IR TypeAdapter is built unless asked for."""
    code = (
        "from contractsim.api import load; from contractsim.dsl import ir; "
        "c = load('examples/file_system/file_system.contract'); sim = c.simulator(); "
        "sim.step(sim.state_with({}), 'make_dir', {'path': '/home/x'}); print(len(ir._ADAPTERS))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=ROOT
    ).stdout
    assert out.split() == ["0"]


def test_diagnostics_dump_and_load() -> None:
    d = Diagnostic(code="E1", severity="error", message="m", span=Span(file="f", line=2), hint="h")
    assert d.dump() == {
        "code": "E1",
        "severity": "error",
        "message": "m",
        "span": {"file": "f", "line": 2, "col": 1, "end_line": 1, "end_col": 1},
        "hint": "h",
    }
    again = Diagnostic.load(json.loads(json.dumps(d.dump())))
    assert again == d and again.span.same_place(d.span)


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

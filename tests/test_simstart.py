"""What ``simulate`` (and ``check``, exports) pay at start-up: validators built on first use,
plain types validated by pydantic-core alone, with the same results as before (issue 13)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel, ValidationError

from contractsim.api import check_text, load, loads
from contractsim.compiler.compile import compile_contract
from contractsim.compiler.core_schemas import (
    PlainArgsModel,
    model_values,
    plain_args_model,
    plain_schema,
    plain_validator,
)
from contractsim.compiler.problems import problems_from, value_problem
from contractsim.compiler.validators import EMPTY, ValidatorBuilder
from contractsim.compiler.values import FMap
from contractsim.diagnostics import ContractError
from contractsim.dsl import ir

ROOT = Path(__file__).resolve().parent.parent
FS = ROOT / "examples/file_system/file_system.contract"
FS_PLAN = ROOT / "examples/file_system/plans/fails_read_after_delete.yaml"

PLAIN_TYPES = """contract plain version "1.0.0"
type P = str pattern r"^a" max_length 5 min_length 1
type Q = str pattern r"^b"
type E = enum { x, y }
type N = int min 1 max 9
type F = float min 0.5
type G = float min 1 max 2.5
type L = list[P] max_items 3 min_items 1
type L2 = list[Q] min_items 2
type S = set[N] max_items 4
type S2 = set[E]
type M = map[P, int]
type T = tuple[N, Q]
type D = str format "email"
type A = P
type A2 = Q max_length 3
type A3 = str
type A4 = A3 pattern r"^c" min_length 2
type O = P | null
type Z = null
type Nb = number min 1
type I3 = int min 3
type LL = list[list[N]]
type R = record { a: P, b: int = 1 }
type J = str | list[J]
type Q2 = Q pattern r"^bc"
type Q3 = Q max_length 3
type N2 = N max 5
type S3 = str min_length 2
type S4 = S3 pattern r"x"
type F2 = G min 1.5
type M2 = M
type E2 = E
type T2 = tuple[E2, Q2]
state {
  a: P = "ab"
  m: M = {"a": 1}
}
tool t(p: P, q: Q, n: N, l: L, s: S, e: E, a4: A4, i3: I3, ll: LL, r: R, d: D = "a@b.co") {
  effect a = p
}
"""


def _type_exprs(c: ir.Contract) -> list[ir.TypeExpr]:
    out: list[ir.TypeExpr] = [t.type for t in c.types]
    out += [v.type for v in c.state]
    out += [k.type for k in c.consts if k.type is not None]
    for tool in c.tools:
        for p in tool.params:
            out += [p.type, p.accepted_type]
    return out


def _checked_contracts() -> list[ir.Contract]:
    paths = sorted(ROOT.glob("examples/**/*.contract")) + sorted(
        ROOT.glob("tests/golden/*.contract")
    )
    out = [loads(PLAIN_TYPES, "plain.contract").ir]
    for path in paths:
        try:
            out.append(load(path).ir)
        except ContractError:
            continue  # the golden files of errors
    return out


def test_plain_schemas_are_the_schemas_pydantic_generates() -> None:
    """Same schema, same errors: for every type of the examples and golden files that
    core_schemas builds, pydantic (through the validators) generates exactly that schema."""
    built = fallback = 0
    for c in _checked_contracts():
        builder = ValidatorBuilder(c)
        decls = {t.name: t for t in c.types}
        for t in _type_exprs(c):
            mine = plain_schema(t, decls)
            if mine is None:
                fallback += 1
                continue
            built += 1
            assert mine == builder.adapter_for(t).core_schema, (c.header.name, t)
    assert built > 200 and fallback > 50  # both paths are exercised


@pytest.mark.parametrize(
    ("type_name", "expected"),
    [
        ("P", "str"),
        ("N", "int"),
        ("L", "tuple"),
        ("S2", "frozenset"),
        ("M", "function-after"),
        ("A4", "str"),
        ("LL", "tuple"),
        ("D", None),  # a format: an after-validator of ours
        ("O", None),  # a union: a wrap-validator of ours
        ("Nb", None),
        ("R", None),  # a record: a pydantic model
        ("J", None),  # recursive
    ],
)
def test_which_types_are_plain(type_name: str, expected: str | None) -> None:
    c = loads(PLAIN_TYPES, "plain.contract").ir
    decls = {t.name: t for t in c.types}
    schema = plain_schema(decls[type_name].type, decls)
    assert (None if schema is None else schema["type"]) == expected


@pytest.mark.parametrize(
    ("type_name", "value", "message"),
    [
        ("P", "zz", 'does not match the pattern r"^a" (got "zz")'),
        ("P", "aaaaaa", 'is too long: at most 5 characters (got "aaaaaa")'),
        ("P", "", 'is too short: at least 1 characters (got "")'),
        ("P", 3, "must be a string (got 3)"),
        ("N", 10, "must be at most 9 (got 10)"),
        ("N", 1.5, "must be an integer (got 1.5)"),
        ("G", 0.5, "must be at least 1.0 (got 0.5)"),  # pydantic-core shows a float bound
        ("E", "z", "must be one of 'x' or 'y' (got \"z\")"),
        ("L", [], "is too short: at least 1 items (got [])"),
        ("L", ["b"], 'does not match the pattern r"^a" (got "b")'),
        ("S", [1, 20], "must be at most 9 (got 20)"),
        ("M", {"b": 1}, 'does not match the pattern r"^a" (got "b")'),
        ("M", {"a": "x"}, 'must be an integer (got "x")'),
        ("T", [1, "c"], 'does not match the pattern r"^b" (got "c")'),
        ("A4", "c", 'is too short: at least 2 characters (got "c")'),
        ("L", EMPTY, "is too short: at least 1 items (got [])"),
        ("M", EMPTY, None),
        ("P", "abc", None),
    ],
)
def test_plain_validator_problems_match_the_validators(
    type_name: str, value: Any, message: str | None
) -> None:
    c = loads(PLAIN_TYPES, "plain.contract").ir
    decls = {t.name: t for t in c.types}
    t = ir.NamedType(name=type_name, span=decls[type_name].span)
    plain = plain_validator(t, decls)
    assert plain is not None
    assert value_problem(plain.validate_python, value) == message
    assert ValidatorBuilder(c).conformance_problem(value, t) == message


def test_a_constant_breaking_a_plain_type_reports_as_before() -> None:
    text = PLAIN_TYPES.replace('a: P = "ab"', 'a: P = "zz"').replace(
        'm: M = {"a": 1}', 'm: M = {"b": 1}'
    )
    found = [(d.code, d.message) for d in check_text(text, "plain.contract") if d.code == "E0404"]
    assert found == [
        (
            "E0404",
            'the initial value of `a` does not satisfy its type: does not match the pattern r"^a" '
            '(got "zz")',
        ),
        (
            "E0404",
            'the initial value of `m` does not satisfy its type: does not match the pattern r"^a" '
            '(got "b")',
        ),
    ]


def _child(code: str) -> Any:
    proc = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True
    )
    return json.loads(proc.stdout)


MODULES = """
import json, sys
def loaded():
    return {
        "validators": "contractsim.compiler.validators" in sys.modules,
        "simulator": any(m.startswith("contractsim.simulator") for m in sys.modules),
        "codegen": "contractsim.compiler.codegen" in sys.modules,
    }
"""


def test_check_and_compile_import_no_validators() -> None:
    """The pydantic argument models are built when a call's arguments are validated, not when
    the contract is checked or compiled; checking imports no code generator."""
    found = _child(
        MODULES
        + f"""
from contractsim.api import load
c = load({str(FS)!r})
after_check = loaded()
c.compiled
after_compile = loaded()
report = c.simulator(now="2024-01-01T00:00:00Z").run([("delete_file", {{"path": "/tmp/x"}})])
print(json.dumps([after_check, after_compile, loaded(), report.verdict]))
"""
    )
    # the file-system tools take plain types only: their arguments need no pydantic model
    assert found == [
        {"validators": False, "simulator": False, "codegen": False},
        {"validators": False, "simulator": False, "codegen": True},
        {"validators": False, "simulator": True, "codegen": True},
        "fails",
    ]


@pytest.mark.parametrize(
    "args",
    [
        ["export", str(FS), "--to", "openai"],
        ["render", str(FS), "--overview", "--format", "mermaid"],
        ["check", str(FS)],
    ],
)
def test_commands_that_validate_no_arguments_import_no_validators(args: list[str]) -> None:
    found = _child(
        MODULES
        + f"""
import contextlib, io
from contractsim.cli import main
out = io.StringIO()
with contextlib.redirect_stdout(out):
    try:
        main({args!r}, prog_name="contractsim")
    except SystemExit as exc:
        code = exc.code
print(json.dumps([code, loaded()]))
"""
    )
    assert found == [0, {"validators": False, "simulator": False, "codegen": False}]


def test_arguments_models_are_built_once_on_first_use() -> None:
    compiled = compile_contract(loads(PLAIN_TYPES, "plain.contract").ir)
    ctool = compiled.tools["t"]
    assert "args_model" not in vars(ctool)  # not built by compiling
    model = ctool.args_model
    assert ctool.args_model is model
    assert issubclass(model, BaseModel)  # a record parameter: pydantic builds the model
    assert ctool.declared_model is None  # no parameter accepts more than it declares
    assert compiled.validators is compiled.validators
    values = model_values(
        model.model_validate(
            {
                "p": "a",
                "q": "b",
                "n": 2,
                "l": ["a"],
                "s": [1],
                "e": "x",
                "a4": "cc",
                "i3": 3,
                "ll": [[1]],
                "r": {"a": "a"},
            }
        )
    )
    assert values["d"] == "a@b.co"
    assert values["r"] == FMap({"a": "a", "b": 1})


CLI = "import sys; from contractsim.cli import main; sys.argv[0] = 'contractsim'; main()"


def test_simulate_reports_a_bad_argument_as_before(tmp_path: Path) -> None:
    plan = tmp_path / "plan.yaml"
    plan.write_text("steps:\n  - tool: read_file\n    args: {path: relative.txt}\n")
    proc = subprocess.run(
        [sys.executable, "-c", CLI, "simulate", str(FS), str(plan), "--format", "json"],
        cwd=ROOT,
        capture_output=True,
        text=True,
    )
    report = json.loads(proc.stdout)
    assert proc.returncode == 1
    (violation,) = report["steps"][0]["violations"]
    assert (violation["code"], violation["field"], violation["rule"]) == (
        "INVALID_ARGUMENT",
        "args.path",
        "string_pattern_mismatch",
    )
    assert violation["message"] == (
        'read_file: `args.path`: does not match the pattern r"^/([^/]+/?)*$" (got "relative.txt")'
    )
    assert violation["hint"] == 'give a value matching r"^/([^/]+/?)*$"'


def test_plain_argument_models_are_the_models_pydantic_generates() -> None:
    """For every tool of the examples and golden files whose parameters are all plain, the
    argument model's schema is the one pydantic generates for the tool's model (but its class)."""
    built = fallback = 0
    for c in _checked_contracts():
        builder = ValidatorBuilder(c)
        for tool in c.tools:
            for declared in (False, True):
                plain = plain_args_model(tool, c, declared)
                if plain is None:
                    fallback += 1
                    continue
                built += 1
                theirs = dict(builder.args_model(tool, declared).__pydantic_core_schema__)
                mine = dict(plain.core_schema)
                for key in ("cls", "ref", "metadata"):
                    theirs.pop(key, None)
                    mine.pop(key, None)
                assert mine == theirs, (c.header.name, tool.name, declared)
    assert built > 100 and fallback > 10


ARGS = [
    {"path": "/a", "content": "x"},
    {"path": "/a", "content": "x", "mode": "a"},
    {"path": "a", "content": 3, "mode": "z", "extra": 1},
    {"path": "/" + "a" * 5000},
    {},
    {"path": None, "content": None},
    {"path": ["/a"], "content": b"x"},
]


@pytest.mark.parametrize("args", ARGS)
def test_plain_argument_models_validate_as_pydantic_does(args: dict[str, Any]) -> None:
    c = load(FS).ir
    tool = next(t for t in c.tools if t.name == "write_file")
    plain = plain_args_model(tool, c)
    assert plain is not None
    model = ValidatorBuilder(c).args_model(tool)

    def outcome(m: Any) -> Any:
        try:
            return model_values(m.model_validate(args))
        except ValidationError as exc:
            return [
                (p.path, p.rule, p.message, p.value, p.hint) for p in problems_from(exc, "args")
            ]

    assert outcome(plain) == outcome(model)
    if args == ARGS[0]:
        assert outcome(plain) == {"path": "/a", "content": "x", "mode": "w"}


def test_a_plain_argument_model_reads_like_a_pydantic_one() -> None:
    c = load(FS).ir
    tool = next(t for t in c.tools if t.name == "write_file")
    plain = plain_args_model(tool, c)
    assert plain is not None and issubclass(plain, PlainArgsModel)
    assert plain.__name__ == "write_file_args model"
    fields = {
        name: (f.alias, f.get_default(call_default_factory=True))
        for name, f in plain.model_fields.items()
    }
    assert fields == {"f0": ("path", None), "f1": ("content", None), "f2": ("mode", "w")}


def test_mermaid_needs_no_graphviz() -> None:
    """Only DOT, SVG and PNG use the graphviz package (SVG and PNG run its `dot`)."""
    found = _child(
        f"""
import contextlib, io, json, sys
from contractsim.cli import main
out = io.StringIO()
with contextlib.redirect_stdout(out):
    try:
        main(["render", {str(FS)!r}, "--overview", "--format", "mermaid"], prog_name="contractsim")
    except SystemExit as exc:
        code = exc.code
print(json.dumps([code, "graphviz" in sys.modules, "flowchart" in out.getvalue()]))
"""
    )
    assert found == [0, False, True]


def test_a_cold_simulate_of_plain_tools_imports_no_pydantic() -> None:
    """The simulator catches pydantic-core's ``ValidationError`` (the class pydantic re-exports):
    importing the ``pydantic`` package for it cost ~10 ms of every cold ``simulate``."""
    plan = ROOT / "examples" / "file_system" / "plans" / "fails_read_after_delete.yaml"
    code = (
        "import atexit, sys; atexit.register(lambda: print(sorted(m for m in sys.modules"
        " if m == 'pydantic' or m.startswith('pydantic.')))); " + CLI
    )
    proc = subprocess.run(
        [sys.executable, "-c", code, "simulate", str(FS), str(plan), "--format", "json"],
        cwd=ROOT,
        capture_output=True,
        text=True,
    )
    assert proc.stdout.rstrip().endswith("[]"), proc.stdout[-300:] + proc.stderr[-300:]

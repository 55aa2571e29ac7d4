"""Adversarial inputs: contracts, plans and state files from strangers.

Every test asserts the *promised* behaviour (a diagnostic, a documented exit code, bounded time
and memory). Tests marked ``xfail(strict=True)`` are open findings: they fail today and will
start passing (and so be noticed) once fixed.
"""

from __future__ import annotations

import ast
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

import contractsim
from contractsim.api import check_text
from contractsim.cli import main
from contractsim.dsl.diagnostics import ContractError

NOW = "2024-06-01T12:00:00Z"
HEAD = 'contract adv version "1.0.0"\n'


def cli(*args: str) -> Result:
    return CliRunner().invoke(main, list(args))


def no_crash(r: Result) -> None:
    """The CLI ended by itself (exit code), not by an escaping exception."""
    assert r.exception is None or isinstance(r.exception, SystemExit), repr(r.exception)
    assert "Traceback" not in r.output


def errors(text: str) -> list[str]:
    return [d.code for d in check_text(text, "adv.contract") if d.severity == "error"]


def run_plan(text: str, plan: list[dict]) -> object:
    return contractsim.loads(text, "adv.contract").simulator(now=NOW).run(plan)


def write(tmp_path: Path, name: str, text: str) -> str:
    p = tmp_path / name
    p.write_text(text, encoding="utf-8")
    return str(p)


def sub(
    args: list[str], mem_kb: int = 1_500_000, timeout: float = 15
) -> subprocess.CompletedProcess:
    """Run the CLI in a child with a memory cap (``ulimit -v``) and a timeout."""
    code = (
        "import resource, sys; "
        f"resource.setrlimit(resource.RLIMIT_AS, ({mem_kb * 1024}, {mem_kb * 1024})); "
        "from contractsim.cli import main; sys.argv = ['contractsim'] + sys.argv[1:]; main()"
    )
    return subprocess.run(
        [sys.executable, "-c", code, *args], capture_output=True, text=True, timeout=timeout
    )


# =============================================================================== generated code


INJECTION = (
    HEAD
    + r"""
type __import__ = enum { exec, eval, "__builtins__", S, A, U }
type K_x = record { __class__: str, __dict__?: int, exec: str = "x\"); __import__('os')#" }
const S = 1
const A = "__import__('os')"
const H_attr = 3
const p_x = 4
state {
  U: int = 0
  H_index: set[str] = {"'); import os #"}
  __builtins__: map[str, K_x] = {}
  exec: list[__import__] = []
  eval: str = "{open('/etc/passwd').read()}"
}
predicate P_x(S: int) = S > 0
tool __init__(S: int, A: str, p_x: int = 1, H_attr: K_x, __class__: __import__ = "exec") -> record { S: str }
    "description {__import__('os').system('id')}"
{
  require P_x(S) else CLASS_X "msg {A} {eval} {{}} {H_attr.exec} {__import__.exec}" hint "{U}"
  effect {
    U += S + p_x + H_attr + len(H_attr.exec)
    H_index.add(A + eval)
    __builtins__[A] = H_attr
    exec.append(__class__)
    let _t1 = 5
    for _q1 in H_index { U += len(_q1) + _t1 }
    eval = result.S
  }
}
""".replace("H_attr + len", "len")
)


def test_helper_and_dunder_names_stay_prefixed_in_generated_code(tmp_path: Path) -> None:
    assert errors(INJECTION) == []
    r = cli("compile", write(tmp_path, "inj.contract", INJECTION), "--emit", "python")
    assert r.exit_code == 0
    tree = ast.parse(r.output)
    helpers = {"U", "FMap", "frozenset", "_all", "_any", "_sum", "S", "A", "R", "O", "C"}
    for node in ast.walk(tree):
        if isinstance(node, ast.Name):
            ok = node.id in helpers or node.id.startswith(("H_", "F_", "K_", "P_", "D_", "p_", "_"))
            assert ok, f"bare name {node.id!r} in generated code"
        if isinstance(node, ast.Attribute):
            assert node.attr in ("havoc", "today", "now"), node.attr
    plan = [{"tool": "__init__", "args": {"S": 1, "A": "a", "H_attr": {"exec": "e"}}}]
    # (underscore-led parameter/field names are a separate finding, see below)
    runnable = (
        INJECTION.replace("__class__: str, ", "")
        .replace("__class__: __import__", "cls: __import__")
        .replace("exec.append(__class__)", "exec.append(cls)")
    )
    report = run_plan(runnable, plan)
    assert report.verdict == "ok", [v.message for st in report.steps for v in st.violations]


@pytest.mark.parametrize("name", ["_id", "__class__", "model_config"])
def test_underscore_and_pydantic_names_are_usable_or_refused(name: str) -> None:
    text = HEAD + "type R = record { %s: int }\ntool t(%s: int, r: R) { }\n" % (name, name)
    if errors(text):
        return
    report = run_plan(text, [{"tool": "t", "args": {name: 1, "r": {name: 2}}}])
    assert report.verdict == "ok"


def test_pydantic_member_names_are_usable(tmp_path: Path) -> None:
    text = HEAD + "tool t(model_dump: int) { }\n"
    c = write(tmp_path, "c.contract", text)
    p = write(tmp_path, "p.json", '[{"tool": "t", "args": {"model_dump": 1}}]')
    r = cli("simulate", c, p, "--now", NOW)
    no_crash(r)
    assert "--now" not in r.output
    assert not errors(text)
    assert r.exit_code == 0


def test_record_default_names_do_not_collide() -> None:
    text = (
        HEAD
        + """
type a_b = record { c: int = 1 }
type a = record { b_c: str = "zzz" }
state { n: int = 0 }
tool t() {
  effect { n = a_b().c + 1 }
  ensure n == 2
}
"""
    )
    assert errors(text) == []
    assert run_plan(text, [{"tool": "t", "args": {}}]).verdict == "ok"


def test_constant_named_like_a_default_keeps_its_value() -> None:
    text = (
        HEAD
        + """
type Item = record { n: int = 5 }
const __default_Item_n = "hello"
state { n: int = 0 }
tool t() {
  effect { n = len(__default_Item_n) }
  ensure n == 5
}
"""
    )
    assert errors(text) == []
    assert run_plan(text, [{"tool": "t", "args": {}}]).verdict == "ok"


# =============================================================================== front-end limits


def test_nesting_64_is_accepted_and_65_is_a_diagnostic() -> None:
    ok = HEAD + "const C = " + "(" * 64 + "1" + ")" * 64 + "\n"
    bad = HEAD + "const C = " + "[" * 100_000 + "1" + "]" * 100_000 + "\n"
    assert errors(ok) == []
    assert errors(bad) == ["E0104"]


def test_long_operator_chain_is_bounded() -> None:
    text = (
        HEAD
        + "state { a: int = 1 }\ntool t() { effect { a = "
        + " + ".join(["a"] * 10_000)
        + " } }\n"
    )
    try:
        errors(text)
    except ContractError:
        pass


def test_long_not_chain_is_bounded() -> None:
    text = HEAD + "state { a: bool = true }\ntool t() { require " + "not " * 10_000 + "a }\n"
    try:
        errors(text)
    except ContractError:
        pass


def test_huge_integer_literal_is_a_diagnostic() -> None:
    text = HEAD + "const C = 1" + "0" * 5000 + "\n"
    try:
        assert errors(text)
    except ContractError:
        pass


def test_large_string_literal_has_bounded_memory(tmp_path: Path) -> None:
    path = write(tmp_path, "s.contract", HEAD + 'const C = "' + "a" * 4_000_000 + '"\n')
    r = sub(["check", path], mem_kb=900_000)
    assert r.returncode in (0, 1), r.stderr[-500:]
    assert "Traceback" not in r.stdout + r.stderr


def test_file_over_the_size_limit_is_refused(tmp_path: Path) -> None:
    p = tmp_path / "big.contract"
    p.write_text(HEAD + "# " + "a" * (16 * 1024 * 1024) + "\n", encoding="utf-8")
    r = cli("check", str(p))
    no_crash(r)
    assert r.exit_code == 2 and "E0106" in r.output


# =============================================================================== types


def test_cyclic_type_alias_is_a_check_error() -> None:
    text = HEAD + "type A = B\ntype B = A\nstate { n: A = 0 }\ntool t(a: A) { }\n"
    assert errors(text)


def test_recursive_list_type_loads() -> None:
    text = HEAD + "type L = list[L]\nstate { n: L = [] }\ntool t(a: L) { effect { n = a } }\n"
    assert errors(text) == []
    try:
        report = run_plan(text, [{"tool": "t", "args": {"a": [[], [[]]]}}])
    except ContractError:
        return
    assert report.verdict == "ok"


def test_recursive_predicates_are_refused() -> None:
    text = (
        HEAD + "predicate p(x: int) = q(x)\npredicate q(x: int) = p(x)\ntool t() { require p(1) }\n"
    )
    assert "E0309" in errors(text)


# =============================================================================== run-time limits


def _steps(n: int, tool: str = "t") -> list[dict]:
    return [{"tool": tool, "args": {}} for _ in range(n)]


@pytest.mark.parametrize(
    "effect",
    ["s = s + s", "s += s"],
)
def test_string_doubling_hits_the_limit(effect: str) -> None:
    text = HEAD + 'state { s: str = "ab" }\ntool t() { effect { ' + effect + " } }\n"
    report = run_plan(text, _steps(24))
    assert report.verdict == "fails"
    assert "10 MB" in report.steps[-1].violations[0].message


def test_integer_squaring_hits_the_limit() -> None:
    text = HEAD + "state { n: int = 3 }\ntool t() { effect { n = n * n } }\n"
    report = run_plan(text, _steps(9))
    assert report.verdict == "fails"
    assert "2**256" in report.steps[-1].violations[0].message


def test_huge_range_is_refused() -> None:
    text = (
        HEAD + "state { n: int = 0 }\ntool t() { require all(x >= 0 for x in range(1000000000)) }\n"
    )
    report = run_plan(text, _steps(1))
    assert "100,000" in report.steps[0].violations[0].message


def test_list_doubling_hits_the_limit() -> None:
    text = HEAD + "state { s: list[int] = [1] }\ntool t() { effect { s = s + s } }\n"
    report = run_plan(text, _steps(18))
    assert report.verdict == "fails"
    assert "100,000" in report.steps[-1].violations[0].message


def test_join_respects_the_string_limit() -> None:
    s = ", ".join(["s"] * 16)
    text = (
        HEAD
        + 'state { s: str = "abcdefghijklmnopqrstuvwxyz" }\ntool t() { effect { s = join(['
        + s
        + '], "") } }\n'
    )
    report = run_plan(text, _steps(5))
    assert report.verdict == "fails"


def test_replace_checks_the_limit_before_allocating(tmp_path: Path) -> None:
    text = HEAD + (
        'state { s: str = "" }\n'
        'tool t() { effect { s = replace(zfill(1, 10000), "0", replace(zfill(1, 3000), "0", zfill(1, 3000))) } }\n'
    )
    c = write(tmp_path, "r.contract", text)
    p = write(tmp_path, "p.json", json.dumps(_steps(1)))
    r = sub(["simulate", c, p, "--now", NOW], mem_kb=1_500_000)
    assert r.returncode == 1
    assert "MemoryError" not in r.stdout and "10,000,000 characters" in r.stdout


def test_catastrophic_regex_is_linear() -> None:
    text = (
        HEAD
        + """
type P = str pattern r"^(a+)+$"
tool t(s: str, p: P) {
  require matches(s, r"^(a+)+$") else NOMATCH "no"
  require matches(s, r"(x+x+)+y") else NOMATCH3 "no"
}
"""
    )
    a = "a" * 50_000
    report = run_plan(text, [{"tool": "t", "args": {"s": a + "!", "p": a}}])
    assert report.verdict == "fails"
    assert {v.code for v in report.steps[0].violations} == {"NOMATCH", "NOMATCH3"}


def test_cyclic_flow_is_cut() -> None:
    text = (
        HEAD
        + """
state { n: int = 0 }
tool t() {
  outcome done success
  flow { initial a  step a { n += 1 }  step b { n += 1 }  a -> b  b -> a }
}
"""
    )
    report = run_plan(text, _steps(1))
    assert report.steps[0].violations[0].code == "FLOW_TOO_LONG"


# =============================================================================== plans and states


@pytest.fixture
def mini(tmp_path: Path) -> str:
    return write(
        tmp_path,
        "c.contract",
        HEAD + "state { n: int = 0 }\ntool t(k: int = 0) { effect { n = n + 1 } }\ntool u() { }\n",
    )


@pytest.mark.parametrize(
    "body",
    [
        '!!python/object/apply:os.system ["echo pwned"]\n',
        '- !!python/object/apply:os.system ["echo pwned"]\n',
        "a: &a [1]\nsteps: *a\n",
        "42\n",
        '"hello"\n',
        '[{"tool": "t", "args": {"k": ' + "[" * 10_000 + "]" * 10_000 + "}}]",
        "- tool: t\n  args: {k: " + "[" * 10_000 + "]" * 10_000 + "}\n",
        '[{"tool": 5, "args": []}, {"tool": null}, 7]',
        '{"tool_calls": [{"function": {"name": "t", "arguments": "{not json"}}]}',
    ],
)
def test_malformed_plans_are_diagnostics(tmp_path: Path, mini: str, body: str) -> None:
    plan = write(tmp_path, "plan.yaml", body)
    r = cli("simulate", mini, plan, "--now", NOW)
    no_crash(r)
    assert r.exit_code == 2
    assert "error[E07" in r.output


def test_non_utf8_plan(tmp_path: Path, mini: str) -> None:
    p = tmp_path / "plan.json"
    p.write_bytes(b'\xff\xfe[{"tool": "t"}]')
    r = cli("simulate", mini, str(p), "--now", NOW)
    no_crash(r)
    assert r.exit_code == 2 and "E0700" in r.output


def test_nan_and_infinity_arguments_are_invalid(tmp_path: Path, mini: str) -> None:
    plan = write(
        tmp_path,
        "plan.json",
        '[{"tool": "t", "args": {"k": NaN}}, {"tool": "t", "args": {"k": Infinity}}]',
    )
    r = cli("simulate", mini, plan, "--now", NOW)
    no_crash(r)
    assert r.exit_code == 1 and "INVALID_ARGUMENT" in r.output


def test_plan_over_the_step_limit_is_refused(tmp_path: Path, mini: str) -> None:
    plan = write(tmp_path, "plan.json", json.dumps(_steps(100_001, "u")))
    r = cli("simulate", mini, plan, "--now", NOW)
    no_crash(r)
    assert r.exit_code == 2 and "100,000" in r.output


def test_giant_number_in_plan_is_a_located_diagnostic(tmp_path: Path, mini: str) -> None:
    plan = write(tmp_path, "plan.json", '[{"tool": "t", "args": {"k": 1' + "0" * 5000 + "}}]")
    r = cli("simulate", mini, plan, "--now", NOW)
    no_crash(r)
    assert r.exit_code == 2
    assert "plan.json:" in r.output and "error[E07" in r.output


def test_giant_number_in_state_file_blames_the_state_file(tmp_path: Path, mini: str) -> None:
    plan = write(tmp_path, "plan.json", json.dumps(_steps(1)))
    state = write(tmp_path, "state.json", '{"n": 1' + "0" * 5000 + "}")
    r = cli("simulate", mini, plan, "--state", state, "--now", NOW)
    no_crash(r)
    assert r.exit_code == 2
    assert "--now" not in r.output and "state.json" in r.output


def test_bad_now_in_plan_is_a_located_diagnostic(tmp_path: Path, mini: str) -> None:
    plan = write(tmp_path, "plan.json", '{"steps": [], "now": "garbage"}')
    r = cli("simulate", mini, plan)
    no_crash(r)
    assert r.exit_code == 2
    assert "plan.json:" in r.output and "error[E07" in r.output


def test_bad_now_option(tmp_path: Path, mini: str) -> None:
    plan = write(tmp_path, "plan.json", json.dumps(_steps(1)))
    for now in ("garbage", "2024-13-45T99:99:99Z", "99999-01-01T00:00:00Z"):
        r = cli("simulate", mini, plan, "--now", now)
        no_crash(r)
        assert r.exit_code == 2 and "E0705" in r.output


def test_plan_errors_point_at_their_step(tmp_path: Path, mini: str) -> None:
    plan = write(tmp_path, "plan.yaml", "- tool: u\n- tool: u\n- tool: u\n- tool: u\n  args: 5\n")
    r = cli("simulate", mini, plan, "--now", NOW)
    no_crash(r)
    assert r.exit_code == 2
    assert "plan.yaml:4:" in r.output or "plan.yaml:5:" in r.output


def test_duplicate_keys_in_plan_are_refused(tmp_path: Path, mini: str) -> None:
    plan = write(tmp_path, "plan.json", '[{"tool": "u", "tool": "t", "args": {}}]')
    r = cli("simulate", mini, plan, "--now", NOW)
    no_crash(r)
    assert r.exit_code == 2


def test_empty_plan_file_is_bad_input(tmp_path: Path, mini: str) -> None:
    plan = write(tmp_path, "plan.json", "")
    r = cli("simulate", mini, plan, "--now", NOW)
    no_crash(r)
    assert r.exit_code == 2


def test_malformed_state_files(tmp_path: Path, mini: str) -> None:
    plan = write(tmp_path, "plan.json", json.dumps(_steps(1)))
    for body in (
        "[1, 2]",
        '{"n": "x", "nope": 1}',
        '{"n": NaN}',
        '{"$machines": {"zzz": "a"}}',
        'n: !!python/object/apply:os.system ["echo pwned"]\n',
    ):
        state = write(tmp_path, "state.yaml", body)
        r = cli("simulate", mini, plan, "--state", state, "--now", NOW)
        no_crash(r)
        assert r.exit_code == 2, body
        assert "error[E07" in r.output, body


# =============================================================================== CLI


def test_cli_argument_abuse(tmp_path: Path, mini: str) -> None:
    plan = write(tmp_path, "plan.json", json.dumps(_steps(1)))
    cases = [
        ("simulate",),
        ("check",),
        ("compile",),
        ("simulate", mini),
        ("simulate", str(tmp_path), plan),
        ("simulate", mini, str(tmp_path)),
        ("check", str(tmp_path)),
        ("compile", str(tmp_path)),
        ("simulate", "/dev/null", plan),
        ("simulate", mini, plan, "--max-branches", "0"),
        ("simulate", mini, plan, "--max-states", "0"),
        ("simulate", mini, plan, "--max-depth", "-1"),
        ("simulate", mini, plan, "--goal", "nope"),
        ("simulate", mini, plan, "--state"),
        ("simulate", mini, plan, "--state", str(tmp_path / "missing.json")),
        ("compile", mini, "--emit", "nonsense"),
        ("check", str(tmp_path / "missing.contract")),
    ]
    for args in cases:
        r = cli(*args)
        no_crash(r)
        assert r.exit_code == 2, args


@pytest.mark.skipif(not os.path.exists("/dev/zero"), reason="needs /dev/zero")
def test_dev_zero_as_contract_is_refused(mini: str) -> None:
    r = sub(["check", "/dev/zero"], mem_kb=700_000)
    assert r.returncode == 2
    assert "Traceback" not in r.stdout + r.stderr


@pytest.mark.skipif(not os.path.exists("/dev/zero"), reason="needs /dev/zero")
def test_dev_zero_as_plan_is_refused(mini: str) -> None:
    r = sub(["simulate", mini, "/dev/zero", "--now", NOW], mem_kb=700_000)
    assert r.returncode == 2
    assert "Traceback" not in r.stdout + r.stderr


# =============================================================================== deep inputs
# Inputs within the nesting limits must compile and run: the generated code may not depend on
# Python's limits (200 nested parentheses, 100 indentation levels, 20 nested loops, recursion).


def _deep_run(text: str, plan: list[dict]) -> list[str]:
    report = run_plan(text, plan)
    return [s.verdict for s in report.steps]


@pytest.mark.parametrize("loops", [21, 60])
def test_many_nested_for_loops_compile_and_run(loops: int) -> None:
    text = (
        HEAD
        + "state { n: int = 0, xs: list[int] = [1] }\ntool t() { effect { "
        + "".join(f"for v{i} in xs {{ let w{i} = v{i} " for i in range(loops))
        + f"n += w0 + v{loops - 1}"
        + " }" * loops
        + " } }\n"
    )
    report = run_plan(text, _steps(1))
    assert report.verdict == "ok"
    assert report.paths[0].state["n"] == 2


@pytest.mark.parametrize("unknown", [False, True])
def test_a_200_branch_else_if_chain_is_accepted(unknown: bool) -> None:
    subject = "u" if unknown else "k"
    text = (
        HEAD
        + "state { n: int = 0, u: int = unknown }\ntool t(k: int) { effect { "
        + " else ".join(f"if {subject} == {i} {{ n = {i + 1} }}" for i in range(200))
        + " else { n = -1 } } }\n"
    )
    assert errors(text) == []
    report = run_plan(text, [{"tool": "t", "args": {"k": 150}}])
    assert report.verdict == "ok"
    expected = contractsim.UNKNOWN if unknown else 151
    assert report.paths[0].state["n"] == expected


@pytest.mark.parametrize("op", ["and", "or", "+"])
def test_a_chain_of_200_operators_is_accepted(op: str) -> None:
    if op == "+":
        cond = "(" + " + ".join(["k"] * 200) + ") == 200 * k"
    else:
        joined = f" {op} ".join(f"k != {i}" for i in range(200))
        cond = joined if op == "and" else f"not ({joined})"
    text = HEAD + "state { n: int = unknown }\ntool t(k: int) { require " + cond + ' else X "x" }\n'
    assert errors(text) == []
    verdicts = _deep_run(
        text, [{"tool": "t", "args": {"k": 1000}}, {"tool": "t", "args": {"k": 7}}]
    )
    assert verdicts == {"and": ["ok", "fails"], "or": ["fails", "fails"], "+": ["ok", "ok"]}[op]


def test_a_chain_beyond_the_limit_is_a_diagnostic() -> None:
    text = (
        HEAD
        + "state { n: int = 0 }\ntool t(k: int) { require "
        + " and ".join(["k > 0"] * 400)
        + " }\n"
    )
    assert errors(text) == ["E0104"]


def test_deep_expressions_agree_with_the_interpreter() -> None:
    from contractsim.compiler.interp import Env

    cond = " and ".join(f"all(x != {i} for x in xs)" for i in range(150))
    text = (
        HEAD
        + f"state {{ xs: set[int] = unknown }}\npredicate p(xs: set[int]) = {cond}\n"
        + 'tool t() { require p(xs) else X "x" }\n'
    )
    c = contractsim.loads(text, "adv.contract")
    assert "def _x" in c.compiled.python_source  # the deep part became a function of its own
    sim = c.simulator(now=NOW)
    body = c.ir.predicates[0].body
    for xs in (frozenset({1000}), frozenset({3, 1000}), frozenset({1000, contractsim.UNKNOWN})):
        expected = c.compiled.interpreter.eval(body, Env(c.ir, state={}, locals={"xs": xs}))
        verdict = sim.step(sim.state_with({"xs": xs}), "t", {}).verdict
        assert verdict == {True: "ok", False: "fails"}.get(expected, "may_fail")


def test_a_long_chain_of_type_aliases_checks_and_runs() -> None:
    text = (
        HEAD
        + "".join(f"type A{i} = A{i + 1}\n" for i in range(1000))
        + 'type A1000 = str max_length 3\nstate { n: A0 = "ab" }\ntool t(a: A0) { effect { n = a } }\n'
    )
    assert errors(text) == []
    verdicts = _deep_run(
        text, [{"tool": "t", "args": {"a": "xy"}}, {"tool": "t", "args": {"a": "wxyz"}}]
    )
    assert verdicts == ["ok", "fails"]


def test_a_long_chain_of_predicates_is_a_clean_evaluation() -> None:
    text = (
        HEAD
        + "state { n: int = unknown }\npredicate p0(x: int) = x > 0\n"
        + "".join(f"predicate p{i}(x: int) = p{i - 1}(x)\n" for i in range(1, 600))
        + 'tool t() { require p599(n) else X "x" }\n'
    )
    c = contractsim.loads(text, "adv.contract")
    sim = c.simulator(now=NOW)
    for n in (contractsim.UNKNOWN, 5, 0):
        result = sim.step(sim.state_with({"n": n}), "t", {})  # no RecursionError escapes
        assert result.verdict in ("ok", "fails", "may_fail")


def test_a_pattern_nested_900_groups_deep_is_a_diagnostic() -> None:
    text = HEAD + 'type P = str pattern r"' + "(" * 900 + "a" + ")" * 900 + '"\ntool t(p: P) { }\n'
    assert errors(text) == ["E0402"]


def test_a_recorded_result_nested_500_levels_is_clean() -> None:
    from contractsim.simulator.observe import Observation

    text = (
        HEAD
        + "type L = list[L]\nstate { last: L = [] }\ntool t() -> L { effect { last = result } }\n"
    )
    sim = contractsim.loads(text, "adv.contract").simulator(now=NOW)
    deep: list = []
    for _ in range(500):
        deep = [deep]
    observed = sim.observe(sim.initial_state(), "t", {}, Observation(status="ok", result=deep))
    assert observed.state["last"] == ()  # too deep to keep: EVAL_ERROR, the state is unchanged


def test_freeze_works_without_recursion() -> None:
    from contractsim.compiler.values import freeze

    deep: list = []
    for _ in range(5000):
        deep = [deep]
    frozen = freeze(deep)
    assert isinstance(frozen, tuple)
    loop: dict = {}
    loop["a"] = loop
    with pytest.raises(ValueError, match="contains itself"):
        freeze(loop)


# =============================================================================== constants


CONST_ERRORS = [
    "1 / 0",
    "5 % 0",
    "[1][3]",
    '{"a": 1}["b"]',
    "range(1000000)",
    "range(2.5)",
    'split("a", "")',
    'add_days("2024-01-01", 10000000)',
    'days_between("x", "y")',
]


@pytest.mark.parametrize("expr", CONST_ERRORS)
def test_a_constant_without_a_value_is_e0414_for_every_command(tmp_path: Path, expr: str) -> None:
    contract = write(
        tmp_path,
        "c.contract",
        HEAD + f"const K = {expr}\nstate {{ n: int = 0 }}\ntool t() {{ effect {{ n = 1 }} }}\n",
    )
    plan = write(tmp_path, "p.json", json.dumps(_steps(1)))
    r = cli("check", contract)
    no_crash(r)
    assert r.exit_code == 1 and "error[E0414]: constant `K` cannot be computed" in r.output
    for args in (
        ["simulate", contract, plan, "--now", NOW],
        ["compile", contract],
        ["export", contract, "--to", "openai"],
        ["render", contract, "--overview"],
    ):
        r = cli(*args)
        no_crash(r)
        assert r.exit_code == 2, (args, r.output)
        assert "E0414" in r.output, (args, r.output)

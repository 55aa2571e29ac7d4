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
from click.testing import Result
from conftest import cli, write
from hypothesis import given, settings
from hypothesis import strategies as hs

import contractsim
from contractsim.api import check_text
from contractsim.diagnostics import ContractError
from contractsim.simulator.formats import parse_plan

NOW = "2024-06-01T12:00:00Z"
HEAD = 'contract adv version "1.0.0"\n'


def no_crash(r: Result) -> None:
    """The CLI ended by itself (exit code), not by an escaping exception."""
    assert r.exception is None or isinstance(r.exception, SystemExit), repr(r.exception)
    assert "Traceback" not in r.output


def errors(text: str) -> list[str]:
    return [d.code for d in check_text(text, "adv.contract") if d.severity == "error"]


def run_plan(text: str, plan: list[dict]) -> object:
    return contractsim.loads(text, "adv.contract").simulator(now=NOW).run(plan)


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
    empty = tmp_path / "no_plans"
    empty.mkdir()
    cases = [
        ("simulate",),
        ("check",),
        ("compile",),
        ("simulate", mini),
        ("simulate", str(tmp_path), plan),
        ("simulate", mini, str(empty)),  # a directory of plans with none in it
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


# ======================================================================== the Python API, misused
FILE_SYSTEM = (
    Path(__file__).resolve().parents[1] / "examples" / "file_system" / "file_system.contract"
)
BACKUP = Path(__file__).resolve().parents[1] / "examples" / "backup" / "backup.contract"
SESSION_PROTOCOL = (
    Path(__file__).resolve().parents[1]
    / "examples"
    / "session_protocol"
    / "session_protocol.contract"
)


class _Hostile:
    """An object every way of reading raises from."""

    def __getattr__(self, name: str) -> object:
        raise RuntimeError(f"no {name}")

    def __eq__(self, other: object) -> bool:
        raise RuntimeError("no eq")

    __hash__ = object.__hash__

    def __repr__(self) -> str:
        raise RuntimeError("no repr")

    __str__ = __repr__

    def __bool__(self) -> bool:
        raise RuntimeError("no bool")


class _OddDict(dict):  # type: ignore[type-arg]
    """A dict subclass whose every method raises (the data is there, at the C level)."""

    def items(self) -> object:
        raise RuntimeError("odd items")

    def keys(self) -> object:
        raise RuntimeError("odd keys")

    def __iter__(self) -> object:
        raise RuntimeError("odd iter")

    def __getitem__(self, key: object) -> object:
        raise RuntimeError("odd getitem")

    def __len__(self) -> int:
        raise RuntimeError("odd len")


class _BrokenText(Exception):
    def __str__(self) -> str:
        raise RuntimeError("no text")


def _junk() -> list[object]:
    cyclic: dict[str, object] = {}
    cyclic["me"] = cyclic
    deep: object = "leaf"
    for _ in range(5000):
        deep = [deep]
    other = contractsim.load(BACKUP).simulator(now=NOW).initial_state()
    return [
        None, 0, -1, 5, float("nan"), float("inf"), 10**5000, True, "x", "", "$unknown",
        b"bytes", [1], (1, 2), {1: 2}, {"path": 1}, set(), cyclic, deep, _OddDict(a=1),
        _Hostile(), object(), print, other, _BrokenText(),
    ]  # fmt: skip


def _entry_points(tmp: Path) -> dict[str, object]:
    """Every public entry point of the Python API, each taking the junk in one argument."""
    c = contractsim.load(FILE_SYSTEM)
    sim = c.simulator(now=NOW)
    st = sim.initial_state()
    g = c.guard(now=NOW, mode="return")
    drift = str(tmp / "drift.jsonl")
    session = contractsim.load(SESSION_PROTOCOL)
    return {
        "load(path)": lambda j: contractsim.load(j),
        "loads(text)": lambda j: contractsim.loads(j),
        "loads(filename)": lambda j: contractsim.loads("contract x", j),
        "check(path)": lambda j: contractsim.check(j),
        "check_text(text)": lambda j: contractsim.check_text(j),
        "from_pddl(domain)": lambda j: contractsim.from_pddl(j, j),
        "simulator(now)": lambda j: c.simulator(now=j),
        "simulator(step_seconds)": lambda j: c.simulator(step_seconds=j),
        "guard(state)": lambda j: c.guard(state=j),
        "guard(mode)": lambda j: c.guard(mode=j),
        "guard(now)": lambda j: c.guard(now=j),
        "guard(block_on_unknown)": lambda j: c.guard(block_on_unknown=j),
        "guard(history_limit)": lambda j: c.guard(history_limit=j),
        "render(view)": lambda j: c.render(view=j),
        "render(format)": lambda j: c.render("overview", format=j),
        "export(target)": lambda j: c.export(j),
        "export(tool)": lambda j: c.export("openai", j),
        "card(tool)": lambda j: c.card(j),
        "to_transitions(machine)": lambda j: c.to_transitions(machine=j),
        "to_transitions(state)": lambda j: session.to_transitions(state=j),
        # (a model of the caller's own that raises when touched raises its own errors)
        "to_transitions(model)": lambda j: (
            None if isinstance(j, _Hostile | _OddDict) else session.to_transitions(model=j)
        ),
        "initial_state(overrides)": lambda j: sim.initial_state(j),
        "initial_state({files: junk})": lambda j: sim.initial_state({"files": j}),
        "state_with(values)": lambda j: sim.state_with(j),
        "state_with(base)": lambda j: sim.state_with({}, j),
        "step(state)": lambda j: sim.step(j, "read_file", {"path": "/a"}),
        "step(tool)": lambda j: sim.step(st, j, {}),
        "step(args)": lambda j: sim.step(st, "read_file", j),
        "step(args value)": lambda j: sim.step(st, "write_file", {"path": "/a", "content": j}),
        "enabled(state)": lambda j: sim.enabled(j),
        "bind(tool)": lambda j: sim.bind(j),
        "bind(args value)": lambda j: sim.bind("read_file", {"path": j}),
        "check_plan(calls)": lambda j: sim.check_plan(j),
        "check_plan([junk])": lambda j: sim.check_plan([j]),
        "check_plan(state)": lambda j: sim.check_plan([], j),
        "goal(state)": lambda j: sim.goal(j, "notes_archived"),
        "goal(name)": lambda j: sim.goal(st, j),
        "observe(seen)": lambda j: sim.observe(st, "read_file", {"path": "/a"}, j),
        "observe(result)": lambda j: sim.observe(
            st, "read_file", {"path": "/a"}, contractsim.Observation.returned(j)
        ),
        "run(plan)": lambda j: sim.run(j),
        "run([junk])": lambda j: sim.run([j]),
        "run(state)": lambda j: sim.run([], j),
        "run(max_states)": lambda j: sim.run([], max_states=j),
        "run(max_seconds)": lambda j: sim.run([], max_seconds=j),
        "run(goal)": lambda j: sim.run([], goal=j),
        "State.machine(name)": lambda j: session.simulator().initial_state().machine(j),
        "Observation.raised(exc)": lambda j: contractsim.Observation.raised(j),
        "guard.wrap(fn)": lambda j: g.wrap("read_file", j),
        "guard.wrap(tool)": lambda j: g.wrap(j, lambda path: None),
        "guard.tool(name)": lambda j: g.tool(j),
        "guard.check(tool)": lambda j: g.check(j),
        "guard.check(args)": lambda j: g.check("read_file", j),
        "guard.add_observer(read)": lambda j: g.add_observer("files", j),
        "guard.add_observer(variable)": lambda j: g.add_observer(j, dict),
        "guard.set_state(values)": lambda j: g.set_state(j),
        "guard.set_state({files: junk})": lambda j: g.set_state({"files": j}),
        "guard.save_drift(path)": lambda j: g.save_drift(drift if isinstance(j, str) else j),
    }


DOCUMENTED = (TypeError, ValueError, ContractError)


def test_every_public_entry_point_refuses_junk_with_a_documented_exception(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)  # junk strings taken as paths stay in here
    junk = _junk()
    escaped = []
    for name, call in _entry_points(tmp_path).items():
        for value in junk:
            try:
                call(value)  # type: ignore[operator]
            except DOCUMENTED as exc:
                text = str(exc)  # the message itself is readable, and says what it wanted
                assert text, (name, type(value).__name__)
            except Exception as exc:  # noqa: BLE001
                escaped.append(f"{name} with a {type(value).__name__}: {type(exc).__name__}: {exc}")
    assert not escaped, "\n".join(escaped)


def test_a_guarded_call_in_return_mode_never_raises_whatever_goes_in_or_comes_out() -> None:
    junk = _junk()
    guard = contractsim.load(FILE_SYSTEM).guard(now=NOW, mode="return")
    for value in junk:
        for guarded in (
            guard.wrap("read_file", lambda path, v=value: v),
            guard.wrap("write_file", lambda path, content, v=value: v),
        ):
            for args in ({"path": value}, {"path": "/a", "content": value}):
                try:
                    result = guarded(**args)
                except TypeError:  # read_file has no `content`: Python's own binding error
                    continue
                assert isinstance(result, contractsim.CallResult)
                assert isinstance(json.dumps(result.to_json()), str)
                assert isinstance(result.to_llm(), str)
    assert all(r.status != "running" for r in guard.history)
    assert isinstance(json.dumps(guard.drift_log()), str)


@pytest.mark.parametrize(
    ("call", "error", "message"),
    [
        (lambda sim, st: sim.step(st, None, {}), TypeError, "tool must be a tool name"),
        (lambda sim, st: sim.step({"files": {}}, "read_file", {}), TypeError, "must be a State"),
        (
            lambda sim, st: sim.step(
                contractsim.load(BACKUP).simulator().initial_state(), "read_file", {}
            ),
            ValueError,
            "state is a State of another contract",
        ),
        (lambda sim, st: sim.goal(st, "nope"), ValueError, "declares no goal `nope`"),
        (lambda sim, st: sim.check_plan([1]), TypeError, r"calls\[0\] must be a call from"),
        (lambda sim, st: contractsim.loads(b"x"), TypeError, "not bytes: decode it first"),
        (lambda sim, st: sim.step(st, "read_file", "/a"), TypeError, "args must be a dict"),
        (lambda sim, st: sim.run([1]), TypeError, r"plan\[0\] must be a \{tool, args\}"),
        (lambda sim, st: sim.initial_state([1]), TypeError, "overrides must be a dict"),
    ],
)
def test_easy_misuse_is_named_at_the_call(call: object, error: type, message: str) -> None:
    sim = contractsim.load(FILE_SYSTEM).simulator(now=NOW)
    with pytest.raises(error, match=message):
        call(sim, sim.initial_state())  # type: ignore[operator]


@pytest.mark.parametrize(
    ("kwargs", "error", "message"),
    [
        ({"now": 5}, TypeError, "now must be an RFC 3339 time .* or a datetime, not int 5"),
        ({"step_seconds": "x"}, TypeError, "step_seconds must be a positive, finite number"),
        ({"step_seconds": 0}, ValueError, "step_seconds must be a positive, finite number"),
        ({"step_seconds": -1}, ValueError, "not int -1"),
        ({"step_seconds": float("nan")}, ValueError, "not float nan"),
    ],
)
def test_simulator_options_are_checked(kwargs: dict, error: type, message: str) -> None:
    with pytest.raises(error, match=message):
        contractsim.load(FILE_SYSTEM).simulator(**kwargs)


def test_a_self_referential_argument_is_an_invalid_argument_naming_the_field() -> None:
    sim = contractsim.load(FILE_SYSTEM).simulator(now=NOW)
    cyclic: dict[str, object] = {}
    cyclic["me"] = cyclic
    step = sim.step(sim.initial_state(), "read_file", {"path": cyclic})
    assert step.verdict == "fails"
    (v,) = step.violations
    assert (v.code, v.field) == ("INVALID_ARGUMENT", "args.path")
    assert v.message == "read_file: `args.path.me` contains itself"
    with pytest.raises(ContractError, match="`args.path.me` contains itself"):
        sim.bind("read_file", {"path": cyclic})


def test_the_unknown_marker_string_is_a_string_from_python() -> None:
    text = HEAD + 'state {\n  note: str = "a"\n}\ntool t() {\n  effect note = "b"\n}\n'
    contract = contractsim.loads(text)
    state = contract.simulator(now=NOW).initial_state({"note": "$unknown"})
    assert state["note"] == "$unknown"
    guard = contract.guard(state={"note": "$unknown"})
    assert guard.state["note"] == "$unknown"
    guard.add_observer("note", lambda: "$unknown")  # a real value that happens to be that text
    guard.wrap("t", lambda: None)()
    assert guard.state["note"] == "b"
    assert contract.simulator().initial_state({"note": contractsim.UNKNOWN})["note"] is (
        contractsim.UNKNOWN
    )
    with pytest.raises(ContractError, match="make a value unknown with contractsim.UNKNOWN"):
        contractsim.load(FILE_SYSTEM).simulator().initial_state({"files": "$unknown"})


def test_unreadable_plan_arguments_are_a_value_error_naming_the_step_and_path() -> None:
    sim = contractsim.load(FILE_SYSTEM).simulator(now=NOW)
    cyclic: dict[str, object] = {}
    cyclic["me"] = cyclic
    deep: object = "x"
    for _ in range(5000):
        deep = {"a": [deep]}
    expected = {
        "cyclic": (cyclic, "`args.content.me` contains itself"),
        "huge": (10**5000, "`args.content` is an integer beyond 2**256"),
        "deep": (deep, "`args.content.a[0].a[0]…92 levels….a[0].a[0]` nests more than 100 levels"),
        "object": (_Hostile(), "`args.content` is of type `_Hostile`, not a contract value"),
    }
    for value, problem in expected.values():
        plan = [("make_dir", {"path": "/tmp/b"}), ("write_file", {"path": "/a", "content": value})]
        with pytest.raises(ValueError) as info:
            sim.run(plan)
        assert str(info.value).startswith(f"plan[1]: write_file: {problem} (pass plain data")
        # one call at a time, it is a failing step instead
        step = sim.step(sim.initial_state(), "write_file", {"path": "/a", "content": value})
        assert [v.message for v in step.violations] == [f"write_file: {problem}"]


_SCALARS = (
    hs.none()
    | hs.booleans()
    | hs.integers()
    | hs.integers(min_value=2**250, max_value=2**300)
    | hs.floats(allow_nan=True, allow_infinity=True)
    | hs.text(max_size=20)
    | hs.binary(max_size=5)
    | hs.dates()
    | hs.decimals(allow_nan=True)
    | hs.builds(object)
)
_VALUES = hs.recursive(
    _SCALARS,
    lambda inner: (
        hs.lists(inner, max_size=4)
        | hs.tuples(inner, inner)
        | hs.dictionaries(hs.text(max_size=5) | hs.integers(), inner, max_size=4)
        | hs.frozensets(hs.integers() | hs.text(max_size=5), max_size=4)
    ),
    max_leaves=30,
)


@settings(max_examples=300, deadline=None)
@given(_VALUES)
def test_any_python_value_is_read_serialised_and_shown_without_raising(value: object) -> None:
    from contractsim.compiler.foreign import contract_value
    from contractsim.compiler.values import show, thaw

    converted = contract_value(value)
    json.dumps(thaw(converted.value))
    show(converted.value)
    result = contractsim.CallResult("t", True, value)
    json.dumps(result.to_json())
    assert isinstance(result.to_llm(), str)


ODD_ADAPTERS = """
class Odd(dict):
    def items(self): raise RuntimeError("odd items")
    def keys(self): raise RuntimeError("odd keys")
    def __iter__(self): raise RuntimeError("odd iter")
    def __getitem__(self, k): raise RuntimeError("odd getitem")
    def get(self, k, d=None): raise RuntimeError("odd get")
    def __len__(self): raise RuntimeError("odd len")

class Broken(Exception):
    def __str__(self): raise RuntimeError("no text")

class Obj:
    pass

STEP = {"tool": "t", "args": {}, "outcome": "ok"}

def odd(record):
    return Odd(steps=[STEP])

def broken(record):
    raise Broken()

def holds_an_object(record):
    return Odd(steps=[dict(STEP, result=Obj())])
"""


@pytest.mark.parametrize(
    ("func", "code", "message"),
    [
        ("odd", 0, "1 run(s), 1 step(s): 1 agree, 0 disagree"),
        ("broken", 2, "error[E0911]: the adapter raised Broken: <its message cannot be read>"),
        (
            "holds_an_object",
            2,
            "error[E0912]: the adapter returned a value that cannot be read for run 1: "
            "`the run.steps[0].result` is of type `Obj`, not a contract value",
        ),
    ],
)
def test_a_replay_adapter_returning_odd_values_or_raising_oddly(
    tmp_path: Path, func: str, code: int, message: str
) -> None:
    contract = write(
        tmp_path, "r.contract", HEAD + "state {\n  n: int = 0\n}\ntool t() {\n  effect n += 1\n}\n"
    )
    adapter = write(tmp_path, "adapter.py", ODD_ADAPTERS)
    traces = write(tmp_path, "t.jsonl", '{"x": 1}\n')
    r = cli("replay", contract, traces, "--adapter", f"{adapter}:{func}")
    no_crash(r)
    assert r.exit_code == code
    assert message in r.output


# ================================================================= YAML values that are not JSON

DATED = HEAD + 'state { last: str = "" }\ntool w(s: str) { effect { last = s } }\n'


@pytest.mark.parametrize(
    ("value", "text"),
    [
        ("2024-05-20", "2024-05-20"),
        ("2024-05-20T14:30:00Z", "2024-05-20T14:30:00Z"),
        ("!!timestamp 2001-12-14t21:59:43.10-05:00", "2001-12-14t21:59:43.10-05:00"),
    ],
)
def test_yaml_dates_in_a_plan_are_their_text(tmp_path: Path, value: str, text: str) -> None:
    contract = write(tmp_path, "c.contract", DATED)
    plan = write(tmp_path, "plan.yaml", f"- {{tool: w, args: {{s: {value}}}}}\n")
    r = cli("simulate", contract, plan, "--format", "json")
    no_crash(r)
    assert r.exit_code == 0, r.output
    step = json.loads(r.output)["steps"][0]
    assert step["args"] == {"s": text}
    r = cli("simulate", contract, plan)
    assert r.exit_code == 0 and f'w(s="{text}")' in r.output
    assert "datetime" not in r.output


def test_yaml_dates_in_state_and_trace_are_their_text(tmp_path: Path) -> None:
    contract = write(tmp_path, "c.contract", DATED)
    plan = write(tmp_path, "plan.yaml", "steps: []\nstate: {last: 2024-05-20}\n")
    state = write(tmp_path, "state.yaml", "last: 2024-05-21\n")
    r = cli("simulate", contract, plan, "--state", state, "--format", "json")
    no_crash(r)
    assert r.exit_code == 0, r.output
    trace = write(
        tmp_path,
        "trace.yaml",
        "- steps:\n    - {tool: w, args: {s: 2024-05-20}, outcome: ok}\n",
    )
    r = cli("replay", contract, trace, "--format", "json")
    no_crash(r)
    assert r.exit_code == 0, r.output
    plan_steps = parse_plan("- {tool: w, args: {s: 2024-05-20}}\n").steps
    assert [(s.tool, s.args) for s in plan_steps] == [("w", {"s": "2024-05-20"})]


@pytest.mark.parametrize("tag", ["binary", "set", "omap", "pairs"])
def test_yaml_values_json_cannot_hold_are_refused(tmp_path: Path, tag: str) -> None:
    contract = write(tmp_path, "c.contract", DATED)
    value = {"binary": "aGVsbG8=", "set": "{a, b}", "omap": "[a: 1]", "pairs": "[a: 1]"}[tag]
    plan = write(tmp_path, "plan.yaml", f"- tool: w\n  args: {{s: !!{tag} {value}}}\n")
    for fmt in ("text", "json"):
        r = cli("simulate", contract, plan, "--format", fmt)
        no_crash(r)
        assert r.exit_code == 2
        assert "E0701" in r.output and f"`!!{tag}` value, which is not JSON data" in r.output
    state = write(tmp_path, "state.yaml", f"last: !!{tag} {value}\n")
    empty = write(tmp_path, "empty.yaml", "[]\n")
    r = cli("simulate", contract, empty, "--state", state)
    assert (
        r.exit_code == 2
        and f"state.yaml:1:7: error[E0702]: the state holds a YAML `!!{tag}`" in r.output
    )


@pytest.mark.parametrize(
    ("name", "body"),
    [
        ("plan.yaml", "- 1\n" * 100_001),
        ("plan.yaml", "description: x\nsteps:\n" + "  - {tool: u}\n" * 100_001),
        ("plan.plan", "(u)\n" * 100_001),
    ],
)
def test_plan_over_the_step_limit_is_refused_while_reading(
    tmp_path: Path, mini: str, name: str, body: str
) -> None:
    """Counted before any step is built: the refusal of a YAML or IPC plan does not wait for
    100,000 steps to be read (a YAML one took over a minute)."""
    plan = write(tmp_path, name, body)
    r = cli("simulate", mini, plan, "--now", NOW)
    no_crash(r)
    assert r.exit_code == 2
    assert "error[E0701]: the plan has more than 100,000 steps; the limit is 100,000" in r.output


def test_plan_at_the_step_limit_is_read_with_its_lines() -> None:
    plan = parse_plan("steps:\n" + "  - {tool: u}\n" * 100_000)
    assert len(plan.steps) == 100_000
    assert (plan.steps[0].line, plan.steps[-1].line) == (2, 100_001)


# ======================================================== input paths that are not regular files


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs FIFOs")
def test_a_fifo_as_any_input_is_refused_without_waiting(tmp_path: Path, mini: str) -> None:
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    good = write(tmp_path, "plan.json", "[]")
    cases = [
        (["check", str(fifo)], "E0100", "is a FIFO (named pipe), not a regular file"),
        (["simulate", mini, str(fifo)], "E0700", "is a FIFO (named pipe), not a plan file"),
        (["simulate", mini, good, "--state", str(fifo)], "E0700", "not a state file"),
        (["replay", mini, str(fifo)], "E0901", "is a FIFO (named pipe), not a trace file"),
        (["import-pddl", str(fifo), str(fifo)], "E0801", "not a domain file"),
    ]
    for args, code, message in cases:
        r = sub(args, timeout=60)  # used to wait forever for a writer
        assert r.returncode == 2, args
        assert f"error[{code}]: {fifo} " in r.stdout and message in r.stdout, r.stdout


def test_symlink_loops_and_dangling_links_are_said_as_such(tmp_path: Path, mini: str) -> None:
    (tmp_path / "a").symlink_to(tmp_path / "b")
    (tmp_path / "b").symlink_to(tmp_path / "a")
    (tmp_path / "dangling").symlink_to(tmp_path / "nowhere")
    loop, dangling = str(tmp_path / "a"), str(tmp_path / "dangling")
    r = cli("check", loop)
    assert r.exit_code == 2 and f"error[E0100]: {loop} is a symbolic link loop" in r.output
    r = cli("simulate", mini, loop)
    assert r.exit_code == 2 and f"error[E0700]: {loop} is a symbolic link loop" in r.output
    r = cli("simulate", mini, dangling)
    assert r.exit_code == 2
    assert f"{dangling} is a symbolic link to {tmp_path / 'nowhere'}, which does not exist" in (
        r.output
    )
    r = cli("simulate", mini, str(tmp_path / "missing.json"))
    assert r.exit_code == 2 and "error[E0700]: no such plan file:" in r.output
    (tmp_path / "x.py").symlink_to(tmp_path / "y.py")
    (tmp_path / "y.py").symlink_to(tmp_path / "x.py")
    trace = write(tmp_path, "t.json", "[]")
    r = cli("replay", mini, trace, "--adapter", f"{tmp_path / 'x.py'}:f")
    assert r.exit_code == 2
    assert f"error[E0910]: {tmp_path / 'x.py'} is a symbolic link loop" in r.output


def test_articles_in_messages() -> None:
    from contractsim.diagnostics import article

    assert [article(w) for w in ("object", "adapter file", "`animal`", "union", "plan")] == [
        "an object",
        "an adapter file",
        "an `animal`",
        "a union",
        "a plan",
    ]


@pytest.mark.skipif(not os.path.exists("/dev/null"), reason="needs /dev/null")
def test_a_device_as_input_is_refused() -> None:
    r = cli("check", "/dev/null")
    assert r.exit_code == 2
    assert "error[E0100]: /dev/null is a device, not a regular file" in r.output


# ============================================== control characters never reach a terminal raw

HOSTILE = "\x1b]0;pwned\x07\x00\x9b2J\u202e"
SHOWN = "\\u001b]0;pwned\\u0007\\u0000\\u009b2J\\u202e"
ESCAPING = (
    HEAD
    + "state { seen: set[str] = {} }\n"
    + 'tool read_file(path: str) {\n  require path in seen else NO_FILE "no file {path}"\n'
    + '    hint "create {path} \\u001b]0;hint\\u0007 first"\n'
    + '  should len(path) < 3 else LONG "long \\u001b[2J{path}"\n}\n'
)


def _raw_controls(text: str) -> list[str]:
    return [ch for ch in text if not ch.isprintable() and ch not in "\n\t"]


def test_simulate_text_escapes_control_characters(tmp_path: Path) -> None:
    contract = write(tmp_path, "e.contract", ESCAPING)
    plan = write(
        tmp_path, "plan.json", json.dumps([{"tool": "read_file", "args": {"path": HOSTILE}}])
    )
    r = cli("simulate", contract, plan)
    assert r.exit_code == 1
    assert _raw_controls(r.output) == []
    assert f"NO_FILE: no file {SHOWN}  [" in r.output
    assert f"hint: create {SHOWN} \\u001b]0;hint\\u0007 first" in r.output
    assert 'read_file(path="\\u001b]0;pwned\\u0007' in r.output
    step = {"tool": "read_file", "args": {"path": HOSTILE}}
    seen = write(tmp_path, "seen.json", json.dumps({"steps": [step], "state": {"seen": [HOSTILE]}}))
    r = cli("simulate", contract, seen)
    assert _raw_controls(r.output) == []
    assert f"LONG: long \\u001b[2J{SHOWN}" in r.output
    r = cli("simulate", contract, plan, "--format", "json")  # JSON keeps the text, escaped by JSON
    assert json.loads(r.output)["steps"][0]["args"]["path"] == HOSTILE


def test_replay_text_escapes_control_characters(tmp_path: Path) -> None:
    contract = write(tmp_path, "e.contract", ESCAPING)
    step = {"tool": "read_file", "args": {"path": HOSTILE}, "outcome": "ok", "result": None}
    trace = write(tmp_path, "t.json", json.dumps([{"name": HOSTILE, "steps": [step]}]))
    r = cli("replay", contract, trace)
    no_crash(r)
    assert _raw_controls(r.output) == []
    assert f"our rule: NO_FILE: no file {SHOWN}" in r.output


def test_diagnostics_escape_control_characters_and_keep_their_carets() -> None:
    text = HEAD + 'const X = "a\x1b]0;t\x07" + 1\n'
    with pytest.raises(ContractError) as info:
        contractsim.loads(text, "e\x1b[2J.contract")
    rendered = str(info.value)
    assert _raw_controls(rendered) == []
    assert rendered.splitlines()[:3] == [
        "e\\u001b[2J.contract:2:11: error[E0301]: `+` cannot combine str and int",
        '    2 | const X = "a␛]0;t␇" + 1',
        "      |           ^^^^^^^^^^^^^",
    ]
    r = cli("check", write_tmp("e.contract", text))
    assert r.exit_code == 1 and _raw_controls(r.output) == []


def write_tmp(name: str, text: str) -> str:
    import tempfile

    folder = tempfile.mkdtemp()
    return write(Path(folder), name, text)


def test_guard_text_and_cards_escape_control_characters() -> None:
    contract = contractsim.loads(ESCAPING, "e.contract")
    guard = contract.guard()
    with pytest.raises(contractsim.ContractViolation) as info:
        guard.wrap("read_file", lambda path: "x")(HOSTILE)
    text = info.value.to_llm()
    assert _raw_controls(text) == []
    assert f"NO_FILE: no file {SHOWN}" in text and str(info.value) == text
    card = contract.card("read_file")
    assert _raw_controls(card) == [] and "\\u001b]0;hint\\u0007" in card
    for fmt in ("dot", "mermaid"):
        assert _raw_controls(str(contract.render("tool", "read_file", fmt))) == []


@pytest.mark.parametrize("libyaml", [True, False])
def test_yaml_reading_is_the_same_without_libyaml(
    monkeypatch: pytest.MonkeyPatch, libyaml: bool
) -> None:
    from contractsim.simulator import formats

    if not libyaml:
        monkeypatch.setattr(formats, "_FastLoader", None)
    plan = parse_plan("steps:\n  - {tool: w, args: {s: 2024-05-20}}\n  - tool: u\n")
    assert [(s.tool, s.args, s.line) for s in plan.steps] == [
        ("w", {"s": "2024-05-20"}, 2),
        ("u", {}, 3),
    ]
    for text, message in [
        ("a: &a [1]\nsteps: *a\n", "2:8: error[E0701]: the plan is not valid YAML: YAML aliases"),
        ("- {tool: w, args: {s: !!binary aGk=}}\n", "1:23: error[E0701]: the plan holds a YAML"),
        ("- {tool: w, args: {s: 1, s: 2}}\n", "error[E0701]: the key `s` appears twice"),
        ("- 1\n" * 100_001, "error[E0701]: the plan has more than 100,000 steps"),
    ]:
        with pytest.raises(ContractError) as info:
            parse_plan(text, "p.yaml")
        assert message in str(info.value)


@pytest.mark.parametrize(
    "text",
    [
        '[\n {"tool": "u"},\n\n {"tool": "t", "args": {"k": [1,\n 2]}}\n ,{"tool": "u"}]',
        '{"description": "x",\n "state": {"n": 1},\n "steps": [\n  {"tool": "u"},\n  {"tool": "t"}\n]}',
        '{"tool_calls": [\n{"function": {"name": "u", "arguments": "{}"}},\n'
        '{"function": {"name": "t", "arguments": "{\\"k\\": 2}"}}]}',
        '{"steps": [\n  {"tool": "u", "comment": "]\\n["},\n  {"tool": "t"}]}',
    ],
)
def test_json_plan_lines_are_found_without_composing_yaml(text: str) -> None:
    """Lines of a JSON plan come from the JSON decoder (composing 100,000 pretty-printed steps
    as YAML took 15 s): the same lines the YAML node tree gives."""
    import yaml

    from contractsim.simulator.formats import _json_item_lines, _node_lines

    plan = parse_plan(text)
    keys = ("steps", "tool_calls")
    expected = _node_lines(yaml.compose(text, Loader=yaml.SafeLoader), len(plan.steps), keys)
    assert _json_item_lines(text, keys) == expected
    assert [s.line for s in plan.steps] == expected and len(set(expected)) > 1


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
    # too deep to read in full: the result is unknown where it is read, the effect still applies
    # (docs/guard.md), and a note says why
    assert observed.state["last"] is contractsim.UNKNOWN
    assert any("nest" in note for note in observed.notes), observed.notes


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

"""``contractsim simulate`` compiles the generated code of the tools its plan calls, not all.

``compile_contract(..., lazy=True)`` (``Contract.compile(lazy=True)``, what the CLI's
``simulate`` of one plan asks for) compiles the generated code in chunks — the predicates, each
tool's functions, the machines' and goals' — each when one of its functions is first called.
These tests check that nothing else changes: the same functions (same code, same line numbers)
for every example and golden contract, and the same report bytes for every example plan.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

import contractsim
from contractsim import api
from contractsim.cli import main
from contractsim.compiler.compile import compile_contract

REPO = Path(__file__).resolve().parent.parent
CONTRACTS = sorted(REPO.glob("examples/*/*.contract")) + sorted(
    p for p in (REPO / "tests" / "golden").glob("*.contract")
)
PLANS = sorted(
    (contract, plan)
    for contract in REPO.glob("examples/*/*.contract")
    for plan in sorted((contract.parent / "plans").glob("*.yaml"))
)


def _loaded(path: Path) -> api.Contract | None:
    try:
        return contractsim.load(path)
    except contractsim.ContractError:  # golden files of errors
        return None


def _functions(module: dict[str, object]) -> dict[str, tuple[object, ...]]:
    return {
        name: (fn.__code__.co_code, fn.__code__.co_firstlineno, fn.__code__.co_consts)  # type: ignore[attr-defined]
        for name, fn in module.items()
        if callable(fn)
        and getattr(fn, "__code__", None) is not None
        and fn.__code__.co_filename.startswith("<contract")  # type: ignore[attr-defined]
    }


@pytest.mark.parametrize("path", CONTRACTS, ids=lambda p: p.stem)
def test_chunks_compile_to_the_functions_of_the_whole(path: Path) -> None:
    c = _loaded(path)
    if c is None:
        pytest.skip("a contract with errors")
    eager = compile_contract(c.ir, c.source)
    lazy = compile_contract(c.ir, c.source, lazy=True)
    assert not lazy.generated.compiled_chunks
    assert lazy.python_source == eager.python_source
    lazy.generated.compile_all()
    for flavour in ("fast", "safe"):
        whole: dict[str, object] = {}
        exec(  # noqa: S102 - the generated code, compiled in one piece as before chunks
            compile(
                eager.generated.src[flavour].text(),
                f"<contract {c.name}{' (safe)' if flavour == 'safe' else ''}>",
                "exec",
            ),
            eager.generated._namespace(flavour),
            whole,
        )
        assert _functions(lazy.generated.modules[flavour]) == _functions(whole)
        assert _functions(eager.generated.modules[flavour]) == _functions(whole)


def _simulate(contract: Path, plan: Path, lazy: bool, monkeypatch: pytest.MonkeyPatch) -> str:
    if not lazy:  # the CLI asks for lazy code: give it the eager one
        original = api.Contract.compile
        monkeypatch.setattr(
            api.Contract, "compile", lambda self, lazy=False: original(self, lazy=False)
        )
    args = ["simulate", str(contract), str(plan), "--now", "2024-06-01T12:00:00Z"]
    for fmt in ("text", "json"):
        args_fmt = [*args, "--format", fmt]
        result = CliRunner().invoke(main, args_fmt)
        if fmt == "text":
            text = f"{result.exit_code}\n{result.output}"
        else:
            text += f"\n{result.exit_code}\n{result.output}"
    monkeypatch.undo()
    return text


@pytest.mark.parametrize(
    ("contract", "plan"), PLANS, ids=lambda p: f"{p.parent.name}/{p.stem}" if p.suffix else ""
)
def test_simulate_reports_the_same_bytes_lazy_and_eager(
    contract: Path, plan: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    lazy = _simulate(contract, plan, True, monkeypatch)
    eager = _simulate(contract, plan, False, monkeypatch)
    assert lazy == eager


_COLD = """
import sys
from contractsim import api
from contractsim.cli import main
made = []
original = api.Contract.compile
def compile(self, lazy=False):
    made.append(original(self, lazy))
    return made[-1]
api.Contract.compile = compile
sys.argv = ["contractsim", "simulate", *sys.argv[1:]]
try:
    main()
except SystemExit:
    pass
(cc,) = made
chunks = cc.generated.chunks["fast"]
print("COMPILED", sorted(cc.generated.compiled_chunks), "OF", len(chunks), file=sys.stderr)
"""


def test_a_cold_simulate_compiles_only_what_its_plan_calls() -> None:
    done = subprocess.run(
        [
            sys.executable,
            "-c",
            _COLD,
            "examples/file_system/file_system.contract",
            "examples/file_system/plans/fails_read_after_delete.yaml",
        ],
        cwd=REPO,
        capture_output=True,
        text=True,
        check=False,
    )
    assert "NOT_FOUND" in done.stdout
    # the predicates (chunk 0) and the tools delete_file and read_file, in the three-valued
    # flavour only (the state has unknown values); nothing of the other four tools, the
    # machines and goals, or the fast flavour
    c = contractsim.load(REPO / "examples/file_system/file_system.contract")
    delete, read = c.tools.index("delete_file") + 1, c.tools.index("read_file") + 1
    expected = sorted([("safe", 0), ("safe", delete), ("safe", read)])
    assert f"COMPILED {expected} OF {len(c.tools) + 2}" in done.stderr, done.stderr

"""What keeps start-up fast: the stored LALR tables, lazy imports, lazily built IR validators.

Timings themselves live in benchmarks/ (never timed assertions here); these tests pin down the
mechanisms and that they change no result.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from lark import Lark, Token, Tree
from lark.exceptions import UnexpectedInput

from contractsim.grammar import tables
from contractsim.grammar.parse import grammar_text, parser

ROOT = Path(__file__).resolve().parent.parent
SOURCES = sorted(ROOT.glob("examples/*/*.contract")) + sorted(ROOT.glob("tests/golden/*.contract"))


@pytest.fixture(scope="module")
def built() -> Lark:
    return tables.build(grammar_text())


def test_stored_tables_are_up_to_date() -> None:
    stored = tables.load_stored(grammar_text())
    assert stored is not None, (
        "contractsim/grammar/contract_tables.json does not belong to contract.lark (or to this "
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


def test_tables_round_trip_through_json(built: Lark) -> None:
    import json

    key = tables.grammar_key(grammar_text())
    stored = json.loads(tables.dumps(built, key), object_hook=tables._decode)
    from lark.grammar import Rule
    from lark.lexer import TerminalDef

    data, memo = built.memo_serialize([TerminalDef, Rule])
    assert stored["key"] == key
    assert stored["data"] == data and stored["memo"] == memo


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

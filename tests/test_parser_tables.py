"""The stored parser (issue 13): tables loaded from a generated module, and a contextual lexer
that shares one pattern across parser states, give exactly what lark builds from the grammar.

lark's own parser (``tables.build``: ``lark.Lark(grammar)`` with its ``ContextualLexer``) is the
reference: every example, golden file, doc block and contract written in the tests, and
thousands of mutilated variants of them (errors included), parse to the same tree — tokens,
types and positions — or fail with the same error.
"""

from __future__ import annotations

import ast
import functools
import random
import re
from pathlib import Path

import pytest
from lark import Lark, Token, Tree
from lark.exceptions import UnexpectedCharacters, UnexpectedInput, UnexpectedToken
from lark.parse_tree_builder import PropagatePositions

from contractsim.diagnostics import ContractError, Diagnostic, Span, error
from contractsim.grammar import parse as parse_module
from contractsim.grammar import tables
from contractsim.grammar.lexer import SharedContextualLexer
from contractsim.grammar.parse import _CLOSERS, _OPENERS, MAX_NESTING, grammar_text
from contractsim.grammar.treebuild import ChainAwarePositions, LazyCallbacks

ROOT = Path(__file__).resolve().parent.parent
_BLOCK = re.compile(r"^```contract\n(.*?)^```", re.S | re.M)


def _corpus() -> list[tuple[str, str]]:
    found = [
        (str(p.relative_to(ROOT)), p.read_text("utf-8"))
        for pattern in ("examples/**/*.contract", "tests/**/*.contract", "docs/**/*.contract")
        for p in sorted(ROOT.glob(pattern))
    ]
    for path in sorted((ROOT / "docs").glob("*.md")):
        for i, match in enumerate(_BLOCK.finditer(path.read_text("utf-8"))):
            found.append((f"{path.name} block {i}", match.group(1)))
    for path in sorted((ROOT / "tests").glob("test_*.py")):
        for node in ast.walk(ast.parse(path.read_text("utf-8"))):
            if (
                isinstance(node, ast.Constant)
                and isinstance(node.value, str)
                and "contract " in node.value
                and "version" in node.value
            ):
                found.append((f"{path.name}:{node.lineno}", node.value))
    return found


CORPUS = _corpus()


@pytest.fixture(scope="module")
def built() -> Lark:
    return tables.build(grammar_text())


@pytest.fixture(scope="module")
def stored() -> Lark:
    loaded = tables.load_stored(grammar_text())
    assert loaded is not None
    return loaded


def _shape(tree: Tree[Token] | Token | None) -> object:
    """A tree with every token's type, text and position, and every node's position."""
    if isinstance(tree, Token):
        return (
            tree.type,
            str(tree),
            tree.start_pos,
            tree.line,
            tree.column,
            tree.end_line,
            tree.end_column,
            tree.end_pos,
        )
    if tree is None:
        return None
    meta = tree.meta
    where = (
        (meta.line, meta.column, meta.end_line, meta.end_column, meta.start_pos, meta.end_pos)
        if not meta.empty
        else None
    )
    return (tree.data, where, [_shape(c) for c in tree.children])


def _error(exc: UnexpectedInput) -> object:
    described: list[object] = [type(exc).__name__, exc.line, exc.column, exc.pos_in_stream]
    if isinstance(exc, UnexpectedToken):
        described += [_shape(exc.token), sorted(exc.expected)]
    if isinstance(exc, UnexpectedCharacters):
        described += [sorted(exc.allowed or ())]
    return described


def _result(p: Lark, text: str, start: str = "start") -> object:
    try:
        return _shape(p.parse(text, start=start))
    except UnexpectedInput as exc:
        return _error(exc)


def test_the_corpus_is_what_it_claims() -> None:
    kinds = {name.split("/")[0].split(":")[0].split(" ")[0] for name, _ in CORPUS}
    assert {"examples", "tests"} <= kinds
    assert sum(" block " in name for name, _ in CORPUS) >= 10
    assert sum(name.startswith("test_") for name, _ in CORPUS) >= 50


def test_the_stored_module_is_what_the_grammar_builds(built: Lark) -> None:
    """Fails when contract_tables.py is stale against contract.lark, the options or lark."""
    path = Path(tables.__file__).with_name(f"{tables.TABLES_MODULE}.py")
    expected = tables.module_source(built, tables.grammar_key(grammar_text()))
    assert path.read_text("utf-8") == expected, (
        "contractsim/grammar/contract_tables.py does not belong to contract.lark (or to this "
        "lark version): run `python -m contractsim.grammar.tables` and commit the file"
    )


def test_the_stored_module_holds_plain_literals_only() -> None:
    path = Path(tables.__file__).with_name(f"{tables.TABLES_MODULE}.py")
    module = ast.parse(path.read_text("utf-8"))
    for node in module.body:
        if isinstance(node, ast.Expr):  # the docstring
            assert isinstance(node.value, ast.Constant)
            continue
        assert isinstance(node, ast.Assign), ast.dump(node)[:80]
        ast.literal_eval(node.value)  # raises on anything but a literal


def test_the_stored_parser_has_the_built_parsers_tables(built: Lark, stored: Lark) -> None:
    def rule(r: object) -> object:
        o = r.options  # type: ignore[attr-defined]
        return (
            r.origin.name,  # type: ignore[attr-defined]
            [(s.name, s.is_term, getattr(s, "filter_out", None)) for s in r.expansion],  # type: ignore[attr-defined]
            r.order,  # type: ignore[attr-defined]
            r.alias,  # type: ignore[attr-defined]
            (o.keep_all_tokens, o.expand1, o.priority, o.template_source, tuple(o.empty_indices)),
        )

    def terminal(t: object) -> object:
        p = t.pattern  # type: ignore[attr-defined]
        return (t.name, p.type, p.value, set(p.flags), p.raw, t.priority, p.min_width, p.max_width)  # type: ignore[attr-defined]

    assert [rule(r) for r in stored.rules] == [rule(r) for r in built.rules]
    assert [terminal(t) for t in stored.terminals] == [terminal(t) for t in built.terminals]
    assert stored.lexer_conf.ignore == built.lexer_conf.ignore
    mine = stored.parser.parser._parse_table  # type: ignore[attr-defined]
    theirs = built.parser.parser._parse_table  # type: ignore[attr-defined]
    # the stored states are numbered canonically, lark's by its hashing: walk both together
    assert mine.start_states.keys() == theirs.start_states.keys()
    assert len(mine.states) == len(theirs.states)
    pairs = {(mine.start_states[k], theirs.start_states[k]) for k in theirs.start_states}
    pairs |= {(mine.end_states[k], theirs.end_states[k]) for k in theirs.end_states}
    seen: dict[int, int] = {}
    queue = sorted(pairs)
    while queue:
        a, b = queue.pop()
        if a in seen:
            assert seen[a] == b
            continue
        seen[a] = b
        row_a, row_b = mine.states[a], theirs.states[b]
        assert row_a.keys() == row_b.keys(), a
        for sym, (action, arg) in row_b.items():
            assert row_a[sym][0] is action
            if action.name == "Shift":
                queue.append((row_a[sym][1], arg))
            else:
                assert rule(row_a[sym][1]) == rule(arg)
    assert sorted(seen) == sorted(mine.states) and sorted(seen.values()) == sorted(theirs.states)
    assert isinstance(stored.parser.lexer, SharedContextualLexer)  # type: ignore[attr-defined]


def _builder_chain(f: object) -> list[object]:
    """A tree-building callback as the chain of what each wrapper does."""
    chain: list[object] = []
    while True:
        if isinstance(f, functools.partial):
            chain.append(("partial", f.func, f.args))
            return chain
        kind = "positions" if isinstance(f, PropagatePositions) else type(f).__name__
        chain.append(
            (
                kind,
                getattr(f, "to_include", None),
                getattr(f, "append_none", None),
                getattr(f, "node_filter", None),
            )
        )
        f = f.node_builder  # type: ignore[attr-defined]


def test_the_stored_parser_builds_trees_as_lark_does(built: Lark, stored: Lark) -> None:
    """Every rule's callback: lark's wrappers, lark's child filters, lark's tree names; only the
    position wrapper is the chain-aware one."""
    theirs = built._callbacks  # type: ignore[attr-defined]
    mine = stored._callbacks  # type: ignore[attr-defined]
    assert isinstance(mine, LazyCallbacks)
    by_rule = {rule: rule for rule in stored.rules}
    assert len(theirs) == len(built.rules) == len(stored.rules) == len(mine)
    for rule in built.rules:
        ours = mine[by_rule[rule]]
        assert type(ours) is ChainAwarePositions
        assert _builder_chain(ours) == _builder_chain(theirs[rule]), rule


def test_a_stale_or_broken_module_falls_back_to_the_grammar(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    assert tables.load_stored(grammar_text() + "\n// changed\n") is None
    monkeypatch.setattr(tables, "TABLES_MODULE", "no_such_module")
    assert tables.load_stored(grammar_text()) is None


@pytest.mark.parametrize("name,text", CORPUS, ids=[name for name, _ in CORPUS])
def test_every_known_contract_parses_as_lark_parses_it(
    built: Lark, stored: Lark, name: str, text: str
) -> None:
    assert _result(stored, text) == _result(built, text)


def _mutants(text: str, rng: random.Random, count: int) -> list[str]:
    """Variants of a contract: cut short, a character dropped, doubled or replaced, a keyword,
    name or symbol inserted — to reach parser states and errors the corpus does not."""
    words = [
        "tool", "state", "type", "min", "max", "pattern", "success", "fails", "in", "not", "is",
        "-", "->", "-=", "+=", "==", "=", "?", ":", "...", "r\"x\"", '"s"', '"""a\n"""', "1.5e3",
        "12", "#c\n", "\n", "{", "}", "(", ")", "[", "]", ",", ".", "|", "tags", "cost", "x",
        "unknown", "if", "else", "for", "let", "report", "successful", "minx", "types", "@",
    ]  # fmt: skip
    out = []
    for _ in range(count):
        pos = rng.randrange(len(text) + 1)
        kind = rng.randrange(5)
        if kind == 0:
            out.append(text[:pos])
        elif kind == 1:
            out.append(text[:pos] + text[pos + 1 :])
        elif kind == 2:
            out.append(text[:pos] + text[pos : pos + 1] * 2 + text[pos + 1 :])
        else:
            sep = rng.choice(["", " "])
            out.append(text[:pos] + sep + rng.choice(words) + sep + text[pos:])
    return out


@pytest.mark.parametrize("seed", range(4))
def test_mutilated_contracts_parse_or_fail_as_lark_does(
    built: Lark, stored: Lark, seed: int
) -> None:
    rng = random.Random(seed)
    sample = rng.sample(CORPUS, 40)
    outcomes = set()
    for name, text in sample:
        for mutant in _mutants(text, rng, 15):
            expected = _result(built, mutant)
            assert _result(stored, mutant) == expected, (name, mutant)
            outcomes.add(type(expected).__name__ if not isinstance(expected, list) else expected[0])
    assert {"tuple", "UnexpectedToken", "UnexpectedCharacters"} <= outcomes


def test_expressions_parse_as_lark_parses_them(built: Lark, stored: Lark) -> None:
    for expr in (
        'a + b * c in {"x"}',
        "all(p in files for p in keys(dirs)) or not x.y[1]",
        "-x - -1 if a is not int else min(a, b)",
        "state.type - max",
        'r"a" + r"',
    ):
        assert _result(stored, expr, "expr") == _result(built, expr, "expr"), expr


def test_diagnostics_are_the_same_with_either_parser(
    built: Lark, monkeypatch: pytest.MonkeyPatch
) -> None:
    """parse() reads keywords as names where only a name fits (lark's on_error and the
    interactive parser): through the shared lexer too."""

    def outcome(text: str) -> object:
        try:
            return _shape(parse_module.parse(text, "t.contract"))
        except ContractError as exc:
            return [d.dump() for d in exc.diagnostics]

    rng = random.Random(7)
    texts = [text for _, text in CORPUS]
    texts += [m for _, text in rng.sample(CORPUS, 15) for m in _mutants(text, rng, 6)]
    expected = []
    monkeypatch.setattr(parse_module, "parser", lambda: built)
    for text in texts:
        expected.append(outcome(text))
    monkeypatch.undo()
    assert parse_module.parser() is not built
    for text, want in zip(texts, expected):
        assert outcome(text) == want, text


def test_ordinary_input_compiles_only_the_shared_pattern() -> None:
    """The point of the shared lexer: no per-state scanner is compiled for valid input."""
    fresh = tables.load_stored(grammar_text())
    assert fresh is not None
    for path in sorted(ROOT.glob("examples/*/*.contract")):
        fresh.parse(path.read_text("utf-8"), start="start")
    lexer = fresh.parser.lexer  # type: ignore[attr-defined]
    assert isinstance(lexer, SharedContextualLexer)
    assert len(lexer._by_terminals) > 50  # the examples visit that many sets of terminals
    compiled = [s for s in lexer._by_terminals.values() if s._basic is not None]
    assert compiled == []


# ------------------------------------------------------------- the bracket-nesting pre-check


def _reference_nesting_problem(text: str, filename: str) -> Diagnostic | None:
    """The character-by-character check this module had before (the reference)."""
    depth = 0
    line, col = 1, 1
    i, n = 0, len(text)
    while i < n:
        ch = text[i]
        if ch == "#":
            j = text.find("\n", i)
            j = n if j < 0 else j
            col += j - i
            i = j
            continue
        if ch == '"':
            j = i + 1
            while j < n and text[j] not in '"\n':
                j += 2 if text[j] == "\\" else 1
            if text.startswith('"""', i):
                k = text.find('"""', i + 3)
                j = n if k < 0 else k + 2
                newlines = text.count("\n", i, j)
                if newlines:
                    line += newlines
                    col = j - text.rfind("\n", i, j)
                    i = j + 1
                    continue
            col += j + 1 - i
            i = j + 1
            continue
        if ch == "\n":
            line, col = line + 1, 1
            i += 1
            continue
        if ch in _OPENERS:
            depth += 1
            if depth > MAX_NESTING:
                return error(
                    "E0104",
                    f"brackets are nested more than {MAX_NESTING} deep",
                    Span(file=filename, line=line, col=col, end_line=line, end_col=col + 1),
                    hint="split the expression with `let`, a predicate or a named type",
                )
        elif ch in _CLOSERS:
            depth = max(depth - 1, 0)
        i += 1
        col += 1
    return None


def test_the_nesting_check_finds_what_the_character_loop_found() -> None:
    rng = random.Random(3)
    pieces = ["(", "[", "{", ")", "]", "}", '"', '"""', "\\", "\n", "#", "x", " ", "ab", 'r"']
    texts = [text for _, text in CORPUS]
    for _ in range(3000):
        texts.append("".join(rng.choice(pieces) for _ in range(rng.randrange(1, 40))))
    deep = pieces + ["(", "[", "{", ")", "x"] * 6  # enough openers to pass the first filter
    for _ in range(1500):
        texts.append("".join(rng.choice(deep) for _ in range(rng.randrange(100, 300))))
    for depth in (63, 64, 65, 70):
        for opener in "([{":
            texts.append("x = " + opener * depth + "1" + "# )\n" + '"(("' + opener * 3)
            texts.append('"""\n' + opener * 70 + '"""\n' + opener * depth)
    found = engaged = 0
    for text in texts:
        expected = _reference_nesting_problem(text, "t")
        assert parse_module._nesting_problem(text, "t") == expected, text
        found += expected is not None
        engaged += sum(text.count(c) for c in "([{") > MAX_NESTING
    assert found > 15 and engaged > 1000  # both outcomes, and the depth loop, are exercised


def test_without_one_shared_pattern_every_state_is_lexed_alternative_by_alternative(
    built: Lark,
) -> None:
    """lark splits a scanner of more than 100 groups into parts; then the shared lexer tries
    each state's alternatives in order (the path it also takes where the shared pattern cannot
    answer), and still reads what lark reads."""
    fresh = tables.load_stored(grammar_text())
    assert fresh is not None
    lexer = fresh.parser.lexer  # type: ignore[attr-defined]
    root = lexer._root()
    root._mres = root._mres * 2  # two parts: no single shared pattern
    for path in sorted(ROOT.glob("examples/*/*.contract")):
        text = path.read_text("utf-8")
        assert _result(fresh, text) == _result(built, text), path
    assert [s for s in lexer._by_terminals.values() if s._basic is not None] == []
    rng = random.Random(11)
    for name, text in rng.sample(CORPUS, 25):
        for variant in [text, *_mutants(text, rng, 4)]:
            assert _result(fresh, variant) == _result(built, variant), (name, variant)

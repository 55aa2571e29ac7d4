"""The parser driver's session-7 speed-ups (issue 13) change nothing a parse gives: white space
and comments read a run at a time (``driver._gap_pattern``), tokens made without
``Token._future_new``, a one-child reduction done in place, builders that set a ``Tree``'s
attributes directly, and the tree's depth measured level by level. Each test compares with
lark's own loop or with the code it replaces, on the corpus and on texts made to reach the
cases the corpus does not."""

from __future__ import annotations

import random
import re
from types import SimpleNamespace
from typing import Any

import pytest
from lark import Lark, Token, Tree
from lark.lexer import PatternRE, PatternStr, TerminalDef
from test_parse_driver import _driver_result, _lark_result
from test_parser_tables import CORPUS, _mutants

from contractsim.diagnostics import ContractError
from contractsim.grammar import driver, literals
from contractsim.grammar import parse as parse_module
from contractsim.grammar.parse import (
    MAX_TREE_DEPTH,
    _first_node_too_deep,
    grammar_text,
    nesting_depth_problem,
)
from contractsim.grammar.tables import build


@pytest.fixture(scope="module")
def built() -> Lark:
    return build(grammar_text())


def _the_driver() -> driver.Driver:
    found = driver.driver_for(parse_module.parser())
    assert found is not None
    return found


# ------------------------------------------------------------------ white space and comments


def test_the_stored_parser_reads_white_space_and_comments_a_run_at_a_time() -> None:
    the_driver = _the_driver()
    assert the_driver._gap is not None
    assert the_driver._gap_first == frozenset(" \t\f\r\n#")
    # a run of both, newlines included, is one match; it stops where a token starts
    text = "  # a comment\n\t\f\r\n   # another\n  tool x"
    assert the_driver._gap.match(text).end() == text.index("tool")
    assert the_driver._gap.match('"# not a comment"').end() == 0


def _respaced(text: str, rng: random.Random) -> str:
    """``text`` with each run of white space replaced by another that lark reads the same way:
    other blanks, comments at the ends of lines, blank lines, CRLF line ends."""
    blanks = [" ", "\t", "\f", "  \t ", " \r"]

    def one(match: re.Match[str]) -> str:
        run = match.group()
        if "\n" not in run:
            return rng.choice(blanks) * rng.randrange(1, 3)
        lines = run.count("\n") + rng.randrange(0, 2)
        out = ""
        for _ in range(lines):
            out += rng.choice(["", " # note", "\t#", " #\t(x) ] } \" '", " \r"]) + "\n"
        return out + rng.choice(["", "  ", "\t", " \f "])

    # white space outside strings only (a string's blanks are its value)
    pieces = re.split(r'("""[\s\S]*?"""|"[^"\n]*")', text)
    return "".join(
        piece if i % 2 else re.sub(r"[ \t]*\n[ \t\n]*|[ \t]+", one, piece)
        for i, piece in enumerate(pieces)
    )


@pytest.mark.parametrize("seed", range(3))
def test_respaced_and_commented_contracts_get_lark_s_tree(built: Lark, seed: int) -> None:
    rng = random.Random(700 + seed)
    parsed = 0
    for _name, text in rng.sample(CORPUS, 25):
        variant = _respaced(text, rng)
        variant = rng.choice(["", "\n\n", "# header\n", "\t \n#\n"]) + variant
        variant += rng.choice(["", "\n", "# last line, no newline", "  \n\t", "#"])
        expected = _lark_result(built, variant)
        assert _driver_result(variant) == expected, variant
        parsed += expected is not None
    # most are valid text (the others: the corpus's own errors, keywords read as names by
    # parse.py and not by lark's loop alone, a string the respacing cut wrongly)
    assert parsed >= 15


def test_white_space_lark_does_not_skip_is_left_to_lark(built: Lark) -> None:
    """Characters ``%ignore WS`` does not take (a no-break space, the ASCII separators ``\\s``
    matches, a vertical tab) stop the run: the driver and lark both refuse the text."""
    base = 'contract c version "1"\nconst A = 1\n'
    for odd in ("\u00a0", "\x1c", "\x1f", "\v", "\u2028"):
        text = base.replace(" = ", f" ={odd}")
        assert _lark_result(built, text) is None
        assert _driver_result(text) is None
        text = base + f"#{odd} a comment holds any character\n"
        assert _driver_result(text) == _lark_result(built, text) is not None


@pytest.mark.parametrize("seed", range(2))
def test_mutilated_respaced_contracts_get_lark_s_tree_or_none(built: Lark, seed: int) -> None:
    rng = random.Random(800 + seed)
    for _name, text in rng.sample(CORPUS, 20):
        for mutant in _mutants(_respaced(text, rng), rng, 10):
            assert _driver_result(mutant) == _lark_result(built, mutant), mutant


def _lexer_like(
    terminals: dict[str, str],
    ignore: tuple[str, ...] = ("WS", "COMMENT"),
    newline_types: tuple[str, ...] = ("WS", "COMMENT"),
    callbacks: dict[str, Any] | None = None,
) -> SimpleNamespace:
    """What ``_gap_pattern`` reads of the lexer, for a made-up set of terminals (a regular
    expression each; ``'…'`` quoted: a plain string)."""
    by_name = {
        name: TerminalDef(
            name,
            PatternStr(value[1:-1]) if value.startswith("'") else PatternRE(value),
        )
        for name, value in terminals.items()
    }
    return SimpleNamespace(
        _ignore=frozenset(ignore),
        _newline_types=frozenset(newline_types),
        _callbacks=callbacks or {},
        _by_name=by_name,
        _conf=SimpleNamespace(g_regex_flags=0),
    )


def _first_chars_of(lexer: SimpleNamespace) -> Any:
    def first(name: str) -> frozenset[str] | None:
        pattern = lexer._by_name[name].pattern
        if isinstance(pattern, PatternStr):
            return frozenset(pattern.value[:1])
        return driver._first_chars(pattern.to_regexp())

    return first


_PLAIN = {"WS": r"[ \t\n]+", "COMMENT": r"#[^\n]*", "NAME": r"[a-z]+", "EQ": "'='"}


@pytest.mark.parametrize(
    "change",
    [
        {"HASHTAG": r"#[a-z]+"},  # a token may start like a comment
        {"INDENT": r"\n[ ]+"},  # … or like white space
        {"ODD": r"(?i)x"},  # first characters not known
        {"ANY": r"."},  # … nor here
    ],
)
def test_no_run_pattern_where_another_terminal_may_start_like_an_ignored_one(
    change: dict[str, str],
) -> None:
    lexer = _lexer_like({**_PLAIN, **change})
    assert driver._gap_pattern(lexer, _first_chars_of(lexer)) is None


def test_no_run_pattern_for_callbacks_uncounted_newlines_or_unknown_starts() -> None:
    plain = _lexer_like(_PLAIN)
    gap = driver._gap_pattern(plain, _first_chars_of(plain))
    assert gap is not None and gap.match("  # x\n  y").end() == 8
    with_callback = _lexer_like(_PLAIN, callbacks={"COMMENT": print})
    assert driver._gap_pattern(with_callback, _first_chars_of(with_callback)) is None
    uncounted = _lexer_like(_PLAIN, newline_types=("WS",))
    assert driver._gap_pattern(uncounted, _first_chars_of(uncounted)) is None
    unknown = _lexer_like({**_PLAIN, "WS": r"(?i)[ \t\n]+"})
    assert driver._gap_pattern(unknown, _first_chars_of(unknown)) is None
    overlapping = _lexer_like({**_PLAIN, "COMMENT": r"[ #][^\n]*"})
    assert driver._gap_pattern(overlapping, _first_chars_of(overlapping)) is None


def test_a_lone_blank_is_read_without_the_run_pattern_only_where_that_is_exact() -> None:
    assert _the_driver()._lone_blanks == frozenset(" \t\f\r\n")
    plain = _lexer_like(_PLAIN)
    assert driver._lone_blanks(plain, frozenset(" \t\n#")) == frozenset(" \t\n")
    for ws in (r"[ \t\u00a0]+", r"\s+", r"[^#a-z]+", r"[ \t]*", r"[ \t]{1,3}", r"(?i:[ \t])+"):
        odd = _lexer_like({**_PLAIN, "WS": ws})
        assert driver._lone_blanks(odd, frozenset(" \t\n#")) == frozenset(), ws
    # a set with characters no run may start with (not in gap_first) is left to the pattern
    assert driver._lone_blanks(plain, frozenset(" \t#")) == frozenset()


def test_lone_blanks_at_every_place_get_lark_s_tree(built: Lark) -> None:
    texts = [
        'contract c version "1"\nconst A = 1',
        'contract c version "1"\nconst A = 1 ',
        'contract c version "1"\nconst A = 1\n',
        'contract c version "1"\rconst\tA\f=\r1\n#',
        'contract c version "1"\nconst A = 1\n#\nconst B=2 #x\n\nconst C =\n3',
        ' contract c version "1"\nconst A = [1, 2,\n3]\n\tconst B = {"a": 1}\r\n',
        'contract c version "1"\nconst A = 1 \u00a0',
        'contract c version "1"\nconst A = 1 \x1c',
    ]
    for text in texts:
        assert _driver_result(text) == _lark_result(built, text), repr(text)
    assert _driver_result(texts[4]) is not None


def test_backslash_s_starts_with_every_ascii_character_re_calls_white_space() -> None:
    expected = frozenset(c for c in map(chr, range(128)) if re.match(r"\s", c))
    assert driver._first_chars(r"\s+") == expected
    assert "\x1c" in expected and "\x1f" in expected


# ------------------------------------------------------------------------------ tokens, nodes


def _tokens(tree: Any) -> list[Token]:
    if isinstance(tree, Token):
        return [tree]
    if isinstance(tree, Tree):
        return [t for child in tree.children for t in _tokens(child)]
    return []


@pytest.mark.parametrize("name,text", CORPUS[::4], ids=[name for name, _ in CORPUS[::4]])
def test_tokens_and_nodes_are_lark_s_in_every_slot(built: Lark, name: str, text: str) -> None:
    ours = driver.parse_valid(parse_module.parser(), text)
    if ours is None:  # a text with an error (on purpose): lark's loop refuses it too
        assert _lark_result(built, text) is None
        return
    theirs = built.parse(text, start="start")
    mine, lark_s = _tokens(ours), _tokens(theirs)
    assert len(mine) == len(lark_s)
    for a, b in zip(mine, lark_s, strict=True):
        assert type(a) is Token
        assert a.value == str(a) == b.value
        assert [getattr(a, s) for s in Token.__slots__] == [getattr(b, s) for s in Token.__slots__]
    nodes = list(ours.iter_subtrees())
    assert all(type(node) is Tree and list(vars(node)) == ["data", "children", "_meta"]
               for node in nodes)  # fmt: skip


# ------------------------------------------------------------------------------------ depth


def _deep_texts() -> list[str]:
    header = 'contract c version "1"\nstate { n: int = 0 }\n'
    texts = []
    for terms in (MAX_TREE_DEPTH // 4, MAX_TREE_DEPTH - 5, MAX_TREE_DEPTH, MAX_TREE_DEPTH + 40):
        texts.append(header + "const A = " + " + ".join(["1"] * terms) + "\n")
        texts.append(header + "const B = " + "not " * terms + "true\n")
        texts.append(header + "const C = [" + " - ".join(["n"] * terms) + "]\n")
        texts.append(header + "const D = " + "- " * terms + "1\n" + "const E = 1 * 2\n")
    return texts


def test_depth_by_level_finds_what_the_depth_first_walk_finds() -> None:
    seen = set()
    for text in _deep_texts() + [text for _, text in CORPUS]:
        try:
            tree = parse_module.parse(text, "t.contract")
        except ContractError:
            continue  # a syntax error in the corpus (on purpose): no tree to measure
        by_level = nesting_depth_problem(tree, "t.contract")
        assert by_level == _first_node_too_deep(tree, "t.contract"), text[:200]
        seen.add(by_level is None)
    assert seen == {True, False}


def test_a_deep_chain_is_refused_at_the_node_the_walk_names() -> None:
    text = 'contract c version "1"\nconst A = ' + " + ".join(["1"] * (MAX_TREE_DEPTH + 40))
    found = nesting_depth_problem(parse_module.parse(text, "t.contract"), "t.contract")
    assert found is not None and found.code == "E0104"
    assert found.message.startswith(f"the expression nests more than {MAX_TREE_DEPTH} levels")
    # where the depth-first walk before session 7 pointed: the 301st level down (the walk
    # takes the last child first)
    assert (found.span.file, found.span.line, found.span.col) == ("t.contract", 2, 179)


def test_depth_by_level_leaves_a_shallow_bulk_literal_unbuilt() -> None:
    pairs = ", ".join(f'("k{i}", "v{i}")' for i in range(300))
    text = f'contract c version "1"\nstate {{ s: set[tuple[str, str]] = {{{pairs}}} }}\n'
    tree = parse_module.parse(text, "t.contract")
    bulk, stack = [], [tree]
    while stack:  # the nodes, not descending into a bulk literal (that would build it)
        node = stack.pop()
        if isinstance(node, literals.BulkLiteral):
            bulk.append(node)
        elif isinstance(node, Tree):
            stack.extend(node.children)
    assert len(bulk) == 1 and bulk[0]._children is None
    assert nesting_depth_problem(tree, "t.contract") is None
    assert bulk[0]._children is None  # its tree was not built to be measured


# ------------------------------------------------------------------------------ empty texts


def _blank_by_lines(text: str) -> bool:
    """``parse._blank`` as it was: every line blank or a comment."""
    return all(not line.strip() or line.lstrip().startswith("#") for line in text.splitlines())


def test_a_text_is_blank_exactly_when_every_line_is_blank_or_a_comment() -> None:
    rng = random.Random(9)
    pieces = [" ", "\t", "\n", "\r\n", "\x0b", "\x0c", "\x1c", "\x85", "\u2028", "\u00a0",
              "#", "# c", "x", "contract", '"#"', "\u3000"]  # fmt: skip
    texts = ["", "#", "\n#\n", " x", "\x1c#\nx", "\u2028 # a\n  b", "# a\n# b\n", "\u00a0"]
    texts += ["".join(rng.choice(pieces) for _ in range(rng.randrange(1, 8))) for _ in range(3000)]
    for text in texts:
        assert parse_module._blank(text) == _blank_by_lines(text), repr(text)

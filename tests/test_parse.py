"""Syntax errors and unreadable input become diagnostics, never tracebacks."""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from click.testing import CliRunner

import contractsim
from contractsim import api, sources
from contractsim.cli import main
from contractsim.diagnostics import ContractError, Diagnostic
from contractsim.grammar.parse import MAX_NESTING, parse

HEADER = 'contract demo version "1.0.0"\n'


def only_error(text: str, filename: str = "t.contract") -> Diagnostic:
    with pytest.raises(ContractError) as info:
        contractsim.loads(text, filename)
    errors = info.value.errors
    assert len(errors) == 1, [d.code for d in errors]
    d = errors[0]
    assert d.severity == "error"
    assert d.span.file == filename
    assert d.span.line >= 1 and d.span.col >= 1
    return d


def load_error(path: Path) -> Diagnostic:
    with pytest.raises(ContractError) as info:
        contractsim.load(path)
    (d,) = info.value.diagnostics
    assert d.span.file == str(path)
    return d


# ---------------------------------------------------------------------------- empty input


@pytest.mark.parametrize("text", ["", "   ", "\n\n\t\n", "# just a comment\n", "  # a\n\n# b"])
def test_empty_file(text: str) -> None:
    d = only_error(text)
    assert d.code == "E0105"
    assert (d.span.line, d.span.col) == (1, 1)
    assert d.hint and "contract NAME version" in d.hint


def test_empty_file_on_disk(tmp_path: Path) -> None:
    path = tmp_path / "empty.contract"
    path.write_bytes(b"")
    with pytest.raises(ContractError) as info:
        contractsim.load(path)
    assert [d.code for d in info.value.diagnostics] == ["E0105"]


# ---------------------------------------------------------------------------- bytes


def test_binary_file_via_load(tmp_path: Path) -> None:
    path = tmp_path / "blob.contract"
    path.write_bytes(b"\x7fELF\x02\x01\x01\x00\x00\x00" + bytes(range(256)))
    d = load_error(path)
    assert d.code == "E0100"
    assert "binary" in d.message
    assert d.hint and "UTF-8" in d.hint


def test_non_utf8_file_via_load(tmp_path: Path) -> None:
    path = tmp_path / "latin1.contract"
    path.write_bytes(HEADER.encode() + 'const NAME = "Jos\xe9"\n'.encode("latin-1"))
    d = load_error(path)
    assert d.code == "E0100"
    assert "UTF-8" in d.message and "0xe9" in d.message
    assert (d.span.line, d.span.col) == (2, 18)
    assert d.hint == "save the file as UTF-8"


def test_utf8_bom_is_accepted(tmp_path: Path) -> None:
    path = tmp_path / "bom.contract"
    path.write_bytes(b"\xef\xbb\xbf" + HEADER.encode())
    assert contractsim.load(path).name == "demo"


def test_nul_character_in_text() -> None:
    d = only_error(HEADER + "const A = 1\n\0\n")
    assert d.code == "E0100"
    assert (d.span.line, d.span.col) == (3, 1)


@pytest.mark.parametrize(
    "payload",
    [b"\x00\x01\x02\x03binary", b"\xff\xfe\xfa not utf-8", HEADER.encode() + b"\xc3\x28"],
    ids=["binary", "invalid-start", "invalid-continuation"],
)
def test_bad_bytes_via_cli(tmp_path: Path, payload: bytes) -> None:
    path = tmp_path / "bad.contract"
    path.write_bytes(payload)
    result = CliRunner().invoke(main, ["check", str(path)])
    assert result.exit_code == 2
    assert "error[E0100]" in result.output
    assert "Traceback" not in result.output
    assert result.exception is None or isinstance(result.exception, SystemExit)


# ---------------------------------------------------------------------------- paths


def test_directory_as_file(tmp_path: Path) -> None:
    d = load_error(tmp_path)
    assert d.code == "E0100"
    assert "directory" in d.message
    assert d.hint


def test_missing_file(tmp_path: Path) -> None:
    d = load_error(tmp_path / "nope.contract")
    assert d.code == "E0100"
    assert "no such file" in d.message
    assert d.hint


def test_check_reports_unreadable_files_instead_of_raising(tmp_path: Path) -> None:
    diags = contractsim.api.check(tmp_path, tmp_path / "nope.contract")
    assert [d.code for d in diags] == ["E0100", "E0100"]


def test_too_large_source(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """E0106 needs more than 4 MiB; lower the limit instead of writing such a file."""
    monkeypatch.setattr(api, "MAX_SOURCE_BYTES", 100)
    monkeypatch.setattr(sources, "MAX_SOURCE_BYTES", 100)
    path = tmp_path / "big.contract"
    path.write_text(HEADER + "# " + "x" * 200 + "\n")
    d = load_error(path)
    assert d.code == "E0106"
    with pytest.raises(ContractError) as info:
        contractsim.loads(path.read_text(), "big.contract")
    assert [e.code for e in info.value.diagnostics] == ["E0106"]
    result = CliRunner().invoke(main, ["check", str(path)])
    assert result.exit_code == 2 and "E0106" in result.output


# ---------------------------------------------------------------------------- strings


def test_unterminated_string() -> None:
    d = only_error(HEADER + 'const GREETING = "hello\nconst B = 1\n')
    assert d.code == "E0102"
    assert (d.span.line, d.span.col) == (2, 18)
    assert d.hint and '"""' in d.hint


def test_unterminated_string_in_description() -> None:
    d = only_error(HEADER + 'tool ping() "Pings the server.\n{\n}\n')
    assert d.code == "E0102"
    assert (d.span.line, d.span.col) == (2, 13)


def test_unterminated_raw_string_in_a_constraint() -> None:
    d = only_error(HEADER + 'type P = str pattern r"^/abc\n')
    assert d.code == "E0102"
    assert (d.span.line, d.span.col) == (2, 22)


def test_unterminated_long_string() -> None:
    d = only_error(HEADER + 'tool ping() """Pings\nthe server.\n{\n}\n')
    assert d.code in ("E0101", "E0102")
    assert d.hint


def test_unknown_escape_is_a_diagnostic() -> None:
    d = only_error(HEADER + 'const A = "a\\qb"\n')
    assert d.code == "E0107"
    assert (d.span.line, d.span.col) == (2, 11)


# ---------------------------------------------------------------------------- brackets


def test_unclosed_brace() -> None:
    d = only_error(HEADER + "state {\n  count: int = 0\n")
    assert d.code == "E0103"
    assert "never closed" in d.message
    assert (d.span.line, d.span.col) == (2, 7)
    assert d.hint == "add the matching `}`"


def test_unclosed_paren_reports_the_innermost() -> None:
    d = only_error(HEADER + "const A = (1 + [2, (3\n")
    assert d.code == "E0103"
    assert (d.span.line, d.span.col) == (2, 20)
    assert "`(`" in d.message


def test_unmatched_closing_brace() -> None:
    d = only_error(HEADER + "state {\n  count: int = 0\n}\n}\n")
    assert d.code == "E0103"
    assert d.message == "unmatched `}`"
    assert (d.span.line, d.span.col) == (5, 1)


def test_unmatched_closing_paren() -> None:
    d = only_error(HEADER + "const A = (1 + 2))\n")
    assert d.code == "E0103"
    assert (d.span.line, d.span.col) == (2, 18)


def test_brackets_inside_strings_and_comments_do_not_count() -> None:
    text = HEADER + 'const A = "(((" # )))\nstate { n: int = 0 }\ntool t() { effect n += 1 }\n'
    contractsim.loads(text)


def test_ten_thousand_nested_parens_is_fast() -> None:
    text = HEADER + "const A = " + "(" * 10_000 + "1" + ")" * 10_000 + "\n"
    start = time.perf_counter()
    d = only_error(text)
    assert time.perf_counter() - start < 1.0
    assert d.code == "E0104"
    assert (d.span.line, d.span.col) == (2, 11 + MAX_NESTING)
    assert d.hint


def test_deep_nesting_unbalanced_and_mixed_is_fast() -> None:
    for text in ("(" * 10_000, "[{(" * 5_000, HEADER + "const A = " + "[" * 100_000):
        start = time.perf_counter()
        d = only_error(text)
        assert time.perf_counter() - start < 1.0
        assert d.code == "E0104"


def test_nesting_at_the_limit_parses() -> None:
    depth = MAX_NESTING - 1
    text = HEADER + "const A = " + "(" * depth + "1" + ")" * depth + "\nstate { n: int = A }\n"
    text += "tool t() { effect n += 1 }\n"
    contractsim.loads(text)


# ---------------------------------------------------------------------------- other syntax errors


@pytest.mark.parametrize(
    ("text", "line", "col", "message"),
    [
        (HEADER + "@", 2, 1, "unexpected character '@'"),
        (HEADER + "tool t( {}\n", 2, 9, "unexpected `{`"),
        (HEADER + "state { x int = 0 }\n", 2, 11, "unexpected `int`"),
        ('contract demo "1.0.0"\n', 1, 15, "unexpected string"),
        (HEADER + "const A = \n", 3, 1, "unexpected end of file"),
    ],
)
def test_syntax_errors(text: str, line: int, col: int, message: str) -> None:
    d = only_error(text)
    assert d.code == "E0101"
    assert (d.span.line, d.span.col) == (line, col)
    assert d.message == message
    assert d.hint and d.hint.startswith("expected ")


def test_missing_arrow_in_machine_transition() -> None:
    text = HEADER + "machine m {\n  states a, b\n  initial a\n  a b on t\n}\n"
    d = only_error(text)
    assert d.code == "E0101"
    assert "->" in d.message
    assert (d.span.line, d.span.col) == (5, 5)


def test_parse_raises_contract_error_with_sources() -> None:
    with pytest.raises(ContractError) as info:
        parse(HEADER + "tool (", "x.contract")
    assert info.value.sources == {"x.contract": HEADER + "tool ("}
    assert "x.contract:2:6: error[E0101]" in str(info.value)


def test_diagnostic_rendering_has_code_file_line_col_and_hint() -> None:
    with pytest.raises(ContractError) as info:
        contractsim.loads(HEADER + "state {\n  n: int = 0\n", "s.contract")
    text = str(info.value)
    assert text.startswith("s.contract:2:7: error[E0103]:")
    assert "    2 | state {" in text
    assert "= hint: add the matching `}`" in text


# ---------------------------------------------------------------------------- big valid input


@pytest.mark.slow
def test_fifty_thousand_line_file_loads(tmp_path: Path) -> None:
    lines = [HEADER.rstrip("\n"), "state {", "  count: int = 0", "}"]
    lines += ["tool bump() {", '  require count < 10 else FULL "full"', "  effect count += 1", "}"]
    # 49,992 more lines: state variables and event declarations, each on its own line
    n_vars = 2_000
    lines.insert(3, "\n".join(f"  v{i}: int = {i}" for i in range(n_vars)))
    lines += [f'event e{i} "event number {i}"' for i in range(50_000 - 8 - n_vars)]
    text = "\n".join(lines) + "\n"
    assert text.count("\n") == 50_000
    path = tmp_path / "big.contract"
    path.write_text(text, "utf-8")
    contract = contractsim.load(path)
    assert contract.tools == ["bump"]
    assert len(contract.ir.state) == n_vars + 1
    assert len(contract.ir.events) == 50_000 - 8 - n_vars
    # unused state variables and events are warnings, not errors
    assert {w.code for w in contract.warnings} == {"W0602", "W0605"}


# ---------------------------------------------------------------------------- keywords as names


def _grammar_words() -> list[str]:
    """Every word the grammar uses as a keyword, contextual ones included."""
    import re

    from contractsim.grammar.parse import parser

    words = {
        t.pattern.value
        for t in parser().terminals
        if t.pattern.type == "str" and re.fullmatch(r"[A-Za-z_]\w*", t.pattern.value)
    }
    words |= {"pattern", "format", "min_length", "max_length", "min_items", "max_items"}
    words |= {"min", "max", "success", "partial", "fails"}
    return sorted(words)


_EXPRESSION_WORDS = {"true", "false", "null", "and", "or", "not", "in"}


@pytest.mark.parametrize("word", _grammar_words())
def test_a_keyword_is_a_field_name_after_a_newline(word: str) -> None:
    """Issue 11.8: `record { a: str ⏎ tags: str }` parsed only with a comma."""
    text = (
        HEADER + f"type R = record {{\n  a: str\n  {word}: int\n  {word}x?: str\n}}\n"
        f"tool t(r: R) -> record {{ b: int min 0\n  {word}: int }} {{\n"
        f"  reports {{\n    a: int\n    {word}: int\n  }}\n"
        f"  require r.{word} > 0 else E\n"
        f"  outcome o success {{ report {word} = r.{word} }}\n}}\n"
    )
    c = contractsim.loads(text)
    fields = [f.name for f in c.ir.types[0].type.fields]  # type: ignore[union-attr]
    assert fields == ["a", word, word + "x"]


@pytest.mark.parametrize("word", sorted(set(_grammar_words()) - _EXPRESSION_WORDS))
def test_a_keyword_is_a_state_variable_after_a_newline(word: str) -> None:
    """Issue 11.8: `state { a: int = 0 ⏎ cost: int = 0 }`; statement words (`report`, `for`,
    `let` …) as the target of an assignment too."""
    text = (
        HEADER + f'state {{\n  a: int = 0\n  {word}: int = 0\n  b: str = ""\n}}\n'
        f"tool t() {{\n  effect {{\n    a = 1\n    {word} = 2\n    {word} += 1\n  }}\n}}\n"
    )
    c = contractsim.loads(text)
    assert [s.name for s in c.ir.state] == ["a", word, "b"]


@pytest.mark.parametrize("word", sorted(_EXPRESSION_WORDS - {"null"}))
def test_expression_words_are_reserved_for_state_variables(word: str) -> None:
    with pytest.raises(ContractError) as info:
        contractsim.loads(HEADER + f"state {{\n  a: int = 0\n  {word}: int = 0\n}}\n")
    (d,) = info.value.errors
    assert (d.code, d.message) == (
        "E0203",
        f"`{word}` is a reserved name: in an expression it is the literal or operator",
    )


def test_a_constraint_word_still_starts_a_constraint() -> None:
    c = contractsim.loads(
        HEADER + "type R = record {\n  a: str min_length 1\n  minutes: int min 0 max 9\n"
        "  max: int\n  min?: int\n}\n"
    )
    fields = c.ir.types[0].type.fields  # type: ignore[union-attr]
    assert [f.name for f in fields] == ["a", "minutes", "max", "min"]
    assert [len(f.type.constraints) for f in fields] == [1, 2, 0, 0]  # type: ignore[attr-defined]


def test_a_real_syntax_error_after_a_keyword_name_is_still_reported() -> None:
    d = only_error(HEADER + "state {\n  a: int = 0\n  report: int = 0\n  b int = 0\n}\n")
    assert (d.code, d.span.line, d.message) == ("E0101", 5, "unexpected `int`")


@pytest.mark.parametrize(
    "word", sorted(set(_grammar_words()) - _EXPRESSION_WORDS - {"initial", "final", "states"})
)
def test_a_keyword_names_a_flow_step_a_machine_state_an_outcome_and_an_event(word: str) -> None:
    """The same fallback after a `when` condition, where a transition out of a step or a machine
    state named like a keyword follows on the next line (`states`, `initial` and `final` start
    a machine item themselves; a step named `outcome` cannot follow `->`)."""
    target = "b" if word == "outcome" else word
    contractsim.loads(
        HEADER + "state { n: int = 0 }\nevent " + word + "\n"
        "tool t() {\n  flow {\n    initial a\n    step a { n += 1 }\n"
        f"    a -> {target} when n > 0\n    a -> outcome {word}\n"
        f"    step {target} {{ n += 1 }}\n    {target} -> outcome {word}\n  }}\n"
        f"  outcome {word} success\n}}\n"
        f"tool u() {{\n  outcome x fails X on {word} probability 0.1\n  outcome y success\n}}\n"
        f"machine m {{\n  states a, {word}\n  initial a\n  a -> {word} on t when n > 0\n"
        f"  {word} -> a on t\n}}\n"
    )

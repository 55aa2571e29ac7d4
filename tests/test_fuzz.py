"""Fuzzing the front end: any text either loads or raises ContractError, quickly."""

from __future__ import annotations

from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import contractsim
from contractsim.diagnostics import ContractError

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = sorted((ROOT / "examples").glob("*/*.contract"))
SOURCES = [p.read_text("utf-8") for p in EXAMPLES]

FUZZ = settings(
    deadline=2000,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
    derandomize=False,
)

# characters that matter to the lexer and parser, plus some that do not
_ALPHABET = st.sampled_from(
    list("(){}[]\"'#\\.,:;=<>!+-*/%|?r\n \t")
    + ["->", '"""', "\0", "é", "\u2028", "\ufeff"]
    + [
        "contract",
        "version",
        "tool",
        "state",
        "require",
        "effect",
        "outcome",
        "flow",
        "machine",
        "if",
        "else",
        "for",
        "in",
        "not",
        "and",
        "or",
        "null",
        "unknown",
        "old",
        "fresh",
        "x",
        "1",
    ]
)


def _load_or_contract_error(text: str) -> None:
    try:
        contractsim.loads(text, "fuzz.contract")
    except ContractError as exc:
        assert exc.diagnostics, "a ContractError must carry at least one diagnostic"
        for d in exc.diagnostics:
            assert d.code and d.span.line >= 1 and d.span.col >= 1
        str(exc)  # rendering must not fail either


@FUZZ
@given(st.text(max_size=400))
def test_random_text(text: str) -> None:
    _load_or_contract_error(text)


@FUZZ
@given(st.lists(_ALPHABET, max_size=80).map("".join))
def test_random_tokens(text: str) -> None:
    _load_or_contract_error('contract c version "1.0.0"\n' + text)


@st.composite
def _mutated(draw: st.DrawFn) -> str:
    text = draw(st.sampled_from(SOURCES))
    for _ in range(draw(st.integers(1, 4))):
        kind = draw(st.sampled_from(["insert", "delete", "replace", "swap", "dup"]))
        n = len(text)
        pos = draw(st.integers(0, max(n - 1, 0)))
        if kind == "insert":
            text = text[:pos] + draw(_ALPHABET | st.characters()) + text[pos:]
        elif kind == "delete":
            length = draw(st.integers(1, 8))
            text = text[:pos] + text[pos + length :]
        elif kind == "replace":
            text = text[:pos] + draw(_ALPHABET | st.characters()) + text[pos + 1 :]
        elif kind == "swap":
            lines = text.split("\n")
            i = draw(st.integers(0, len(lines) - 1))
            j = draw(st.integers(0, len(lines) - 1))
            lines[i], lines[j] = lines[j], lines[i]
            text = "\n".join(lines)
        else:  # duplicate a token (a run of word characters or one punctuation character)
            end = pos
            while end < n and (text[end].isalnum() or text[end] == "_"):
                end += 1
            token = text[pos : max(end, pos + 1)]
            text = text[:pos] + token + " " + text[pos:]
    return text


@FUZZ
@given(_mutated())
def test_mutated_examples(text: str) -> None:
    _load_or_contract_error(text)


@FUZZ
@given(st.sampled_from(SOURCES), st.data())
def test_truncated_examples(text: str, data: st.DataObject) -> None:
    cut = data.draw(st.integers(0, len(text)))
    _load_or_contract_error(text[:cut])

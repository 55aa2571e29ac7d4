"""Every ```contract block in docs/ is a complete contract that checks without errors: the
language reference cannot drift from the language."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

import contractsim

ROOT = Path(__file__).resolve().parents[1]
BLOCK = re.compile(r"^```contract\n(.*?)^```", re.S | re.M)
BLOCKS = [
    pytest.param(match.group(1), id=f"{path.name}:{text.count(chr(10), 0, match.start()) + 1}")
    for path in sorted((ROOT / "docs").glob("*.md"))
    for text in [path.read_text(encoding="utf-8")]
    for match in BLOCK.finditer(text)
]


def test_the_docs_have_contract_examples() -> None:
    assert len(BLOCKS) >= 10


@pytest.mark.parametrize("source", BLOCKS)
def test_doc_example_checks(source: str) -> None:
    errors = [d for d in contractsim.check_text(source, "doc") if d.severity == "error"]
    assert errors == []

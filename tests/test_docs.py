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


def test_the_observe_example_in_the_embedding_guide_prints_what_it_says(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    text = (ROOT / "docs" / "embedding.md").read_text(encoding="utf-8")
    at = text.index('backup = contractsim.load("examples/backup/backup.contract")')
    code = text[text.rindex("```python\n", 0, at) + len("```python\n") : text.index("```", at)]
    monkeypatch.chdir(ROOT)
    exec(compile(code, "embedding.md", "exec"), {"__name__": "docs_example"})
    printed = capsys.readouterr().out.splitlines()
    said = [line.split("# ")[1].split()[0] for line in code.splitlines() if "print(" in line]
    assert printed == said == ["ok", "error", "failed", "True", "()"]

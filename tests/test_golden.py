"""Golden tests: each tests/golden/NAME.contract holds one mistake; NAME.expected is the rendered
output of the checker. Set CONTRACTSIM_UPDATE_GOLDEN=1 to rewrite the .expected files."""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

from contractsim.api import check_text
from contractsim.diagnostics import render_all

ROOT = Path(__file__).resolve().parent.parent
GOLDEN = ROOT / "tests" / "golden"
CASES = sorted(GOLDEN.glob("*.contract"))
UPDATE = os.environ.get("CONTRACTSIM_UPDATE_GOLDEN") == "1"

# Where the front end emits diagnostics (the brief's list of front-end sources).
FRONT_END_SOURCES = [
    *sorted((ROOT / "contractsim" / "dsl").glob("*.py")),
    *sorted((ROOT / "contractsim" / "grammar").glob("*.py")),
    ROOT / "contractsim" / "compiler" / "validators.py",
    ROOT / "contractsim" / "api.py",
]

# Codes that no golden file can show, each with the reason and the test that covers it instead.
NOT_IN_GOLDEN = {
    # needs a file over MAX_SOURCE_BYTES (4 MiB): test_parse.py::test_too_large_source
    "E0106",
    # `enum {}` is a syntax error, so the checker's "enum needs a member" cannot be reached from
    # text: test_check.py::test_empty_enum_is_a_syntax_error
    "E0405",
}


def _name(path: Path) -> str:
    return path.relative_to(ROOT).as_posix()


def _render(path: Path) -> str:
    text = path.read_text("utf-8")
    name = _name(path)
    return render_all(check_text(text, name), {name: text}) + "\n"


def test_there_are_enough_golden_files() -> None:
    assert len(CASES) >= 30


@pytest.mark.parametrize("path", CASES, ids=[p.stem for p in CASES])
def test_golden(path: Path) -> None:
    got = _render(path)
    expected_path = path.with_suffix(".expected")
    if UPDATE:
        expected_path.write_text(got, "utf-8")
        return
    assert expected_path.exists(), (
        f"{_name(expected_path)} is missing; run with CONTRACTSIM_UPDATE_GOLDEN=1"
    )
    assert got == expected_path.read_text("utf-8")


@pytest.mark.parametrize("path", CASES, ids=[p.stem for p in CASES])
def test_golden_file_reports_something(path: Path) -> None:
    """Every golden file holds a mistake, so it must produce at least one diagnostic."""
    text = path.read_text("utf-8")
    assert check_text(text, _name(path)), f"{path.name} checks clean"


def _codes_in(text: str) -> set[str]:
    return set(re.findall(r"\"([EW]0\d{3})\"", text))


def front_end_codes() -> set[str]:
    codes: set[str] = set()
    for src in FRONT_END_SOURCES:
        codes |= _codes_in(src.read_text("utf-8"))
    return codes


def golden_codes() -> set[str]:
    codes: set[str] = set()
    for path in CASES:
        expected = path.with_suffix(".expected")
        if expected.exists():
            codes |= set(
                re.findall(
                    r"^\S+:\d+:\d+: \w+\[([EW]\d{4})\]", expected.read_text("utf-8"), re.MULTILINE
                )
            )
    return codes


def test_front_end_codes_are_found() -> None:
    codes = front_end_codes()
    # a sanity check on the scan itself: the classic codes must be among those found
    assert {"E0101", "E0201", "E0301", "E0401", "E0501", "W0601"} <= codes


def test_every_front_end_code_has_a_golden_file() -> None:
    missing = front_end_codes() - golden_codes() - NOT_IN_GOLDEN
    assert not missing, f"diagnostic codes without a golden test: {sorted(missing)}"


def test_exemptions_are_still_needed() -> None:
    assert NOT_IN_GOLDEN <= front_end_codes(), "an exempt code is no longer emitted"
    assert not (NOT_IN_GOLDEN & golden_codes()), "an exempt code now has a golden file"


def test_warnings_are_covered() -> None:
    warnings = {c for c in front_end_codes() if c.startswith("W")}
    assert warnings and warnings <= golden_codes()

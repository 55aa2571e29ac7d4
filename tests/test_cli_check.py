"""`contractsim check`: exit codes, text and JSON output, capped output."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import cli_exit, write

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = sorted((ROOT / "examples").glob("*/*.contract"))
HEADER = 'contract demo version "1.0.0"\n'
WARNS = (
    HEADER
    + "state { count: int = 0  spare: int = 0 }\n"
    + "tool t() { require count < 3  effect count += 1 }\n"
)
ERRORS = (
    HEADER
    + 'state { count: int = 0 }\ntool t() { require cout < 3 else F "f"  effect count += x }\n'
)


def run(*args: str) -> tuple[int, str]:
    return cli_exit("check", *args)


def test_examples_are_clean() -> None:
    code, out = run(*map(str, EXAMPLES))
    assert code == 0
    assert f"{len(EXAMPLES)} file(s) checked: 0 error(s), 0 warning(s)" in out


@pytest.mark.parametrize("path", EXAMPLES, ids=[p.parent.name for p in EXAMPLES])
def test_each_example_is_clean_in_strict_mode(path: Path) -> None:
    assert run("--strict", str(path))[0] == 0


def test_errors_exit_1(tmp_path: Path) -> None:
    path = write(tmp_path, "bad.contract", ERRORS)
    code, out = run(path)
    assert code == 1
    assert f"{path}:3:20: error[E0201]: unknown name `cout`" in out
    assert "= hint: did you mean `count`?" in out
    assert "2 error(s), 0 warning(s)" in out


def test_syntax_error_exits_1(tmp_path: Path) -> None:
    code, out = run(write(tmp_path, "syntax.contract", HEADER + "state {\n"))
    assert code == 1 and "error[E0103]" in out


def test_warnings_exit_0_without_strict(tmp_path: Path) -> None:
    code, out = run(write(tmp_path, "warn.contract", WARNS))
    assert code == 0
    assert "warning[W0602]" in out and "warning[W0603]" in out
    assert "0 error(s), 2 warning(s)" in out


def test_warnings_exit_1_with_strict(tmp_path: Path) -> None:
    code, _ = run("--strict", write(tmp_path, "warn.contract", WARNS))
    assert code == 1


def test_missing_file_exits_2(tmp_path: Path) -> None:
    code, out = run(str(tmp_path / "nope.contract"))
    assert code == 2 and "error[E0100]" in out and "no such file" in out


def test_directory_exits_2(tmp_path: Path) -> None:
    code, out = run(str(tmp_path))
    assert code == 2 and "error[E0100]" in out and "directory" in out


def test_binary_file_exits_2(tmp_path: Path) -> None:
    path = tmp_path / "blob.contract"
    path.write_bytes(b"\x00\x01\x02\xff" * 100)
    code, out = run(str(path))
    assert code == 2 and "error[E0100]" in out and "binary" in out


def test_unreadable_wins_over_errors(tmp_path: Path) -> None:
    bad = write(tmp_path, "bad.contract", ERRORS)
    code, out = run(bad, str(tmp_path / "nope.contract"))
    assert code == 2
    assert "error[E0201]" in out  # the readable file is still checked


def test_no_files_is_a_usage_error() -> None:
    assert run()[0] == 2


def test_json_format(tmp_path: Path) -> None:
    path = write(tmp_path, "bad.contract", ERRORS)
    code, out = run("--format", "json", path)
    assert code == 1
    data = json.loads(out)
    diags = data["diagnostics"]
    assert len(diags) == 2
    keys = {"code", "severity", "message", "file", "line", "col", "end_line", "end_col", "hint"}
    for d in diags:
        assert set(d) == keys
    first = diags[0]
    assert first == {
        "code": "E0201",
        "severity": "error",
        "message": "unknown name `cout` in tool `t`",
        "file": path,
        "line": 3,
        "col": 20,
        "end_line": 3,
        "end_col": 24,
        "hint": "did you mean `count`?",
    }


def test_json_format_clean_and_unreadable(tmp_path: Path) -> None:
    code, out = run("--format", "json", str(EXAMPLES[0]))
    assert code == 0 and json.loads(out) == {"diagnostics": []}
    code, out = run("--format", "json", str(tmp_path / "nope.contract"))
    assert code == 2
    (d,) = json.loads(out)["diagnostics"]
    assert d["code"] == "E0100" and d["severity"] == "error" and d["hint"]


def test_json_warnings_with_strict(tmp_path: Path) -> None:
    code, out = run("--format", "json", "--strict", write(tmp_path, "w.contract", WARNS))
    assert code == 1
    assert {d["severity"] for d in json.loads(out)["diagnostics"]} == {"warning"}


def test_max_errors_caps_the_output(tmp_path: Path) -> None:
    body = "".join(f"const C{i} = undefined_{i}\n" for i in range(12))
    path = write(tmp_path, "many.contract", HEADER + body)
    code, out = run("--max-errors", "5", path)
    assert code == 1
    assert out.count("error[E0201]") == 5
    assert "… and 7 more" in out
    assert "12 error(s)" in out  # the summary still counts them all
    code, out = run(path)
    assert out.count("error[E0201]") == 12 and "more" not in out


def test_max_errors_must_be_positive(tmp_path: Path) -> None:
    assert run("--max-errors", "0", str(EXAMPLES[0]))[0] == 2

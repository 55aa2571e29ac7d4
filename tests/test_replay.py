"""`contractsim replay`: conformance of recorded runs with a contract.

The fidelity test replays 300 recorded runs (3,600 steps) of BFCL's GorillaFileSystem against
examples/gorilla_fs/gorilla_fs.contract through the real CLI."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result

from contractsim.cli import main

ROOT = Path(__file__).resolve().parent.parent
CONTRACT = "examples/gorilla_fs/gorilla_fs.contract"
ADAPTER = "examples/gorilla_fs/adapter.py:from_bfcl"
TRACES = "tests/data/bfcl/GorillaFileSystem.jsonl"


def replay(*args: str) -> Result:
    """Run `contractsim replay` from the repository root (relative paths as in the docs)."""
    cwd = os.getcwd()
    os.chdir(ROOT)
    try:
        return CliRunner().invoke(main, ["replay", *args])
    finally:
        os.chdir(cwd)


def write_jsonl(path: Path, runs: list[Any]) -> str:
    path.write_text("".join(json.dumps(r) + "\n" for r in runs), encoding="utf-8")
    return str(path)


def step(tool: str, outcome: str = "ok", error: str | None = None, **args: Any) -> dict[str, Any]:
    return {"tool": tool, "args": args, "outcome": outcome, "error": error, "result": None}


# ------------------------------------------------------------------------------------ fidelity


@pytest.fixture(scope="module")
def bfcl_report() -> dict[str, Any]:
    res = replay(CONTRACT, TRACES, "--adapter", ADAPTER, "--format", "json")
    assert res.exit_code == 0, res.output
    report: dict[str, Any] = json.loads(res.output)
    return report


def test_bfcl_fidelity_is_at_least_99_percent(bfcl_report: dict[str, Any]) -> None:
    assert bfcl_report["steps"] == 3600
    assert bfcl_report["precision"] >= 0.99
    assert bfcl_report["recall"] >= 0.99


def test_bfcl_replay_exact_numbers(bfcl_report: dict[str, Any]) -> None:
    assert bfcl_report["runs"] == 300
    assert bfcl_report["confusion"] == {
        "predicted_failure": {"real_failure": 952, "real_ok": 0},
        "predicted_ok": {"real_failure": 0, "real_ok": 2648},
    }
    assert bfcl_report["by_verdict"] == {
        "ok": {"ok": 2648, "error": 0, "crash": 0},
        "fails": {"ok": 0, "error": 871, "crash": 81},
        "may_fail": {"ok": 0, "error": 0, "crash": 0},
    }
    assert (bfcl_report["precision"], bfcl_report["recall"]) == (1.0, 1.0)
    assert bfcl_report["disagreements"] == []
    assert bfcl_report["disagreement_count"] == 0
    tools = bfcl_report["tools"]
    assert len(tools) == 18
    assert sum(t["steps"] for t in tools.values()) == 3600
    zero = {"false_alarms": 0, "misses": 0, "contract_errors": 0}
    assert tools["cd"] == {"steps": 524, "agree": 524, **zero}
    assert tools["du"] == {"steps": 36, "agree": 36, **zero}


def test_bfcl_text_report() -> None:
    res = replay(CONTRACT, TRACES, "--adapter", ADAPTER)
    assert res.exit_code == 0
    lines = res.output.splitlines()
    assert lines[:2] == [
        f"replay of {TRACES} against {CONTRACT}",
        "300 run(s), 3600 step(s): 3600 agree, 0 disagree",
    ]
    assert "precision 1.0000   recall 1.0000" in res.output
    assert "du                   36     36             0       0" in lines


def test_a_wrong_contract_is_caught(tmp_path: Path) -> None:
    """The loop is only worth something if it notices mistakes: drop echo's rule that the file
    must exist, and exactly the echo steps into missing files disagree."""
    text = (ROOT / CONTRACT).read_text(encoding="utf-8")
    rule = "  require target == null or exists(target)\n"
    assert rule in text
    broken = tmp_path / "broken.contract"
    broken.write_text(text.replace(rule, "  require true\n"), encoding="utf-8")
    adapter = str(ROOT / "examples/gorilla_fs/adapter.py") + ":from_bfcl"
    res = replay(str(broken), TRACES, "--adapter", adapter, "--format", "json", "--show", "0")
    assert res.exit_code == 1
    report = json.loads(res.output)
    assert report["confusion"]["predicted_ok"]["real_failure"] == 16
    assert report["confusion"]["predicted_failure"]["real_ok"] == 0
    assert report["recall"] == 936 / 952
    assert {d["tool"] for d in report["disagreements"]} == {"echo"}
    first = report["disagreements"][0]
    assert first["error"] == "echo: cannot write to 'ghost_todo': No such file"
    assert first["predicted"] == "ok" and first["outcome"] == "error"
    assert first["violations"] == []
    assert set(first["state"]) == {"root", "cwd", "dirs", "files", "loops"}


# ------------------------------------------------------------------------- contractsim's format


def test_own_format_needs_no_adapter_and_reports_disagreements(tmp_path: Path) -> None:
    runs = [
        {
            "name": "ok run",
            "steps": [
                step("touch", file_name="a.txt"),
                step("echo", content="hi", file_name="a.txt"),
                step("cat", file_name="a.txt"),
            ],
        },
        {
            "name": "surprise",
            "state": {"cwd": "/workspace/document"},
            "steps": [
                step("cat", file_name="ghost.txt"),  # the contract says it fails; it did not
                step("sort", file_name="report.txt", outcome="crash", error="OSError: disk"),
            ],
        },
    ]
    traces = write_jsonl(tmp_path / "t.jsonl", runs)
    res = replay(CONTRACT, traces, "--format", "json")
    assert res.exit_code == 1, res.output
    report = json.loads(res.output)
    assert (report["runs"], report["steps"]) == (2, 5)
    assert report["confusion"] == {
        "predicted_failure": {"real_failure": 0, "real_ok": 1},
        "predicted_ok": {"real_failure": 1, "real_ok": 3},
    }
    assert (report["precision"], report["recall"]) == (0.0, 0.0)
    first, second = report["disagreements"]
    assert (first["run"], first["run_index"], first["line"], first["step"]) == ("surprise", 2, 2, 1)
    assert first["tool"] == "cat" and first["args"] == {"file_name": "ghost.txt"}
    assert first["predicted"] == "fails" and first["outcome"] == "ok"
    assert [v["code"] for v in first["violations"]] == ["NO_SUCH_FILE"]
    assert first["violations"][0]["message"] == "cat: 'ghost.txt': No such file or directory"
    assert first["state"]["cwd"] == "/workspace/document"
    assert (second["step"], second["predicted"], second["outcome"]) == (2, "ok", "crash")
    assert second["error"] == "OSError: disk"
    assert report["tools"]["cat"] == {
        "steps": 2,
        "agree": 1,
        "false_alarms": 1,
        "misses": 0,
        "contract_errors": 0,
    }


def test_state_follows_the_real_outcome(tmp_path: Path) -> None:
    """A touch that really failed creates nothing: a later echo into that name is predicted to
    fail, and the recorded failure agrees."""
    runs = [
        {
            "steps": [
                step("touch", outcome="error", error="touch: disk full", file_name="x.txt"),
                step("echo", outcome="error", error="no such file", content="a", file_name="x.txt"),
                step("touch", file_name="x.txt"),
                step("echo", content="a", file_name="x.txt"),
            ]
        }
    ]
    res = replay(CONTRACT, write_jsonl(tmp_path / "t.jsonl", runs), "--format", "json")
    report = json.loads(res.output)
    assert report["by_verdict"]["ok"] == {"ok": 2, "error": 1, "crash": 0}
    assert report["by_verdict"]["fails"] == {"ok": 0, "error": 1, "crash": 0}
    assert [d["step"] for d in report["disagreements"]] == [1]


def test_yaml_document_with_a_list_of_runs(tmp_path: Path) -> None:
    doc = tmp_path / "runs.yaml"
    doc.write_text(
        "- name: first\n"
        "  steps:\n"
        "    - {tool: cd, args: {folder: document}, outcome: ok}\n"
        "    - {tool: cd, args: {folder: document}, outcome: error, error: no such dir}\n"
        "- name: second\n"
        "  now: 2024-06-01T12:00:00Z\n"
        "  steps:\n"
        "    - {tool: pwd, outcome: ok}\n",
        encoding="utf-8",
    )
    res = replay(CONTRACT, str(doc))
    assert res.exit_code == 0, res.output
    assert res.output.splitlines()[1] == "2 run(s), 3 step(s): 3 agree, 0 disagree"


def test_disagreement_text_and_show_limit(tmp_path: Path) -> None:
    runs = [{"name": f"r{i}", "steps": [step("cat", file_name="nope")]} for i in range(3)]
    traces = write_jsonl(tmp_path / "t.jsonl", runs)
    res = replay(CONTRACT, traces, "--show", "1")
    assert res.exit_code == 1
    out = res.output
    assert "first 1 of 3 disagreement(s):" in out
    assert '  r0 (line 1), step 1: cat {"file_name": "nope"}' in out
    assert "    predicted fails, really ok" in out
    assert "    our rule: NO_SUCH_FILE: cat: 'nope': No such file or directory [" in out
    assert "r1 (line 2)" not in out
    report = json.loads(replay(CONTRACT, traces, "--format", "json", "--show", "2").output)
    assert report["disagreement_count"] == 3
    assert [d["run"] for d in report["disagreements"]] == ["r0", "r1"]


def test_replay_is_deterministic(tmp_path: Path) -> None:
    runs = [{"steps": [step("cp", source="notes.txt", destination="archive"), step("du")]}]
    traces = write_jsonl(tmp_path / "t.jsonl", runs)
    first = replay(CONTRACT, traces, "--format", "json")
    second = replay(CONTRACT, traces, "--format", "json")
    assert first.exit_code == second.exit_code == 0
    assert first.output == second.output


# ------------------------------------------------------------------------------------ adapter


def test_bfcl_adapter_converts_the_initial_tree() -> None:
    import importlib.util

    spec = importlib.util.spec_from_file_location(
        "gfs_adapter", ROOT / "examples/gorilla_fs/adapter.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    record = {
        "config_id": "c1",
        "index": 7,
        "initial_config": {
            "root": {
                "alex": {
                    "type": "directory",
                    "contents": {
                        "docs": {
                            "type": "directory",
                            "contents": {"a.txt": {"type": "file", "content": "A"}},
                        },
                        "b.txt": {"type": "file", "content": "B"},
                    },
                },
                "ignored": {"type": "directory", "contents": {}},
            }
        },
        "steps": [
            {
                "tool": "ls",
                "args": {},
                "outcome": "ok",
                "error": None,
                "result": "x",
                "truncated": True,
            }
        ],
    }
    assert module.from_bfcl(record) == {
        "name": "c1#7",
        "state": {
            "root": "/alex",
            "cwd": "/alex",
            "dirs": ["/alex", "/alex/docs"],
            "files": {"/alex/docs/a.txt": "A", "/alex/b.txt": "B"},
        },
        "steps": [{"tool": "ls", "args": {}, "outcome": "ok", "error": None, "result": None}],
    }


def test_adapter_as_module_function(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "my_traces.py").write_text(
        "def convert(record):\n    return {'steps': record['calls']}\n", encoding="utf-8"
    )
    traces = write_jsonl(tmp_path / "t.jsonl", [{"calls": [step("pwd")]}])
    monkeypatch.chdir(tmp_path)
    res = CliRunner().invoke(
        main, ["replay", str(ROOT / CONTRACT), traces, "--adapter", "my_traces:convert"]
    )
    assert res.exit_code == 0, res.output
    assert "1 run(s), 1 step(s): 1 agree, 0 disagree" in res.output


# ---------------------------------------------------------------------------------- bad input


def diagnostics(res: Result) -> list[tuple[str, str, int, str]]:
    assert res.exit_code == 2, res.output
    data = json.loads(res.output)["diagnostics"]
    return [(d["code"], d["file"], d["line"], d["message"]) for d in data]


def test_missing_trace_file() -> None:
    res = replay(CONTRACT, "tests/data/bfcl/nope.jsonl", "--format", "json")
    assert diagnostics(res) == [
        ("E0901", "tests/data/bfcl/nope.jsonl", 1, "no such trace file: tests/data/bfcl/nope.jsonl")
    ]


def test_a_line_that_is_not_json(tmp_path: Path) -> None:
    traces = tmp_path / "t.jsonl"
    traces.write_text(json.dumps({"steps": []}) + "\n{oops\n", encoding="utf-8")
    res = replay(CONTRACT, str(traces), "--format", "json")
    assert diagnostics(res) == [
        (
            "E0902",
            str(traces),
            2,
            "line 2 is not valid JSON: Expecting property name enclosed in double quotes",
        )
    ]
    text = replay(CONTRACT, str(traces)).output
    assert f"{traces}:2:2: error[E0902]" in text
    assert "hint: a JSON Lines trace holds one complete JSON object per line" in text


def test_shape_problems_name_the_line(tmp_path: Path) -> None:
    runs: list[Any] = [
        {"steps": [step("pwd")]},
        {"steps": [{"args": {}, "outcome": "ok"}]},
        {"steps": [{"tool": "pwd", "outcome": "okay"}]},
        {"steps": [{"tool": "pwd"}]},
        [1, 2],
    ]
    traces = write_jsonl(tmp_path / "t.jsonl", runs)
    got = diagnostics(replay(CONTRACT, traces, "--format", "json"))
    assert [(code, line) for code, _, line, _ in got] == [
        ("E0904", 2),
        ("E0905", 3),
        ("E0905", 4),
        ("E0903", 5),
    ]
    assert got[0][3] == "run 2, step 1 has no `tool`"
    assert got[1][3] == "run 3, step 1 has the unknown outcome `okay`"
    assert got[2][3] == "run 4, step 1 has no `outcome`"
    assert got[3][3] == "run 5 must be an object with `steps`, got a list"


def test_state_and_now_problems(tmp_path: Path) -> None:
    runs = [
        {"steps": [step("pwd")], "state": {"cwd": 3}},
        {"steps": [step("pwd")], "state": {"cwdd": "/x"}},
        {"steps": [step("pwd")], "now": "soon"},
    ]
    got = diagnostics(replay(CONTRACT, write_jsonl(tmp_path / "t.jsonl", runs), "--format", "json"))
    assert [(code, line) for code, _, line, _ in got] == [("E0906", 1), ("E0906", 2), ("E0907", 3)]
    assert got[0][3] == "run 1: the contract rejects the state: `cwd`: must be a string (got 3)"
    assert got[1][3] == "run 2: the contract rejects the state: unknown state variable `cwdd`"


def test_foreign_records_without_an_adapter_stop_after_five_runs() -> None:
    res = replay(CONTRACT, TRACES, "--format", "json")
    data = json.loads(res.output)["diagnostics"]
    assert res.exit_code == 2
    assert [(d["code"], d["severity"], d["line"]) for d in data] == [
        ("E0903", "error", 1),
        ("E0903", "error", 2),
        ("E0903", "error", 3),
        ("E0903", "error", 4),
        ("E0903", "error", 5),
        ("E0903", "note", 6),
    ]
    assert data[0]["message"] == (
        "run 1 has unknown field(s) `env`, `config_id`, `initial_config`, `seed`, `index`"
    )
    assert data[0]["hint"].endswith("records of another format need --adapter FILE:FUNC")


def test_empty_trace_file(tmp_path: Path) -> None:
    (tmp_path / "t.jsonl").write_text("\n", encoding="utf-8")
    got = diagnostics(replay(CONTRACT, str(tmp_path / "t.jsonl"), "--format", "json"))
    assert got == [("E0908", str(tmp_path / "t.jsonl"), 1, f"{tmp_path / 't.jsonl'} holds no runs")]


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        (
            "examples/gorilla_fs/missing.py:f",
            "no such adapter file: examples/gorilla_fs/missing.py",
        ),
        (
            "examples/gorilla_fs/adapter.py",
            "`examples/gorilla_fs/adapter.py` does not name a function",
        ),
        (
            "examples/gorilla_fs/adapter.py:from_bfc",
            "the adapter module examples/gorilla_fs/adapter.py has no function `from_bfc`",
        ),
        ("no_such_module_xyz:f", "no module named `no_such_module_xyz`"),
    ],
)
def test_adapter_that_cannot_be_loaded(spec: str, message: str) -> None:
    got = diagnostics(replay(CONTRACT, TRACES, "--adapter", spec, "--format", "json"))
    assert [(code, msg) for code, _, _, msg in got] == [("E0910", message)]


def test_adapter_that_does_not_import(tmp_path: Path) -> None:
    bad = tmp_path / "bad.py"
    bad.write_text("x = 1\nraise RuntimeError('boom')\n", encoding="utf-8")
    got = diagnostics(replay(CONTRACT, TRACES, "--adapter", f"{bad}:f", "--format", "json"))
    assert got == [("E0910", str(bad), 2, f"loading the adapter {bad} raised RuntimeError: boom")]


def test_adapter_that_raises_or_returns_the_wrong_shape(tmp_path: Path) -> None:
    module = tmp_path / "conv.py"
    module.write_text(
        "def convert(record):\n"
        "    if record['kind'] == 'list':\n"
        "        return [record]\n"
        "    return {'steps': record['steps']}\n",
        encoding="utf-8",
    )
    traces = write_jsonl(
        tmp_path / "t.jsonl",
        [
            {"kind": "run", "steps": []},
            {"kind": "list"},
            {"kind": "run"},
            {"kind": "run", "steps": 3},
        ],
    )
    got = diagnostics(
        replay(CONTRACT, traces, "--adapter", f"{module}:convert", "--format", "json")
    )
    assert [(code, line) for code, _, line, _ in got] == [
        ("E0912", 2),
        ("E0911", 3),
        ("E0903", 4),
    ]
    assert got[0][3] == "the adapter returned a list for run 2, not a run object"
    assert got[1][3] == f"the adapter raised KeyError: 'steps' on run 3 (at {module}:4)"
    assert got[2][3] == (
        "run 4 (as the adapter returned it) has no `steps` list (`steps` is a number)"
    )


def test_bad_now_option() -> None:
    res = replay(CONTRACT, TRACES, "--adapter", ADAPTER, "--now", "tomorrow", "--format", "json")
    assert [d[0] for d in diagnostics(res)] == ["E0705"]


# --------------------------------------------------------------- found in review (regressions)
SENDER = """
contract sender version "1.0.0"
type Reply = record { error?: str, id?: str }
event rate_limit "the provider's limit"
state {
  sent: int = 0
  ids: set[str] = {}
}
tool send(body: str) -> Reply {
  outcome limited fails RATE_LIMITED "limited" on rate_limit probability 0.01
  outcome refused fails REFUSED "refused" observed when result.error != null
  outcome done success {
    sent += 1
  }
}
tool create() -> record { id: str } {
  effect ids.add(result.id)
}
"""


def sender(tmp_path: Path) -> str:
    path = tmp_path / "sender.contract"
    path.write_text(SENDER, encoding="utf-8")
    return str(path)


def test_an_environment_event_is_a_risk_not_a_predicted_failure(tmp_path: Path) -> None:
    runs = [
        {
            "steps": [
                step("send", body="a"),
                step("send", body="b"),
                step("send", "error", "x", body="c"),
            ]
        }
    ]
    res = replay(sender(tmp_path), write_jsonl(tmp_path / "t.jsonl", runs), "--format", "json")
    report = json.loads(res.output)
    assert report["by_verdict"]["ok"] == {"ok": 2, "error": 1, "crash": 0}
    assert report["risks"] == {"steps": 3, "failed": 1}
    assert report["precision"] is None and report["recall"] == 0.0
    assert res.exit_code == 1  # the failure that the event explains is still a miss


def test_a_recognised_failure_names_the_matched_outcome(tmp_path: Path) -> None:
    refused = step("send", "error", "no", body="a")
    refused["result"] = {"error": "no"}
    runs = [{"steps": [refused]}]
    res = replay(sender(tmp_path), write_jsonl(tmp_path / "t.jsonl", runs), "--format", "json")
    (d,) = json.loads(res.output)["disagreements"]
    assert d["matched_outcome"] == "refused"
    text = replay(sender(tmp_path), str(tmp_path / "t.jsonl")).output
    assert "    matched outcome: refused" in text


def test_results_that_do_not_fit_the_return_type_are_listed(tmp_path: Path) -> None:
    bad = step("create")
    bad["result"] = {"id": 5}
    runs = [{"steps": [bad]}]
    res = replay(sender(tmp_path), write_jsonl(tmp_path / "t.jsonl", runs), "--format", "json")
    report = json.loads(res.output)
    assert res.exit_code == 0
    (m,) = report["result_mismatches"]
    assert (m["step"], m["tool"]) == (1, "create")
    assert m["problem"].startswith("the result does not match")
    text = replay(sender(tmp_path), str(tmp_path / "t.jsonl")).output
    assert "1 successful step(s) returned a value that does not fit the tool's return type" in text


def test_adapters_that_exit_or_print(tmp_path: Path) -> None:
    adapter = tmp_path / "ad.py"
    adapter.write_text(
        "import sys\n"
        "print('loading')\n"
        "def exits(record):\n    sys.exit(5)\n"
        "def prints(record):\n"
        "    print('hello from adapter')\n"
        "    return {'steps': [{'tool': 'send', 'args': {'body': 'x'}, 'outcome': 'ok'}]}\n",
        encoding="utf-8",
    )
    traces = write_jsonl(tmp_path / "t.jsonl", [{"anything": 1}])
    res = replay(sender(tmp_path), traces, "--adapter", f"{adapter}:exits", "--format", "json")
    assert res.exit_code == 2
    assert "E0911" in res.output
    res = CliRunner().invoke(
        main,
        ["replay", sender(tmp_path), traces, "--adapter", f"{adapter}:prints", "--format", "json"],
    )
    assert res.exit_code == 0
    assert json.loads(res.stdout)["steps"] == 1


def test_the_sample_report_in_the_docs_is_what_replay_prints() -> None:
    doc = (ROOT / "docs" / "replay.md").read_text(encoding="utf-8")
    command = (
        "$ contractsim replay examples/gorilla_fs/gorilla_fs.contract "
        "examples/gorilla_fs/traces/sample.jsonl\n"
    )
    start = doc.index(command) + len(command)
    shown = doc[start : doc.index("```", start)]
    res = replay(CONTRACT, "examples/gorilla_fs/traces/sample.jsonl")
    assert res.exit_code == 1
    assert res.output == shown


def test_yaml_dates_and_other_non_json_values_are_read_as_text(tmp_path: Path) -> None:
    trace = tmp_path / "t.yaml"
    trace.write_text(
        "- steps:\n    - {tool: send, args: {body: 2024-01-01}, outcome: ok}\n", encoding="utf-8"
    )
    res = replay(sender(tmp_path), str(trace), "--format", "json")
    assert res.exit_code == 0, res.output
    assert json.loads(res.output)["steps"] == 1


# ------------------------------------------------------------------------- issue 11: reports

REPORTS = """\
contract reports version "1.0.0"
state {
  running: bool = true
  busy: bool = true
  stops: int = 0
  booked: int = 0
}
tool divide_the_total_by_a_very_long_count(n: int) {
  require 10 / n > 1 else SMALL "too small"
}
tool shutdown() {
  outcome refused fails ENGINE_BUSY "busy" when busy {
    running = false
    stops += 1
  }
  outcome done success { running = false }
}
tool start() {
  require not running else ALREADY_RUNNING "the engine runs"
  effect running = true
}
tool book(day: str) {
  require day >= today() else PAST "{day} is past"
  effect booked += 1
}
"""
LONG = "divide_the_total_by_a_very_long_count"


def reports_contract(tmp_path: Path, source: str = REPORTS) -> str:
    path = tmp_path / "reports.contract"
    path.write_text(source, encoding="utf-8")
    return str(path)


def test_a_crash_keeps_the_effects_of_the_chosen_fails_outcome(tmp_path: Path) -> None:
    """Item 5: `shutdown` raised where the contract chose `refused` (by `when busy`): its
    effects on failure stop the engine, so the next `start` is no false alarm."""
    runs = [{"steps": [step("shutdown", "crash", "RuntimeError: busy"), step("start")]}]
    res = replay(
        reports_contract(tmp_path), write_jsonl(tmp_path / "t.jsonl", runs), "--format", "json"
    )
    report = json.loads(res.output)
    assert res.exit_code == 0, res.output
    assert report["disagreement_count"] == 0
    assert report["by_verdict"]["fails"]["crash"] == 1


def test_contract_errors_are_counted_apart(tmp_path: Path) -> None:
    """Item 6: a predicted failure that comes from EVAL_ERROR is no prediction: not in the
    confusion matrix, precision or recall (it inflated recall before)."""
    runs = [
        {
            "steps": [
                step(LONG, "error", "ZeroDivisionError: division by zero", n=0),
                step(LONG, "ok", n=0),
                step(LONG, "error", "value 20 too small", n=20),
                step(LONG, "ok", n=2),
            ]
        }
    ]
    traces = write_jsonl(tmp_path / "t.jsonl", runs)
    res = replay(reports_contract(tmp_path), traces, "--format", "json")
    report = json.loads(res.output)
    assert res.exit_code == 1  # the contract cannot evaluate itself: not a clean replay
    assert (report["steps"], report["agreements"], report["disagreement_count"]) == (4, 2, 0)
    assert report["contract_errors"] == 2
    assert report["confusion"] == {
        "predicted_failure": {"real_failure": 1, "real_ok": 0},
        "predicted_ok": {"real_failure": 0, "real_ok": 1},
    }
    assert (report["precision"], report["recall"]) == (1.0, 1.0)
    assert report["tools"][LONG] == {
        "steps": 4,
        "agree": 2,
        "false_alarms": 0,
        "misses": 0,
        "contract_errors": 2,
    }
    first, second = report["contract_error_steps"]
    assert (first["step"], first["outcome"], second["step"], second["outcome"]) == (
        1,
        "error",
        2,
        "ok",
    )
    assert first["violations"][0]["code"] == "EVAL_ERROR"
    text = replay(reports_contract(tmp_path), traces).output
    assert "4 step(s): 2 agree, 0 disagree, 2 contract error(s)" in text
    assert (
        "2 step(s) where the contract could not evaluate itself (EVAL_ERROR) are left out of "
        f"these counts; first: run 1 step 1 ({LONG})"
    ) in text
    assert "first 2 of 2 contract error(s):" in text


def test_the_tool_column_fits_the_longest_name(tmp_path: Path) -> None:
    """Item 10."""
    runs = [{"steps": [step(LONG, n=2), step("start", "error", "runs")]}]
    text = replay(reports_contract(tmp_path), write_jsonl(tmp_path / "t.jsonl", runs)).output
    table = text[text.index("tool ") :].split("\n\n")[0].splitlines()
    assert table == [
        f"{'tool':<{len(LONG) + 2}}  steps  agree  false alarms  misses",
        f"{LONG}        1      1             0       0",
        f"{'start':<{len(LONG) + 2}}      1      1             0       0",
    ]


def test_by_rule_table_and_notes_on_agreeing_steps(tmp_path: Path) -> None:
    """Item 11: the steps predicted to fail by rule × real error (masked), and the notes of
    agreeing steps (here: crashes that no `observed when` recognises)."""
    runs = [
        {
            "steps": [
                step(LONG, "error", "value 20 too small at /a/b", n=20),
                step(LONG, "error", "value 30 too small at /c", n=30),
                step(LONG, "crash", "TypeError: 'int' is odd", n=40),
                step(LONG, "ok", n=50),
                step("start", "error", "runs"),
            ]
        }
    ]
    traces = write_jsonl(tmp_path / "t.jsonl", runs)
    report = json.loads(replay(reports_contract(tmp_path), traces, "--format", "json").output)
    assert report["by_rule"] == [
        {
            "code": "ALREADY_RUNNING",
            "outcome": "error",
            "message": "runs",
            "steps": 1,
            "example": "run 1 step 5: runs",
        },
        {
            "code": "SMALL",
            "outcome": "error",
            "message": "value <n> too small at <path>",
            "steps": 2,
            "example": "run 1 step 1: value 20 too small at /a/b",
        },
        {"code": "SMALL", "outcome": "ok", "message": "", "steps": 1, "example": "run 1 step 4"},
        {
            "code": "SMALL",
            "outcome": "crash",
            "message": "TypeError: '…' is odd",
            "steps": 1,
            "example": "run 1 step 3: TypeError: 'int' is odd",
        },
    ]
    assert report["agreement_notes"] == {
        "steps": 1,
        "notes": [
            {"note": "the call raised and no `observed when` recognises the exception", "steps": 1}
        ],
    }
    text = replay(reports_contract(tmp_path), traces).output
    assert "steps predicted to fail, by" not in text
    assert (
        "1 agreeing step(s) carry notes from observe; most often (1): the call raised and no "
        "`observed when` recognises the exception (all: --by-rule)"
    ) in text
    text = replay(reports_contract(tmp_path), traces, "--by-rule").output
    table = text[text.index("steps predicted to fail, by") :].split("\n\nfirst ")[0]
    assert table.splitlines() == [
        "steps predicted to fail, by the contract's rule and the tool's real error (masked):",
        "",
        "  ALREADY_RUNNING (1 step(s))",
        "        1  error: runs",
        "",
        "  SMALL (4 step(s))",
        "        2  error: value <n> too small at <path>",
        "        1  succeeded",
        "        1  crash: TypeError: '…' is odd",
        "",
        "notes from observe on 1 agreeing step(s):",
        "        1  the call raised and no `observed when` recognises the exception",
    ]


@pytest.mark.parametrize(
    ("message", "masked"),
    [
        (
            "rm: cannot remove 'a.txt': No such file or directory",
            "rm: cannot remove '…': No such file or directory",
        ),
        (
            "sort: ghost_report: No such file or directory",
            "sort: <name>: No such file or directory",
        ),
        ("diff: a.txt or b: No such file", "diff: <name>: No such file"),
        ("cd: x/sub: Unsupported path.", "cd: <path>: Unsupported path."),
        ("order 12446 costs -10.5 on 2024-05-01T10:00:00Z", "order <n> costs <n> on <date>"),
        (
            "TypeError: f() missing 1 required positional argument: 'x'",
            "TypeError: f() missing <n> required positional argument: '…'",
        ),
        ("e2e v1.2 ok", "e2e v1.2 ok"),
    ],
)
def test_mask(message: str, masked: str) -> None:
    from contractsim.replay.loop import mask

    assert mask(message) == masked


def test_the_report_says_which_time_today_read(tmp_path: Path) -> None:
    """Item 13: runs without `now` use 2000-01-01; when the contract reads today()/now() the
    report says so, and where each run's time came from."""
    runs = [
        {"steps": [step("book", day="2024-05-01")]},
        {"now": "2024-06-01T00:00:00Z", "steps": [step("book", "error", "past", day="2024-05-01")]},
    ]
    traces = write_jsonl(tmp_path / "t.jsonl", runs)
    text = replay(reports_contract(tmp_path), traces).output
    assert (
        "the contract reads today()/now(): 1 run(s) at their own `now` (2024-06-01T00:00:00Z); "
        "1 run(s) at the default 2000-01-01T00:00:00Z (no `now` in the run, no --now: give the "
        "time of the recording)"
    ) in text
    text = replay(reports_contract(tmp_path), traces, "--now", "2024-04-01T00:00:00Z").output
    assert (
        "the contract reads today()/now(): 1 run(s) at their own `now` (2024-06-01T00:00:00Z); "
        "1 run(s) at --now 2024-04-01T00:00:00Z"
    ) in text
    report = json.loads(replay(reports_contract(tmp_path), traces, "--format", "json").output)
    assert report["clock"] == {
        "reads_clock": True,
        "runs_with_own_now": 1,
        "runs_at_option": 0,
        "runs_at_default": 1,
        "option": None,
        "default": "2000-01-01T00:00:00Z",
    }


def test_no_time_line_when_the_contract_does_not_read_the_clock(tmp_path: Path) -> None:
    source = REPORTS[: REPORTS.index("tool book")]
    runs = [{"steps": [step("start", "error", "runs")]}]
    traces = write_jsonl(tmp_path / "t.jsonl", runs)
    text = replay(reports_contract(tmp_path, source), traces).output
    assert "today()" not in text
    report = json.loads(
        replay(reports_contract(tmp_path, source), traces, "--format", "json").output
    )
    assert report["clock"]["reads_clock"] is False

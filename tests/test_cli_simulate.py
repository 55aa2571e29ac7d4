"""`contractsim simulate`: exit codes, plan formats, bad input, options."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner, Result
from conftest import write

from contractsim.cli import main

NOW = "2024-06-01T12:00:00Z"
CONTRACT = """contract mini version "1.0.0"
state {
  dirs: set[str] = {"/"}
  quota: int = 2
  network: bool = false
}
event disk_full "the disk is full"
goal has_tmp = "/tmp" in dirs
tool make_dir(path: str pattern r"^/") {
  require path not in dirs else EXISTS "{path} exists"
  effect dirs.add(path)
}
tool ping() {
  require network else OFFLINE "network down"
}
tool put(n: int) {
  require quota > 0 else QUOTA "no quota"
  effect quota -= 1
  outcome done success
  outcome full fails DISK_FULL "full" on disk_full probability 0.5
}
"""


@pytest.fixture
def d(tmp_path: Path) -> Path:
    (tmp_path / "c.contract").write_text(CONTRACT, encoding="utf-8")
    return tmp_path


def run(d: Path, plan: str, *extra: str) -> Result:
    return CliRunner().invoke(main, ["simulate", str(d / "c.contract"), plan, "--now", NOW, *extra])


# ---------------------------------------------------------------------------------- exit codes


def test_exit_0_ok(d: Path) -> None:
    res = run(d, write(d, "p.yaml", "- tool: make_dir\n  args: {path: /tmp}\n"))
    assert res.exit_code == 0, res.output
    assert "verdict: ok" in res.output
    assert any(
        line.strip().startswith("dirs:") and '"/tmp"' in line for line in res.output.splitlines()
    )


def test_exit_1_fails(d: Path) -> None:
    res = run(d, write(d, "p.yaml", "- tool: make_dir\n  args: {path: /}\n"))
    assert res.exit_code == 1, res.output
    assert "EXISTS: / exists" in res.output
    assert "verdict: fails" in res.output


def test_exit_3_may_fail(d: Path) -> None:
    state = write(d, "s.yaml", "network: $unknown\n")
    res = run(d, write(d, "p.yaml", "- tool: ping\n"), "--state", state)
    assert res.exit_code == 3, res.output
    assert "verdict: may_fail" in res.output
    assert "network = unknown" in res.output


def test_unknown_in_plan_state(d: Path) -> None:
    plan = write(d, "p.yaml", "state:\n  network: $unknown\nsteps:\n  - tool: ping\n")
    assert run(d, plan).exit_code == 3
    plan = write(d, "p2.yaml", "state:\n  network: true\nsteps:\n  - tool: ping\n")
    assert run(d, plan).exit_code == 0
    # --state overrides the plan's state
    state = write(d, "s.yaml", "network: false\n")
    assert run(d, plan, "--state", state).exit_code == 1


def test_probabilistic_failure(d: Path) -> None:
    res = run(
        d, write(d, "p.json", json.dumps([{"tool": "put", "args": {"n": 1}}])), "--format", "json"
    )
    assert res.exit_code == 1
    report = json.loads(res.output)
    assert report["verdict"] == "fails"
    assert report["failure_probability"] == 0.5
    assert "probability 50%" in run(d, str(d / "p.json")).output


# --------------------------------------------------------------------------------- bad input


def assert_input_error(res: Result, *needles: str) -> None:
    assert res.exit_code == 2, res.output
    for n in needles:
        assert n in res.output, res.output


def test_missing_plan(d: Path) -> None:
    assert_input_error(run(d, str(d / "missing.yaml")), "no such plan file")


def test_missing_contract(d: Path) -> None:
    plan = write(d, "p.yaml", "- tool: ping\n")
    res = CliRunner().invoke(main, ["simulate", str(d / "nope.contract"), plan])
    assert_input_error(res, "no such file")


def test_malformed_yaml_names_the_line(d: Path) -> None:
    plan = write(d, "bad.yaml", "steps:\n  - tool: make_dir\n    args: {path: /tmp\n  - tool: x\n")
    assert_input_error(run(d, plan), "bad.yaml:4:", "not valid YAML")


def test_malformed_json_names_the_line(d: Path) -> None:
    plan = write(d, "bad.json", '[\n{"tool": "make_dir",\n "args": {"path": "/tmp"},,}\n]')
    assert_input_error(run(d, plan), "bad.json:3:", "not valid JSON")


def test_malformed_plan_in_json_format(d: Path) -> None:
    plan = write(d, "bad.json", '[\n{"tool": "make_dir",\n "args": {"path": "/tmp"},,}\n]')
    res = run(d, plan, "--format", "json")
    assert res.exit_code == 2
    (diag,) = json.loads(res.output)["diagnostics"]
    assert diag["code"] == "E0701" and diag["line"] == 3


@pytest.mark.parametrize(
    "text, needle",
    [
        ('"hello"\n', "a plan is a list of calls"),
        ('{"a": 1}', "no `steps`"),
        ("- 3\n", "step 1 must be an object"),
        ("- args: {}\n", "step 1 has no tool name"),
        ("- tool: ping\n  args: [1]\n", "`args` must be an object"),
        ("- tool: ping\n  argz: {}\n", "unknown field `argz`"),
    ],
)
def test_plan_shape_errors(d: Path, text: str, needle: str) -> None:
    assert_input_error(run(d, write(d, "p.yaml", text)), needle)


def test_unknown_state_variable_did_you_mean(d: Path) -> None:
    state = write(d, "s.yaml", "quota: 1\nnetwrk: true\n")
    res = run(d, write(d, "p.yaml", "- tool: ping\n"), "--state", state)
    assert_input_error(
        res, "unknown state variable `netwrk`", "did you mean `network`?", "s.yaml:2:"
    )


def test_wrong_type_in_state(d: Path) -> None:
    state = write(d, "s.yaml", 'quota: "x"\n')
    res = run(d, write(d, "p.yaml", "- tool: ping\n"), "--state", state)
    assert_input_error(res, "`quota`: must be an integer", "s.yaml:1:")
    state = write(d, "s2.yaml", "dirs: [1, 2]\n")
    assert_input_error(run(d, str(d / "p.yaml"), "--state", state), "dirs")


def test_state_file_not_an_object(d: Path) -> None:
    state = write(d, "s.yaml", "- 1\n")
    assert_input_error(
        run(d, write(d, "p.yaml", "- tool: ping\n"), "--state", state), "a state file is an object"
    )


def test_unknown_goal(d: Path) -> None:
    res = run(d, write(d, "p.yaml", "- tool: ping\n"), "--goal", "has_tm")
    assert_input_error(res, "no goal `has_tm`", "did you mean `has_tmp`?")


# ------------------------------------------------------------------------------ OpenAI plans


def tool_calls(*calls: tuple[str, str]) -> str:
    return json.dumps(
        {
            "tool_calls": [
                {"id": f"call_{i}", "type": "function", "function": {"name": n, "arguments": a}}
                for i, (n, a) in enumerate(calls)
            ]
        }
    )


def test_openai_tool_calls(d: Path) -> None:
    plan = write(
        d, "oa.json", tool_calls(("make_dir", json.dumps({"path": "/tmp"})), ("put", '{"n": 1}'))
    )
    res = run(d, plan, "--format", "json")
    assert res.exit_code == 1, res.output
    report = json.loads(res.output)
    assert [s["tool"] for s in report["steps"]] == ["make_dir", "put"]
    assert report["steps"][0]["args"] == {"path": "/tmp"}
    assert report["steps"][0]["verdict"] == "ok"
    plan = write(d, "oa2.json", tool_calls(("make_dir", '{"path": "/tmp"}')))
    assert run(d, plan).exit_code == 0
    # a bare list of tool calls works too
    bare = json.dumps(json.loads(tool_calls(("make_dir", '{"path": "/x"}')))["tool_calls"])
    assert run(d, write(d, "oa3.json", bare)).exit_code == 0


def test_openai_invalid_arguments_json(d: Path) -> None:
    plan = write(d, "oa.json", tool_calls(("make_dir", '{"path": ')))
    assert_input_error(run(d, plan), "`function.arguments` is not valid JSON")


def test_openai_arguments_must_be_an_object(d: Path) -> None:
    plan = write(d, "oa.json", tool_calls(("make_dir", "[1, 2]")))
    assert_input_error(run(d, plan), "`args` must be an object")


# ----------------------------------------------------------------------------------- options


def test_format_json(d: Path) -> None:
    res = run(d, write(d, "p.yaml", "- tool: make_dir\n  args: {path: /tmp}\n"), "--format", "json")
    assert res.exit_code == 0
    report = json.loads(res.output)
    assert report["contract"] == "mini" and report["verdict"] == "ok"
    assert report["steps"][0]["changes"] == [
        {"var": "dirs", "before": ["/"], "after": ["/", "/tmp"]}
    ]
    assert report["branches"][0]["final_state"]["dirs"] == ["/", "/tmp"]


def test_stop_at_first(d: Path) -> None:
    plan = write(d, "p.yaml", "- tool: ping\n- tool: make_dir\n  args: {path: /a}\n")
    res = run(d, plan, "--format", "json", "--stop-at-first")
    assert res.exit_code == 1
    steps = json.loads(res.output)["steps"]
    assert steps[1].get("skipped") is True and "skipped" not in steps[0]
    text = run(d, plan, "--stop-at-first").output
    assert "(not simulated)" in text
    steps = json.loads(run(d, plan, "--format", "json").output)["steps"]
    assert "skipped" not in steps[1] and steps[1]["verdict"] == "ok"


def test_max_branches_note(d: Path) -> None:
    plan = write(d, "p.yaml", "- tool: put\n  args: {n: 1}\n- tool: put\n  args: {n: 1}\n")
    res = run(d, plan, "--format", "json", "--max-branches", "1")
    report = json.loads(res.output)
    assert any("--max-branches 1" in n for n in report["notes"])
    assert len(report["branches"]) == 1
    assert "note: --max-branches 1" in run(d, plan, "--max-branches", "1").output
    assert run(d, plan, "--max-branches", "0").exit_code == 2


def test_max_depth_note(d: Path) -> None:
    plan = write(d, "p.yaml", "- tool: make_dir\n  args: {path: /a}\n- tool: ping\n")
    res = run(d, plan, "--format", "json", "--max-depth", "1")
    # the steps the bound left out are not known to succeed
    assert res.exit_code == 3
    report = json.loads(res.output)
    assert report["verdict"] == "may_fail"
    assert any("--max-depth 1" in n for n in report["notes"])
    assert [s.get("skipped", False) for s in report["steps"]] == [False, True]


def test_goal(d: Path) -> None:
    plan = write(d, "p.yaml", "- tool: make_dir\n  args: {path: /tmp}\n")
    res = run(d, plan, "--goal", "has_tmp", "--format", "json")
    assert res.exit_code == 0
    assert json.loads(res.output)["goal"] == {
        "name": "has_tmp",
        "reached": True,
        "branches_reaching": 1,
        "branches_missing": 0,
        "branches_unknown": 0,
        "unmet": [],
    }
    assert "goal has_tmp: reached" in run(d, plan, "--goal", "has_tmp").output
    # a plan that succeeds but misses the goal exits 1, and says what is false
    other = write(d, "p2.yaml", "- tool: make_dir\n  args: {path: /var}\n")
    res = run(d, other, "--goal", "has_tmp")
    assert res.exit_code == 1
    assert res.output.endswith(
        "goal has_tmp: NOT reached (0 branch(es) reach it)\n"
        "  - on make_dir:ok:\n"
        '      ✗ `"/tmp" in dirs` is false\n'
        '          dirs = {"/", "/var"}\n'
    )
    unmet = json.loads(run(d, other, "--goal", "has_tmp", "--format", "json").output)["goal"]
    assert unmet["unmet"] == [
        {
            "branch": 0,
            "choices": ["make_dir:ok"],
            "parts": [
                {"text": '"/tmp" in dirs', "status": "false", "values": {"dirs": '{"/", "/var"}'}}
            ],
        }
    ]
    # the plan can name the goal itself
    named = write(
        d, "p3.yaml", "goal: has_tmp\nsteps:\n  - tool: make_dir\n    args: {path: /var}\n"
    )
    assert run(d, named).exit_code == 1


def test_colour_only_when_asked(d: Path) -> None:
    plan = write(d, "p.yaml", "- tool: make_dir\n  args: {path: /}\n")
    plain = run(d, plan)
    assert "\x1b[" not in plain.output
    assert "\x1b[" not in run(d, plan, "--no-color").output
    coloured = CliRunner().invoke(
        main, ["simulate", str(d / "c.contract"), plan, "--now", NOW, "--color"], color=True
    )
    assert coloured.exit_code == 1
    assert "\x1b[" in coloured.output
    assert "\x1b[" not in run(d, plan, "--format", "json", "--color").output


def test_now_makes_reports_reproducible(d: Path) -> None:
    plan = write(d, "p.yaml", "- tool: put\n  args: {n: 1}\n- tool: ping\n")
    a = run(d, plan, "--format", "json").output
    b = run(d, plan, "--format", "json").output
    assert a == b


def test_bad_now_is_a_diagnostic(d: Path) -> None:
    plan = write(d, "p.yaml", "- tool: make_dir\n  args: {path: /a}\n")
    res = CliRunner().invoke(main, ["simulate", str(d / "c.contract"), plan, "--now", "yesterday"])
    assert res.exit_code == 2
    assert "<command line: --now>:1:1: error[E0705]: `now` is not an RFC 3339 time" in res.output
    assert "hint: write e.g. 2024-05-20T14:30:00Z" in res.output
    assert "Traceback" not in res.output


# ------------------------------------------------------------------------- text report details

ORDERS = """contract shop version "1.0.0"
type Order = record { amount: float  status: str  note: str }
state {
  orders: map[int, Order] = {12446: Order(amount=10.0, status="open",
                                          note="a note long enough to be cut by the report")}
  online: bool = unknown
}
tool pay(id: int) {
  require id in orders else NO_ORDER
  effect orders[id].status = "paid"
}
tool sync() { require online else OFFLINE }
"""


def test_a_change_inside_a_record_in_a_map_shows_what_differs(tmp_path: Path) -> None:
    """issue 11 item 12: both sides were cut at the same prefix, hiding the change."""
    (tmp_path / "c.contract").write_text(ORDERS, encoding="utf-8")
    res = run(tmp_path, write(tmp_path, "p.json", '[{"tool": "pay", "args": {"id": 12446}}]'))
    assert res.exit_code == 0, res.output
    assert '       orders: 12446.status: "open" → "paid"\n' in res.output


def test_a_rule_broken_only_after_a_failure_says_where_not_why(tmp_path: Path) -> None:
    (tmp_path / "c.contract").write_text(ORDERS, encoding="utf-8")
    plan = '[{"tool": "sync"}, {"tool": "sync"}]'
    res = run(tmp_path, write(tmp_path, "p.json", plan))
    assert res.exit_code == 3, res.output
    assert "✗ OFFLINE: `online` is false (only on branches that failed at step 1)" in res.output
    assert "only after" not in res.output


# ------------------------------------------------------- found in review: determinism


def test_set_order_never_depends_on_the_hash_seed(tmp_path: Path) -> None:
    contract = tmp_path / "c.contract"
    contract.write_text(
        'contract c version "1.0.0"\n'
        'state { s: set[str] = {"pear", "apple", "fig", "kiwi", "plum"}  out: str = "" '
        " first: list[str] = [] }\n"
        'tool t() { effect { out = join(s, ","); first = take(s, 2) } }\n'
    )
    plan = tmp_path / "p.yaml"
    plan.write_text("- tool: t\n")
    outputs = set()
    for seed in ("1", "2", "3"):
        env = {**os.environ, "PYTHONHASHSEED": seed}
        res = subprocess.run(
            [
                sys.executable,
                "-m",
                "contractsim.cli",
                "simulate",
                str(contract),
                str(plan),
                "--format",
                "json",
                "--now",
                NOW,
            ],
            capture_output=True,
            text=True,
            env=env,
            check=False,
        )
        assert res.returncode == 0, res.stderr
        outputs.add(res.stdout)
    assert len(outputs) == 1
    final = json.loads(outputs.pop())["branches"][0]["final_state"]
    assert final["out"] == "apple,fig,kiwi,pear,plum"
    assert final["first"] == ["apple", "fig"]

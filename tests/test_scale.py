"""Replay and simulate at scale (issue 21): streamed input, local worker processes, Dask.

The reports must be byte-identical to one process (``replay`` itself) whatever the number of
workers, the order of completion or a resume; a worker that dies has its runs retried once and
then reported as failed runs, none lost and none counted twice.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from scale_runs import ADAPTER, CONTRACT, RECORDED, write_generated_runs

import contractsim
from contractsim.cli import main
from contractsim.replay import load_adapter, read_runs, render_json, render_text, replay_runs
from contractsim.scale import replay_at_scale
from contractsim.scale.progress import Progress

ROOT = Path(__file__).resolve().parent.parent
SAMPLE = ROOT / "examples" / "gorilla_fs" / "traces" / "sample.jsonl"
EDGE = ROOT / "tests" / "data" / "bfcl" / "GorillaFileSystem.edge.jsonl"
FS_CONTRACT = ROOT / "examples" / "file_system" / "file_system.contract"
FS_PLANS = ROOT / "examples" / "file_system" / "plans"
NOW = "2024-01-01T00:00:00Z"

KILLER = """
import os, signal
from pathlib import Path

def always(record):
    if record.get("name") == "KILL":
        os.kill(os.getpid(), signal.SIGKILL)
    return record

def once(record):
    marker = Path(__file__).with_name("killed-once")
    if record.get("name") == "KILL" and not marker.exists():
        marker.write_text("x")
        os.kill(os.getpid(), signal.SIGKILL)
    return record
"""


def run_cli(*args: str) -> Any:
    return CliRunner().invoke(main, [str(a) for a in args], catch_exceptions=False)


def both_reports(contract: contractsim.Contract, result: Any, traces: str) -> tuple[str, str]:
    """The text report and the JSON report (every disagreement) as text."""
    data = render_json(result, str(CONTRACT), traces, None)
    return render_text(result, str(CONTRACT), traces, None, True), json.dumps(data, indent=2)


def in_one_loop(path: Path, adapter: str | None = ADAPTER) -> tuple[str, str]:
    c = contractsim.load(CONTRACT)
    runs = read_runs(path, c.compiled, load_adapter(adapter) if adapter else None)
    return both_reports(c, replay_runs(c, runs), str(path))


def at_scale(path: Path, adapter: str | None = ADAPTER, **options: Any) -> tuple[str, str]:
    c = contractsim.load(CONTRACT)
    done = replay_at_scale(contractsim.loads, c, [str(path)], adapter=adapter, **options)
    assert done.failed == []
    return both_reports(c, done.result, str(path))


def simple_runs(path: Path, names: list[str]) -> Path:
    """One-step runs of `pwd` in contractsim's own format, one per name."""
    step = {"tool": "pwd", "args": {}, "outcome": "ok", "result": None}
    path.write_text("".join(json.dumps({"name": n, "steps": [step]}) + "\n" for n in names))
    return path


# ------------------------------------------------------------------------------ replay, fast


@pytest.mark.parametrize("fmt", ["text", "json"])
def test_workers_1_gives_the_replay_report_byte_for_byte(fmt: str) -> None:
    plain = run_cli("replay", CONTRACT, SAMPLE, "--format", fmt)
    scaled = run_cli("replay", CONTRACT, SAMPLE, "--format", fmt, "--workers", "1")
    assert plain.exit_code == scaled.exit_code == 1  # the sample has one disagreement
    assert scaled.output == plain.output
    assert "1 disagree" in plain.output or '"disagreement_count": 1' in plain.output


@pytest.mark.slow
def test_merged_shares_equal_one_loop_on_the_edge_traces() -> None:
    """The edge traces have disagreements and result mismatches: every list and count of the
    report survives the per-run shares and their merge."""
    assert at_scale(EDGE, chunk_size=7) == in_one_loop(EDGE)


def test_several_trace_files_are_one_report(tmp_path: Path) -> None:
    second = shutil.copy(SAMPLE, tmp_path / "again.jsonl")
    out = run_cli("replay", CONTRACT, SAMPLE, second, "--format", "json")
    data = json.loads(out.output)
    assert out.exit_code == 1
    assert (data["runs"], data["steps"], data["disagreement_count"]) == (4, 8, 2)
    assert data["traces"] == f"{SAMPLE}, {second}"
    assert [d["run_index"] for d in data["disagreements"]] == [2, 2]  # per file, in order


@pytest.mark.slow
@pytest.mark.parametrize("fmt", ["text", "json"])
def test_show_keeps_the_first_disagreements_and_counts_them_all(fmt: str, tmp_path: Path) -> None:
    """The merged result keeps only --show disagreements in memory; the counts stay whole."""
    edge = str(EDGE)
    plain = run_cli("replay", CONTRACT, edge, "--adapter", ADAPTER, "--show", "1", "--format", fmt)
    c = contractsim.load(CONTRACT)
    done = replay_at_scale(contractsim.loads, c, [edge], adapter=ADAPTER, keep=1)
    assert len(done.result.disagreements) == 2 and list.__len__(done.result.disagreements) == 1
    if fmt == "json":
        report = render_json(done.result, str(CONTRACT), edge, 1)
        assert json.dumps(report, indent=2, ensure_ascii=False) + "\n" == plain.output
    else:
        assert render_text(done.result, str(CONTRACT), edge, 1) == plain.output


def test_bad_runs_are_the_same_diagnostics_as_replay(tmp_path: Path) -> None:
    lines = [
        json.dumps({"steps": [{"tool": "pwd", "outcome": oc}]}) for oc in "ok oops ok nah".split()
    ]
    bad = tmp_path / "bad.jsonl"
    bad.write_text("\n".join(lines) + "\n")
    plain = run_cli("replay", CONTRACT, bad)
    scaled = run_cli("replay", CONTRACT, bad, "--workers", "1", "--chunk-size", "1")
    assert plain.exit_code == scaled.exit_code == 2
    assert scaled.output == plain.output
    assert "E0905" in plain.output and "bad.jsonl:2" in plain.output


def test_more_than_five_bad_runs_stop_with_a_note_like_replay(tmp_path: Path) -> None:
    bad = tmp_path / "bad.jsonl"
    bad.write_text("".join(json.dumps({"steps": "x"}) + "\n" for _ in range(8)))
    plain = run_cli("replay", CONTRACT, bad)
    scaled = run_cli("replay", CONTRACT, bad, "--workers", "1")
    assert scaled.exit_code == 2
    assert scaled.output == plain.output
    assert "stopped reading after 5 runs with problems" in scaled.output


def test_output_has_one_line_per_run_and_resume_skips_them(tmp_path: Path) -> None:
    traces = simple_runs(tmp_path / "t.jsonl", [f"r{i}" for i in range(10)])
    out = tmp_path / "out.jsonl"
    first = run_cli("replay", CONTRACT, traces, "--output", out, "--chunk-size", "3")
    lines = out.read_text().splitlines()
    assert len(lines) == 11  # the header, then one line per run
    assert json.loads(lines[0])["contractsim"] == "replay"
    assert sorted(json.loads(x)["key"][1] for x in lines[1:]) == list(range(1, 11))
    # killed after 4 runs, in the middle of writing the 5th line
    out.write_text("\n".join(lines[:5]) + "\n" + lines[5][:20])
    again = CliRunner().invoke(
        main, ["replay", str(CONTRACT), str(traces), "--output", str(out), "--resume"]
    )
    assert again.exit_code == first.exit_code == 0
    assert again.stdout == first.output
    assert "resumed: 4 run(s) already in" in again.stderr
    redone = out.read_text().splitlines()
    assert len(redone) == 11 and redone[:5] == lines[:5]
    assert sorted(json.loads(x)["key"][1] for x in redone[1:]) == list(range(1, 11))


def test_resume_refuses_a_file_of_another_contract(tmp_path: Path) -> None:
    traces = simple_runs(tmp_path / "t.jsonl", ["a"])
    out = tmp_path / "out.jsonl"
    run_cli("replay", CONTRACT, traces, "--output", out)
    header = json.loads(out.read_text().splitlines()[0])
    header["contract_sha256"] = "0" * 64
    out.write_text(json.dumps(header) + "\n")
    result = CliRunner().invoke(
        main, ["replay", str(CONTRACT), str(traces), "--output", str(out), "--resume"]
    )
    assert result.exit_code == 2
    assert (
        f"error: cannot resume from {out}: it was written for another contract_sha256"
        in result.stderr
    )


def test_resume_needs_output(tmp_path: Path) -> None:
    result = run_cli("replay", CONTRACT, SAMPLE, "--resume")
    assert result.exit_code == 2
    assert "--resume needs --output FILE.jsonl" in result.output


def test_a_run_that_raises_is_a_failed_run_not_a_traceback(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import contractsim.scale.replay as scale_replay

    real = scale_replay.replay_runs

    def broken(contract: Any, runs: list[Any], *args: Any) -> Any:
        if runs[0].name == "b":
            raise RuntimeError("boom")
        return real(contract, runs, *args)

    monkeypatch.setattr(scale_replay, "replay_runs", broken)
    traces = simple_runs(tmp_path / "t.jsonl", ["a", "b", "c"])
    c = contractsim.load(CONTRACT)
    done = replay_at_scale(contractsim.loads, c, [str(traces)])
    assert done.result.runs == 2
    assert done.failed == [scale_replay.FailedRun(str(traces), 2, 2, "RuntimeError: boom")]
    assert scale_replay.failed_text(done.failed) == (
        f"\n1 run(s) could not be replayed and are not counted above:\n"
        f"  {traces} run 2 (line 2): RuntimeError: boom\n"
    )


def test_the_progress_line_counts_rate_and_time_left() -> None:
    bar = Progress(total=1000, enabled=False)
    bar.done = 250
    assert bar.line(bar.started + 5.0) == "[######------------------] 250/1000 runs  50/s  ETA 0:15"
    unknown = Progress(total=None, enabled=False, what="plans")
    unknown.done = 7
    assert unknown.line(unknown.started + 2.0) == "7 plans  4/s"


# ------------------------------------------------------------------------------ simulate, fast


def test_a_directory_of_plans_is_one_line_per_plan_and_a_summary() -> None:
    out = run_cli("simulate", FS_CONTRACT, FS_PLANS, "--now", NOW)
    lines = out.output.splitlines()
    assert out.exit_code == 1  # some plans fail
    assert lines[-1] == "12 plan(s): 5 ok, 5 fail, 2 may fail"
    assert lines[3] == (
        f"fails     {FS_PLANS}/fails_read_after_delete.yaml at step 2 (read_file: NOT_FOUND)"
    )
    assert lines[0].startswith("fails     ") and len(lines) == 13


def test_batch_json_holds_each_plans_full_report() -> None:
    plan = FS_PLANS / "fails_read_after_delete.yaml"
    single = run_cli("simulate", FS_CONTRACT, plan, "--now", NOW, "--format", "json")
    batch = run_cli("simulate", FS_CONTRACT, plan, plan, "--now", NOW, "--format", "json")
    data = json.loads(batch.output)
    assert batch.exit_code == single.exit_code == 1
    assert [p["report"] for p in data["plans"]] == [json.loads(single.output)] * 2
    assert data["summary"] == {
        "plans": 2, "ok": 0, "fails": 2, "may_fail": 0, "goal_missed": 0, "bad_input": 0,
        "failed": 0,
    }  # fmt: skip


def test_a_bad_plan_among_good_ones_is_reported_and_exits_2(tmp_path: Path) -> None:
    shutil.copy(FS_PLANS / "ok_write_then_append.yaml", tmp_path / "a.yaml")
    (tmp_path / "b.yaml").write_text("- tool: [write_file\n")
    out = run_cli("simulate", FS_CONTRACT, tmp_path, "--now", NOW)
    assert out.exit_code == 2
    assert out.output.splitlines()[0] == f"ok        {tmp_path}/a.yaml"
    assert f"bad input {tmp_path}/b.yaml" in out.output
    assert out.output.endswith("2 plan(s): 1 ok, 0 fail, 0 may fail, 1 bad input\n")


def test_a_directory_without_plans_is_bad_input(tmp_path: Path) -> None:
    (tmp_path / "notes.txt").write_text("not a plan")
    out = CliRunner().invoke(main, ["simulate", str(FS_CONTRACT), str(tmp_path)])
    assert out.exit_code == 2
    assert out.stderr == f"error: {tmp_path} holds no plan files (*.yaml, *.yml, *.json)\n"


def test_repair_is_for_one_plan() -> None:
    out = run_cli("simulate", FS_CONTRACT, FS_PLANS, "--repair")
    assert out.exit_code == 2
    assert "--repair simulates one plan" in out.output


def test_simulate_output_and_resume(tmp_path: Path) -> None:
    out = tmp_path / "plans.jsonl"
    first = run_cli("simulate", FS_CONTRACT, FS_PLANS, "--now", NOW, "--output", out)
    lines = out.read_text().splitlines()
    assert len(lines) == 13
    out.write_text("\n".join(lines[:7]) + "\n")
    again = CliRunner().invoke(
        main,
        [
            "simulate",
            str(FS_CONTRACT),
            str(FS_PLANS),
            "--now",
            NOW,
            "--output",
            str(out),
            "--resume",
        ],
    )
    assert (again.exit_code, again.stdout) == (first.exit_code, first.output)
    assert "resumed: 6 plan(s)" in again.stderr
    assert len(out.read_text().splitlines()) == 13


# --------------------------------------------------------------------------- slow: processes, Dask


def _local_dask() -> Any:
    from distributed import Client, LocalCluster

    cluster = LocalCluster(
        n_workers=2, threads_per_worker=1, processes=False, dashboard_address=None
    )
    return Client(cluster), cluster


@pytest.mark.slow
def test_recorded_bfcl_runs_identical_with_1_and_2_workers_and_dask() -> None:
    expected = in_one_loop(RECORDED)
    assert at_scale(RECORDED, workers=1) == expected
    assert at_scale(RECORDED, workers=2, chunk_size=16) == expected
    client, cluster = _local_dask()
    try:
        assert at_scale(RECORDED, dask=client, chunk_size=16) == expected
    finally:
        client.close()
        cluster.close()


@pytest.mark.slow
def test_ten_thousand_generated_runs_identical_with_1_and_2_workers_and_dask(
    tmp_path: Path,
) -> None:
    traces = write_generated_runs(tmp_path / "generated.jsonl", 10_000)
    one = at_scale(traces, workers=1)
    assert '"disagreement_count": 0' not in one[1]  # there are disagreements to merge in order
    assert at_scale(traces, workers=2, chunk_size=97) == one
    client, cluster = _local_dask()
    try:
        assert at_scale(traces, dask=client, chunk_size=250) == one
    finally:
        client.close()
        cluster.close()


@pytest.mark.slow
def test_dask_local_from_the_command_line() -> None:
    plain = run_cli("replay", CONTRACT, SAMPLE, "--format", "json")
    scaled = run_cli(
        "replay", CONTRACT, SAMPLE, "--format", "json", "--dask", "local", "--workers", "1"
    )
    assert scaled.exit_code == plain.exit_code == 1
    assert scaled.output == plain.output


@pytest.mark.slow
def test_a_killed_worker_s_runs_are_retried_once_then_failed(tmp_path: Path) -> None:
    adapter = tmp_path / "killer.py"
    adapter.write_text(KILLER)
    names = [f"r{i}" for i in range(40)]
    names[13] = "KILL"
    traces = simple_runs(tmp_path / "t.jsonl", names)
    out = run_cli(
        "replay", CONTRACT, traces, "--workers", "2", "--chunk-size", "4",
        "--adapter", f"{adapter}:always", "--format", "json",
    )  # fmt: skip
    data = json.loads(out.output)
    assert out.exit_code == 1
    assert data["runs"] == 39 and data["steps"] == 39  # nothing lost, nothing counted twice
    assert data["failed_runs"] == [
        {
            "trace": str(traces),
            "run_index": 14,
            "line": 14,
            "error": "the worker process died twice on this run (killed, or crashed outside "
            "Python)",
        }
    ]


@pytest.mark.slow
def test_a_worker_killed_once_loses_nothing(tmp_path: Path) -> None:
    adapter = tmp_path / "killer.py"
    adapter.write_text(KILLER)
    names = [f"r{i}" for i in range(40)]
    names[13] = "KILL"
    traces = simple_runs(tmp_path / "t.jsonl", names)
    marker = tmp_path / "killed-once"
    marker.write_text("x")  # in this process, the adapter must not kill: it would kill pytest
    plain = run_cli("replay", CONTRACT, traces, "--adapter", f"{adapter}:once")
    marker.unlink()
    scaled = run_cli(
        "replay", CONTRACT, traces, "--workers", "2", "--chunk-size", "4",
        "--adapter", f"{adapter}:once",
    )  # fmt: skip
    assert marker.exists()  # a worker was killed
    assert scaled.exit_code == plain.exit_code
    assert scaled.output == plain.output
    assert "40 run(s), 40 step(s)" in scaled.output


@pytest.mark.slow
def test_simulate_with_two_workers_is_the_one_process_output() -> None:
    one = run_cli("simulate", FS_CONTRACT, FS_PLANS, FS_PLANS, "--now", NOW, "--format", "json")
    two = run_cli(
        "simulate", FS_CONTRACT, FS_PLANS, FS_PLANS, "--now", NOW, "--format", "json",
        "--workers", "2", "--chunk-size", "5",
    )  # fmt: skip
    assert two.exit_code == one.exit_code == 1
    assert two.output == one.output

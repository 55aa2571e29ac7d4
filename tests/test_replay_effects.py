"""`state_after` in traces: replay compares the contract's state after each call with it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import contractsim
from contractsim.diagnostics import ContractError
from contractsim.replay import read_runs, render_json, render_text, replay_runs
from contractsim.replay.loop import diff_paths

CONTRACT = "examples/gorilla_fs/gorilla_fs.contract"
SNAPSHOTS = "tests/data/bfcl/GorillaFileSystem.snapshots.jsonl"

START = {
    "root": "/w",
    "cwd": "/w",
    "dirs": ["/w"],
    "files": {"/w/a.txt": "hi"},
}


def _write(tmp_path: Path, runs: list[dict[str, object]]) -> str:
    path = tmp_path / "t.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in runs))
    return str(path)


def _touch_run(after_files: dict[str, str]) -> dict[str, object]:
    return {
        "state": START,
        "steps": [
            {
                "tool": "touch",
                "args": {"file_name": "b.txt"},
                "outcome": "ok",
                "result": None,
                "state_after": {"files": after_files},
            },
            {
                "tool": "pwd",
                "args": {},
                "outcome": "ok",
                "result": {"current_working_directory": "/w"},
            },
        ],
    }


def test_state_after_that_matches_agrees(tmp_path: Path) -> None:
    c = contractsim.load(CONTRACT)
    runs = read_runs(_write(tmp_path, [_touch_run({"/w/a.txt": "hi", "/w/b.txt": ""})]), c.compiled)
    assert runs[0].steps[0].state_after is not None
    assert runs[0].steps[1].state_after is None
    eff = replay_runs(c, runs).effects
    assert eff.steps == 1
    assert eff.carried == 1.0 and eff.from_real == 1.0
    assert eff.differences == []


def test_state_after_that_differs_names_the_path(tmp_path: Path) -> None:
    c = contractsim.load(CONTRACT)
    runs = read_runs(_write(tmp_path, [_touch_run({"/w/a.txt": "hi", "/w/c.txt": ""})]), c.compiled)
    result = replay_runs(c, runs)
    eff = result.effects
    assert eff.variables["files"].compared == 1
    assert eff.variables["files"].carried == 0
    assert eff.carried == 0.0
    assert eff.differing_steps == {"carried": 1, "from_real": 1}
    assert eff.differences[0].paths == (
        'files["/w/b.txt"]: contract "", observed none',
        'files["/w/c.txt"]: contract has none, observed ""',
    )
    report = render_json(result, CONTRACT, "t")
    assert report["effects"]["carried"] == 0.0
    assert report["effects"]["tools"] == {
        "touch": {"steps": 1, "carried_differ": 1, "from_real_differ": 1}
    }
    text = render_text(result, CONTRACT, "t")
    assert "effects: 1 step(s) carry state_after; agreement 0.0000 carried along the run" in text
    assert 'first difference: run 1 step 1 (touch, carried): files["/w/b.txt"]' in text


def test_from_real_restarts_from_the_observed_state(tmp_path: Path) -> None:
    """After a differing step, `from_real` starts the next step from what was observed."""
    c = contractsim.load(CONTRACT)
    run = _touch_run({"/w/a.txt": "hi", "/w/c.txt": ""})
    run["steps"] = [
        run["steps"][0],  # type: ignore[index]
        {
            "tool": "rm",
            "args": {"file_name": "c.txt"},
            "outcome": "ok",
            "result": None,
            "state_after": {"files": {"/w/a.txt": "hi"}},
        },
    ]
    eff = replay_runs(c, read_runs(_write(tmp_path, [run]), c.compiled)).effects
    assert eff.variables["files"].from_real == 1  # the rm, from the observed state
    assert eff.variables["files"].carried == 0  # carried: c.txt was never there


def test_bad_state_after_is_E0904(tmp_path: Path) -> None:
    c = contractsim.load(CONTRACT)
    run = _touch_run({})
    run["steps"][0]["state_after"] = {"nope": 1}  # type: ignore[index]
    with pytest.raises(ContractError) as info:
        read_runs(_write(tmp_path, [run]), c.compiled)
    d = info.value.diagnostics[0]
    assert d.code == "E0904"
    assert "run 1, step 1: the contract rejects `state_after`" in d.message
    run["steps"][0]["state_after"] = [1]  # type: ignore[index]
    with pytest.raises(ContractError) as info:
        read_runs(_write(tmp_path, [run]), c.compiled)
    assert info.value.diagnostics[0].message == (
        "run 1, step 1: `state_after` must be an object of variable: value, got a list"
    )


def test_diff_paths_sets_and_nesting() -> None:
    out: list[str] = []
    diff_paths("dirs", ["/a", "/b"], ["/a", "/c"], out, 5)
    assert out == ['dirs: contract lacks "/c"', 'dirs: contract has extra "/b"']
    out = []
    diff_paths("m", {"k": {"x": 1}}, {"k": {"x": 2}}, out, 5)
    assert out == ['m["k"]["x"]: contract 1, observed 2']


@pytest.mark.slow
def test_shipped_contract_models_gorilla_effects() -> None:
    """Issue 17: effect agreement >= 0.99 on the 300 recorded runs (3,600 steps)."""
    c = contractsim.load(CONTRACT)
    result = replay_runs(c, read_runs(SNAPSHOTS, c.compiled))
    assert result.effects.steps == 3600
    assert result.effects.carried is not None and result.effects.carried >= 0.99
    assert result.effects.from_real is not None and result.effects.from_real >= 0.999
    assert result.precision == 1.0 and result.recall == 1.0

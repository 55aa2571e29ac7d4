"""``contractsim simulate CONTRACT PLANS… --workers N``: many plan files, simulated in parallel.

The plan files (and the plan files found in directories, by name) are streamed to the workers
one path at a time in chunks; each worker builds the contract once, simulates its plans with
the same options as ``simulate`` and returns, per plan, its verdict and its full JSON report as
one line. The parent writes them out **in the order of the plans**, one summary line each (or
one JSON item each), and counts the verdicts.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING, Any

from ..diagnostics import ContractError, Diagnostic
from .output import ResultFile
from .pool import Job
from .progress import Progress
from .stream import ordered_outcomes

if TYPE_CHECKING:
    from ..api import Contract
    from ..simulator.engine import Simulator

PLAN_SUFFIXES = (".yaml", ".yml", ".json")
"""The files of a directory that are taken as plans."""
VERDICTS = ("ok", "fails", "may_fail")


def plan_files(paths: list[str]) -> Iterator[str]:
    """Every plan: a file as given, a directory's plan files (:data:`PLAN_SUFFIXES`, below it at
    any depth) sorted by path, read lazily."""
    for path in paths:
        if not os.path.isdir(path):
            yield path
            continue
        for root, dirs, files in os.walk(path):
            dirs.sort()
            for name in sorted(files):
                if name.endswith(PLAN_SUFFIXES):
                    yield os.path.join(root, name)


def count_plans(paths: list[str]) -> int:
    return sum(1 for _ in plan_files(paths))


@dataclass(frozen=True)
class SimulateOptions:
    """The options of ``simulate`` that every plan gets."""

    state_file: str | None = None
    now: str | None = None
    goal: str | None = None
    max_depth: int | None = None
    max_states: int = 100_000
    max_branches: int = 256
    max_seconds: float = 300.0
    stop_at_first: bool = False


@dataclass
class BatchWorker:
    contract: Contract
    options: SimulateOptions
    simulators: dict[datetime | None, Simulator] = field(default_factory=dict)


def setup_batch(
    build: Callable[[str, str], Contract], source: str, filename: str, options: SimulateOptions
) -> BatchWorker:
    """A worker's state: ``build(source, filename)`` is ``contractsim.loads``."""
    return BatchWorker(build(source, filename), options)


def simulate_item(worker: BatchWorker, payload: str) -> str:
    """Simulate one plan file; its verdict and report (or its problems) as one JSON line."""
    from ..diagnostics import Span, error, suggestion_hint
    from ..simulator.inputs import prepare_run

    opts = worker.options
    compiled = worker.contract.compiled
    head: dict[str, Any] = {"plan": payload}
    try:
        run = prepare_run(compiled, payload, opts.state_file, opts.now)
        goal = opts.goal or run.plan.goal
        if goal is not None and goal not in compiled.goals:
            raise ContractError(
                [
                    error(
                        "E0703",
                        f"the contract declares no goal `{goal}`",
                        Span(file=payload),
                        hint=suggestion_hint(goal, compiled.goals, "goal"),
                    )
                ]
            )
    except ContractError as exc:
        head["problems"] = [d.dump() for d in exc.diagnostics]
        return json.dumps(head, ensure_ascii=False)
    sim = worker.simulators.get(run.now)
    if sim is None:
        sim = worker.simulators[run.now] = worker.contract.simulator(now=run.now)
    report = sim.run(
        run.calls,
        sim.state_with(run.state_overrides),
        max_depth=opts.max_depth,
        max_states=opts.max_states,
        max_branches=opts.max_branches,
        stop_at_first=opts.stop_at_first,
        goal=goal,
        max_seconds=opts.max_seconds,
    )
    head["verdict"] = report.verdict
    head["goal_missed"] = goal is not None and not report.goal_results.get("reached")
    head["report"] = report.to_json()
    return json.dumps(head, ensure_ascii=False)


@dataclass
class BatchSummary:
    """How many plans ended each way."""

    plans: int = 0
    verdicts: dict[str, int] = field(default_factory=lambda: dict.fromkeys(VERDICTS, 0))
    goal_missed: int = 0
    bad_input: int = 0
    failed: int = 0
    """Plans whose worker died twice (or whose simulation raised)."""
    resumed: int = 0

    def to_json(self) -> dict[str, Any]:
        return {
            "plans": self.plans,
            **self.verdicts,
            "goal_missed": self.goal_missed,
            "bad_input": self.bad_input,
            "failed": self.failed,
        }

    @property
    def exit_code(self) -> int:
        """2 bad input; 1 a plan fails, misses its goal or failed; 3 a plan may fail; else 0."""
        if self.bad_input:
            return 2
        if self.verdicts["fails"] or self.goal_missed or self.failed:
            return 1
        return 3 if self.verdicts["may_fail"] else 0

    def text(self) -> str:
        parts = [f"{self.verdicts['ok']} ok", f"{self.verdicts['fails']} fail"]
        parts.append(f"{self.verdicts['may_fail']} may fail")
        if self.goal_missed:
            parts.append(f"{self.goal_missed} miss the goal")
        if self.bad_input:
            parts.append(f"{self.bad_input} bad input")
        if self.failed:
            parts.append(f"{self.failed} failed in a worker")
        return f"{self.plans} plan(s): " + ", ".join(parts) + "\n"


def _first_failure(report: dict[str, Any]) -> str:
    for step in report["steps"]:
        if step["verdict"] != "ok" and step.get("violations"):
            codes = ", ".join(dict.fromkeys(v["code"] for v in step["violations"]))
            return f" at step {step['index']} ({step['tool']}: {codes})"
    return ""


def plan_line(item: dict[str, Any], sources: Callable[[list[Diagnostic]], dict[str, str]]) -> str:
    """One plan's text: its verdict and path, where it first fails; or its problems."""
    from ..diagnostics import render_all

    if "failed" in item:
        return f"failed    {item['plan']}: {item['failed']}\n"
    if "problems" in item:
        diags = [Diagnostic.load(d) for d in item["problems"]]
        return f"bad input {item['plan']}\n" + render_all(diags, sources(diags)) + "\n"
    verdict = item["verdict"]
    goal = "  (misses the goal)" if item["goal_missed"] else ""
    where = "" if verdict == "ok" else _first_failure(item["report"])
    return f"{verdict:<9} {item['plan']}{where}{goal}\n"


def simulate_at_scale(
    build: Callable[[str, str], Contract],
    contract: Contract,
    plans: list[str],
    options: SimulateOptions,
    emit: Callable[[dict[str, Any]], None],
    *,
    workers: int = 1,
    dask: Any = None,
    chunk_size: int = 64,
    output: str | None = None,
    resume: bool = False,
    progress: bool = False,
) -> BatchSummary:
    """Simulate every plan of ``plans`` (files and directories) with ``options``; ``emit`` gets
    each plan's item in plan order (``plan`` and ``verdict``, ``goal_missed``, ``report``; or
    ``problems``; or ``failed``). ``build`` is ``contractsim.loads``."""
    job = Job(setup_batch, (build, contract.source, contract.filename, options), simulate_item)
    header = {
        "contractsim": "simulate",
        "contract_sha256": hashlib.sha256(contract.source.encode("utf-8")).hexdigest(),
        "plans": [os.path.abspath(p) for p in plans],
        "options": options.__dict__,
    }
    results = ResultFile(output, header, resume) if output is not None else None
    summary = BatchSummary(resumed=len(results.done) if results is not None else 0)
    bar = Progress(count_plans(plans) if progress else None, progress, "plans")
    items = (([i, path], path) for i, path in enumerate(plan_files(plans)))
    outcomes = ordered_outcomes(
        job, items, workers=workers, dask=dask, chunk_size=chunk_size, results=results, bar=bar
    )
    try:
        for outcome, fresh in outcomes:
            summary.plans += 1
            if outcome.line is None:
                summary.failed += 1
                emit({"plan": outcome.key[1], "failed": outcome.failure})
                continue
            item = json.loads(outcome.line)
            item.pop("key", None)
            if "problems" in item:
                summary.bad_input += 1
            else:
                summary.verdicts[item["verdict"]] += 1
                summary.goal_missed += item["goal_missed"]
                if results is not None and fresh:
                    results.write(json.dumps({"key": outcome.key, **item}, ensure_ascii=False))
            emit(item)
    finally:
        bar.close()
        if results is not None:
            results.close()
    return summary

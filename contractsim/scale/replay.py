"""``contractsim replay --workers N / --dask ADDRESS``: replay at scale, streamed and in parallel.

Trace files are read run by run (a JSON Lines file line by line; a JSON or YAML document is
read whole, as ``replay`` does), the runs go to the workers in chunks, each worker replays its
runs with its own copy of the contract (built once from the source text) and returns, per run,
its share of the report as one JSON line. The parent merges the shares **by run index**, so the
report is byte-identical whatever the number of workers and the order of completion. The same
lines are what ``--output FILE.jsonl`` holds, so ``--resume`` merges the runs already done from
the file and replays only the others.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..diagnostics import ContractError, Diagnostic, Span, error
from ..dsl.walk import reads_clock
from ..replay.loop import (
    ClockUse,
    Disagreement,
    EffectCounts,
    EffectDifference,
    ReplayResult,
    ResultMismatch,
    RuleRow,
    ToolCounts,
    replay_runs,
)
from ..replay.traces import (
    MAX_BAD_RUNS,
    _diag,
    _record_run,
    load_adapter,
    read_trace_text,
    trace_records,
)
from ..simulator.json_maps import JsonMaps
from ..sources import path_problem
from .output import ResultFile
from .pool import Job
from .progress import Progress
from .stream import ordered_outcomes

if TYPE_CHECKING:
    from ..api import Contract
    from ..simulator.engine import Simulator

STREAMED_SUFFIXES = (".jsonl", ".ndjson")
"""Files read line by line; any other trace file is read whole (a JSON or YAML document)."""


@dataclass(frozen=True)
class FailedRun:
    """A run that could not be replayed: its worker died twice, or the replay raised."""

    trace: str
    index: int
    line: int
    reason: str

    def to_json(self) -> dict[str, Any]:
        return {
            "trace": self.trace,
            "run_index": self.index,
            "line": self.line,
            "error": self.reason,
        }


class Kept(list[Disagreement]):
    """The first ``limit`` disagreements of a replay, and how many there were: ``len()`` is
    the number of all of them (what the report counts), iteration and indexing give the kept
    ones (what the report lists). Memory stays flat however many runs disagree."""

    def __init__(self, limit: int) -> None:
        super().__init__()
        self.limit = limit
        self.total = 0

    def add(self, item: Disagreement) -> None:
        self.total += 1
        if super().__len__() < self.limit:
            self.append(item)

    def __len__(self) -> int:
        return self.total


@dataclass
class ScaleReplay:
    """The merged result of a replay at scale."""

    result: ReplayResult
    failed: list[FailedRun] = field(default_factory=list)
    resumed: int = 0
    """Runs merged from ``--resume``'s output file instead of replayed."""


# ------------------------------------------------------------------------------ reading


def trace_items(traces: list[str]) -> Iterator[tuple[list[int], tuple[int, int, int, Any, bool]]]:
    """(key, payload) per run of every trace file, read lazily: key ``[file, index, line]`` (file
    is the 0-based position among ``traces``, index the 1-based run number in its file, line the
    line it starts on); payload
    ``(file, index, line, raw, parsed)`` where ``raw`` is a JSON line's text (parsed in the
    worker) or an already-parsed record."""
    for number, name in enumerate(traces):
        if name.endswith(STREAMED_SUFFIXES):
            yield from _stream_lines(number, name)
        else:
            text = read_trace_text(name)
            for index, (line, record) in enumerate(trace_records(text, name), 1):
                yield [number, index, line], (number, index, line, record, True)


def check_readable(traces: list[str]) -> None:
    """A located E0901 for a trace path that cannot be read (before any work starts)."""
    for name in traces:
        problem = path_problem(Path(name), "trace")
        if problem is not None:
            raise ContractError([_diag("E0901", problem[0], name, hint=problem[1])])


def _stream_lines(number: int, name: str) -> Iterator[tuple[list[int], Any]]:
    index = 0
    with open(name, "rb") as handle:
        for lineno, raw in enumerate(handle, 1):
            if lineno == 1:
                raw = raw.removeprefix(b"\xef\xbb\xbf")
            if not raw.strip():
                continue
            index += 1
            try:
                text: Any = raw.decode("utf-8")
            except UnicodeDecodeError:
                text = None
            yield [number, index, lineno], (number, index, lineno, text, False)


def count_runs(traces: list[str]) -> int:
    """How many runs the trace files hold (for the progress bar's ETA)."""
    total = 0
    for name in traces:
        if name.endswith(STREAMED_SUFFIXES):
            with open(name, "rb") as handle:
                total += sum(1 for raw in handle if raw.strip())
        else:
            total += sum(1 for _ in trace_records(read_trace_text(name), name))
    return total


# ------------------------------------------------------------------------------ in the worker


@dataclass
class ReplayWorker:
    """What a worker builds once: the contract, the adapter, simulators by time."""

    contract: Contract
    traces: list[str]
    maps: JsonMaps
    adapter: Callable[[Any], Any] | None
    now: datetime | None
    reads_clock: bool
    simulators: dict[datetime, Simulator] = field(default_factory=dict)


def setup_replay(
    build: Callable[[str, str], Contract],
    source: str,
    filename: str,
    traces: list[str],
    adapter: str | None,
    now: str | None,
) -> ReplayWorker:
    """Build a worker's state: ``build(source, filename)`` is ``contractsim.loads``."""
    from ..simulator.formats import parse_now

    contract = build(source, filename)
    return ReplayWorker(
        contract=contract,
        traces=traces,
        maps=JsonMaps(contract.compiled),
        adapter=load_adapter(adapter) if adapter is not None else None,
        now=parse_now(now, "<command line: --now>") if now is not None else None,
        reads_clock=reads_clock(contract.ir),
    )


def replay_item(worker: ReplayWorker, payload: tuple[int, int, int, Any, bool]) -> str:
    """Replay one run; its share of the report (or its problems) as one JSON line."""
    number, index, line, raw, parsed = payload
    name = worker.traces[number]
    head: dict[str, Any] = {"key": [number, index, line]}
    problems: list[Diagnostic] = []
    record = raw
    if not parsed:
        record = _parse_line(raw, name, line, problems)
    run = None
    if not problems:
        run = _record_run(record, index, line, name, worker.maps, worker.adapter, problems)
    if run is None:
        head["problems"] = [d.dump() for d in problems]
        return json.dumps(head, ensure_ascii=False)
    fresh = ReplayResult(clock=ClockUse(worker.reads_clock, worker.now))
    result = replay_runs(worker.contract, [run], worker.now, worker.simulators, fresh)
    head["run"] = run.name
    head["result"] = result_to_json(result)
    return json.dumps(head, ensure_ascii=False)


def _parse_line(raw: str | None, name: str, line: int, problems: list[Diagnostic]) -> Any:
    if raw is None:
        problems.append(_diag("E0901", f"{name} is not UTF-8 text", name, line))
        return None
    try:
        return json.loads(raw)
    except json.JSONDecodeError as exc:
        span = Span(file=name, line=line, col=exc.colno, end_line=line, end_col=exc.colno + 1)
        problems.append(
            error(
                "E0902",
                f"line {line} is not valid JSON: {exc.msg}",
                span,
                hint="a JSON Lines trace holds one complete JSON object per line",
            )
        )
    except (ValueError, RecursionError) as exc:
        problems.append(_diag("E0902", f"line {line} cannot be read: {exc}", name, line))
    return None


# ------------------------------------------------------------------------------ a run's share


def result_to_json(r: ReplayResult) -> dict[str, Any]:
    """A (one-run) replay result as JSON data, read back by :func:`result_from_json`. Empty
    parts are left out: most runs agree, and their lines stay short."""
    out: dict[str, Any] = {
        "runs": r.runs,
        "matrix": [[v, o, n] for (v, o), n in r.matrix.items() if n],
        "tools": {
            k: [c.steps, c.false_alarms, c.misses, c.contract_errors] for k, c in r.tools.items()
        },
    }
    if r.disagreements:
        out["disagreements"] = [d.to_json() for d in r.disagreements]
    if r.contract_errors:
        out["contract_errors"] = [d.to_json() for d in r.contract_errors]
    if r.risks:
        out["risks"] = [r.risks, r.risks_realised]
    if r.result_mismatches:
        out["result_mismatches"] = [m.to_json() for m in r.result_mismatches]
    if r.by_rule:
        out["by_rule"] = [row.to_json() for row in r.by_rule.values()]
    if r.noted_agreements:
        out["notes"] = [r.noted_agreements, r.agreement_notes]
    c = r.clock
    out["clock"] = [
        c.from_runs,
        c.from_option,
        c.from_default,
        sorted(t.isoformat() for t in c.run_times),
    ]
    e = r.effects
    if e.steps:
        out["effects"] = {
            "steps": e.steps,
            "variables": {k: [v.compared, v.carried, v.from_real] for k, v in e.variables.items()},
            "differences": [d.to_json() for d in e.differences],
            "differing_steps": e.differing_steps,
            "tools": e.tools,
        }
    return out


def _disagreement(d: dict[str, Any]) -> Disagreement:
    return Disagreement(
        run=d["run"],
        run_index=d["run_index"],
        line=d["line"],
        step=d["step"],
        tool=d["tool"],
        args=d["args"],
        state=d["state"],
        predicted=d["predicted"],
        violations=d["violations"],
        outcome=d["outcome"],
        error=d["error"],
        notes=tuple(d["notes"]),
        matched=d["matched_outcome"],
    )


def merge(total: ReplayResult, part: dict[str, Any]) -> None:
    """Add one run's share (:func:`result_to_json`) to ``total``; shares merged in run order
    give the result of replaying the runs in one loop."""
    total.runs += part["runs"]
    for v, o, n in part["matrix"]:
        total.matrix[(v, o)] += n
    for name, (steps, alarms, misses, errors) in part["tools"].items():
        counts = total.tools.setdefault(name, ToolCounts())
        counts.steps += steps
        counts.false_alarms += alarms
        counts.misses += misses
        counts.contract_errors += errors
    for mine, theirs in (
        (total.disagreements, part.get("disagreements", ())),
        (total.contract_errors, part.get("contract_errors", ())),
    ):
        for d in theirs:
            if isinstance(mine, Kept):
                mine.add(_disagreement(d))
            else:
                mine.append(_disagreement(d))
    risks, realised = part.get("risks", (0, 0))
    total.risks += risks
    total.risks_realised += realised
    total.result_mismatches += [ResultMismatch(**m) for m in part.get("result_mismatches", ())]
    for row in part.get("by_rule", ()):
        key = (row["code"], row["outcome"], row["message"])
        rule = total.by_rule.get(key)
        if rule is None:
            total.by_rule[key] = RuleRow(**row)
        else:
            rule.steps += row["steps"]
    noted, notes = part.get("notes", (0, {}))
    total.noted_agreements += noted
    for note, n in notes.items():
        total.agreement_notes[note] = total.agreement_notes.get(note, 0) + n
    from_runs, from_option, from_default, times = part["clock"]
    total.clock.from_runs += from_runs
    total.clock.from_option += from_option
    total.clock.from_default += from_default
    total.clock.run_times.update(datetime.fromisoformat(t) for t in times)
    effects = part.get("effects")
    if effects:
        _merge_effects(total, effects)


def _merge_effects(total: ReplayResult, part: dict[str, Any]) -> None:
    from ..replay.loop import EFFECT_EXAMPLES

    eff = total.effects
    eff.steps += part["steps"]
    for name, (compared, carried, from_real) in part["variables"].items():
        counts = eff.variables.setdefault(name, EffectCounts())
        counts.compared += compared
        counts.carried += carried
        counts.from_real += from_real
    for d in part["differences"]:
        if len(eff.differences) < EFFECT_EXAMPLES:
            eff.differences.append(EffectDifference(**{**d, "paths": tuple(d["paths"])}))
    for mode, n in part["differing_steps"].items():
        eff.differing_steps[mode] = eff.differing_steps.get(mode, 0) + n
    for tool, row in part["tools"].items():
        mine = eff.tools.setdefault(tool, {"steps": 0, "carried_differ": 0, "from_real_differ": 0})
        for k, n in row.items():
            mine[k] = mine.get(k, 0) + n


# ------------------------------------------------------------------------------ in the parent


def replay_at_scale(
    build: Callable[[str, str], Contract],
    contract: Contract,
    traces: list[str],
    *,
    adapter: str | None = None,
    now: str | None = None,
    workers: int = 1,
    dask: Any = None,
    chunk_size: int = 64,
    output: str | None = None,
    resume: bool = False,
    progress: bool = False,
    keep: int | None = None,
) -> ScaleReplay:
    """Replay every run of ``traces`` against ``contract`` with ``workers`` local processes (or
    on Dask), streaming the runs; the merged result is the one :func:`replay_runs` gives on the
    same runs. ``build`` is ``contractsim.loads`` (what a worker compiles the source with).
    Bad runs raise :class:`ContractError` (the first :data:`MAX_BAD_RUNS` with problems, in
    file order), like ``read_runs``. ``keep`` (the report's ``--show``) keeps only the first
    disagreements and contract errors in full (:class:`Kept`); None keeps all."""
    from ..simulator.formats import parse_now

    check_readable(traces)
    when = parse_now(now, "<command line: --now>") if now is not None else None
    if adapter is not None:
        load_adapter(adapter)  # a bad adapter is E0910 here, not in every worker
    job = Job(
        setup_replay,
        (build, contract.source, contract.filename, list(traces), adapter, now),
        replay_item,
    )
    header = {
        "contractsim": "replay",
        "contract_sha256": hashlib.sha256(contract.source.encode("utf-8")).hexdigest(),
        "traces": [os.path.abspath(t) for t in traces],
        "adapter": adapter,
        "now": now,
    }
    out = ScaleReplay(ReplayResult(clock=ClockUse(reads_clock(contract.ir), when)))
    if keep is not None:
        out.result.disagreements, out.result.contract_errors = Kept(keep), Kept(keep)
    results = ResultFile(output, header, resume) if output is not None else None
    out.resumed = len(results.done) if results is not None else 0
    bar = Progress(count_runs(traces) if progress else None, progress)
    outcomes = ordered_outcomes(
        job, trace_items(traces), workers=workers, dask=dask, chunk_size=chunk_size,
        results=results, bar=bar,
    )  # fmt: skip
    problems: list[Diagnostic] = []
    bad_runs = 0
    try:
        for outcome, fresh in outcomes:
            number, index, line = outcome.key
            if bad_runs >= MAX_BAD_RUNS:
                problems.append(_stopped(problems[-1], traces[number], line))
                break
            if outcome.line is None:
                out.failed.append(FailedRun(traces[number], index, line, outcome.failure or "?"))
                continue
            data = json.loads(outcome.line)
            if "problems" in data:
                problems += [Diagnostic.load(d) for d in data["problems"]]
                bad_runs += 1
                continue
            if problems:
                continue  # bad input: the report is not shown, only the problems
            merge(out.result, data["result"])
            if results is not None and fresh:
                results.write(outcome.line)
    finally:
        bar.close()
        if results is not None:
            results.close()
    if problems:
        raise ContractError(problems, _sources(traces, problems))
    if out.result.runs == 0 and not out.failed:
        name = traces[0] if len(traces) == 1 else ", ".join(traces)
        raise ContractError(
            [
                _diag(
                    "E0908",
                    f"{name} holds no runs",
                    traces[0],
                    hint="write one run per line (JSON Lines), or a list of runs",
                )
            ]
        )
    return out


def _stopped(last: Diagnostic, name: str, line: int) -> Diagnostic:
    return Diagnostic(
        code=last.code,
        severity="note",
        message=f"stopped reading after {MAX_BAD_RUNS} runs with problems",
        span=Span(file=name, line=line, col=1, end_line=line, end_col=2),
        hint="fix these first: the same mistake is likely repeated in later runs",
    )


SOURCE_BYTES = 64 * 1024 * 1024
"""Trace files up to this size are read back to show the lines of their problems."""


def _sources(traces: Iterable[str], problems: list[Diagnostic]) -> dict[str, str]:
    files = {d.span.file for d in problems}
    out = {}
    for name in traces:
        if name in files and os.path.getsize(name) <= SOURCE_BYTES:
            try:
                out[name] = read_trace_text(name)
            except ContractError:
                pass
    return out


def failed_text(failed: list[FailedRun]) -> str:
    """The text report's lines on failed runs (nothing when there are none)."""
    if not failed:
        return ""
    lines = ["", f"{len(failed)} run(s) could not be replayed and are not counted above:"]
    lines += [f"  {f.trace} run {f.index} (line {f.line}): {f.reason}" for f in failed]
    return "\n".join(lines) + "\n"


def failed_json(failed: list[FailedRun]) -> dict[str, Any]:
    """The JSON report's ``failed_runs`` (left out when there are none, so that a complete
    replay's report is the one ``replay`` gives)."""
    return {"failed_runs": [f.to_json() for f in failed]} if failed else {}

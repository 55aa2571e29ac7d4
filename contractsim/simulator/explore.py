"""Plan exploration: every branch of every step, within bounds, with identical states merged."""

from __future__ import annotations

import time
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import field
from typing import TYPE_CHECKING, Any

from ..compiler import lib
from ..compiler.values import plan_texts, show, thaw
from ..records import record
from .references import FAILED, ReferenceError_, Template, plan_problem, resolve
from .results import Branch, StepResult, StepWarning, Verdict, Violation
from .state import State

if TYPE_CHECKING:
    from .engine import Simulator
    from .goals import GoalPart

DEFAULT_MAX_BRANCHES = 256
DEFAULT_MAX_STATES = 100_000
DEFAULT_MAX_SECONDS = 300.0
"""Wall-clock time a whole plan may take; each step also has its own budget (lib.step_budget)."""


@record
class Path:
    """One way through the plan so far: the outcome chosen at each step."""

    state: State
    probability: float | None
    choices: tuple[str, ...] = ()
    failed_at: int | None = None
    certain: bool = True  # the first failure is certain (not only under unknown values)
    guessed: bool = False  # an unknown guard (not a precondition) chose this path
    cost: float = 0.0
    cost_known: bool = True
    merged: int = 1
    results: tuple[Any, ...] = ()  # what each step returned on this path (plans with `$N.result`)


@record
class StepReport:
    index: int
    tool: str
    args: Mapping[str, Any]
    verdict: Verdict
    violations: list[Violation] = field(default_factory=list)
    warnings: list[StepWarning] = field(default_factory=list)
    warning_branches: dict[tuple[str, str], set[str]] = field(default_factory=dict)
    on_live_paths: set[tuple[str, str]] = field(default_factory=set)
    after_failure: dict[tuple[str, str], int] = field(default_factory=dict)
    branch_labels: set[str] = field(default_factory=set)
    outcomes: dict[str, dict[str, Any]] = field(default_factory=dict)
    changes: list[tuple[str, Any, Any]] = field(default_factory=list)
    reports: list[dict[str, Any]] = field(default_factory=list)
    cost: float | None = None
    failure_probability: float | None = 0.0
    skipped: bool = False

    def _violation_json(self, v: Violation) -> dict[str, Any]:
        out = v.to_json()
        earlier = self.only_after_failure(v)
        if earlier is not None:
            out["only_after_step"] = earlier
        return out

    def only_after_failure(self, v: Violation) -> int | None:
        """The earlier failing step when ``v`` happens only on paths that already failed."""
        key = (v.code, v.message)
        if key in self.on_live_paths:
            return None
        return self.after_failure.get(key)

    def on_every_branch(self, w: StepWarning) -> bool:
        return self.warning_branches.get((w.code, w.message), set()) >= self.branch_labels

    def warning_where(self, w: StepWarning) -> str | None:
        """The branches a warning is limited to, when it is not emitted on all of them."""
        if self.on_every_branch(w):
            return None
        return ", ".join(sorted(self.warning_branches.get((w.code, w.message), set())))

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "index": self.index,
            "tool": self.tool,
            "args": thaw(dict(self.args)),
            "verdict": self.verdict,
            "violations": [self._violation_json(v) for v in self.violations],
            "warnings": [
                {**w.to_json(), "on_every_branch": self.on_every_branch(w)} for w in self.warnings
            ],
            "outcomes": [{"name": k, **v} for k, v in self.outcomes.items()],
            "changes": [
                {"var": n, "before": _change_json(b), "after": _change_json(a)}
                for n, b, a in self.changes
            ],
        }
        if self.reports:
            out["reports"] = [thaw(r) for r in self.reports]
        if self.cost is not None:
            out["cost"] = self.cost
        if self.failure_probability:
            out["failure_probability"] = round(self.failure_probability, 12)
        if self.skipped:
            out["skipped"] = True
        return out


@record
class PlanReport:
    """The result of simulating a plan: a verdict, each step, each final branch."""

    verdict: Verdict
    steps: list[StepReport]
    paths: list[Path]
    initial: State
    notes: list[str] = field(default_factory=list)
    failure_probability: float | None = None
    goal: str | None = None
    goal_results: dict[str, Any] = field(default_factory=dict)
    # per final branch (its index in ``paths``) that does not reach the goal: the parts it misses
    goal_unmet: list[tuple[int, list[GoalPart]]] = field(default_factory=list)
    states_explored: int = 0
    contract: str = ""

    @property
    def ok(self) -> bool:
        return self.verdict == "ok"

    def to_json(self) -> dict[str, Any]:
        """The documented JSON report (docs/report.schema.json)."""
        out: dict[str, Any] = {
            "contract": self.contract,
            "verdict": self.verdict,
            "steps": [s.to_json() for s in self.steps],
            "branches": [
                {
                    "choices": list(p.choices),
                    "probability": None if p.probability is None else round(p.probability, 12),
                    "verdict": "ok"
                    if p.failed_at is None
                    else ("fails" if p.certain else "may_fail"),
                    "failed_at": p.failed_at,
                    "cost": p.cost if p.cost_known else None,
                    "final_state": p.state.to_json(),
                }
                for p in self.paths
            ],
            "states_explored": self.states_explored,
            "notes": list(self.notes),
        }
        if self.failure_probability is not None:
            out["failure_probability"] = round(self.failure_probability, 12)
        if self.goal is not None:
            out["goal"] = {
                "name": self.goal,
                **{k: thaw(v) for k, v in self.goal_results.items()},
                "unmet": [
                    {
                        "branch": i,
                        "choices": list(self.paths[i].choices),
                        "parts": [part.to_json() for part in parts],
                    }
                    for i, parts in self.goal_unmet
                ],
            }
        return out


def explore(
    sim: Simulator,
    plan: Sequence[Any] | Iterable[Any],
    initial: State,
    max_depth: int | None = None,
    max_states: int = DEFAULT_MAX_STATES,
    max_branches: int = DEFAULT_MAX_BRANCHES,
    stop_at_first: bool = False,
    goal: str | None = None,
    max_seconds: float = DEFAULT_MAX_SECONDS,
) -> PlanReport:
    # the bounds are checked by the caller (Simulator.run names the argument at the call)
    calls = [_as_call(c) for c in plan]
    deadline = time.monotonic() + max_seconds
    templates = _templates(calls)
    literal_args = [t.args if isinstance(t, Template) else a for t, (_, a) in zip(templates, calls)]
    # (references are no texts: walking the arguments skips them)
    with lib.run_budget(deadline), plan_texts(literal_args):
        return _explore(
            sim,
            calls,
            initial,
            max_depth,
            max_states,
            max_branches,
            stop_at_first,
            goal,
            max_seconds,
            deadline,
            templates,
        )


def _explore(
    sim: Simulator,
    calls: list[tuple[str, Mapping[str, Any]]],
    initial: State,
    max_depth: int | None,
    max_states: int,
    max_branches: int,
    stop_at_first: bool,
    goal: str | None,
    max_seconds: float,
    deadline: float,
    templates: list[Template | BadTemplate | None] | None = None,
) -> PlanReport:
    frontier: list[Path] = [Path(initial, 1.0)]
    templates = templates or [None] * len(calls)
    with_references = any(t is not None for t in templates)
    partial = False  # a bound stopped a step part-way: some of its branches were dropped
    steps: list[StepReport] = []
    notes: list[str] = []
    explored = 0
    for index, (tool, args) in enumerate(calls, 1):
        if max_depth is not None and index > max_depth:
            notes.append(f"--max-depth {max_depth} stopped the simulation before step {index}")
            for later, (t, a) in enumerate(calls[index - 1 :], index):
                steps.append(StepReport(later, t, a, "ok", skipped=True))
            break
        if stop_at_first and any(p.failed_at is not None and p.certain for p in frontier):
            steps.append(StepReport(index, tool, args, "ok", skipped=True))
            continue
        report = StepReport(index, tool, args, "ok")
        next_frontier: dict[
            tuple[State, int | None, str | None, bool, bool, tuple[Any, ...]], Path
        ] = {}
        step_fail_p = 0.0
        fail_p_known = True
        # the path whose changes are shown: the most probable one that has not failed
        main = next((p for p in frontier if p.failed_at is None), frontier[0])
        cut = None  # the bound that stopped this step part-way
        for done, path in enumerate(frontier):
            # the bounds hold between branches too: one step may fan out over many paths
            if explored > max_states:
                cut = f"--max-states {max_states}"
            elif time.monotonic() > deadline:
                cut = f"--max-seconds {max_seconds:g}"
            else:
                try:
                    refs = templates[index - 1]
                    if refs is None:
                        result = sim.step(path.state, tool, args)
                    else:
                        result = _step_with_references(sim, path, tool, args, refs, index)
                except lib.OutOfTime:
                    cut = f"--max-seconds {max_seconds:g}"
            if cut is not None:
                if done:
                    cut += (
                        f" stopped the simulation during step {index}: {done} of "
                        f"{len(frontier)} branch(es) were simulated, the others were dropped"
                    )
                break
            explored += len(result.branches)
            for b in result.branches:
                # a failure on a path that already failed only under unknowns is itself uncertain
                certain = (
                    b.certain and not path.guessed and (path.failed_at is None or path.certain)
                )
                _record(report, b, path, certain)
                failed = b.failed
                prob = (
                    None
                    if path.probability is None or b.probability is None
                    else (path.probability * b.probability)
                )
                if failed and certain and path.failed_at is None:
                    if prob is None:
                        fail_p_known = False
                    else:
                        step_fail_p += prob
                choice = b.outcome or (b.violations[0].code if b.violations else "fails")
                if b.event is not None:
                    choice += f"@{b.event}"
                new = Path(
                    state=b.state,
                    probability=prob,
                    choices=path.choices + (f"{tool}:{choice}",),
                    failed_at=path.failed_at
                    if path.failed_at is not None
                    else (index if failed else None),
                    certain=path.certain
                    if path.failed_at is not None
                    else (certain if failed else True),
                    guessed=path.guessed or b.guess,
                    cost=path.cost + (result.cost or 0.0),
                    results=path.results + ((FAILED if failed else b.result),)
                    if with_references
                    else (),
                    cost_known=path.cost_known
                    and (
                        result.cost is not None
                        or sim.compiled.tools.get(tool) is None
                        or sim.compiled.tools[tool].cost is None
                    ),
                )
                # paths merge only when they agree on how (and whether) they failed
                failure = new.choices[new.failed_at - 1] if new.failed_at is not None else None
                key = (new.state, new.failed_at, failure, new.certain, new.guessed, new.results)
                if key in next_frontier:
                    old = next_frontier[key]
                    old.merged += 1
                    if old.probability is not None and new.probability is not None:
                        old.probability += new.probability
                    else:
                        old.probability = None
                else:
                    next_frontier[key] = new
            if path is main:
                report.cost = result.cost
                main_branch = _main_branch(result.branches)
                if main_branch is not None:
                    report.changes = _diff(path.state, main_branch.state, sim)
        if cut is not None and not next_frontier:
            # nothing of this step was simulated: it is left out like the steps after it
            notes.append(f"{cut} stopped the simulation before step {index}")
            for later, (t, a) in enumerate(calls[index - 1 :], index):
                steps.append(StepReport(later, t, a, "ok", skipped=True))
            break
        report.verdict = _step_verdict(report, frontier)
        report.failure_probability = step_fail_p if fail_p_known else None
        steps.append(report)
        ordered = sorted(next_frontier.values(), key=_path_order)
        if len(ordered) > max_branches:
            notes.append(
                f"--max-branches {max_branches} cut {len(ordered) - max_branches} "
                f"branch(es) after step {index}; the verdict covers the rest only"
            )
            ordered = ordered[:max_branches]
        frontier = ordered
        stop = None
        if cut is not None:
            stop = cut
            partial = True
        elif explored > max_states and index < len(calls):
            stop = f"--max-states {max_states} stopped the search after step {index}"
        elif time.monotonic() > deadline and index < len(calls):
            stop = f"--max-seconds {max_seconds:g} stopped the simulation after step {index}"
        if stop is not None:
            notes.append(stop)
            for later, (t, a) in enumerate(calls[index:], index + 1):
                steps.append(StepReport(later, t, a, "ok", skipped=True))
            break
    paths = frontier
    verdict = _plan_verdict(paths)
    if verdict == "ok" and (partial or any(s.skipped for s in steps)):
        # a bound cut the plan short: success of the rest is not established
        verdict = "may_fail"
        notes.append("steps were left out, so the plan is not known to succeed: may_fail")
    fail_p: float | None = 0.0
    for p in paths:
        if p.failed_at is not None and p.certain:
            if p.probability is None or fail_p is None:
                fail_p = None
            else:
                fail_p += p.probability
    report_ = PlanReport(
        verdict=verdict,
        steps=steps,
        paths=paths,
        initial=initial,
        notes=notes,
        failure_probability=fail_p if verdict == "fails" else None,
        states_explored=explored,
        contract=sim.contract.name,
    )
    if goal is not None:
        from .goals import unmet_parts  # a plan without a goal does not need the module

        results = []
        for i, p in enumerate(paths):
            if p.failed_at is not None:
                continue
            result = sim.goal(p.state, goal)
            results.append(result)
            if result is not True:
                report_.goal_unmet.append((i, unmet_parts(sim, p.state, goal)))
        report_.goal = goal
        report_.goal_results = {
            "reached": bool(results) and all(r is True for r in results),
            "branches_reaching": sum(1 for r in results if r is True),
            "branches_missing": sum(1 for r in results if r is False),
            "branches_unknown": sum(1 for r in results if r is not True and r is not False),
        }
    return report_


CHANGE_JSON_LIMIT = 10_000
"""A changed value larger than this (lib.value_size) is given in the JSON report as its text, cut
to this many characters: a plan that grows a large collection step by step would otherwise
repeat all of it twice per step."""


def _change_json(value: Any) -> Any:
    if lib.value_size(value, CHANGE_JSON_LIMIT) > CHANGE_JSON_LIMIT:
        return show(value, CHANGE_JSON_LIMIT)
    return thaw(value)


# ------------------------------------------------------- plans that pass results on (issue 16)


@record(frozen=True)
class BadTemplate:
    """A step whose arguments hold a malformed reference: it fails on every branch."""

    problem: str


def _templates(calls: list[tuple[str, Mapping[str, Any]]]) -> list[Template | BadTemplate | None]:
    out: list[Template | BadTemplate | None] = []
    for index, (_, args) in enumerate(calls, 1):
        found = plan_problem(args, index, len(calls))
        out.append(BadTemplate(found) if isinstance(found, str) else found)
    return out


def _step_with_references(
    sim: Simulator,
    path: Path,
    tool: str,
    args: Mapping[str, Any],
    t: Template | BadTemplate,
    index: int,
) -> StepResult:
    """A step whose arguments name earlier results, on one path: the values that path's steps
    returned are passed on (a reference that names nothing fails the step on that path)."""
    problem = t.problem if isinstance(t, BadTemplate) else None
    resolved: dict[str, Any] = {}
    if problem is None:
        assert isinstance(t, Template)
        try:
            resolved = resolve(t, path.results, index)
        except ReferenceError_ as exc:
            problem = str(exc)
    if problem is not None:
        v = Violation(
            "BAD_REFERENCE",
            problem,
            "argument",
            hint="`$N.result.FIELD` passes on what step N returned; `$$` starts a literal `$`",
        )
        return StepResult(tool, args, [Branch(None, "fails", path.state, violations=[v])])
    result = sim.step(path.state, tool, resolved)
    result.args = args  # the report shows the plan as written
    return result


def _as_call(c: Any) -> tuple[str, Mapping[str, Any]]:
    if isinstance(c, tuple):
        return c[0], dict(c[1] or {})
    if isinstance(c, Mapping):
        return str(c.get("tool")), dict(c.get("args") or {})
    tool = getattr(c, "tool", None)
    if tool is not None:
        return str(tool), dict(getattr(c, "args", {}) or {})
    raise TypeError(f"a plan step is a {{tool, args}} mapping or a (tool, args) pair, got {c!r}")


def _record(report: StepReport, b: Branch, path: Path, certain: bool) -> None:
    for v in b.violations:
        key = (v.code, v.message)
        if all(key != (x.code, x.message) for x in report.violations):
            report.violations.append(v)
        if path.failed_at is None:
            report.on_live_paths.add(key)
        else:
            report.after_failure.setdefault(key, path.failed_at)
    name = b.outcome or "rejected"
    if b.event is not None:
        name += f"@{b.event}"
    report.branch_labels.add(name)
    for w in b.warnings:
        if all((w.code, w.message) != (x.code, x.message) for x in report.warnings):
            report.warnings.append(w)
        report.warning_branches.setdefault((w.code, w.message), set()).add(name)
    entry = report.outcomes.setdefault(
        name, {"kind": b.kind, "probability": 0.0, "paths": 0, "event": b.event, "certain": False}
    )
    entry["paths"] += 1
    if entry["probability"] is not None:
        if b.probability is None or path.probability is None:
            entry["probability"] = None
        else:
            entry["probability"] = round(
                entry["probability"] + b.probability * path.probability, 12
            )
    assumed = set(b.assumptions) | set(b.preconditions_assumed)
    if assumed:
        entry["assumptions"] = sorted(set(entry.get("assumptions", [])) | assumed)
    # certain when some path reaches this outcome without an unknown deciding it
    entry["certain"] = entry["certain"] or certain
    if b.report and b.report not in report.reports:
        report.reports.append(b.report)
    if b.approximate:
        entry["approximate"] = True


def _main_branch(branches: list[Branch]) -> Branch | None:
    """The branch shown as 'the' result: the most probable successful one, else the first."""
    best: Branch | None = None
    for b in branches:
        if b.failed:
            continue
        if best is None or (b.probability or 0.0) > (best.probability or 0.0):
            best = b
    return best or (branches[0] if branches else None)


def _diff(before: State, after: State, sim: Simulator) -> list[tuple[str, Any, Any]]:
    changes: list[tuple[str, Any, Any]] = []
    for name, slot in sim.layout.items():
        if before.data[slot] != after.data[slot] or (
            type(before.data[slot]) is not type(after.data[slot])
        ):
            label = name.replace("machine:", "machine ")
            changes.append((label, before.data[slot], after.data[slot]))
    return changes


def _step_verdict(report: StepReport, frontier: list[Path]) -> Verdict:
    """Judged on the paths still alive before the step; a rule broken only on paths that had
    already failed is shown (marked "only on branches that failed at step N") but does not
    count, unless every path had failed already."""
    live = any(p.failed_at is None for p in frontier)
    failures = [v for v in report.violations if not live or report.only_after_failure(v) is None]
    if not failures:
        return "ok"
    kinds = report.outcomes.values()
    if any(v.certain for v in failures) and any(
        e["kind"] == "fails" and e["certain"] for e in kinds
    ):
        return "fails"
    return "may_fail"


def _plan_verdict(paths: list[Path]) -> Verdict:
    if any(p.failed_at is not None and p.certain for p in paths):
        return "fails"
    if any(p.failed_at is not None for p in paths):
        return "may_fail"
    return "ok"


def _path_order(p: Path) -> tuple[int, float, tuple[str, ...]]:
    return (0 if p.failed_at is not None else 1, -(p.probability or 0.0), p.choices)

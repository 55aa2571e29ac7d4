"""Replay reports: a text summary for people and a JSON document for programs."""

from __future__ import annotations

import json
from typing import Any

from ..diagnostics import visible
from .loop import DEFAULT_NOW, OUTCOMES, VERDICTS, Disagreement, ReplayResult, RuleRow, iso_text

STATE_CHARS = 600
"""The text report cuts a state longer than this (the JSON report never does)."""


def _ratio(x: float | None) -> str:
    return "n/a" if x is None else f"{x:.4f}"


def render_json(
    result: ReplayResult, contract: str, traces: str, show: int | None = None
) -> dict[str, Any]:
    """The report as JSON-ready data; ``show`` limits the disagreements listed (None: all)."""
    shown = result.disagreements if show is None else result.disagreements[:show]
    errors = result.contract_errors if show is None else result.contract_errors[:show]
    return {
        "contract": contract,
        "traces": traces,
        "runs": result.runs,
        "steps": result.steps,
        "agreements": result.agreements,
        "disagreement_count": len(result.disagreements),
        "contract_errors": len(result.contract_errors),
        "confusion": {
            "predicted_failure": {
                "real_failure": result.true_positives,
                "real_ok": result.false_positives,
            },
            "predicted_ok": {
                "real_failure": result.false_negatives,
                "real_ok": result.true_negatives,
            },
        },
        "by_verdict": {v: {o: result.matrix[(v, o)] for o in OUTCOMES} for v in VERDICTS},
        "precision": result.precision,
        "recall": result.recall,
        "tools": {
            name: {
                "steps": c.steps,
                "agree": c.agree,
                "false_alarms": c.false_alarms,
                "misses": c.misses,
                "contract_errors": c.contract_errors,
            }
            for name, c in sorted(result.tools.items())
        },
        "risks": {"steps": result.risks, "failed": result.risks_realised},
        "result_mismatches": [m.to_json() for m in result.result_mismatches],
        "by_rule": [row.to_json() for row in _rule_rows(result)],
        "agreement_notes": {
            "steps": result.noted_agreements,
            "notes": [{"note": n, "steps": k} for n, k in _note_rows(result)],
        },
        "clock": result.clock.to_json(),
        "effects": result.effects.to_json(),
        "disagreements": [d.to_json() for d in shown],
        "contract_error_steps": [d.to_json() for d in errors],
    }


def _rule_rows(result: ReplayResult) -> list[RuleRow]:
    """By rule (alphabetical), then most steps first."""
    return sorted(
        result.by_rule.values(),
        key=lambda r: (r.code, -r.steps, OUTCOMES.index(r.outcome), r.message),
    )


def _note_rows(result: ReplayResult) -> list[tuple[str, int]]:
    return sorted(result.agreement_notes.items(), key=lambda kv: (-kv[1], kv[0]))


def render_text(
    result: ReplayResult,
    contract: str,
    traces: str,
    show: int | None = 10,
    by_rule: bool = False,
) -> str:
    """A summary: totals, the confusion matrix, precision and recall, per-tool disagreements,
    then the first ``show`` disagreements in full (None: all); with ``by_rule``, the steps
    predicted to fail by violated rule × real error, and the notes on agreeing steps."""
    tp, fp = result.true_positives, result.false_positives
    fn, tn = result.false_negatives, result.true_negatives
    m = result.matrix
    n_dis = len(result.disagreements)
    n_err = len(result.contract_errors)
    lines = [
        f"replay of {traces} against {contract}",
        f"{result.runs} run(s), {result.steps} step(s): {result.agreements} agree, "
        f"{n_dis} disagree" + (f", {n_err} contract error(s)" if n_err else ""),
        "",
        f"{'':22}{'real failure':>14}{'real ok':>10}",
        f"{'predicted failure':22}{tp:>14}{fp:>10}"
        f"   (fails {m[('fails', 'error')] + m[('fails', 'crash')] + m[('fails', 'ok')]}, "
        f"may_fail {sum(m[('may_fail', o)] for o in OUTCOMES)})",
        f"{'predicted ok':22}{fn:>14}{tn:>10}",
        f"{'':22}(error {sum(m[(v, 'error')] for v in VERDICTS)}, "
        f"crash {sum(m[(v, 'crash')] for v in VERDICTS)})",
        "",
        f"precision {_ratio(result.precision)}   recall {_ratio(result.recall)}"
        "   (of predicted failures; may_fail counts as predicted)",
    ]
    eff = result.effects
    if eff.steps:
        lines.append(
            f"effects: {eff.steps} step(s) carry state_after; agreement "
            f"{_ratio(eff.carried)} carried along the run, {_ratio(eff.from_real)} from the real "
            f"state before (per step and variable); differing steps "
            f"{eff.differing_steps['carried']} / {eff.differing_steps['from_real']}"
        )
        if eff.differences:
            diff = eff.differences[0]
            lines.append(
                f"  first difference: {diff.run} step {diff.step} ({diff.tool}, {diff.mode}): "
                + "; ".join(diff.paths[:3])
            )
    if n_err:
        err = result.contract_errors[0]
        lines.append(
            f"{n_err} step(s) where the contract could not evaluate itself (EVAL_ERROR) are left "
            f"out of these counts; first: {err.run} step {err.step} ({err.tool})"
        )
    clock = _clock_text(result)
    if clock:
        lines.append(clock)
    if result.risks:
        lines.append(
            f"{result.risks} step(s) predicted ok could fail only on an environment event "
            f"(counted as predicted ok); {result.risks_realised} of them failed"
        )
    if result.result_mismatches:
        first = result.result_mismatches[0]
        lines.append(
            f"{len(result.result_mismatches)} successful step(s) returned a value that does not "
            f"fit the tool's return type; first: {first.run} step {first.step} ({first.tool}): "
            f"{first.problem}"
        )
    if result.noted_agreements:
        top, steps = _note_rows(result)[0]
        lines.append(
            f"{result.noted_agreements} agreeing step(s) carry notes from observe; most often "
            f"({steps}): {top}" + ("" if by_rule else " (all: --by-rule)")
        )
    width = max([16, *(len(name) + 2 for name in result.tools)])
    errors_column = f"{'contract errors':>17}" if n_err else ""
    lines += [
        "",
        f"{'tool':<{width}}{'steps':>7}{'agree':>7}{'false alarms':>14}{'misses':>8}"
        + errors_column,
    ]
    for name, c in sorted(result.tools.items()):
        lines.append(
            f"{name:<{width}}{c.steps:>7}{c.agree:>7}{c.false_alarms:>14}{c.misses:>8}"
            + (f"{c.contract_errors:>17}" if n_err else "")
        )
    if by_rule:
        lines += _by_rule_text(result)
    if n_dis:
        shown = result.disagreements if show is None else result.disagreements[:show]
        lines += ["", f"first {len(shown)} of {n_dis} disagreement(s):"]
        for d in shown:
            lines += [""] + _disagreement_text(d)
    if n_err:
        errors = result.contract_errors if show is None else result.contract_errors[:show]
        lines += ["", f"first {len(errors)} of {n_err} contract error(s):"]
        for d in errors:
            lines += [""] + _disagreement_text(d)
    # recorded errors, arguments and messages: no escape sequence reaches the terminal
    return "\n".join(visible(line) for line in lines) + "\n"


def _clock_text(result: ReplayResult) -> str:
    """Which time ``today()``/``now()`` read, and where it came from (when the contract reads
    the clock)."""
    c = result.clock
    if not c.reads_clock or not result.runs:
        return ""
    parts = []
    if c.from_runs:
        times = sorted(c.run_times)
        span = " … ".join(dict.fromkeys((iso_text(times[0]), iso_text(times[-1]))))
        parts.append(f"{c.from_runs} run(s) at their own `now` ({span})")
    if c.from_option and c.option is not None:
        parts.append(f"{c.from_option} run(s) at --now {iso_text(c.option)}")
    if c.from_default:
        parts.append(
            f"{c.from_default} run(s) at the default {iso_text(DEFAULT_NOW)} (no `now` in the run, "
            "no --now: give the time of the recording)"
        )
    return "the contract reads today()/now(): " + "; ".join(parts)


def _by_rule_text(result: ReplayResult) -> list[str]:
    out = [
        "",
        "steps predicted to fail, by the contract's rule and the tool's real error (masked):",
    ]
    rows = _rule_rows(result)
    if not rows:
        out.append("  (none)")
    code = None
    for row in rows:
        if row.code != code:
            code = row.code
            total = sum(r.steps for r in rows if r.code == code)
            out += ["", f"  {code} ({total} step(s))"]
        real = "succeeded" if row.outcome == "ok" else row.outcome
        message = f": {row.message}" if row.message else ""
        out.append(f"  {row.steps:>7}  {real}{message}")
    notes = _note_rows(result)
    if notes:
        out += ["", f"notes from observe on {result.noted_agreements} agreeing step(s):"]
        out += [f"  {steps:>7}  {note}" for note, steps in notes]
    return out


def _disagreement_text(d: Disagreement) -> list[str]:
    args = json.dumps(d.args, ensure_ascii=False, sort_keys=True, default=str)
    real = d.outcome + (f": {d.error}" if d.error else "")
    out = [
        f"  {d.run} (line {d.line}), step {d.step}: {d.tool} {args}",
        f"    predicted {d.predicted}, really {real}",
    ]
    for v in d.violations:
        where = f" [{v['location']}]" if v.get("location") else ""
        out.append(f"    our rule: {v['code']}: {v['message']}{where}")
    if not d.violations:
        out.append("    our rule: none (the contract allows this call here)")
    if d.matched:
        out.append(f"    matched outcome: {d.matched}")
    out.extend(f"    note: {n}" for n in d.notes)
    state = json.dumps(d.state, ensure_ascii=False, sort_keys=True, default=str)
    if len(state) > STATE_CHARS:
        state = state[:STATE_CHARS] + " …"
    out.append(f"    state: {state}")
    return out

"""Replay reports: a text summary for people and a JSON document for programs."""

from __future__ import annotations

import json
from typing import Any

from ..dsl.diagnostics import visible
from .loop import OUTCOMES, VERDICTS, Disagreement, ReplayResult

STATE_CHARS = 600
"""The text report cuts a state longer than this (the JSON report never does)."""


def _ratio(x: float | None) -> str:
    return "n/a" if x is None else f"{x:.4f}"


def render_json(
    result: ReplayResult, contract: str, traces: str, show: int | None = None
) -> dict[str, Any]:
    """The report as JSON-ready data; ``show`` limits the disagreements listed (None: all)."""
    shown = result.disagreements if show is None else result.disagreements[:show]
    return {
        "contract": contract,
        "traces": traces,
        "runs": result.runs,
        "steps": result.steps,
        "agreements": result.steps - len(result.disagreements),
        "disagreement_count": len(result.disagreements),
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
            }
            for name, c in sorted(result.tools.items())
        },
        "risks": {"steps": result.risks, "failed": result.risks_realised},
        "result_mismatches": [m.to_json() for m in result.result_mismatches],
        "disagreements": [d.to_json() for d in shown],
    }


def render_text(result: ReplayResult, contract: str, traces: str, show: int | None = 10) -> str:
    """A summary: totals, the confusion matrix, precision and recall, per-tool disagreements,
    then the first ``show`` disagreements in full (None: all)."""
    tp, fp = result.true_positives, result.false_positives
    fn, tn = result.false_negatives, result.true_negatives
    m = result.matrix
    n_dis = len(result.disagreements)
    lines = [
        f"replay of {traces} against {contract}",
        f"{result.runs} run(s), {result.steps} step(s): {result.steps - n_dis} agree, "
        f"{n_dis} disagree",
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
    lines += [
        "",
        f"{'tool':<16}{'steps':>7}{'agree':>7}{'false alarms':>14}{'misses':>8}",
    ]
    for name, c in sorted(result.tools.items()):
        lines.append(f"{name:<16}{c.steps:>7}{c.agree:>7}{c.false_alarms:>14}{c.misses:>8}")
    if n_dis:
        shown = result.disagreements if show is None else result.disagreements[:show]
        lines += ["", f"first {len(shown)} of {n_dis} disagreement(s):"]
        for d in shown:
            lines += [""] + _disagreement_text(d)
    # recorded errors, arguments and messages: no escape sequence reaches the terminal
    return "\n".join(visible(line) for line in lines) + "\n"


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

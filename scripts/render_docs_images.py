"""Regenerate the diagrams in docs/img/ from the examples (needs Graphviz's `dot`).

    python scripts/render_docs_images.py

Draws every example's protocol machines and overview, the flow of data_enricher's enrich_events,
and two plans overlaid on the session machine and on the overview.
"""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import contractsim  # noqa: E402
from contractsim.simulator.formats import load_plan, resolve_step  # noqa: E402

OUT = ROOT / "docs" / "img"
NOW = "2024-06-01T12:00:00Z"
FLOWS = {"data_enricher": ["enrich_events"], "email": ["flush_outbox"]}
PLANS = {
    "session_protocol": [
        ("machine", "fails_query_after_close"),
        ("overview", "ok_init_query_close"),
    ]
}


def _write(name: str, data: str | bytes) -> None:
    assert isinstance(data, bytes)
    (OUT / name).write_bytes(data)
    print(f"docs/img/{name}")


def main() -> None:
    """Write every picture into docs/img/."""
    OUT.mkdir(parents=True, exist_ok=True)
    for path in sorted((ROOT / "examples").glob("*/*.contract")):
        c = contractsim.load(path)
        example = path.parent.name
        for m in c.ir.machines:
            _write(f"{example}-machine-{m.name}.png", c.render("machine", m.name, "png"))
        _write(f"{example}-overview.png", c.render("overview", format="png"))
        for tool in FLOWS.get(example, []):
            _write(f"{example}-flow-{tool}.png", c.render("tool", tool, "png"))
        for view, plan_name in PLANS.get(example, []):
            plan = load_plan(path.parent / "plans" / f"{plan_name}.yaml")
            sim = c.simulator(now=NOW)
            report = sim.run([resolve_step(c.compiled, s) for s in plan.steps])
            name = f"{example}-plan-{plan_name}.png"
            _write(name, c.render(view, None, "png", plan_report=report))


if __name__ == "__main__":
    main()

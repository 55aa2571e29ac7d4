"""Generated trace files for the scale tests and ``benchmarks/bench_scale.py``.

Runs are drawn from the recorded BFCL GorillaFileSystem runs (real initial trees and calls):
each generated run is a prefix of a recorded run, and one run in 25 has one outcome flipped, so
that the report has disagreements to merge in order, not only counts.
"""

from __future__ import annotations

import json
import random
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CONTRACT = ROOT / "examples" / "gorilla_fs" / "gorilla_fs.contract"
ADAPTER = f"{ROOT / 'examples' / 'gorilla_fs' / 'adapter.py'}:from_bfcl"
RECORDED = ROOT / "tests" / "data" / "bfcl" / "GorillaFileSystem.jsonl"


def write_generated_runs(path: Path, runs: int, seed: int = 21, max_steps: int = 3) -> Path:
    """Write ``runs`` BFCL records (one per line) to ``path``; the same file for the same
    arguments."""
    recorded = [json.loads(line) for line in RECORDED.read_text().splitlines() if line.strip()]
    rng = random.Random(seed)
    with path.open("w", encoding="utf-8") as out:
        for i in range(runs):
            record = dict(rng.choice(recorded))
            steps = [dict(s) for s in record["steps"][: rng.randint(1, max_steps)]]
            if rng.random() < 0.04:  # a disagreement: the tool "really" did the other thing
                step = steps[-1]
                if step["outcome"] == "ok":
                    step.update(outcome="error", error="synthetic failure", result=None)
                else:
                    step.update(outcome="ok", error=None, result=None)
            record.update(steps=steps, config_id=f"gen_{i}", index=i)
            out.write(json.dumps(record) + "\n")
    return path

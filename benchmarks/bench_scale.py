"""Replay at scale: 2 workers against 1 on the same runs, and peak memory from 10k to 100k runs.

Generated GorillaFileSystem runs (prefixes of the recorded BFCL runs, one in 25 with an outcome
flipped; ``tests/scale_runs.py``) are replayed by ``contractsim replay --workers N --format
json`` in a fresh Python process per measurement. Printed per measurement: wall time, CPU time
(the process and its worker processes, from ``resource.getrusage``), runs/s, and the peak RSS
of the main process and of the largest worker. Then the ratios: wall-clock speed-up of 2
workers over 1 (the issue's target: >= 1.7x on two idle cores) and the growth of peak memory
from 10k to 100k runs (target: <= 10 %).

On a shared machine the wall-clock ratio measures the load as much as the engine: report CPU
time beside it and say how loaded the machine was.

Run: python benchmarks/bench_scale.py [--runs 10000] [--large 100000] [--workers 2] [--json]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(ROOT / "tests"))

from scale_runs import ADAPTER, CONTRACT, write_generated_runs  # noqa: E402

CHILD = """
import resource, sys, time
from contractsim.cli import main
sys.stdout = open("/dev/null", "w")
try:
    main(sys.argv[1:], standalone_mode=False)
except SystemExit:
    pass
me = resource.getrusage(resource.RUSAGE_SELF)
kids = resource.getrusage(resource.RUSAGE_CHILDREN)
sys.stderr.write(f"RSS {me.ru_maxrss} {kids.ru_maxrss}\\n")
"""


def measure(traces: Path, workers: int) -> dict[str, float]:
    """Replay ``traces`` in a fresh process; wall, CPU (process and workers) and peak RSS."""
    args = ["replay", str(CONTRACT), str(traces), "--adapter", ADAPTER, "--format", "json"]
    args += ["--workers", str(workers)]
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-c", CHILD, *args], capture_output=True, text=True, check=False
    )
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    line = [x for x in done.stderr.splitlines() if x.startswith("RSS ")]
    if not line:
        raise SystemExit(f"the replay failed:\n{done.stderr}")
    main_rss, worker_rss = (int(x) for x in line[-1].split()[1:])
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return {
        "wall_s": round(wall, 2),
        "cpu_s": round(cpu, 2),
        "main_peak_mb": round(main_rss / 1024, 1),
        "worker_peak_mb": round(worker_rss / 1024, 1),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=10_000)
    parser.add_argument("--large", type=int, default=100_000)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--json", action="store_true")
    opts = parser.parse_args()
    out: dict[str, object] = {"load_average": os.getloadavg(), "cores": os.cpu_count()}
    with tempfile.TemporaryDirectory() as tmp:
        small = write_generated_runs(Path(tmp) / "small.jsonl", opts.runs)
        one = measure(small, 1)
        many = measure(small, opts.workers)
        out[f"{opts.runs} runs, 1 worker"] = one
        out[f"{opts.runs} runs, {opts.workers} workers"] = many
        out["speed-up (wall)"] = round(one["wall_s"] / many["wall_s"], 2)
        out["cpu ratio (workers / one)"] = round(many["cpu_s"] / one["cpu_s"], 2)
        if opts.large:
            large = write_generated_runs(Path(tmp) / "large.jsonl", opts.large)
            big = measure(large, opts.workers)
            out[f"{opts.large} runs, {opts.workers} workers"] = big
            out["main peak growth"] = round(big["main_peak_mb"] / many["main_peak_mb"] - 1, 3)
            out["worker peak growth"] = round(big["worker_peak_mb"] / many["worker_peak_mb"] - 1, 3)
    out["load_average_after"] = os.getloadavg()
    if opts.json:
        print(json.dumps(out, indent=2))
        return
    for key, value in out.items():
        print(f"{key}: {value}")


if __name__ == "__main__":
    main()

"""The latency ``contractsim mcp-proxy`` adds to a tool call, against calling the server directly.

Both sides use the official ``mcp`` client over stdio and the same server
(tests/mcp_servers/notes_server.py); the proxy adds a second stdio hop, the guard's check before
the call and the outcome's effects after it. The call is ``read_note`` of a note that exists (the
contract lets it through, so every call is forwarded). Reported per call, best of three rounds:
wall-clock time, and CPU time of this process and every process it started (the client, the
proxy, the server; read from /proc, so on Linux only). The machine may be shared: the CPU
figures are the steadier ones.

Run: python benchmarks/bench_mcp_proxy.py [--calls N]
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

import anyio
from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client

ROOT = Path(__file__).resolve().parents[1]
SERVERS = ROOT / "tests" / "mcp_servers"
SERVER = [sys.executable, str(SERVERS / "notes_server.py")]
PROXY = [
    sys.executable,
    "-c",
    "from contractsim.cli import main; main()",
    "mcp-proxy",
    str(SERVERS / "notes.contract"),
    "--",
    *SERVER,
]


def tree_cpu() -> float:
    """CPU seconds used so far by this process and all its descendants (Linux /proc)."""
    ticks = os.sysconf("SC_CLK_TCK")
    parent: dict[int, int] = {}
    used: dict[int, float] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as fh:
                fields = fh.read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        parent[int(entry)] = int(fields[1])
        used[int(entry)] = (int(fields[11]) + int(fields[12])) / ticks
    me = os.getpid()

    def mine(pid: int) -> bool:
        while pid > 1:
            if pid == me:
                return True
            pid = parent.get(pid, 0)
        return False

    return sum(cpu for pid, cpu in used.items() if mine(pid))


async def per_call(command: list[str], calls: int) -> tuple[float, float]:
    """(wall, CPU) seconds per sequential ``read_note`` call through ``command``, best of
    three rounds each."""
    params = StdioServerParameters(command=command[0], args=command[1:])
    async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        await session.call_tool("add_note", {"name": "n", "text": "x"})
        wall = cpu = float("inf")
        for _ in range(3):
            start, start_cpu = time.perf_counter(), tree_cpu()
            for _ in range(calls):
                result = await session.call_tool("read_note", {"name": "n"})
                assert not result.is_error
            wall = min(wall, (time.perf_counter() - start) / calls)
            cpu = min(cpu, (tree_cpu() - start_cpu) / calls)
        return wall, cpu


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--calls", type=int, default=300)
    args = parser.parse_args()
    direct = anyio.run(per_call, SERVER, args.calls)
    proxied = anyio.run(per_call, PROXY, args.calls)
    print(f"{args.calls} sequential read_note calls, best of 3 rounds; µs per call")
    print(f"{'':24}{'CPU (all processes)':>22}{'wall clock':>14}")
    print(f"{'direct to the server':24}{direct[1] * 1e6:22.0f}{direct[0] * 1e6:14.0f}")
    print(f"{'through mcp-proxy':24}{proxied[1] * 1e6:22.0f}{proxied[0] * 1e6:14.0f}")
    print(
        f"{'added by the proxy':24}{(proxied[1] - direct[1]) * 1e6:22.0f}"
        f"{(proxied[0] - direct[0]) * 1e6:14.0f}"
    )
    print(
        f"{'ratio proxy / direct':24}{proxied[1] / direct[1]:21.2f}x{proxied[0] / direct[0]:13.2f}x"
    )


if __name__ == "__main__":
    main()

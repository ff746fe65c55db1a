"""Latency of `tldrgraph mcp` per tool (warm: the index already loaded) against the CLI's
process-per-call time for the same question, on one repository, in one run; the server's
peak memory; and one changed file answered through the server (its rebuild included).
Driven by the official MCP Python SDK (`mcp`), as an agent's client would.
  usage: python3 bench/mcp_latency.py TLDRGRAPH REPO [RUNS]"""
import asyncio
import json
import os
import statistics
import subprocess
import sys
import time

from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

EXE, REPO = sys.argv[1], sys.argv[2]
RUNS = int(sys.argv[3]) if len(sys.argv) > 3 else 5

# Questions an agent asks of the standard library, each as an MCP call and the CLI command
# that answers the same (None: the CLI has no such command).
QUESTIONS = [
    ("status", {}, ["status", REPO, "--json"]),
    ("search", {"query": "parse a URL into its components"},
     ["query", "parse a URL into its components", "--json", "--root", REPO]),
    ("search", {"query": "JSONDecoder.raw_decode"},
     ["query", "JSONDecoder.raw_decode", "--json", "--root", REPO]),
    ("trace", {"from": "json.loads", "to": "JSONDecoder.raw_decode"},
     ["trace", "json.loads", "JSONDecoder.raw_decode", "--json", "--root", REPO]),
    ("callers", {"symbol": "JSONDecoder.raw_decode", "depth": 2}, None),
    ("callees", {"symbol": "json.loads", "depth": 2}, None),
    ("symbol", {"symbol": "JSONDecoder.raw_decode", "source": True}, None),
    ("layers", {}, None),
    ("dead_code", {}, ["dead-code", "--json", "--root", REPO]),
]


def cli_seconds(argv):
    times = []
    for _ in range(RUNS):
        start = time.perf_counter()
        subprocess.run([EXE, *argv], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def server_pid():
    out = subprocess.run(["pgrep", "-f", f"{EXE} mcp --root {REPO}"], capture_output=True, text=True)
    pids = [int(p) for p in out.stdout.split()]
    return pids[0] if pids else None


def peak_rss_mb(pid):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    return float("nan")


async def main():
    params = StdioServerParameters(command=EXE, args=["mcp", "--root", REPO, "--enrich", "off"])
    rows = []
    async with stdio_client(params) as (read, write):
        async with ClientSession(read, write) as session:
            await session.initialize()
            start = time.perf_counter()
            await session.call_tool("status", {})
            first = await session.call_tool("search", {"query": "warm up"})
            load = time.perf_counter() - start
            assert not first.is_error, first
            for name, args, argv in QUESTIONS:
                times = []
                for _ in range(RUNS):
                    t0 = time.perf_counter()
                    result = await session.call_tool(name, args)
                    times.append(time.perf_counter() - t0)
                    assert not result.is_error, (name, result.content)
                size = len(json.dumps(result.structured_content))
                cli = cli_seconds(argv) if argv else None
                rows.append((name, json.dumps(args)[:60], statistics.median(times), cli, size))
            pid = server_pid()
            rss = peak_rss_mb(pid) if pid else float("nan")
            # One changed file: a new function appended to a module, then asked about.
            path = os.path.join(REPO, "json", "decoder.py")
            with open(path, "a") as f:
                f.write("\n\ndef bench_fresh_function(text):\n    return JSONDecoder().decode(text)\n")
            t0 = time.perf_counter()
            result = await session.call_tool("symbol", {"symbol": "bench_fresh_function"})
            changed = time.perf_counter() - t0
            fresh = result.structured_content["freshness"]
            assert not result.is_error and fresh["fresh"], result
    print(f"first answer (index load included): {load * 1000:.0f} ms; server peak RSS {rss:.0f} MB")
    print()
    print("| tool | arguments | MCP warm (ms) | CLI process per call (ms) | CLI / MCP | answer bytes |")
    print("|---|---|---|---|---|---|")
    for name, args, mcp_s, cli_s, size in rows:
        cli = f"{cli_s * 1000:.0f}" if cli_s else "-"
        ratio = f"{cli_s / mcp_s:.1f}" if cli_s else "-"
        print(f"| {name} | `{args}` | {mcp_s * 1000:.1f} | {cli} | {ratio} | {size} |")
    print()
    print(f"one changed file (json/decoder.py), then `symbol` on the new function: {changed * 1000:.0f} ms "
          f"round trip, of which the rebuild {fresh['rebuilt']['milliseconds']} ms; state {fresh['state']}")


asyncio.run(main())

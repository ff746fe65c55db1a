"""The MCP server on the Linux kernel (issue 22): each tool's time, warm (the index loaded by the
first call) and with nothing changed between calls, and the server's peak memory. Driven by the
official MCP Python SDK (`mcp`), as an agent's client would. Part of bench/scale.sh.
  usage: python3 bench/mcp_scale.py TLDRGRAPH KERNEL_DIR"""
import asyncio
import subprocess
import sys
import time

from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

EXE, REPO = sys.argv[1], sys.argv[2]
CALLS = [("status", {})] * 3 + [
    ("search", {"query": "allocate pages for the slab cache"}),
    ("trace", {"from": "kernel_clone", "to": "copy_process"}),
    ("callers", {"symbol": "copy_process", "depth": 2}),
    ("symbol", {"symbol": "kernel/fork.c::copy_process"}),
    ("dead_code", {}),
    ("status", {}),
    ("trace", {"from": "kernel_clone", "to": "copy_process"}),
]


def peak_mb(pid):
    with open(f"/proc/{pid}/status") as status:
        for line in status:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) // 1024
    return -1


async def main():
    params = StdioServerParameters(command=EXE, args=["mcp", "--root", REPO])
    async with stdio_client(params) as (read, write):
        async with ClientSession(read, write) as session:
            await session.initialize()
            pid = int(subprocess.check_output(["pgrep", "-n", "-f", EXE + " mcp"]).split()[0])
            for name, args in CALLS:
                started = time.time()
                result = await session.call_tool(name, args)
                took = time.time() - started
                text = result.content[0].text if result.content else ""
                fresh = '"fresh":true' in text
                print(f"mcp {name}: {took:.2f} s, error={result.is_error}, fresh={fresh}, "
                      f"server peak {peak_mb(pid)} MB")


asyncio.run(main())

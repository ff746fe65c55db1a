"""Drives `tldrgraph mcp` with the official MCP Python SDK (PyPI `mcp`), as an agent's client
would: `ClientSession` over `stdio_client`. The test harness (tests/mcp.rs) gives a script of
steps as JSON on stdin and reads one JSON line per step on stdout.

Steps:
  {"call": TOOL, "args": {...}}      -> {"is_error", "structured", "text"}
  {"list_tools": true}               -> {"tools": [{"name", "input_schema", "output_schema",
                                         "schemas_valid", "read_only"}]}
  {"write": PATH, "text": TEXT}      -> {"written": PATH}   (PATH under the repository; its
                                                             directories made as needed)
  {"call_and_leave": TOOL, "args"}   -> sends the call and exits without waiting for it

usage: python3 client.py TLDRGRAPH REPO [extra server args...] < script.json
"""

import asyncio
import json
import os
import sys

import jsonschema
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client


def emit(record):
    print(json.dumps(record, sort_keys=True), flush=True)


def schema_ok(schema):
    if schema is None:
        return True
    try:
        jsonschema.validators.validator_for(schema).check_schema(schema)
        return True
    except jsonschema.exceptions.SchemaError as err:
        return str(err)


async def run(exe, repo, extra, steps):
    params = StdioServerParameters(command=exe, args=["mcp", "--root", repo, *extra])
    async with stdio_client(params) as (read, write):
        async with ClientSession(read, write) as session:
            init = await session.initialize()
            emit({"protocol": init.protocol_version, "server": init.server_info.name,
                  "instructions": init.instructions})
            for step in steps:
                if "list_tools" in step:
                    listed = await session.list_tools()
                    emit({"tools": [{
                        "name": t.name,
                        "input_schema": t.input_schema,
                        "output_schema": t.output_schema,
                        "schemas_valid": schema_ok(t.input_schema) is True
                        and schema_ok(t.output_schema) is True,
                        "read_only": bool(t.annotations and t.annotations.read_only_hint),
                    } for t in listed.tools]})
                elif "write" in step:
                    path = os.path.join(repo, step["write"])
                    os.makedirs(os.path.dirname(path), exist_ok=True)
                    with open(path, "w", encoding="utf-8") as f:
                        f.write(step["text"])
                    emit({"written": step["write"]})
                elif "call_and_leave" in step:
                    # Send the request, then drop the connection while the server works on it.
                    task = asyncio.create_task(
                        session.call_tool(step["call_and_leave"], step.get("args", {})))
                    await asyncio.sleep(step.get("after", 0.05))
                    task.cancel()
                    emit({"left": step["call_and_leave"]})
                    return
                else:
                    result = await session.call_tool(step["call"], step.get("args", {}))
                    text = "".join(c.text for c in result.content if getattr(c, "text", None))
                    emit({"is_error": bool(result.is_error),
                          "structured": result.structured_content, "text": text})


def main():
    exe, repo, extra = sys.argv[1], sys.argv[2], sys.argv[3:]
    steps = json.load(sys.stdin)
    asyncio.run(run(exe, repo, extra, steps))


if __name__ == "__main__":
    main()

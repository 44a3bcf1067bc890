"""The MCP Python SDK as a client that declared elicitation.

The Go test TestPythonSDKElicitation runs it with the venv of
scripts/mcp-python.sh. It declares elicitation (the SDK does so when it is
given a callback: form and url), runs FLOW_TASK, which leaves a change flow
does not verify, answers flow's question with FLOW_ANSWER, and prints a
JSON summary: the question, the run's result and the review's hunks after.
Inputs come from the environment: FLOW_BIN, FLOW_CONFIG, FLOW_WORKSPACE,
FLOW_TASK, FLOW_ANSWER.
"""

import json
import os
import sys
import warnings

import anyio
import mcp.types as types
from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client

warnings.simplefilter("ignore")

env = os.environ
params = StdioServerParameters(
    command=env["FLOW_BIN"],
    args=["serve", "--trusted", "--config", env["FLOW_CONFIG"]],
    env={k: env[k] for k in ("PATH", "HOME", "XDG_STATE_HOME", "XDG_CONFIG_HOME") if k in env},
)


async def main():
    out = {"questions": []}

    async def on_elicit(context, p):
        out["questions"].append({"message": p.message, "schema": p.requestedSchema})
        return types.ElicitResult(action="accept", content={"decision": env["FLOW_ANSWER"]})

    try:
        async with stdio_client(params, errlog=sys.stderr) as (r, w):
            async with ClientSession(r, w, elicitation_callback=on_elicit) as s:
                await s.initialize()
                run = await s.call_tool("flow_run", {"task": env["FLOW_TASK"]})
                rep = run.structuredContent or {}
                out["run"] = {
                    "is_error": run.isError,
                    "status": rep.get("status"),
                    "verified": rep.get("verified"),
                    "run_id": rep.get("run_id"),
                    "decision": rep.get("decision"),
                }
                listed = await s.call_tool("flow_review", {"run_id": rep.get("run_id", "")})
                out["hunks"] = [h.get("state") for h in (listed.structuredContent or {}).get("hunks", [])]
    except Exception as e:  # noqa: BLE001
        out["error"] = f"{type(e).__name__}: {e}"
    print(json.dumps(out))


anyio.run(main)

"""An independent MCP client for flow serve: the official Python SDK.

The Go test TestPythonSDKInterop runs it with the venv of
scripts/mcp-python.sh and checks the JSON summary it prints on stdout.
Inputs come from the environment:

  FLOW_BIN            the flow binary
  FLOW_CONFIG         the operator configuration (checks, fake model URL)
  FLOW_WORKSPACE      the workspace, where the checks leave their markers
  FLOW_TASK           the task of the verified run
  FLOW_CANCEL_TASK    the task of the run cancelled with notifications/cancelled
                      while its check "slow" runs (it writes slow-started)
  FLOW_TASK_RUN       the task of the run made as an MCP task, left at its
                      "gate" check (gate-started) by a closing client and
                      collected by a new one after it writes go-on
The check "tasky" (tasky-started) is run as a task and stopped by tasks/cancel.
Each check blocks only once, when the client (or the run) has armed it with
a file, since every run's verification runs every configured check.
"""

import json
import os
import sys
import time
import warnings

import anyio
import mcp.types as types
from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client

warnings.simplefilter("ignore")  # the SDK marks its tasks API deprecated

env = os.environ
ws = env["FLOW_WORKSPACE"]
params = StdioServerParameters(
    command=env["FLOW_BIN"],
    args=["serve", "--trusted", "--config", env["FLOW_CONFIG"]],
    env={k: env[k] for k in ("PATH", "HOME", "XDG_STATE_HOME", "XDG_CONFIG_HOME") if k in env},
)


async def wait_for(name, seconds=30):
    path = os.path.join(ws, name)
    for _ in range(int(seconds / 0.05)):
        if os.path.exists(path):
            return True
        await anyio.sleep(0.05)
    return False


def touch(name):
    with open(os.path.join(ws, name), "w"):
        pass


def report(result):
    return result.structuredContent or {}


async def first_session(out):
    async with stdio_client(params, errlog=sys.stderr) as (r, w):
        async with ClientSession(r, w) as s:
            init = await s.initialize()
            out["protocol"] = init.protocolVersion
            out["server"] = init.serverInfo.name
            out["tasks_capability"] = init.capabilities.tasks is not None

            tools = (await s.list_tools()).tools
            out["tools"] = {
                t.name: {
                    "input": t.inputSchema,
                    "output": t.outputSchema is not None,
                    "task_support": t.execution.taskSupport if t.execution else None,
                    "read_only": t.annotations.readOnlyHint if t.annotations else None,
                }
                for t in tools
            }

            st = await s.call_tool("flow_status", {})
            out["status"] = {"is_error": st.isError, "status": report(st).get("status")}

            progress = []
            t0 = time.monotonic()

            async def on_progress(p, total, message):
                progress.append(message or "")

            run = await s.call_tool("flow_run", {"task": env["FLOW_TASK"]}, progress_callback=on_progress)
            out["seconds"]["run"] = round(time.monotonic() - t0, 2)
            out["run"] = {
                "is_error": run.isError,
                "status": report(run).get("status"),
                "verified": report(run).get("verified"),
                "progress": progress,
            }

            # Arguments off the schema: a result the model can read, not an exception.
            bad = await s.call_tool("flow_run", {"task": 3})
            out["invalid"] = {
                "is_error": bad.isError,
                "text": bad.content[0].text if bad.content else "",
                "status": report(bad).get("status"),
            }

            # A plain call cancelled with notifications/cancelled. The SDK has
            # no API that sends it, so the client sends it itself, naming the
            # request id the SDK gave the call (its counter).
            cancel = {}
            async with anyio.create_task_group() as tg:
                async def cancelled_run():
                    try:
                        await s.call_tool("flow_run", {"task": env["FLOW_CANCEL_TASK"]})
                        cancel["answered"] = True
                    except anyio.get_cancelled_exc_class():
                        raise
                    except Exception as e:  # noqa: BLE001
                        cancel["error"] = str(e)

                request_id = s._request_id
                tg.start_soon(cancelled_run)
                cancel["started"] = await wait_for("slow-started")
                await s.send_notification(
                    types.ClientNotification(
                        types.CancelledNotification(
                            params=types.CancelledNotificationParams(requestId=request_id, reason="the user stopped it")
                        )
                    )
                )
                # flow sends no response to a cancelled call: stop waiting.
                await anyio.sleep(0.5)
                tg.cancel_scope.cancel()
            for _ in range(100):
                after = await s.call_tool("flow_status", {})
                if not report(after).get("busy"):
                    break
                await anyio.sleep(0.1)
            cancel["busy_after"] = report(after).get("busy")
            out["seconds"]["cancel"] = round(time.monotonic() - t0, 2)
            out["cancel"] = cancel

            # A check as a task, stopped with tasks/cancel.
            touch("tasky-go")
            tasky = await s.experimental.call_tool_as_task("flow_check", {"name": "tasky"}, ttl=600000)
            await wait_for("tasky-started")
            cancelled = await s.experimental.cancel_task(tasky.task.taskId)
            out["seconds"]["task_cancel"] = round(time.monotonic() - t0, 2)
            out["task_cancel"] = {"created": tasky.task.status, "reply": cancelled.status, "message": cancelled.statusMessage}

            # A run as a task, left at its gate check by this client.
            touch("gate-armed")
            created = await s.experimental.call_tool_as_task("flow_run", {"task": env["FLOW_TASK_RUN"]}, ttl=3600000)
            out["task"] = {"id": created.task.taskId, "created": created.task.status}
            out["task"]["at_gate"] = await wait_for("gate-started")
            leaving = time.monotonic()
    # The SDK's own shutdown: stdin closed, 2 s for the server to exit, then
    # SIGTERM and SIGKILL to its process group.
    out["task"]["shutdown_seconds"] = round(time.monotonic() - leaving, 3)


async def second_session(out):
    task_id = out["task"]["id"]
    async with stdio_client(params, errlog=sys.stderr) as (r, w):
        async with ClientSession(r, w) as s:
            await s.initialize()
            # The worker writes its latest event to the record at most every
            # 2 s, the last of a burst included.
            for _ in range(50):
                got = await s.experimental.get_task(task_id)
                if got.status != "working" or "gate" in (got.statusMessage or ""):
                    break
                await anyio.sleep(0.1)
            out["collect"] = {"status": got.status, "message": got.statusMessage}
            listed = await s.experimental.list_tasks()
            out["collect"]["listed"] = [t.taskId for t in listed.tasks]
            touch("go-on")
            result = await s.experimental.get_task_result(task_id, types.CallToolResult)
            out["collect"].update(
                is_error=result.isError,
                result_status=report(result).get("status"),
                verified=report(result).get("verified"),
                related=(result.meta or {}).get("io.modelcontextprotocol/related-task", {}).get("taskId"),
            )
            out["collect"]["final"] = (await s.experimental.get_task(task_id)).status


async def main():
    out = {"seconds": {}}
    start = time.monotonic()
    try:
        await first_session(out)
        out["seconds"]["first"] = round(time.monotonic() - start, 2)
        await second_session(out)
        out["seconds"]["second"] = round(time.monotonic() - start, 2)
    except Exception as e:  # noqa: BLE001
        out["error"] = f"{type(e).__name__}: {e}"
    print(json.dumps(out))


anyio.run(main)

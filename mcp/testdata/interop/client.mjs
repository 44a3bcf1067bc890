// An independent MCP client for flow serve: the official TypeScript SDK.
// The Go test TestTypeScriptSDKInterop runs it with node and checks the JSON
// summary it prints on stdout. Inputs come from the environment:
//   FLOW_BIN     the flow binary
//   FLOW_CONFIG  the operator configuration (checks, fake model URL)
//   FLOW_TASK    the task of the verified run
//   FLOW_ABORT_TASK  the task of the run that is aborted
//   FLOW_ABORT_MARKER  a file the aborted run's check creates when it starts
//   FLOW_TASK_RUN  the task of the run made as an MCP task
//   FLOW_TASK_MARKER  a file the check cancelled through tasks/cancel creates
//                     (it runs only once tasky-go exists beside it)
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { existsSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";

const env = process.env;
const transport = new StdioClientTransport({
  command: env.FLOW_BIN,
  args: ["serve", "--trusted", "--config", env.FLOW_CONFIG],
  env: { PATH: env.PATH, HOME: env.HOME, XDG_STATE_HOME: env.XDG_STATE_HOME },
  stderr: "pipe",
});
let stderr = "";
transport.stderr?.on("data", (d) => (stderr += d));

const client = new Client({ name: "flow-interop", version: "1.0.0" });
const out = {};
try {
  await client.connect(transport);
  out.server = client.getServerVersion();
  out.tools = (await client.listTools()).tools.map((t) => t.name);

  const status = await client.callTool({ name: "flow_status", arguments: {} });
  out.status = { isError: status.isError, status: status.structuredContent?.status };

  const check = await client.callTool({ name: "flow_check", arguments: {} });
  out.check = { isError: check.isError, status: check.structuredContent?.status, verified: check.structuredContent?.verified };

  const progress = [];
  const run = await client.callTool(
    { name: "flow_run", arguments: { task: env.FLOW_TASK } },
    undefined,
    { onprogress: (p) => progress.push(p.message ?? ""), timeout: 120000 },
  );
  out.run = { isError: run.isError, status: run.structuredContent?.status, verified: run.structuredContent?.verified, progress };

  const ac = new AbortController();
  const aborted = client.callTool(
    { name: "flow_run", arguments: { task: env.FLOW_ABORT_TASK } },
    undefined,
    { signal: ac.signal, timeout: 120000 },
  );
  for (let i = 0; i < 600 && !existsSync(env.FLOW_ABORT_MARKER); i++) {
    await new Promise((r) => setTimeout(r, 50));
  }
  ac.abort("the user stopped the run");
  try {
    await aborted;
    out.abort = { rejected: false };
  } catch (e) {
    out.abort = { rejected: true, error: String(e?.message ?? e) };
  }
  // The server still answers after the cancellation, and the workspace is
  // free again once the cancelled run has killed its check.
  let after;
  for (let i = 0; i < 100; i++) {
    after = await client.callTool({ name: "flow_status", arguments: {} });
    if (!after.structuredContent?.busy) break;
    await new Promise((r) => setTimeout(r, 100));
  }
  out.after = { status: after.structuredContent?.status, busy: after.structuredContent?.busy };

  // The SDK's own (experimental) tasks client: a flow_run as a task, polled
  // with tasks/get and fetched with tasks/result.
  const events = [];
  let taskResult, taskId;
  for await (const msg of client.experimental.tasks.callToolStream(
    { name: "flow_run", arguments: { task: env.FLOW_TASK_RUN } }, undefined, { timeout: 120000 })) {
    events.push(msg.type + (msg.task ? ":" + msg.task.status : ""));
    if (msg.task) taskId = msg.task.taskId;
    if (msg.type === "result") taskResult = msg.result;
    if (msg.type === "error") throw msg.error;
  }
  out.taskRun = {
    events: [...new Set(events)], taskId, isError: taskResult?.isError,
    status: taskResult?.structuredContent?.status, verified: taskResult?.structuredContent?.verified,
    related: taskResult?._meta?.["io.modelcontextprotocol/related-task"]?.taskId,
  };

  // A check run as a task and cancelled with tasks/cancel while it runs.
  const cancel = {};
  writeFileSync(join(dirname(env.FLOW_TASK_MARKER), "tasky-go"), "");
  for await (const msg of client.experimental.tasks.callToolStream(
    { name: "flow_check", arguments: { name: "tasky" } }, undefined, { timeout: 120000 })) {
    if (msg.type === "taskCreated") {
      cancel.taskId = msg.task.taskId;
      for (let i = 0; i < 600 && !existsSync(env.FLOW_TASK_MARKER); i++) {
        await new Promise((r) => setTimeout(r, 50));
      }
      cancel.reply = (await client.experimental.tasks.cancelTask(cancel.taskId)).status;
    }
    if (msg.type === "error") cancel.error = String(msg.error?.message ?? msg.error);
  }
  cancel.final = (await client.experimental.tasks.getTask(cancel.taskId)).status;
  out.taskCancel = cancel;
} catch (e) {
  out.error = String(e?.stack ?? e);
} finally {
  await client.close();
  out.stderr = stderr;
  process.stdout.write(JSON.stringify(out) + "\n");
}

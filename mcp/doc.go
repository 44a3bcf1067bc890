// Package mcp is flow's MCP stdio server (`flow serve`, doc/design.md §10): newline-
// delimited JSON-RPC 2.0 on a reader and a writer, exposing exactly four
// tools, flow_run, flow_status, flow_check and flow_review, on top of a
// [Runtime].
//
// Callers import it as flowmcp; inside this package "mcp" is mcp-go's
// protocol package.
//
// # Decision: flow owns the protocol, mcp-go provides types
//
// flow speaks the small protocol itself (initialize, notifications/
// initialized, ping, tools/list, tools/call, notifications/cancelled) and
// uses mcp-go (github.com/mark3labs/mcp-go v1.2.1) only for its protocol
// types: [mcp.Tool] (the advertised definitions and their JSON form),
// [mcp.ToolAnnotation] and [mcp.CallToolResult]. Every frame is parsed
// once, here: the envelope (parseMessage), then the method's params, then a
// tool call's arguments, decoded into the tool's argument struct, from
// which its advertised input schema is also generated (by runtime/tools,
// as the model tools' schemas are); every reply is encoded once, by flow's
// single writer.
//
// Routing validated requests through mcp-go's MCPServer.HandleMessage
// would mean encoding each of them again for it to parse, and its answers
// again on the way out, for three answers (initialize, tools/list, ping)
// that are a few fixed lines; everything flow must control — ordering,
// validation, versions, cancellation, panics — is flow's anyway. mcp-go's
// stdio server (StdioServer.Listen) cannot be used at all: its session is
// a package-level singleton (two servers in one process share it), it
// decodes request ids into float64 (large integer ids come back changed),
// its read loop cannot be told to answer in order, it reads unbounded
// lines, drops a final line without a newline, serves requests before
// initialize, queues progress notifications on another goroutine (so one
// can follow the result) and logs to stderr. What this package does instead:
//
//   - framing: a line reader capped at 1 MiB per frame, which also handles
//     a final line without a newline and skips blank lines;
//   - validation before dispatch: parse errors, batches, bad ids and
//     versions, the initialize → notifications/initialized lifecycle
//     (-32002), protocol version negotiation, unknown methods and strict
//     tools/call parameters (-32602), and arguments against the advertised
//     input schemas (an isError tool result the model can read, as MCP
//     2025-11-25 asks of input validation errors);
//   - ordering: every request except a running flow_run or flow_check is
//     answered before the next frame is read, so replies come in request
//     order; progress notifications are written synchronously by the
//     caller of the progress callback, so none can follow the tool's result;
//   - panic recovery for the tools (a panicking tool is -32603 and the
//     session goes on), and one "mcp.request" log line per request;
//   - one writer: every line goes out through one mutex-guarded writer, and
//     nothing is ever written to stderr.
//
// The server sends one request of its own: elicitation/create, the
// question a plain flow_run asks a client that declared form-mode
// elicitation when the run leaves a change flow did not verify (keep,
// revert or decide later; run_decision.go). Its id is the server's own
// ("flow-1", …); the frame loop hands the client's response to the waiting
// call by that id (peer.go), and a frame that is a response is never
// answered itself.
//
// Only the initialize handshake is spoken: initialize negotiates 2025-11-25,
// 2025-06-18 or 2025-03-26, _meta is ignored except progressToken, and
// server/discover (the stateless 2026-07-28 mode) is an unknown method.
//
// # Tools and the steps of a call
//
// The tools are a table (tool_table.go). Each is one file (flow_run.go,
// flow_status.go, flow_check.go, each with its description in a .md
// beside it) declaring a toolSpec: its argument struct, from which its
// input schema is generated and into which a call's arguments are decoded;
// its definition; its handler, answer for a tool answered inline or start
// for a runtime job; whether it may run as an MCP task; and which of its
// arguments are the call's wait_seconds and idempotency_key. Adding a
// tool is its file and one entry in the table.
//
// What every tools/call goes through is a chain of small named steps
// (call.go, in mcp-go's middleware manner but flow's own): findTool,
// bindArguments, answerInline, resubmission, runInWorker, recordJob and
// last startJob. Each step answers the call itself or hands it on, and
// what the tool declares decides which steps act on it. Every tool result
// of a call goes out through its request's reply function, which a step
// may wrap to act on the result before the client sees it.
//
// # Files
//
// The files are layers, none using a file above it (`go run
// ./scripts/codestats files mcp` counts no edge on a cycle and none
// running back up), from the bottom: the wire (frame.go, wire.go,
// progress.go, result.go); the task records (live_task.go, records.go,
// run_status.go); the tools (tool.go, the tool files, tool_table.go); a
// call's request (call_request.go); the [Server] (server.go); the session
// (session.go) and what it answers (lifecycle.go, tasks.go); the question
// after an unverified run (run_decision.go, over the server's requests to
// the client in peer.go, which sits on the wire); the steps of a call
// (idempotency.go, tool_job.go, worker.go, call.go); the worker's
// body ([RunWorker], task_worker.go, beside the pipe protocol in
// worker_protocol.go); and on top the frame loop (serve.go).
//
// # Tasks
//
// With a task store ([Options.Tasks], the journal's durable records) a
// session of 2025-11-25 speaks MCP's tasks utility (as the TypeScript SDK
// 1.32 and the Python SDK 1.30 speak it): the tasks capability for
// tools/call, tasks/list and tasks/cancel; flow_run and flow_check with
// taskSupport "optional". Every flow_run and flow_check is recorded,
// task-augmented or not; a task-augmented call is answered with its task
// at once, tasks/result waits on its own goroutine and returns the
// recorded CallToolResult with the related-task _meta, and tasks/cancel
// cancels the job as notifications/cancelled does. With [Options.Worker]
// a task's job runs in a worker process of its own ([RunWorker], started in
// a session of its own), which outlives the server; the server relays its
// events and a later server reads its record and reaches it with
// tasks/cancel. The same records serve flow_run's wait_seconds (a
// "running" result, the run goes on), flow_status {run_id} and
// idempotency_key. The store is independent of the wire.
//
// # Concurrency and cancellation
//
// The frame loop handles one frame at a time. flow_run and flow_check are
// jobs of the runtime's one job system (runtime/job): the server starts
// them and waits for them on their own goroutine, and when the runtime
// refuses to start one (another job holds the workspace, in this process or
// another) the call gets an isError result with status "busy" and the
// runtime's sentence for it, at once. The server keeps no slot of its own.
// ping, tools/list and flow_status keep being answered while a job is in
// progress, and notifications/cancelled naming the running call cancels it.
//
// A cancelled call gets no response at all (the MCP specification says the
// receiver SHOULD NOT respond): the runtime still returns its "cancelled"
// report, and the server logs it instead of writing it. At end of input the
// running plain call is left to finish and its report is written, as a server that
// reads the next frame only after answering would do; when the session ends
// on an oversized frame, the running call is cancelled and its report is
// still written, since the client did not ask for the cancellation. When the
// context passed to [Server.Serve] is cancelled (SIGTERM) — also while a call
// finishes after end of input — the running call is cancelled and nothing
// more is written.
package mcp

// Package mcp is flow's MCP stdio server (`flow serve`, SPEC §11): newline-
// delimited JSON-RPC 2.0 on a reader and a writer, exposing exactly three
// tools, flow_run, flow_status and flow_check, on top of a [Runtime].
//
// Callers import it as flowmcp; inside this package "mcp" is mcp-go's
// protocol package.
//
// # How it sits on mcp-go
//
// mcp-go (github.com/mark3labs/mcp-go v1.2.1) owns the protocol objects it
// is good at: the initialize result and capabilities, tools/list (built from
// the registered [mcp.Tool] definitions) and ping go through
// [server.MCPServer.HandleMessage], unmodified. tools/call does not: each
// frame is parsed once, by this package (the envelope, then the call's
// params, then the arguments against the advertised input schema, which
// yields the decoded arguments), and the tool is called directly with them;
// its result is written with flow's own encoder. Handing the call to mcp-go
// would mean re-encoding the validated request so that mcp-go could parse
// it again, only to reach the same handler, and a refused (busy) call would
// take that round trip just to be rendered. What this package adds, in
// place of mcp-go's stdio transport:
//
//   - framing: a line reader capped at 1 MiB per frame (mcp-go reads
//     unbounded lines), which also handles a final line without a newline
//     (mcp-go drops it) and skips blank lines;
//   - validation before dispatch: parse errors, batches, bad ids and
//     versions, the initialize → notifications/initialized lifecycle
//     (-32002; mcp-go serves requests before initialize), protocol version
//     negotiation, unknown methods, and strict tools/call parameters and
//     arguments against the advertised input schemas (-32602; mcp-go would
//     hand them to the tool, or answer with an isError result);
//   - ordering: every request except a running flow_run or flow_check is
//     answered before the next frame is read, so replies come in request
//     order (mcp-go runs requests concurrently); progress notifications are
//     written synchronously by the caller of the progress callback, so none
//     can follow the tool's result (mcp-go queues them on a separate
//     goroutine);
//   - panic recovery for the tools (a panicking tool is -32603 and the
//     session goes on);
//   - one writer: every line goes out through one mutex-guarded writer, and
//     nothing is ever written to stderr (mcp-go's stdio logger writes there).
//
// StdioServer.Listen is not used because its session is a package-level
// singleton (two servers in one process share it), it decodes request ids
// into float64 (large integer ids come back changed) and its read loop
// cannot be told to answer in order; working around each of those behind
// Listen would have meant parsing every outgoing line again.
//
// Modern (2026-07-28, stateless) mode never activates: requests reach
// mcp-go with their _meta removed, server/discover is not served, and
// initialize only negotiates 2025-11-25, 2025-06-18 or 2025-03-26. MCP tasks
// are not advertised (mcp-go v1.2.1 cancels a task's context as soon as the
// task is created).
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
// report, and the server logs it instead of writing it. When the session
// itself ends on end of input or an oversized frame, the running call is
// cancelled and its report is still written, since the client did not ask
// for the cancellation; when the context passed to [Server.Serve] is
// cancelled (SIGTERM), nothing more is written.
package mcp

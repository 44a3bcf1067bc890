// Package mcp is flow's MCP stdio server (`flow serve`, SPEC §11): newline-
// delimited JSON-RPC 2.0 on a reader and a writer, exposing exactly three
// tools, flow_run, flow_status and flow_check, on top of a [Runtime].
//
// Callers import it as flowmcp; inside this package "mcp" is mcp-go's
// protocol package.
//
// # How it sits on mcp-go
//
// mcp-go (github.com/mark3labs/mcp-go v1.2.1) owns the protocol objects: the
// initialize result and capabilities, tools/list, tools/call dispatch to the
// tool handlers, panic recovery and request logging all go through
// [server.MCPServer.HandleMessage], unmodified. This package adds what
// mcp-go's stdio transport gets wrong for flow and replaces that transport
// with a small one of its own rather than forking the library:
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
// The frame loop handles one frame at a time. flow_run and flow_check run on
// their own goroutine and share one slot per [Server]: a second one while the
// slot is taken gets an isError result with status "busy". ping, tools/list
// and flow_status keep being answered while a run is in progress, and
// notifications/cancelled naming the running call cancels its context.
//
// A cancelled call gets no response at all (the MCP specification says the
// receiver SHOULD NOT respond): the runtime still returns its "cancelled"
// report, and the server logs it instead of writing it. At end of input the
// running call is left to finish and its report is written, as a server that
// reads the next frame only after answering would do; when the session ends
// on an oversized frame, the running call is cancelled and its report is
// still written, since the client did not ask for the cancellation. When the
// context passed to [Server.Serve] is cancelled (SIGTERM) — also while a call
// finishes after end of input — the running call is cancelled and nothing
// more is written.
package mcp

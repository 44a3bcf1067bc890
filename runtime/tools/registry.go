// Package tools implements the model-facing tools of doc/design.md §5 (file_read,
// file_list, file_search, file_edit, file_write, flow_check), their schemas,
// the role matrix and argument validation. Results are bounded JSON objects
// phrased so that a small model can act on an error.
//
// Each built-in tool's input is one Go struct (fileReadArgs, ...): its
// schema is generated from the struct's tags, a call is checked against that
// schema by [ValidateArgs] and then decoded into the struct (args.go). The
// validator is kept, rather than decoding straight into the struct, because
// its messages are what small models learnt to recover from and because the
// editor's tools arrive as schemas only.
//
// [Schema] and [Parse] give another package's argument structs the same
// schema generation and checks; the MCP server's tools use them.
package tools

import (
	"context"
	"time"

	"flow/bufferfs"
	"flow/runtime/report"
)

// MaxResultChars bounds the JSON text of one tool result (doc/design.md §15).
const MaxResultChars = 40000

// CheckRunner runs named checks for the flow_check tool. name "" runs all.
type CheckRunner interface {
	Run(ctx context.Context, name string) report.CheckReport
}

// WriteHook is called before every write or edit is applied, with the path,
// the file's current state (Exists false when absent) and the new content.
// A non-nil error aborts the write; the model sees it as a tool error. The
// journal (undo) uses it to record the previous content durably first.
type WriteHook func(ctx context.Context, path string, old bufferfs.File, data []byte) error

// Options configure a Registry.
type Options struct {
	// Trusted enables file_edit, file_write and flow_check for the coder.
	Trusted bool
	// Checks runs flow_check; nil makes flow_check unavailable.
	Checks CheckRunner
	// BeforeWrite, when set, is called before each write (see WriteHook).
	BeforeWrite WriteHook
}

// Result is the outcome of one tool call.
type Result struct {
	// Status is "ok", "error", or for flow_check the check report's status.
	Status string
	// Error is the error message given to the model, if any.
	Error string
	// Content is the JSON object sent to the model as the tool message; it
	// never exceeds MaxResultChars characters.
	Content string
	// Truncated is true when the payload was cut to fit MaxResultChars.
	Truncated bool
	// Changed is the cleaned path the call wrote, or "".
	Changed string
	// Check is the check report of a flow_check call, nil otherwise.
	Check *report.CheckReport
}

// Registry dispatches tool calls for one run. It is safe for concurrent
// use when its FS and hooks are.
//
// The implementation lives in the other files of this package; this file
// fixes the API the agent builds on:
//
//	func New(fsys bufferfs.FS, opts Options) *Registry
//	func (r *Registry) Schemas(role string) []model.Tool
//	func (r *Registry) Call(ctx context.Context, role string, call model.ToolCall) Result
type Registry struct {
	fs   bufferfs.FS
	opts Options
	// searchTimeout bounds one file_search; zero means searchTimeLimit.
	// Tests shorten it.
	searchTimeout time.Duration
}

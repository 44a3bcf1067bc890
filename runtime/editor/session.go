package editor

import (
	"context"

	"flow/runtime/report"
)

// Session is an attached editor. Every method is bounded by the editor
// timeout and safe for concurrent use; a Go error means the attachment
// itself failed (timeout, transport, wrong workspace), after which the
// editor must be treated as gone.
type Session interface {
	Tools
	Freshness
	// Status describes the attachment for a status report.
	Status(ctx context.Context) report.Editor
}

// Tools is the part of a [Session] the editor tools use (doc/design.md §11.3).
type Tools interface {
	// Schemas returns the editor tool schemas the editor advertises,
	// already narrowed to the allowlisted editor tools.
	Schemas(ctx context.Context) ([]map[string]any, error)
	// Call calls one editor tool (or a bridged file tool) and returns the
	// editor's result object.
	Call(ctx context.Context, tool string, args map[string]any) (map[string]any, error)
}

// Freshness is the part of a [Session] verification uses: the freshness
// API v1 probe of the editor's workspace, unsaved buffers and workspace
// snapshot (doc/design.md §11.7).
type Freshness interface {
	Context(ctx context.Context) (Context, error)
}

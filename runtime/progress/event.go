package progress

import (
	"time"

	"flow/runtime/report"
)

// Kind names a progress event.
type Kind string

// Event kinds, in the order a simple run emits them.
const (
	RunStart   Kind = "run_start"
	RoleStart  Kind = "role_start"
	ModelTurn  Kind = "model_turn"  // a model call starts
	ModelReply Kind = "model_reply" // a model call ended (Status ok or error)
	// ModelDelta carries a chunk of the model's reply text as it
	// streams in (Message), between model_turn and model_reply. There is
	// one per streamed chunk: front ends that cannot show a stream ignore
	// it (its progress line is empty).
	ModelDelta   Kind = "model_delta"
	ToolStart    Kind = "tool_start"
	ToolEnd      Kind = "tool_end"
	CheckStart   Kind = "check_start"
	CheckEnd     Kind = "check_end"
	Verification Kind = "verification"
	RoleEnd      Kind = "role_end"
	RunEnd       Kind = "run_end"
	// Warning reports a degraded run that goes on (Message says
	// what), for example editor tools the editor could not list.
	Warning Kind = "warning"
)

// ModelWait is the heartbeat of a long model call: emitted every
// agent.HeartbeatInterval while it runs, DurationMS since it started.
const ModelWait Kind = "model_wait"

// PhaseBaseline is the Role of check events while the baseline is
// measured, before the coder's first edit.
const PhaseBaseline = "baseline"

// PhaseVerification is the Role of events emitted while the host verifies a
// cycle (its checks and the verification result).
const PhaseVerification = "verification"

// Event is one typed progress event of a run. Every front end renders them:
// `flow run` prints them on a terminal and the MCP server turns them into
// progress notifications (both as package progress writes them), the TUI
// and Neovim show them live. Fields that do not apply to a kind are zero.
type Event struct {
	Kind Kind      `json:"kind"`
	Time time.Time `json:"time"`
	// RunID identifies the run the event belongs to.
	RunID string `json:"run_id,omitempty"`
	// Job is the id of the job (see agent.Service.StartRun) the event
	// belongs to; it is for the front end's routing and is not part of the
	// JSON.
	Job int64 `json:"-"`
	// Role is the role (planner, coder, reviewer) or "verification".
	Role string `json:"role,omitempty"`
	// Turn is the 1-based model turn within the role invocation.
	Turn int `json:"turn,omitempty"`
	// Tool and ToolCallID identify a tool call.
	Tool       string `json:"tool,omitempty"`
	ToolCallID string `json:"tool_call_id,omitempty"`
	// Status is the outcome (tool, check, role, model reply, run).
	Status string `json:"status,omitempty"`
	Error  string `json:"error,omitempty"`
	// Check names the check of check events.
	Check string `json:"check,omitempty"`
	// DurationMS is the duration of what ended.
	DurationMS int64 `json:"duration_ms,omitempty"`
	// Bytes is the size of a tool result or model reply.
	Bytes     int  `json:"bytes,omitempty"`
	Truncated bool `json:"truncated,omitempty"`
	// Repeated marks a tool call answered with the identical previous
	// call's result instead of being run again (tool_end only).
	Repeated bool `json:"repeated,omitempty"`
	// Message is a short human detail: the task (run start), the model
	// (role start), the main argument of a tool call, a reply preview, the
	// streamed text chunk (model_delta).
	Message string `json:"message,omitempty"`
	// ModelCall is the report's entry of the model call that ended
	// (model_reply only): cycle, tokens, done reason and tool-call counts.
	ModelCall *report.Event `json:"model_call,omitempty"`
	// Diff is the edit's diff (tool_end of a successful file_write or
	// file_edit only): the file before the call against after it.
	Diff *report.FileDiff `json:"diff,omitempty"`
	// Report is the final report (run end only).
	Report *report.Run `json:"report,omitempty"`
	// Verification is the verification result (verification events only).
	Verification *report.Verification `json:"verification,omitempty"`
}

package agent

import (
	"fmt"
	"strings"
	"time"

	"flow/runtime/report"
)

// EventKind names a progress event.
type EventKind string

// Event kinds, in the order a simple run emits them.
const (
	EventRunStart   EventKind = "run_start"
	EventRoleStart  EventKind = "role_start"
	EventModelTurn  EventKind = "model_turn"  // a model call starts
	EventModelReply EventKind = "model_reply" // a model call ended (Status ok or error)
	// EventModelDelta carries a chunk of the model's reply text as it
	// streams in (Message), between model_turn and model_reply. There is
	// one per streamed chunk: front ends that cannot show a stream ignore
	// it ([Event.String] is empty for it).
	EventModelDelta   EventKind = "model_delta"
	EventToolStart    EventKind = "tool_start"
	EventToolEnd      EventKind = "tool_end"
	EventCheckStart   EventKind = "check_start"
	EventCheckEnd     EventKind = "check_end"
	EventVerification EventKind = "verification"
	EventRoleEnd      EventKind = "role_end"
	EventRunEnd       EventKind = "run_end"
	// EventWarning reports a degraded run that goes on (Message says
	// what), for example editor tools the editor could not list.
	EventWarning EventKind = "warning"
)

// PhaseVerification is the Role of events emitted while the host verifies a
// cycle (its checks and the verification result).
const PhaseVerification = "verification"

// Event is one typed progress event of a run. Every front end renders them:
// `flow run` prints [Event.String] on a terminal, the MCP server turns them
// into progress notifications, the TUI and Neovim show them live. Fields that
// do not apply to a kind are zero.
type Event struct {
	Kind EventKind `json:"kind"`
	Time time.Time `json:"time"`
	// RunID identifies the run the event belongs to.
	RunID string `json:"run_id,omitempty"`
	// Job is the id of the job (see [Service.StartRun]) the event belongs
	// to; it is for the front end's routing and is not part of the JSON.
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

// String renders e as one human-readable line, for example
// "coder    tool file_edit src/a.go ok 3ms".
func (e Event) String() string { return e.format(true) }

// Line renders e as [Event.String] does without the column padding, for
// front ends that do not align lines, such as MCP progress messages:
// "coder tool file_edit src/a.go ok 3ms".
func (e Event) Line() string { return e.format(false) }

func (e Event) format(pad bool) string {
	var b strings.Builder
	col := func(s string) {
		if pad {
			fmt.Fprintf(&b, "%-8s ", s)
		} else if s != "" {
			b.WriteString(s + " ")
		}
	}
	switch e.Kind {
	case EventRunStart:
		col("run")
		b.WriteString("start")
		if e.Message != "" {
			fmt.Fprintf(&b, " %q", oneLine(e.Message, 72))
		}
	case EventRunEnd:
		col("run")
		b.WriteString(e.Status)
		if r := e.Report; r != nil {
			if r.Verified {
				b.WriteString(" verified")
			}
			fmt.Fprintf(&b, " (%s, %s, %d changed)", counted(r.ModelCalls, "model call"), counted(r.ToolCalls, "tool call"), len(r.ChangedFiles))
		}
		writeDuration(&b, e.DurationMS)
		writeProblem(&b, e.Error)
	case EventRoleStart:
		col(e.Role)
		b.WriteString("start")
		if e.Message != "" {
			b.WriteString(" model " + e.Message)
		}
	case EventRoleEnd:
		col(e.Role)
		b.WriteString(e.Status)
		if e.Turn == 1 {
			b.WriteString(" after 1 turn")
		} else if e.Turn > 0 {
			fmt.Fprintf(&b, " after %d turns", e.Turn)
		}
		if e.Message != "" {
			b.WriteString(": " + e.Message)
		}
		writeDuration(&b, e.DurationMS)
		writeProblem(&b, e.Error)
	case EventModelTurn:
		col(e.Role)
		fmt.Fprintf(&b, "turn %d", e.Turn)
	case EventModelWait:
		col(e.Role)
		fmt.Fprintf(&b, "turn %d: waiting for the model, %d s", e.Turn, e.DurationMS/1000)
	case EventModelReply:
		col(e.Role)
		fmt.Fprintf(&b, "reply %d", e.Turn)
		if e.Message != "" {
			b.WriteString(": " + oneLine(e.Message, 72))
		}
		writeDuration(&b, e.DurationMS)
		writeModelCall(&b, e.ModelCall)
		writeProblem(&b, e.Error)
	case EventToolStart, EventToolEnd:
		col(e.Role)
		b.WriteString("tool " + e.Tool)
		if e.Message != "" {
			b.WriteString(" " + oneLine(e.Message, 60))
		}
		if e.Kind == EventToolStart {
			b.WriteString(" ...")
			break
		}
		b.WriteString(" " + e.Status)
		writeDuration(&b, e.DurationMS)
		if e.Truncated {
			b.WriteString(" (truncated)")
		}
		if e.Repeated {
			b.WriteString(" (repeated call: not run again, previous result reused)")
		}
		writeProblem(&b, e.Error)
	case EventCheckStart, EventCheckEnd:
		col("check")
		b.WriteString(e.Check)
		if e.Kind == EventCheckStart {
			b.WriteString(" ...")
			break
		}
		b.WriteString(" " + e.Status)
		writeDuration(&b, e.DurationMS)
		writeProblem(&b, e.Error)
	case EventVerification:
		col("verify")
		b.WriteString(e.Status)
		if v := e.Verification; v != nil {
			if v.Verified {
				b.WriteString(" verified")
			} else if v.Reason != "" {
				b.WriteString(": " + oneLine(v.Reason, 100))
			}
		}
	case EventModelDelta:
		// No line: a chunk of streamed text is not a line of its own.
	case EventWarning:
		col("warning")
		b.WriteString(oneLine(e.Message, 160))
	default:
		col(e.Role)
		b.WriteString(string(e.Kind))
	}
	return strings.TrimRight(b.String(), " ")
}

// writeDuration appends " 3ms" or " 1.2s".
func writeDuration(b *strings.Builder, ms int64) {
	switch {
	case ms <= 0:
	case ms < 1000:
		fmt.Fprintf(b, " %dms", ms)
	default:
		fmt.Fprintf(b, " %.1fs", float64(ms)/1000)
	}
}

// writeModelCall appends a model call's figures, for example
// " (812+40 tokens, prompt 5.1s, stop, 1 text tool call)".
func writeModelCall(b *strings.Builder, c *report.Event) {
	if c == nil {
		return
	}
	var parts []string
	if c.PromptTokens > 0 || c.CompletionTokens > 0 {
		parts = append(parts, fmt.Sprintf("%d+%d tokens", c.PromptTokens, c.CompletionTokens))
	}
	if c.PromptEvalMS > 0 {
		var d strings.Builder
		writeDuration(&d, c.PromptEvalMS)
		parts = append(parts, "prompt"+d.String())
	}
	if c.DoneReason != "" {
		parts = append(parts, c.DoneReason)
	}
	if c.TextToolCalls > 0 {
		parts = append(parts, plural(c.TextToolCalls, "tool call")+" from text")
	}
	if c.Note != "" {
		parts = append(parts, c.Note)
	}
	if len(parts) > 0 {
		b.WriteString(" (" + strings.Join(parts, ", ") + ")")
	}
}

// plural formats n things, e.g. "1 tool call", "2 tool calls".
func plural(n int, thing string) string {
	if n == 1 {
		return "1 " + thing
	}
	return fmt.Sprintf("%d %ss", n, thing)
}

// writeProblem appends ": <error>" when there is one.
func writeProblem(b *strings.Builder, msg string) {
	if msg != "" {
		b.WriteString(": " + oneLine(msg, 120))
	}
}

// oneLine collapses whitespace runs (newlines included) to single spaces and
// cuts s to at most n characters, marking the cut with "…".
func oneLine(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n-1]) + "…"
}

// counted is "1 tool call" or "3 tool calls".
func counted(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}

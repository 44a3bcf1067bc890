// Package progress writes a run's progress events as the one-line text
// people read: in `flow run`'s terminal, in the Neovim run buffer and in
// MCP progress notifications. The agent emits typed events (Event);
// how they read is decided here, once, for every front end.
package progress

import (
	"fmt"
	"strings"

	"flow/internal/text"
	"flow/runtime/report"
)

// Column renders e as one line whose first word is padded to a column,
// as a terminal or an editor buffer shows a run's progress, for example
// "coder    tool file_edit src/a.go ok 3ms". It is "" for a streamed
// chunk of text (model_delta), which is not a line of its own.
func Column(e Event) string { return format(e, true) }

// Line renders e as [Column] does without the padding, for front ends
// that do not align lines, such as MCP progress messages:
// "coder tool file_edit src/a.go ok 3ms".
func Line(e Event) string { return format(e, false) }

// lineFormat is how one kind of event reads.
type lineFormat struct {
	// column is the line's first word; "" stands for the event's role.
	column string
	// body writes the rest of the line.
	body func(b *strings.Builder, e Event)
}

// lineFormats are the kinds of event with a line of their own; any other
// kind reads as its role and its name.
var lineFormats = map[Kind]lineFormat{
	RunStart:     {"run", writeRunStart},
	RunEnd:       {"run", writeRunEnd},
	RoleStart:    {"", writeRoleStart},
	RoleEnd:      {"", writeRoleEnd},
	ModelTurn:    {"", writeModelTurn},
	ModelWait:    {"", writeModelWait},
	ModelReply:   {"", writeModelReply},
	ToolStart:    {"", writeTool},
	ToolEnd:      {"", writeTool},
	CheckStart:   {"check", writeCheck},
	CheckEnd:     {"check", writeCheck},
	Verification: {"verify", writeVerification},
	Warning:      {"warning", writeWarning},
}

func format(e Event, pad bool) string {
	if e.Kind == ModelDelta {
		// No line: a chunk of streamed text is not a line of its own.
		return ""
	}
	f, ok := lineFormats[e.Kind]
	if !ok {
		f = lineFormat{"", writeKind}
	}
	col := f.column
	if col == "" {
		col = e.Role
	}
	var b strings.Builder
	if pad {
		fmt.Fprintf(&b, "%-8s ", col)
	} else if col != "" {
		b.WriteString(col + " ")
	}
	f.body(&b, e)
	return strings.TrimRight(b.String(), " ")
}

func writeRunStart(b *strings.Builder, e Event) {
	b.WriteString("start")
	if e.Message != "" {
		fmt.Fprintf(b, " %q", text.OneLine(e.Message, 72))
	}
}

func writeRunEnd(b *strings.Builder, e Event) {
	b.WriteString(e.Status)
	if r := e.Report; r != nil {
		if r.Verified {
			b.WriteString(" verified")
		}
		fmt.Fprintf(b, " (%s, %s, %d changed)", text.Count(r.ModelCalls, "model call"), text.Count(r.ToolCalls, "tool call"), len(r.ChangedFiles))
	}
	writeDuration(b, e.DurationMS)
	writeProblem(b, e.Error)
}

func writeRoleStart(b *strings.Builder, e Event) {
	b.WriteString("start")
	if e.Message != "" {
		b.WriteString(" model " + e.Message)
	}
}

func writeRoleEnd(b *strings.Builder, e Event) {
	b.WriteString(e.Status)
	if e.Turn > 0 {
		b.WriteString(" after " + text.Count(e.Turn, "turn"))
	}
	if e.Message != "" {
		b.WriteString(": " + e.Message)
	}
	writeDuration(b, e.DurationMS)
	writeProblem(b, e.Error)
}

func writeModelTurn(b *strings.Builder, e Event) {
	fmt.Fprintf(b, "turn %d", e.Turn)
}

func writeModelWait(b *strings.Builder, e Event) {
	fmt.Fprintf(b, "turn %d: waiting for the model, %d s", e.Turn, e.DurationMS/1000)
}

func writeModelReply(b *strings.Builder, e Event) {
	fmt.Fprintf(b, "reply %d", e.Turn)
	if e.Message != "" {
		b.WriteString(": " + text.OneLine(e.Message, 72))
	}
	writeDuration(b, e.DurationMS)
	writeModelCall(b, e.ModelCall)
	writeProblem(b, e.Error)
}

// writeTool writes a tool call's start ("tool NAME ARGS ...") or end (its
// status, duration and what became of its result).
func writeTool(b *strings.Builder, e Event) {
	b.WriteString("tool " + e.Tool)
	if e.Message != "" {
		b.WriteString(" " + text.OneLine(e.Message, 60))
	}
	if e.Kind == ToolStart {
		b.WriteString(" ...")
		return
	}
	b.WriteString(" " + e.Status)
	writeDuration(b, e.DurationMS)
	if e.Truncated {
		b.WriteString(" (truncated)")
	}
	if e.Repeated {
		b.WriteString(" (repeated call: not run again, previous result reused)")
	}
	writeProblem(b, e.Error)
}

// writeCheck writes a check's start ("NAME ...") or end.
func writeCheck(b *strings.Builder, e Event) {
	b.WriteString(e.Check)
	if e.Kind == CheckStart {
		b.WriteString(" ...")
		return
	}
	b.WriteString(" " + e.Status)
	writeDuration(b, e.DurationMS)
	writeProblem(b, e.Error)
}

func writeVerification(b *strings.Builder, e Event) {
	b.WriteString(e.Status)
	if v := e.Verification; v != nil {
		if v.Verified {
			b.WriteString(" verified")
		} else if v.Reason != "" {
			b.WriteString(": " + text.OneLine(v.Reason, 100))
		}
	}
}

func writeWarning(b *strings.Builder, e Event) {
	b.WriteString(text.OneLine(e.Message, 160))
}

func writeKind(b *strings.Builder, e Event) {
	b.WriteString(string(e.Kind))
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
		parts = append(parts, text.Count(c.TextToolCalls, "tool call")+" from text")
	}
	if c.Note != "" {
		parts = append(parts, c.Note)
	}
	if len(parts) > 0 {
		b.WriteString(" (" + strings.Join(parts, ", ") + ")")
	}
}

// writeProblem appends ": <error>" when there is one.
func writeProblem(b *strings.Builder, msg string) {
	if msg != "" {
		b.WriteString(": " + text.OneLine(msg, 120))
	}
}

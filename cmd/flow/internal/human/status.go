package human

import (
	"encoding/json"
	"fmt"
	"strings"

	"flow/internal/text"
	"flow/runtime/report"
)

func (p *printer) status(r report.Status) {
	p.statusHead(r)
	p.statusChecks(r.Checks)
	if len(r.Warnings) > 0 {
		p.heading("warnings")
		for _, w := range r.Warnings {
			p.line("  %s %s", p.style(yellow, "!"), w)
		}
	}
	p.statusLastRun(r)
}

// statusHead is the status's first lines: version, workspace, mode,
// configuration, backend, models, editor and lock.
func (p *printer) statusHead(r report.Status) {
	mode := p.style(yellow, "read-only")
	if r.Trusted {
		mode = p.style(green, "trusted")
	}
	p.line("%s flow %s · %s · %s", p.mark(r.Status), r.Version, r.Workspace, mode)
	if r.Error != "" {
		p.line("  %s", r.Error)
	}
	cfg := p.style(yellow, "none loaded")
	if r.ConfigPath != nil && *r.ConfigPath != "" {
		cfg = *r.ConfigPath
	}
	p.line("  %s %s", p.style(dim, "config: "), cfg)
	p.line("  %s %s (%s)", p.style(dim, "backend:"), r.Backend.BaseURL, r.Backend.API)
	m := r.Models
	on := func(model, server string) string {
		if server == "" || server == "ollama" {
			return model
		}
		return model + " on " + server
	}
	planner, coder, reviewer := on(m.Planner, m.ServerOf("planner")), on(m.Coder, m.ServerOf("coder")), on(m.Reviewer, m.ServerOf("reviewer"))
	if planner == coder && coder == reviewer {
		p.line("  %s %s", p.style(dim, "models: "), planner)
	} else {
		p.line("  %s planner %s · coder %s · reviewer %s", p.style(dim, "models: "), planner, coder, reviewer)
	}
	p.reviewerLine("reviewer:", r.Reviewer)
	p.line("  %s %s", p.style(dim, "editor: "), editorState(r.Editor))
	if r.Busy {
		p.line("  %s %s", p.style(dim, "lock:   "), p.style(yellow, "held: a run, check or undo is in progress in this workspace"))
	}
}

// editorState says whether an editor is attached, and its trouble.
func editorState(e report.Editor) string {
	editor := "none"
	if e.Attached {
		editor = fmt.Sprintf("attached (%s, %s)", e.Status, text.Count(len(e.Tools), "tool"))
	}
	if e.Error != nil && *e.Error != "" && e.Attached {
		editor += " — " + *e.Error
	}
	return editor
}

// statusChecks is the table of configured checks.
func (p *printer) statusChecks(checks []report.CheckSummary) {
	if len(checks) == 0 {
		return
	}
	p.heading("checks")
	width := 0
	for _, c := range checks {
		width = max(width, len(c.Name))
	}
	for _, c := range checks {
		req := "required"
		if !c.Required {
			req = "optional"
		}
		p.line("  %-*s  %-8s %-11s %s", width, c.Name, req, c.Kind, strings.Join(c.Filetypes, " "))
	}
}

// statusLastRun is the workspace's last run, when there was one.
func (p *printer) statusLastRun(r report.Status) {
	lr := lastReport(r.LastReport)
	if lr.Status == "" {
		return
	}
	p.heading("last run")
	verdict := "not verified"
	if lr.Verified {
		verdict = "verified"
	}
	p.line("  %s %s · %s · %s", p.mark(lr.Status), lr.RunID, p.statusWord(lr.Status), verdict)
	if lr.Task != "" {
		p.line("    %s", text.FirstLine(lr.Task, 200))
	}
}

// lastReport reads the fields the summary shows from a status report's
// last_report, whatever its type.
func lastReport(v any) lastRun {
	var lr lastRun
	if v == nil {
		return lr
	}
	if b, err := json.Marshal(v); err == nil {
		_ = json.Unmarshal(b, &lr) // a last report of another shape shows nothing
	}
	return lr
}

// tasks lists flow serve's running task and the last few.
func (p *printer) tasks(t statusTasks) {
	if t.Tasks == nil || (t.Tasks.Running == nil && len(t.Tasks.Recent) == 0) {
		return
	}
	p.heading("MCP tasks (flow tasks lists them all)")
	if r := t.Tasks.Running; r != nil {
		p.line("  %s running: %s %s since %s", p.mark("working"), shortID(r.ID), r.Tool, r.CreatedAt)
		if r.Message != "" {
			p.line("      %s", text.FirstLine(r.Message, 200))
		}
	}
	for _, x := range t.Tasks.Recent {
		if t.Tasks.Running != nil && x.ID == t.Tasks.Running.ID {
			continue
		}
		status := x.Status
		if status == "completed" {
			status = "ok"
		}
		p.line("  %s %s %s %s · %s", p.mark(status), shortID(x.ID), x.Tool, p.statusWord(x.Status), x.CreatedAt)
	}
}

func shortID(id string) string {
	if len(id) > 12 {
		return id[:12]
	}
	return id
}

// reviewerLine says what is known of the reviewer's judgement
// (doc/design.md §8.10): its measured figures and sentence, or that it is
// not measured.
func (p *printer) reviewerLine(label string, st *report.ReviewerStanding) {
	if st == nil {
		return
	}
	lead := "  "
	if label != "" {
		lead += p.style(dim, label) + " "
	}
	if m := st.Measured; m != nil {
		word := p.style(yellow, "does not discriminate")
		if m.Discriminates {
			word = p.style(green, "discriminates")
		}
		p.line("%s%s: trust %d/%d, approval %d/%d, %s (measured %s)", lead, st.Model, m.Rejected, m.Wrong, m.Approved, m.Correct, word, m.At)
		return
	}
	p.line("%s%s", lead, st.Note)
}

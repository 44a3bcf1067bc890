package human

import (
	"fmt"
	"strings"

	"flow/internal/text"
)

func (p *printer) run(r runView) {
	head := p.verdict(r.Status, r.Verified)
	if e := r.evidence(); r.Verified && e != "" {
		head += " (" + e + ")"
	}
	if r.RunID != "" {
		head += " · run " + r.RunID
	}
	head += " · " + seconds(r.DurationMS)
	p.line("%s", head)
	if why := reason(r.Status, r.Reason, r.Error); why != "" {
		p.line("  %s", why)
	}
	if r.Reviewer != nil && r.Reviewer.Warning != "" {
		// Next to the verdict (doc/design.md §8.10).
		p.line("  %s %s", p.style(yellow, "note:"), r.Reviewer.Warning)
	}
	if r.Task != "" {
		p.line("  %s %s", p.style(dim, "task:"), text.FirstLine(r.Task, 200))
	}
	p.checks(r.Checks)
	p.changes(r.ChangedFiles, r.Diffs)
	p.hostEdits(r.HostEdits)
	p.roles(r.Roles)
	p.blank()
	p.line("%s", p.style(dim, fmt.Sprintf("%s, %s, %s · %d prompt + %d completion tokens",
		text.Count(r.Cycles, "cycle"), text.Count(r.ModelCalls, "model call"),
		text.Count(r.ToolCalls, "tool call"), r.Usage.PromptTokens, r.Usage.CompletionTokens)))
	if len(r.ChangedFiles) > 0 && r.RunID != "" {
		p.line("%s", p.style(dim, "undo with: flow undo "+r.RunID))
	}
}

// verdict is the summary's head: the mark, verified or not, and the status
// unless it says the same again ("ok" when verified, "unverified" when not).
func (p *printer) verdict(status string, verified bool) string {
	word := "not verified"
	if verified {
		word = "verified"
	}
	head := p.mark(status) + " " + p.style(bold, word)
	if (verified && status != "ok") || (!verified && status != "unverified") {
		head += " · " + p.statusWord(status)
	}
	return head
}

// reason is the sentence that leads a summary: the report's reason, or its
// error when there is no reason. An ok report needs none.
func reason(status, why, err string) string {
	if why == "" {
		why = err
	}
	if status == "ok" && why == "" {
		return ""
	}
	return why
}

// checks lists check results, with the tail of each failing one's output.
func (p *printer) checks(cs []checkResult) {
	if len(cs) == 0 {
		return
	}
	p.heading("checks")
	width := 0
	for _, c := range cs {
		width = max(width, len(c.Name))
	}
	for _, c := range cs {
		detail := c.Status
		if c.Returncode != nil && c.Status != "ok" {
			detail += fmt.Sprintf(" (exit %d)", *c.Returncode)
		}
		extra := ""
		if !c.Required {
			extra = " · optional"
		}
		if c.Baseline != "" && c.Baseline != "unchanged" {
			extra += " · " + c.Baseline
		}
		p.line("  %s %-*s  %s  %s%s", p.mark(c.Status), width, c.Name, p.statusWord(detail), p.style(dim, seconds(c.DurationMS)), p.style(dim, extra))
		if c.Status == "ok" {
			continue
		}
		if c.Error != "" {
			p.line("      %s", c.Error)
		}
		out := strings.TrimRight(c.Stdout, "\n")
		if s := strings.TrimRight(c.Stderr, "\n"); s != "" {
			if out != "" {
				out += "\n"
			}
			out += s
		}
		last, cut := text.LastLines(out, p.opts.TailLines)
		if last == "" {
			continue
		}
		if cut > 0 || c.StdoutTruncated {
			p.line("      %s", p.style(dim, "… (last lines of the output)"))
		}
		p.indent("      ", last)
	}
}

// changes lists changed files with diffstats, then their diffs.
func (p *printer) changes(files []string, diffs []fileDiff) {
	if len(files) == 0 && len(diffs) == 0 {
		return
	}
	byPath := map[string]fileDiff{}
	for _, d := range diffs {
		byPath[d.Path] = d
	}
	if len(files) == 0 {
		for _, d := range diffs {
			files = append(files, d.Path)
		}
	}
	p.heading("changed files")
	for _, f := range files {
		d, ok := byPath[f]
		switch {
		case !ok:
			p.line("  %s", f)
		case d.Binary:
			p.line("  %s  %s", f, p.style(dim, "binary"))
		default:
			stat := p.style(green, fmt.Sprintf("+%d", d.Added)) + " " + p.style(red, fmt.Sprintf("-%d", d.Removed))
			note := ""
			if d.Change != "" && d.Change != "modified" {
				note = " " + p.style(dim, "("+d.Change+")")
			}
			p.line("  %s  %s%s", f, stat, note)
		}
	}
	for _, f := range files {
		if d, ok := byPath[f]; ok && d.Diff != "" && !d.Binary {
			p.blank()
			p.colorDiff(d.Diff)
		}
	}
}

// hostEdits lists the changes flow made to files itself, which the diffs
// above hold too: a person should not take them for the model's.
func (p *printer) hostEdits(es []hostEdit) {
	if len(es) == 0 {
		return
	}
	p.heading("changed by flow itself")
	for _, e := range es {
		line := fmt.Sprintf("  %s (cycle %d): %s", e.Path, e.Cycle, e.What)
		if e.Status != "ok" {
			line += " — not written: " + text.OneLine(e.Error, 160)
		}
		p.line("%s", line)
	}
}

// roles summarises the roles: each one's status, and the reviewer's
// verdict and first issues.
func (p *printer) roles(rs []role) {
	if len(rs) == 0 {
		return
	}
	p.heading("roles")
	for _, r := range rs {
		s := fmt.Sprintf("  %s %-8s %s  %s", p.mark(r.Status), r.Role, p.statusWord(r.Status), p.style(dim, text.Count(r.Turns, "turn")))
		if r.Approved != nil {
			if *r.Approved {
				s += " · approved"
			} else {
				s += " · " + p.style(red, "rejected")
			}
		}
		p.line("%s", s)
		if r.Error != "" {
			p.line("      %s", text.FirstLine(r.Error, 300))
		}
		if r.Role == "reviewer" && r.Summary != "" {
			p.line("      %s", text.FirstLine(r.Summary, 300))
		}
		for i, is := range r.Issues {
			if i == 3 {
				p.line("      %s", p.style(dim, fmt.Sprintf("… %d more issues", len(r.Issues)-3)))
				break
			}
			p.line("      - %s", text.FirstLine(is, 200))
		}
	}
}

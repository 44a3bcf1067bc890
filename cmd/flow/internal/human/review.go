package human

import (
	"fmt"
	"io"

	"flow/runtime/report"
)

// review renders a review report: the host's verdict and the person's
// apart, one line per hunk, and the text of the hunks still pending.
func (p *printer) review(r report.ReviewReport) {
	head := p.mark(r.Status) + " review · " + p.statusWord(r.Status)
	if r.RunID != "" {
		head += " · run " + r.RunID
	}
	p.line("%s", head)
	if r.Error != "" && r.Status != "ok" {
		p.line("  %s", r.Error)
	} else if r.Message != "" {
		p.line("  %s", r.Message)
	}
	if len(r.Conflicts) > 0 {
		p.heading("refused")
		for _, c := range r.Conflicts {
			p.line("  %s %s — %s", p.style(red, "✗"), c.Path, c.Reason)
		}
	}
	if len(r.Hunks) == 0 {
		return
	}
	p.heading("hunks")
	for _, h := range r.Hunks {
		p.line("  %s %s %s -%d,%d +%d,%d · %s", p.stateWord(h.State), h.ID, h.Path, h.OldStart, h.OldLines, h.NewStart, h.NewLines, h.Evidence.Shows)
	}
	for _, h := range r.Hunks {
		if h.State == report.HunkPending {
			p.blank()
			p.hunk(h)
		}
	}
}

// stateWord colours a hunk's state, padded to line up.
func (p *printer) stateWord(state string) string {
	s := fmt.Sprintf("%-8s", state)
	switch state {
	case report.HunkKept:
		return p.style(green, s)
	case report.HunkReverted:
		return p.style(red, s)
	}
	return p.style(yellow, s)
}

// hunk shows one hunk: its file and id, its file's evidence, its text.
func (p *printer) hunk(h report.Hunk) {
	p.line("  %s %s", p.style(bold, h.Path), p.style(dim, "hunk "+h.ID))
	p.line("  %s", p.style(cyan, h.Evidence.Sentence))
	p.colorDiff(h.Text)
}

// RenderHunk writes one hunk as `flow review` shows it on a terminal,
// headed by its place in the walk ("2/5").
func RenderHunk(w io.Writer, h report.Hunk, n, of int, opts Options) error {
	if opts.DiffLines <= 0 {
		opts.DiffLines = 80
	}
	p := &printer{opts: opts}
	p.line("%s", p.style(dim, fmt.Sprintf("── %d/%d ──", n, of)))
	p.hunk(h)
	_, err := io.WriteString(w, p.b.String())
	return err
}

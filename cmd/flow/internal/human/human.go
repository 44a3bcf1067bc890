// Package human renders flow's JSON reports as a summary a person reads on
// a terminal: status and the reason first, then checks with the tail of a
// failing one's output, changed files with their diffstat and diff, and what
// to do next. It reads the same JSON object the command would print, so the
// summary can never show something the report does not say; fields it does
// not know are ignored and missing ones are left out.
package human

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"flow/internal/text"
	"flow/runtime/diff"
	"flow/runtime/report"
)

// Options control the rendering.
type Options struct {
	// Color adds ANSI colours (a terminal without NO_COLOR).
	Color bool
	// TailLines bounds the lines of a failing check's output (0: 12).
	TailLines int
	// DiffLines bounds the diff lines shown per file (0: 80); the report
	// holds the whole bounded diff.
	DiffLines int
}

// Render writes the summary of the report JSON of command ("run", "check",
// "status", "undo", "review" or "doctor").
func Render(w io.Writer, command string, reportJSON []byte, opts Options) error {
	if opts.TailLines <= 0 {
		opts.TailLines = 12
	}
	if opts.DiffLines <= 0 {
		opts.DiffLines = 80
	}
	p := &printer{opts: opts}
	var err error
	switch command {
	case "run":
		var r runView
		if err = json.Unmarshal(reportJSON, &r); err == nil {
			p.run(r)
		}
	case "check":
		var r checkView
		if err = json.Unmarshal(reportJSON, &r); err == nil {
			p.check(r)
		}
	case "status":
		var r report.Status
		var t statusTasks
		if err = json.Unmarshal(reportJSON, &r); err == nil {
			if err = json.Unmarshal(reportJSON, &t); err == nil {
				p.status(r)
				p.tasks(t)
			}
		}
	case "undo":
		var r undoView
		if err = json.Unmarshal(reportJSON, &r); err == nil {
			p.undo(r)
		}
	case "review":
		var r report.ReviewReport
		if err = json.Unmarshal(reportJSON, &r); err == nil {
			p.review(r)
		}
	case "doctor":
		var r doctorView
		if err = json.Unmarshal(reportJSON, &r); err == nil {
			p.doctor(r)
		}
	default:
		return fmt.Errorf("no human rendering for %q", command)
	}
	if err != nil {
		return fmt.Errorf("render %s report: %w", command, err)
	}
	_, err = io.WriteString(w, p.b.String())
	return err
}

// printer accumulates the summary.
type printer struct {
	opts Options
	b    strings.Builder
}

// ANSI styles.
const (
	bold   = "1"
	dim    = "2"
	red    = "31"
	green  = "32"
	yellow = "33"
	cyan   = "36"
)

func (p *printer) style(code, s string) string {
	if !p.opts.Color || s == "" {
		return s
	}
	return "\x1b[" + code + "m" + s + "\x1b[0m"
}

func (p *printer) line(format string, args ...any) {
	fmt.Fprintf(&p.b, format, args...)
	p.b.WriteByte('\n')
}

func (p *printer) blank() {
	if p.b.Len() > 0 && !strings.HasSuffix(p.b.String(), "\n\n") {
		p.b.WriteByte('\n')
	}
}

func (p *printer) heading(s string) {
	p.blank()
	p.line("%s", p.style(bold, s))
}

// mark is the symbol for a status.
func (p *printer) mark(status string) string {
	switch status {
	case "ok":
		return p.style(green, "✓")
	case "failed", "error", "timeout", "conflict", "unavailable":
		return p.style(red, "✗")
	case "cancelled", "interrupted", "busy":
		return p.style(yellow, "■")
	}
	return p.style(yellow, "!")
}

func (p *printer) statusWord(status string) string {
	switch status {
	case "ok":
		return p.style(green, status)
	case "failed", "error", "timeout", "conflict", "unavailable":
		return p.style(red, status)
	}
	return p.style(yellow, status)
}

// indent writes text with a prefix on every line.
func (p *printer) indent(prefix, text string) {
	for _, l := range strings.Split(strings.TrimRight(text, "\n"), "\n") {
		p.line("%s%s", prefix, l)
	}
}

func seconds(ms int64) string {
	switch {
	case ms < 1000:
		return fmt.Sprintf("%dms", ms)
	case ms < 60000:
		return fmt.Sprintf("%.1fs", float64(ms)/1000)
	}
	return fmt.Sprintf("%dm%02ds", ms/60000, ms/1000%60)
}

// colorDiff renders a file's diff, bounded to the option's lines.
func (p *printer) colorDiff(d string) {
	lines := strings.Split(strings.TrimRight(d, "\n"), "\n")
	cut := 0
	if len(lines) > p.opts.DiffLines {
		cut = len(lines) - p.opts.DiffLines
		lines = lines[:p.opts.DiffLines]
	}
	body := strings.Join(lines, "\n") + "\n"
	if p.opts.Color {
		body = diff.ANSI(body)
	}
	p.indent("    ", body)
	if cut > 0 {
		p.line("    %s", p.style(dim, fmt.Sprintf("… %s more in the report's diff", text.Count(cut, "line"))))
	}
}

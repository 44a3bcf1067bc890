package agent

import (
	"strconv"
	"strings"
)

// texter is a context value that a role's message shows as text instead
// of JSON (renderUserMessage). A check's output inside a JSON string is a
// single line of \n escapes; a small model reads it far better as the
// lines it is (doc/design.md §6.9).
type texter interface {
	promptText() string
}

// checkList is a list of failing checks as a role's message shows them.
type checkList []checkSummary

func (l checkList) promptText() string {
	parts := make([]string, len(l))
	for i, c := range l {
		parts[i] = c.promptText()
	}
	return strings.Join(parts, "")
}

// promptText is one failing check: its name, whether it is required, its
// kind, status and exit code, its error, and the tail of its output in a
// fence.
func (c checkSummary) promptText() string {
	var b strings.Builder
	b.WriteString("Check `" + c.Name + "` (")
	if c.Required {
		b.WriteString("required")
	} else {
		b.WriteString("optional")
	}
	if c.Kind != "" {
		b.WriteString(", " + c.Kind)
	}
	b.WriteString("): " + c.Status)
	if c.Returncode != nil {
		b.WriteString(", exit code " + strconv.Itoa(*c.Returncode))
	}
	if c.Error != "" {
		b.WriteString(": " + c.Error)
	}
	var out []string
	for _, t := range []string{c.StdoutTail, c.StderrTail} {
		if t = strings.TrimSpace(t); t != "" {
			out = append(out, t)
		}
	}
	if len(out) == 0 {
		b.WriteString(".\n")
		return b.String()
	}
	b.WriteString(". The end of its output:\n")
	b.WriteString(fenced(strings.Join(out, "\n")))
	return b.String()
}

// fenced puts s in a plain Markdown fence longer than any run of
// backquotes in s, so that output quoting Markdown cannot close it.
func fenced(s string) string {
	longest, run := 0, 0
	for _, r := range s {
		if r == '`' {
			run++
			longest = max(longest, run)
		} else {
			run = 0
		}
	}
	fence := strings.Repeat("`", max(3, longest+1))
	return fence + "\n" + s + "\n" + fence + "\n"
}

// promptText is the repair context as the repair coder reads it: the
// instruction, the host's verification (its reason, the failing checks
// with their output, the passing ones, the files no static analysis
// covered), the reviewer's verdict when one was asked, and the last
// coder's error, if it ended in one.
func (s repairSummary) promptText() string {
	var b strings.Builder
	b.WriteString(s.Instruction + "\n")
	v := s.Verification
	b.WriteString("\nThe host's verification: " + v.Status)
	if v.Reason != "" {
		b.WriteString(". " + strings.TrimSuffix(v.Reason, "."))
	}
	b.WriteString(".\n")
	if len(v.FailingChecks) > 0 {
		b.WriteString(checkList(v.FailingChecks).promptText())
	}
	if len(v.PassedChecks) > 0 {
		b.WriteString("Checks that pass: " + strings.Join(v.PassedChecks, ", ") + ".\n")
	}
	v.writeGaps(&b)
	if r := s.Review; r != nil {
		switch {
		case r.Approved != nil && *r.Approved:
			b.WriteString("\nThe reviewer approved the change")
		case r.Approved != nil:
			b.WriteString("\nThe reviewer rejected the change")
		default:
			b.WriteString("\nThe reviewer gave no verdict (" + r.Status + ")")
		}
		if r.Summary != "" {
			b.WriteString(": " + r.Summary)
		}
		if r.Error != "" {
			b.WriteString(" (" + r.Error + ")")
		}
		b.WriteString("\n")
		for _, is := range r.Issues {
			b.WriteString("- " + is + "\n")
		}
	}
	if p := s.Previous; p.Error != "" {
		b.WriteString("\nThe last coder ended in " + p.Status + ": " + p.Error + "\n")
	}
	return b.String()
}

// writeGaps adds the changed files no static analysis covers, and what
// was omitted to stay within the budget, to a role's text.
func (v verificationSummary) writeGaps(b *strings.Builder) {
	if len(v.CoverageGaps) > 0 {
		gaps := make([]string, len(v.CoverageGaps))
		for i, g := range v.CoverageGaps {
			gaps[i] = g.Path + " (" + g.Language + ")"
		}
		b.WriteString("Changed files that no static analysis check covers: " + strings.Join(gaps, ", ") + ".\n")
	}
	if v.Omitted != "" {
		b.WriteString("(" + v.Omitted + ")\n")
	}
}

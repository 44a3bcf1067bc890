package tui

import (
	"fmt"
	"strings"
	"unicode"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"flow/runtime/report"
)

// View implements tea.Model: the header, the log, the hint line and the
// input line, on the alternate screen.
func (m *ui) View() tea.View {
	rule := styleRule.Render(strings.Repeat("─", m.width))
	title := styleTitle.Render("flow") + styleDim.Render(" · local planner / coder / reviewer · /help for commands")
	info := "workspace " + sanitize(m.workspace) + " · " + styleMode[m.trusted].Render(modeText(m.trusted)) +
		" · " + sanitize(modelsText(m.models))
	parts := []string{
		fit(title, m.width),
		fit(info, m.width),
		rule,
		m.viewport.View(),
		rule,
		fit(m.hint(), m.width),
		m.input.View(),
	}
	v := tea.NewView(strings.Join(parts, "\n"))
	v.AltScreen = true
	v.WindowTitle = "flow"
	return v
}

// hint is the line above the input: what Ctrl-C would do now.
func (m *ui) hint() string {
	switch {
	case m.quitArmed:
		return styleLine[lineWarn].Render(msgQuitArmed)
	case m.job != nil && m.job.cancelling:
		return styleLine[lineWarn].Render(m.job.kind + " " + msgCancelling)
	case m.job != nil:
		return styleLine[lineInput].Render(m.job.kind+" in progress…") + styleDim.Render(" · Ctrl-C cancels")
	}
	return styleDim.Render("Enter runs a task or a command · Up/Down history · PgUp/PgDn scroll · Ctrl-D quits")
}

// renderLog joins the log's lines, styled and wrapped to width cells, for
// the viewport. The styled and wrapped forms are cached in the lines. Every
// line is sanitised when styled, so text from the model, tools or files
// can never carry terminal escape sequences to the screen.
func renderLog(lines []logLine, width int) string {
	var b strings.Builder
	for i := range lines {
		l := &lines[i]
		if l.rendered == "" && l.text != "" {
			*l = l.styled()
		}
		if l.wrapWidth != width {
			l.wrapped, l.wrapWidth = ansi.Wrap(l.rendered, width, ""), width
		}
		if i > 0 {
			b.WriteByte('\n')
		}
		b.WriteString(l.wrapped)
	}
	return b.String()
}

// fit cuts a styled line to width cells.
func fit(s string, width int) string { return ansi.Truncate(s, width, "…") }

// sanitize makes text safe to print on one line: tabs become spaces, line
// breaks become spaces, and other control characters become "?".
func sanitize(s string) string {
	if !strings.ContainsFunc(s, unicode.IsControl) {
		return s
	}
	return strings.Map(func(r rune) rune {
		switch {
		case r == '\t' || r == '\n' || r == '\r':
			return ' '
		case unicode.IsControl(r):
			return '?'
		}
		return r
	}, s)
}

// oneLine collapses whitespace runs to single spaces and cuts s to at most
// n runes, marking the cut with "…".
func oneLine(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n-1]) + "…"
}

// block splits text into indented log lines, at most max of them.
func block(text, indent string, limit int) []logLine {
	all := strings.Split(strings.TrimRight(text, "\n"), "\n")
	var lines []logLine
	for i, l := range all {
		if i == limit {
			lines = append(lines, logLine{kind: lineDim, text: fmt.Sprintf("%s… (%d more lines)", indent, len(all)-i)})
			break
		}
		lines = append(lines, logLine{kind: lineText, text: indent + strings.TrimRight(l, " \t\r")})
	}
	return lines
}

// tail returns the last limit non-blank lines of output, indented and dim.
func tail(output, indent string, limit int) []logLine {
	var kept []string
	for _, l := range strings.Split(output, "\n") {
		if strings.TrimSpace(l) != "" {
			kept = append(kept, l)
		}
	}
	if len(kept) > limit {
		kept = kept[len(kept)-limit:]
	}
	lines := make([]logLine, len(kept))
	for i, l := range kept {
		lines[i] = logLine{kind: lineDim, text: indent + strings.TrimRight(l, " \t\r")}
	}
	return lines
}

// duration renders milliseconds as "3ms", "1.2s" or "2m05s"; "" for none.
func duration(ms int64) string {
	switch {
	case ms <= 0:
		return ""
	case ms < 1000:
		return fmt.Sprintf("%dms", ms)
	case ms < 60_000:
		return fmt.Sprintf("%.1fs", float64(ms)/1000)
	default:
		s := ms / 1000
		return fmt.Sprintf("%dm%02ds", s/60, s%60)
	}
}

// plural renders "1 changed file" or "2 changed files".
func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}

// modeText names the trust mode.
func modeText(trusted bool) string {
	if trusted {
		return "trusted"
	}
	return "read-only"
}

// modelsText names the roles' models: "model qwen3" when they agree.
func modelsText(m report.Models) string {
	if m.Planner == m.Coder && m.Coder == m.Reviewer {
		return "model " + orDash(m.Coder)
	}
	return fmt.Sprintf("planner %s · coder %s · reviewer %s", orDash(m.Planner), orDash(m.Coder), orDash(m.Reviewer))
}

// nonEmpty drops empty strings.
func nonEmpty(ss ...string) []string {
	var out []string
	for _, s := range ss {
		if s != "" {
			out = append(out, s)
		}
	}
	return out
}

// orDash returns s, or "-" when it is empty.
func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

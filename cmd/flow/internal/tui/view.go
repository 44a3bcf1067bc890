package tui

import (
	"fmt"
	"slices"
	"strings"
	"time"
	"unicode"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"flow/internal/text"
	"flow/runtime/report"
)

// View implements tea.Model: the header, the log, the hint line and the
// input line, on the alternate screen. Its cost is bounded by the screen:
// only the log's rows on screen are rendered.
func (m *ui) View() tea.View {
	rule := styleRule.Render(strings.Repeat("─", m.width))
	title := styleTitle.Render("flow") + styleDim.Render(" · local planner / coder / reviewer · /help for commands")
	info := "workspace " + sanitize(m.workspace) + " · " + styleMode[m.trusted].Render(modeText(m.trusted)) +
		" · " + sanitize(modelsText(m.models))
	parts := []string{fit(title, m.width), fit(info, m.width)}
	if w := warningsText(m.warnings); w != "" {
		parts = append(parts, fit(styleWarnings.Render(w), m.width))
	}
	parts = append(parts, rule, m.visibleLog(), rule, fit(m.hint(), m.width), m.input.View())
	v := tea.NewView(strings.Join(parts, "\n"))
	v.AltScreen = true
	v.WindowTitle = "flow"
	return v
}

// warningsText is the header's warnings line: "⚠ first · second", "" for
// none.
func warningsText(warnings []string) string {
	if len(warnings) == 0 {
		return ""
	}
	short := make([]string, len(warnings))
	for i, w := range warnings {
		short[i] = sanitize(text.OneLine(w, detailWidth))
	}
	return "⚠ " + strings.Join(short, " · ")
}

// visibleLog renders the log's rows on screen, logHeight of them, walking
// back from the end of the log: the cost is that of the rows shown (and
// of those scrolled past), never that of the whole log. Each line's
// wrapping is cached in the line. Every line is sanitised when styled, so
// text from the model, tools or files can never carry terminal escape
// sequences to the screen.
func (m *ui) visibleLog() string {
	rows := make([]string, 0, m.logHeight)
	skip := m.scroll
	for i := len(m.log) - 1; i >= 0 && len(rows) < m.logHeight; i-- {
		w := m.log[i].wrapped(m.width)
		for j := len(w) - 1; j >= 0 && len(rows) < m.logHeight; j-- {
			if skip > 0 {
				skip--
				continue
			}
			rows = append(rows, w[j])
		}
	}
	slices.Reverse(rows)
	for len(rows) < m.logHeight {
		rows = append(rows, "")
	}
	return strings.Join(rows, "\n")
}

// hint is the line above the input: what the job is doing, or the keys.
// Each form fits 80 columns; on a narrower terminal the least useful
// parts go first.
func (m *ui) hint() string {
	switch {
	case m.quitArmed:
		return styleLine[lineWarn].Render(msgQuitArmed)
	case m.review != nil && m.review.applying:
		return styleDim.Render("applying…")
	case m.review != nil:
		return styleLine[lineInput].Render(fitParts(m.width, reviewHints...))
	case m.job != nil && m.job.cancelling:
		return styleLine[lineWarn].Render(m.job.kind + " " + msgCancelling)
	case m.job != nil:
		elapsed := " " + elapsedText(m.now().Sub(m.step.start))
		cancel := " · Ctrl-C cancels"
		label := m.step.label
		if label == "" {
			label = m.job.kind
		}
		spin := m.spin.View() + " "
		room := m.width - ansi.StringWidth(spin) - len(elapsed) - len(cancel)
		if room < 12 {
			cancel = ""
			room = m.width - ansi.StringWidth(spin) - len(elapsed)
		}
		label = ansi.Truncate(sanitize(label), max(1, room), "…")
		return styleLine[lineInput].Render(spin+label) + styleDim.Render(elapsed+cancel)
	}
	return styleDim.Render(fitParts(m.width, idleHints...))
}

// idleHints are the keys the idle hint line names, most useful first.
var idleHints = []string{"Enter runs a task or /command", "↑/↓ history", "PgUp/PgDn scroll", "Ctrl-D quits"}

// fitParts joins parts with " · ", leaving out the parts from the last
// one on that would not fit width cells.
func fitParts(width int, parts ...string) string {
	out := parts[0]
	for _, p := range parts[1:] {
		if ansi.StringWidth(out+" · "+p) > width {
			break
		}
		out += " · " + p
	}
	return out
}

// elapsedText renders a step's elapsed time: "0.4s", "12.0s", "2m05s".
func elapsedText(d time.Duration) string {
	d = max(0, d)
	if d < time.Minute {
		return fmt.Sprintf("%.1fs", d.Seconds())
	}
	s := int64(d / time.Second)
	return fmt.Sprintf("%dm%02ds", s/60, s%60)
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

// modeText names the trust mode.
func modeText(trusted bool) string {
	if trusted {
		return "trusted"
	}
	return "read-only"
}

// modelsText names the roles' models, each with its server when that is
// not [ollama]: "model qwen3" when they agree.
func modelsText(m report.Models) string {
	on := func(model, server string) string {
		if server == "" || server == "ollama" {
			return orDash(model)
		}
		return orDash(model) + " on " + server
	}
	planner, coder, reviewer := on(m.Planner, m.ServerOf("planner")), on(m.Coder, m.ServerOf("coder")), on(m.Reviewer, m.ServerOf("reviewer"))
	if planner == coder && coder == reviewer {
		return "model " + coder
	}
	return fmt.Sprintf("planner %s · coder %s · reviewer %s", planner, coder, reviewer)
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

package tui

import (
	"strings"

	"charm.land/lipgloss/v2"
	"github.com/charmbracelet/x/ansi"
)

// lineKind says how a log line is styled. The text itself never holds
// escape sequences: the terminal's color profile decides what styling
// survives (NO_COLOR, dumb terminals).
type lineKind int

const (
	lineText     lineKind = iota // plain
	lineDim                      // details, pending work
	lineInput                    // the echo of an input line
	lineOK                       // success
	lineWarn                     // unverified, cancelled, unavailable
	lineError                    // failures and errors
	lineHeading                  // the first line of a command's answer
	lineModel                    // the model's streamed text
	lineDiffAdd                  // an added line of a diff
	lineDiffDel                  // a removed line of a diff
	lineDiffHunk                 // a diff's hunk header
)

// logLine is one line of the log, or, with group set, the lines of one
// answer that filled the place its command reserved in the log.
type logLine struct {
	kind  lineKind
	text  string
	group []logLine
	// rendered caches the sanitised, styled text once the line is in the
	// log, and rows that text wrapped to rowsWidth cells, so that the log
	// is not restyled and rewrapped on every event.
	rendered  string
	rows      []string
	rowsWidth int
}

// styled returns l with its rendering cached (and its wrapping dropped).
func (l logLine) styled() logLine {
	for i := range l.group {
		l.group[i] = l.group[i].styled()
	}
	l.rendered = styleLine[l.kind].Render(sanitize(l.text))
	l.rows, l.rowsWidth = nil, 0
	return l
}

// wrapped returns l's screen rows at width cells, cached.
func (l *logLine) wrapped(width int) []string {
	if l.rowsWidth == width && l.rows != nil {
		return l.rows
	}
	var rows []string
	if l.group != nil {
		for i := range l.group {
			rows = append(rows, l.group[i].wrapped(width)...)
		}
	} else {
		if l.rendered == "" && l.text != "" {
			*l = l.styled()
		}
		rows = strings.Split(ansi.Wrap(l.rendered, width, ""), "\n")
	}
	l.rows, l.rowsWidth = rows, width
	return rows
}

// plain returns l's text, a group's lines joined by newlines.
func (l logLine) plain() string {
	if l.group == nil {
		return l.text
	}
	texts := make([]string, len(l.group))
	for i, g := range l.group {
		texts[i] = g.plain()
	}
	return strings.Join(texts, "\n")
}

// Styles of the terminal UI.
var (
	styleTitle = lipgloss.NewStyle().Bold(true)
	styleDim   = lipgloss.NewStyle().Faint(true)
	styleRule  = lipgloss.NewStyle().Foreground(lipgloss.Color("8"))
	styleMode  = map[bool]lipgloss.Style{
		true:  lipgloss.NewStyle().Foreground(lipgloss.Color("2")).Bold(true),
		false: lipgloss.NewStyle().Foreground(lipgloss.Color("3")).Bold(true),
	}
	styleLine = map[lineKind]lipgloss.Style{
		lineText:     lipgloss.NewStyle(),
		lineDim:      styleDim,
		lineInput:    lipgloss.NewStyle().Foreground(lipgloss.Color("6")).Bold(true),
		lineOK:       lipgloss.NewStyle().Foreground(lipgloss.Color("2")),
		lineWarn:     lipgloss.NewStyle().Foreground(lipgloss.Color("3")),
		lineError:    lipgloss.NewStyle().Foreground(lipgloss.Color("1")),
		lineHeading:  lipgloss.NewStyle().Bold(true),
		lineModel:    lipgloss.NewStyle().Foreground(lipgloss.Color("7")),
		lineDiffAdd:  lipgloss.NewStyle().Foreground(lipgloss.Color("2")),
		lineDiffDel:  lipgloss.NewStyle().Foreground(lipgloss.Color("1")),
		lineDiffHunk: lipgloss.NewStyle().Foreground(lipgloss.Color("6")),
	}
	styleWarnings = lipgloss.NewStyle().Foreground(lipgloss.Color("3"))
)

// kindOfStatus maps a report or event status to the style of its line.
func kindOfStatus(status string) lineKind {
	switch status {
	case "ok":
		return lineOK
	case "failed", "error", "timeout", "conflict":
		return lineError
	case "":
		return lineText
	case "skipped": // a role the host chose not to run
		return lineDim
	default: // unverified, stale, cancelled, busy, unavailable
		return lineWarn
	}
}

package tui

import "charm.land/lipgloss/v2"

// lineKind says how a log line is styled. The text itself never holds
// escape sequences: the terminal's color profile decides what styling
// survives (NO_COLOR, dumb terminals).
type lineKind int

const (
	lineText    lineKind = iota // plain
	lineDim                     // details, pending work
	lineInput                   // the echo of an input line
	lineOK                      // success
	lineWarn                    // unverified, cancelled, unavailable
	lineError                   // failures and errors
	lineHeading                 // the first line of a command's answer
)

// logLine is one line of the log.
type logLine struct {
	kind lineKind
	text string
	// rendered caches the sanitised, styled text once the line is in the
	// log, and wrapped that text wrapped to wrapWidth cells, so that the
	// log is not restyled and rewrapped on every event.
	rendered  string
	wrapped   string
	wrapWidth int
}

// styled returns l with its rendering cached.
func (l logLine) styled() logLine {
	l.rendered = styleLine[l.kind].Render(sanitize(l.text))
	return l
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
		lineText:    lipgloss.NewStyle(),
		lineDim:     styleDim,
		lineInput:   lipgloss.NewStyle().Foreground(lipgloss.Color("6")).Bold(true),
		lineOK:      lipgloss.NewStyle().Foreground(lipgloss.Color("2")),
		lineWarn:    lipgloss.NewStyle().Foreground(lipgloss.Color("3")),
		lineError:   lipgloss.NewStyle().Foreground(lipgloss.Color("1")),
		lineHeading: lipgloss.NewStyle().Bold(true),
	}
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
	default: // unverified, stale, cancelled, busy, unavailable
		return lineWarn
	}
}

package tui

import (
	"context"
	"fmt"
	"strings"
	"time"

	"charm.land/bubbles/v2/spinner"
	"charm.land/bubbles/v2/textinput"
	tea "charm.land/bubbletea/v2"

	"flow/internal/text"
	"flow/runtime/progress"
	"flow/runtime/report"
)

// Layout and limits of the terminal UI.
const (
	defaultWidth  = 80
	defaultHeight = 24
	// chromeLines are the lines around the log: two header lines, two
	// rules, the hint line and the input line (plus the warnings line of
	// the header when there are warnings).
	chromeLines = 6
	// maxLogLines bounds the log; the oldest lines go first.
	maxLogLines = 5000
	// wheelRows is how far one mouse wheel step scrolls.
	wheelRows = 3
	// maxHistory bounds the input history.
	maxHistory = 500
	prompt     = "flow > "
)

// ui is the Bubble Tea model of the terminal UI. Update runs on the
// program's goroutine; jobs run in their own goroutines and reach the model
// only through messages.
type ui struct {
	ctx context.Context // cancelled when Run ends; parent of every job
	rt  Runtime

	workspace string
	trusted   bool
	models    report.Models

	width, height int

	// log holds the log's lines; log[i] is line number base+i, so that
	// pending, places and stream keep pointing at their lines while the
	// oldest lines are dropped.
	log     []logLine
	base    int64
	pending map[string]int64 // line of a started tool call, check or turn
	places  map[int64]int64  // line reserved for a command's answer, by place id
	nextID  int64            // the last place id given
	stream  *stream          // the model text streaming in, if any
	// scroll is how many screen rows the view is above the log's end; 0
	// follows the end. logHeight is the log's share of the screen.
	scroll    int
	logHeight int
	warnings  []string // the status report's warnings, for the header

	spin spinner.Model
	now  func() time.Time
	step step // what the job is doing now, for the hint line
	role step // the role in progress

	input   textinput.Model
	history []string
	histPos int    // index into history while browsing; len(history) otherwise
	draft   string // the input being typed before browsing the history

	job          *shownJob   // the runtime job the log is following
	review       *reviewWalk // the review walk waiting for keys, if any
	quitArmed    bool        // Ctrl-C was pressed once while idle
	quitWhenIdle bool        // quit as soon as the job has returned
}

// newModel returns the model for a program whose jobs derive from ctx.
func newModel(ctx context.Context, rt Runtime, opts Options) *ui {
	in := textinput.New()
	in.Prompt = prompt
	in.Placeholder = "a task, or /help"
	styles := textinput.DefaultDarkStyles()
	styles.Cursor.Blink = false
	in.SetStyles(styles)
	in.Focus()
	m := &ui{
		ctx:       ctx,
		rt:        rt,
		workspace: opts.Workspace,
		trusted:   opts.Trusted,
		models:    opts.Models,
		pending:   map[string]int64{},
		places:    map[int64]int64{},
		input:     in,
		spin:      spinner.New(spinner.WithSpinner(spinner.MiniDot)),
		now:       time.Now,
	}
	m.resize(defaultWidth, defaultHeight)
	return m
}

// Init implements tea.Model: it asks for the status, whose warnings the
// header shows.
func (m *ui) Init() tea.Cmd {
	ctx, rt := m.ctx, m.rt
	return func() tea.Msg { return warningsMsg(rt.Status(ctx).Warnings) }
}

// warningsMsg carries the status report's warnings to the header.
type warningsMsg []string

// Update implements tea.Model. Nothing here renders the log: View renders
// only the rows on screen.
func (m *ui) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	return m, m.update(msg)
}

// update handles one message.
func (m *ui) update(msg tea.Msg) tea.Cmd {
	switch msg := msg.(type) {
	case tea.WindowSizeMsg:
		m.resize(msg.Width, msg.Height)
		return nil
	case tea.KeyPressMsg:
		return m.handleKey(msg)
	case tea.MouseWheelMsg:
		switch msg.Button {
		case tea.MouseWheelUp:
			m.scrollBy(wheelRows)
		case tea.MouseWheelDown:
			m.scrollBy(-wheelRows)
		}
		return nil
	case spinner.TickMsg:
		if m.job == nil {
			return nil // the spinner stops with the job
		}
		var cmd tea.Cmd
		m.spin, cmd = m.spin.Update(msg)
		return cmd
	case jobMsg:
		return m.handleJob(msg)
	case jobClosedMsg:
		return nil
	case answerMsg:
		m.fill(msg.place, msg.lines)
		return nil
	case statusMsg:
		m.setWarnings(msg.status.Warnings)
		m.fill(msg.place, statusLines(msg.status))
		return nil
	case warningsMsg:
		m.setWarnings(msg)
		return nil
	case modelChosenMsg:
		m.chooseModel(msg)
		return nil
	case reviewOpenedMsg:
		m.openReview(msg)
		return nil
	case reviewAppliedMsg:
		return m.applied(msg)
	}
	var cmd tea.Cmd
	m.input, cmd = m.input.Update(msg)
	return cmd
}

// handleKey handles one key press.
func (m *ui) handleKey(msg tea.KeyPressMsg) tea.Cmd {
	key := msg.String()
	if key != "ctrl+c" {
		m.quitArmed = false
	}
	if m.review != nil {
		if cmd, handled := m.reviewKey(key); handled {
			return cmd
		}
	}
	switch key {
	case "ctrl+c":
		return m.interrupt()
	case "ctrl+d":
		if m.input.Value() == "" {
			return m.requestQuit()
		}
	case "enter":
		return m.submit()
	case "up":
		m.historyPrev()
		return nil
	case "down":
		m.historyNext()
		return nil
	case "pgup":
		m.scrollBy(max(1, m.logHeight-1))
		return nil
	case "pgdown":
		m.scrollBy(-max(1, m.logHeight-1))
		return nil
	}
	var cmd tea.Cmd
	m.input, cmd = m.input.Update(msg)
	return cmd
}

// interrupt handles Ctrl-C: it cancels the job in progress; while idle the
// first press arms quitting and the second quits; while a job is already
// being cancelled it quits once the job has returned.
func (m *ui) interrupt() tea.Cmd {
	if m.job != nil {
		if !m.job.cancelling {
			m.cancelJob()
			return nil
		}
		return m.requestQuit()
	}
	if m.quitArmed {
		return tea.Quit
	}
	m.input.Reset()
	m.quitArmed = true
	return nil
}

// requestQuit quits now when idle; otherwise it cancels the job and quits
// when the job has returned (asked twice, it quits at once: Run still
// waits for the job before exiting).
func (m *ui) requestQuit() tea.Cmd {
	if m.job == nil || m.quitWhenIdle {
		return tea.Quit
	}
	m.quitWhenIdle = true
	if !m.job.cancelling {
		m.cancelJob()
	}
	m.appendLines(logLine{kind: lineDim, text: "quitting once the " + m.job.kind + " has stopped"})
	return nil
}

// cancelJob cancels the job in progress.
func (m *ui) cancelJob() {
	m.job.cancelling = true
	m.job.job.Cancel()
	m.appendLines(logLine{kind: lineWarn, text: msgCancelling})
}

// submit handles Enter: it records the line in the history, echoes it and
// executes it.
func (m *ui) submit() tea.Cmd {
	line := strings.TrimSpace(m.input.Value())
	m.input.Reset()
	m.histPos = len(m.history)
	m.draft = ""
	if line == "" {
		return nil
	}
	if n := len(m.history); n == 0 || m.history[n-1] != line {
		m.history = append(m.history, line)
		if len(m.history) > maxHistory {
			m.history = m.history[len(m.history)-maxHistory:]
		}
	}
	m.histPos = len(m.history)
	m.appendLines(logLine{kind: lineInput, text: "› " + line})
	return m.execute(parseCommand(line))
}

// historyPrev shows the previous history entry (Up).
func (m *ui) historyPrev() {
	if m.histPos == 0 {
		return
	}
	if m.histPos == len(m.history) {
		m.draft = m.input.Value()
	}
	m.histPos--
	m.input.SetValue(m.history[m.histPos])
	m.input.CursorEnd()
}

// historyNext shows the next history entry, then the draft (Down).
func (m *ui) historyNext() {
	if m.histPos >= len(m.history) {
		return
	}
	m.histPos++
	if m.histPos == len(m.history) {
		m.input.SetValue(m.draft)
	} else {
		m.input.SetValue(m.history[m.histPos])
	}
	m.input.CursorEnd()
}

// handleJob renders a batch of the job's events and, when the batch holds
// the job's result, ends the job.
func (m *ui) handleJob(msg jobMsg) tea.Cmd {
	if m.job == nil || m.job.id != msg.id {
		return nil
	}
	j := m.job
	done := false
	for _, item := range msg.items {
		switch it := item.(type) {
		case progress.Event:
			m.addEvent(it)
		case runDoneMsg:
			m.appendLines(runSummaryLines(it.report, j.shown)...)
			done = true
		case checkDoneMsg:
			m.appendLines(checkReportLines(it.report)...)
			done = true
		case undoDoneMsg:
			m.appendLines(undoLines(it.report, nil)...)
			done = true
		case jobFailedMsg:
			m.appendLines(errorLine(it.kind + " failed: " + it.err))
			done = true
		}
	}
	if !done {
		return waitJob(j.id, j.queue)
	}
	m.job = nil
	m.stream = nil
	// Work that started but never reported its end (the job was cancelled
	// or failed) no longer looks in progress.
	for _, n := range m.pending {
		if l := m.line(n); l != nil {
			text := strings.TrimSuffix(l.text, "…") + "stopped"
			*l = logLine{kind: lineDim, text: text}.styled()
		}
	}
	m.pending = map[string]int64{}
	if m.quitWhenIdle {
		return tea.Quit
	}
	return nil
}

// runDoneMsg, checkDoneMsg and undoDoneMsg are the results of jobs.
type (
	runDoneMsg   struct{ report report.Run }
	checkDoneMsg struct{ report report.CheckReport }
	undoDoneMsg  struct{ report report.Undo }
)

// addEvent renders one progress event; an end event replaces the line of
// its start event when that is still in the log.
func (m *ui) addEvent(e progress.Event) {
	m.track(e)
	if e.Kind == progress.ModelDelta {
		m.addDelta(e)
		return
	}
	line, key, ok := eventLine(e)
	if !ok {
		return
	}
	switch e.Kind {
	case progress.ToolStart, progress.CheckStart, progress.ModelTurn:
		m.pending[key] = m.end()
		m.appendLines(line)
		return
	case progress.ModelReply:
		m.stream = nil
	}
	replaced := false
	switch e.Kind {
	case progress.ToolEnd, progress.CheckEnd, progress.ModelReply:
		if n, found := m.pending[key]; found {
			delete(m.pending, key)
			if l := m.line(n); l != nil {
				*l = line.styled()
				replaced = true
			}
		}
	}
	if !replaced {
		m.appendLines(line)
	}
	if m.job != nil {
		m.appendLines(eventDetailLines(e, &m.job.shown)...)
	}
}

// step is what a job is doing, since when.
type step struct {
	label string
	start time.Time
}

// track follows the job's current step for the hint line.
func (m *ui) track(e progress.Event) {
	now := m.now()
	switch e.Kind {
	case progress.RoleStart:
		m.role = step{e.Role, now}
		m.step = m.role
	case progress.ModelTurn:
		m.step = step{fmt.Sprintf("%s turn %d", e.Role, e.Turn), now}
	case progress.ToolStart:
		m.step = step{strings.TrimSpace(e.Role + " " + e.Tool + " " + text.OneLine(e.Message, eventDetailWidth)), now}
	case progress.CheckStart:
		m.step = step{"check " + e.Check, now}
	case progress.ToolEnd, progress.CheckEnd, progress.ModelReply, progress.RoleEnd:
		if e.Kind == progress.RoleEnd {
			m.role = step{}
		}
		m.step = m.role
		if m.step.label == "" && m.job != nil {
			m.step = step{m.job.kind + " in progress", m.job.start}
		}
	}
}

// Bounds of the streamed model text in the log.
const (
	maxStreamLines = 400  // lines of one model turn
	maxStreamLine  = 2000 // bytes of one line
	streamIndent   = "  "
)

// stream is the model turn whose text is streaming into the log.
type stream struct {
	key   string
	last  int64 // the line being streamed into; -1 before the first
	lines int
	cut   bool
}

// addDelta appends a chunk of the model's text: the last line grows in
// place, each newline starts a line.
func (m *ui) addDelta(e progress.Event) {
	key := fmt.Sprintf("turn/%s/%d", e.Role, e.Turn)
	if m.stream == nil || m.stream.key != key {
		m.stream = &stream{key: key, last: -1}
	}
	s := m.stream
	for i, part := range strings.Split(expandTabs(e.Message), "\n") {
		if s.cut {
			return
		}
		if i == 0 && s.last >= 0 {
			if l := m.line(s.last); l != nil {
				if len(l.text) < maxStreamLine {
					*l = logLine{kind: lineModel, text: l.text + part}.styled()
				}
				continue
			}
		}
		if s.last < 0 && strings.TrimSpace(part) == "" {
			continue // no blank lines before the text
		}
		if s.lines == maxStreamLines {
			m.appendLines(logLine{kind: lineDim, text: streamIndent + "… (more text not shown)"})
			s.cut = true
			return
		}
		s.last = m.end()
		s.lines++
		m.appendLines(logLine{kind: lineModel, text: streamIndent + part})
	}
}

// end is the number the next line of the log will have.
func (m *ui) end() int64 { return m.base + int64(len(m.log)) }

// line returns line n of the log, or nil when it was dropped.
func (m *ui) line(n int64) *logLine {
	i := n - m.base
	if i < 0 || i >= int64(len(m.log)) {
		return nil
	}
	return &m.log[i]
}

// appendLines adds lines to the log. A view scrolled up stays on the rows
// it shows.
func (m *ui) appendLines(lines ...logLine) {
	for _, l := range lines {
		l = l.styled()
		if m.scroll > 0 {
			m.scroll += len(l.wrapped(m.width))
		}
		m.log = append(m.log, l)
	}
	if over := len(m.log) - maxLogLines; over > 0 {
		clear(m.log[:over])
		m.log = m.log[over:]
		m.base += int64(over)
	}
}

// reserve adds the place of a command's answer to the log and returns its
// id: answers fill their places in the order the commands were typed,
// whatever order they arrive in.
func (m *ui) reserve() int64 {
	m.nextID++
	m.places[m.nextID] = m.end()
	m.appendLines(logLine{kind: lineDim, text: "  …"})
	return m.nextID
}

// fill puts an answer into the place with id place, or at the end of the
// log when the place was dropped or cleared.
func (m *ui) fill(place int64, lines []logLine) {
	n, ok := m.places[place]
	delete(m.places, place)
	if l := m.line(n); ok && l != nil {
		before := len(l.wrapped(m.width))
		*l = logLine{group: append([]logLine(nil), lines...)}.styled()
		if m.scroll > 0 && n < m.end()-1 {
			m.scroll += len(l.wrapped(m.width)) - before
		}
		return
	}
	m.appendLines(lines...)
}

// clearLog empties the log (/clear).
func (m *ui) clearLog() {
	m.base += int64(len(m.log))
	m.log = nil
	m.pending = map[string]int64{}
	m.stream = nil
	m.scroll = 0
}

// scrollBy scrolls the view up by rows (down when negative), within the
// log.
func (m *ui) scrollBy(rows int) {
	m.scroll = max(0, m.scroll+rows)
	if rows > 0 {
		total := 0
		for i := len(m.log) - 1; i >= 0 && total < m.scroll+m.logHeight; i-- {
			total += len(m.log[i].wrapped(m.width))
		}
		m.scroll = min(m.scroll, max(0, total-m.logHeight))
	}
}

// setWarnings shows warnings in the header (which then has one more line).
func (m *ui) setWarnings(warnings []string) {
	m.warnings = warnings
	m.resize(m.width, m.height)
}

// resize lays the UI out for a width × height terminal.
func (m *ui) resize(width, height int) {
	if width <= 0 {
		width = defaultWidth
	}
	if height <= 0 {
		height = defaultHeight
	}
	m.width, m.height = width, height
	chrome := chromeLines
	if len(m.warnings) > 0 {
		chrome++
	}
	m.logHeight = max(1, height-chrome)
	m.input.SetWidth(max(1, width-len(prompt)-1))
}

package tui

import (
	"context"
	"strings"

	"charm.land/bubbles/v2/textinput"
	"charm.land/bubbles/v2/viewport"
	tea "charm.land/bubbletea/v2"

	"flow/runtime/agent"
	"flow/runtime/report"
)

// Layout and limits of the terminal UI.
const (
	defaultWidth  = 80
	defaultHeight = 24
	// chromeLines are the lines around the log: two header lines, two
	// rules, the hint line and the input line.
	chromeLines = 6
	// maxLogLines bounds the log; the oldest lines go first.
	maxLogLines = 5000
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

	log      []logLine
	logDirty bool           // the viewport does not show log yet
	pending  map[string]int // index in log of a started tool call, check or turn
	viewport viewport.Model

	input   textinput.Model
	history []string
	histPos int    // index into history while browsing; len(history) otherwise
	draft   string // the input being typed before browsing the history

	job          *shownJob // the runtime job the log is following
	quitArmed    bool      // Ctrl-C was pressed once while idle
	quitWhenIdle bool      // quit as soon as the job has returned
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
		pending:   map[string]int{},
		viewport:  viewport.New(),
		input:     in,
	}
	m.viewport.SoftWrap = false           // renderLog wraps, once per line and width
	m.viewport.KeyMap = viewport.KeyMap{} // keys belong to the input line
	m.resize(defaultWidth, defaultHeight)
	return m
}

// Init implements tea.Model.
func (m *ui) Init() tea.Cmd { return nil }

// Update implements tea.Model. The log is re-rendered once per message,
// however many lines the message added.
func (m *ui) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	cmd := m.update(msg)
	if m.logDirty {
		m.refreshLog()
	}
	return m, cmd
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
		var cmd tea.Cmd
		m.viewport, cmd = m.viewport.Update(msg)
		return cmd
	case jobMsg:
		return m.handleJob(msg)
	case jobClosedMsg:
		return nil
	case linesMsg:
		m.appendLines(msg...)
		return nil
	case modelChosenMsg:
		m.chooseModel(msg)
		return nil
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
		m.viewport.PageUp()
		return nil
	case "pgdown":
		m.viewport.PageDown()
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
		case agent.Event:
			m.addEvent(it)
		case runDoneMsg:
			m.appendLines(runSummaryLines(it.report)...)
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
	// Work that started but never reported its end (the job was cancelled
	// or failed) no longer looks in progress.
	for _, i := range m.pending {
		if i < len(m.log) {
			text := strings.TrimSuffix(m.log[i].text, "…") + "stopped"
			m.log[i] = logLine{kind: lineDim, text: text}.styled()
			m.logDirty = true
		}
	}
	m.pending = map[string]int{}
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
func (m *ui) addEvent(e agent.Event) {
	line, key, ok := eventLine(e)
	if !ok {
		return
	}
	switch e.Kind {
	case agent.EventToolStart, agent.EventCheckStart, agent.EventModelTurn:
		m.pending[key] = len(m.log)
		m.appendLines(line)
		return
	case agent.EventToolEnd, agent.EventCheckEnd, agent.EventModelReply:
		if i, found := m.pending[key]; found && i < len(m.log) {
			delete(m.pending, key)
			m.log[i] = line.styled()
			m.logDirty = true
			return
		}
	}
	m.appendLines(line)
}

// appendLines adds lines to the log.
func (m *ui) appendLines(lines ...logLine) {
	for _, l := range lines {
		m.log = append(m.log, l.styled())
	}
	if over := len(m.log) - maxLogLines; over > 0 {
		m.log = append([]logLine(nil), m.log[over:]...)
		for k, i := range m.pending {
			if i < over {
				delete(m.pending, k)
			} else {
				m.pending[k] = i - over
			}
		}
	}
	m.logDirty = true
}

// clearLog empties the log (/clear).
func (m *ui) clearLog() {
	m.log = nil
	m.pending = map[string]int{}
	m.logDirty = true
}

// refreshLog puts the log into the viewport and follows the end of the log
// when the view was there.
func (m *ui) refreshLog() {
	m.logDirty = false
	follow := m.viewport.AtBottom()
	m.viewport.SetContent(renderLog(m.log, m.viewport.Width()))
	if follow {
		m.viewport.GotoBottom()
	}
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
	m.viewport.SetWidth(width)
	m.viewport.SetHeight(max(1, height-chromeLines))
	m.input.SetWidth(max(1, width-len(prompt)-1))
	m.refreshLog()
}

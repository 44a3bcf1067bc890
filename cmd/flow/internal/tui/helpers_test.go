package tui

import (
	"context"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"flow/runtime/report"
)

// Keys used by the tests.
var (
	keyEnter = tea.KeyPressMsg{Code: tea.KeyEnter}
	keyUp    = tea.KeyPressMsg{Code: tea.KeyUp}
	keyDown  = tea.KeyPressMsg{Code: tea.KeyDown}
	keyCtrlC = tea.KeyPressMsg{Code: 'c', Mod: tea.ModCtrl}
	keyCtrlD = tea.KeyPressMsg{Code: 'd', Mod: tea.ModCtrl}
)

// testOptions are the options of most model tests.
var testOptions = Options{
	Workspace: "/work/demo",
	Trusted:   true,
	Models:    report.Models{Planner: "qwen3", Coder: "qwen3", Reviewer: "qwen3"},
}

// newTestUI returns a model over rt, laid out on a 120×200 terminal so that
// the whole log is visible.
func newTestUI(t *testing.T, rt Runtime, opts Options) *ui {
	t.Helper()
	m := newModel(t.Context(), rt, opts)
	m.Update(tea.WindowSizeMsg{Width: 120, Height: 200})
	t.Cleanup(func() {
		if m.job != nil && m.job.job != nil {
			m.job.job.Cancel()
		}
		ctx, stop := context.WithTimeout(context.Background(), 10*time.Second)
		defer stop()
		rt.Wait(ctx)
	})
	return m
}

// press sends one key press and returns the command Update returned.
func press(m *ui, k tea.KeyPressMsg) tea.Cmd {
	_, cmd := m.Update(k)
	return cmd
}

// typeText types s into the input line, one key press per rune.
func typeText(m *ui, s string) {
	for _, r := range s {
		press(m, tea.KeyPressMsg{Code: r, Text: string(r)})
	}
}

// submit types line and presses Enter.
func submit(m *ui, line string) tea.Cmd {
	typeText(m, line)
	return press(m, keyEnter)
}

// screen returns the rendered view without escape sequences.
// Trailing blanks are removed from every line and blank lines are dropped,
// so that the log's padding does not get in the way.
func screen(m *ui) string {
	var kept []string
	for _, l := range strings.Split(ansi.Strip(m.View().Content), "\n") {
		if l = strings.TrimRight(l, " "); l != "" {
			kept = append(kept, l)
		}
	}
	return strings.Join(kept, "\n")
}

// logText returns the log's lines as plain text.
func logText(m *ui) string {
	lines := make([]string, len(m.log))
	for i, l := range m.log {
		lines[i] = l.plain()
	}
	return strings.Join(lines, "\n")
}

// runCmd runs cmd, failing the test if it does not return (a hang guard,
// not a timing assertion).
func runCmd(t *testing.T, cmd tea.Cmd) tea.Msg {
	t.Helper()
	ch := make(chan tea.Msg, 1)
	go func() { ch <- cmd() }()
	select {
	case msg := <-ch:
		return msg
	case <-time.After(20 * time.Second):
		t.Fatal("command did not return")
		return nil
	}
}

// jobBatch runs cmd, the command a job's start or batch returned, and
// returns the job's message (the spinner's tick, batched with it, is left
// out).
func jobBatch(t *testing.T, cmd tea.Cmd) tea.Msg {
	t.Helper()
	msg := runCmd(t, cmd)
	batch, ok := msg.(tea.BatchMsg)
	if !ok {
		return msg
	}
	for _, c := range batch {
		if c == nil {
			continue
		}
		switch msg := runCmd(t, c).(type) {
		case jobMsg, jobClosedMsg:
			return msg
		}
	}
	t.Fatal("no job message in the batch")
	return nil
}

// settle runs cmd and the commands that follow from it, feeding their
// messages to the model, until none is left; it reports whether one of
// them quit the program.
func settle(t *testing.T, m *ui, cmd tea.Cmd) (quit bool) {
	t.Helper()
	cmds := []tea.Cmd{cmd}
	for len(cmds) > 0 {
		c := cmds[0]
		cmds = cmds[1:]
		if c == nil {
			continue
		}
		switch msg := runCmd(t, c).(type) {
		case tea.BatchMsg:
			cmds = append(cmds, msg...)
		case tea.QuitMsg:
			quit = true
		case jobMsg, jobClosedMsg, answerMsg, statusMsg, modelChosenMsg, warningsMsg, reviewOpenedMsg, reviewAppliedMsg:
			_, next := m.Update(msg)
			cmds = append(cmds, next)
		}
	}
	return quit
}

// isQuit reports whether cmd quits the program.
func isQuit(t *testing.T, cmd tea.Cmd) bool {
	t.Helper()
	if cmd == nil {
		return false
	}
	_, ok := runCmd(t, cmd).(tea.QuitMsg)
	return ok
}

// wait fails the test if ch is not closed in time (a hang guard).
func wait(t *testing.T, ch <-chan struct{}, what string) {
	t.Helper()
	select {
	case <-ch:
	case <-time.After(20 * time.Second):
		t.Fatalf("timed out waiting for %s", what)
	}
}

// assertContains fails for each want missing from got.
func assertContains(t *testing.T, got string, wants ...string) {
	t.Helper()
	for _, w := range wants {
		if !strings.Contains(got, w) {
			t.Errorf("screen lacks %q; screen:\n%s", w, got)
		}
	}
}

// assertLacks fails for each unwanted string present in got.
func assertLacks(t *testing.T, got string, unwanted ...string) {
	t.Helper()
	for _, u := range unwanted {
		if strings.Contains(got, u) {
			t.Errorf("screen has %q; screen:\n%s", u, got)
		}
	}
}

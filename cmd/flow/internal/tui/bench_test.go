package tui

import (
	"context"
	"fmt"
	"testing"

	tea "charm.land/bubbletea/v2"

	"flow/runtime/agent"
)

// BenchmarkEventIntoLongLog measures one progress event arriving when the
// log is nearly full: the cost the UI pays per event late in a long session.
func BenchmarkEventIntoLongLog(b *testing.B) {
	m := newModel(context.Background(), newFake(), testOptions)
	m.Update(tea.WindowSizeMsg{Width: 120, Height: 40})
	for i := range maxLogLines - 100 {
		m.appendLines(logLine{text: fmt.Sprintf("coder  file_read src/file%d.go  ok  3ms", i)})
	}
	m.job = &shownJob{id: 1, kind: "run", queue: newQueue()}
	ev := agent.Event{Kind: agent.EventToolEnd, Role: "coder", Tool: "file_read", Message: "main.go", Status: "ok", DurationMS: 3}
	b.ResetTimer()
	for range b.N {
		m.Update(jobMsg{id: 1, items: []tea.Msg{ev}})
		if len(m.log) >= maxLogLines {
			m.log = m.log[:maxLogLines-100]
		}
	}
}

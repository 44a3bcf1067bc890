package tui

import (
	"context"
	"fmt"
	"testing"

	"flow/runtime/progress"

	tea "charm.land/bubbletea/v2"
)

// BenchmarkEventIntoLongLog measures one progress event arriving when the
// log is full (maxLogLines lines, so every event also drops the oldest
// line) and the screen being drawn: the cost the UI pays per event late in
// a long session. It must not grow with the log's length.
func BenchmarkEventIntoLongLog(b *testing.B) {
	m := newModel(context.Background(), newFake(), testOptions)
	m.Update(tea.WindowSizeMsg{Width: 120, Height: 40})
	for i := range maxLogLines {
		m.appendLines(logLine{text: fmt.Sprintf("coder  file_read src/file%d.go  ok  3ms", i)})
	}
	m.job = &shownJob{id: 1, kind: "run", queue: newQueue()}
	evs := []progress.Event{
		{Kind: progress.ToolEnd, Role: "coder", Tool: "file_read", Message: "main.go", Status: "ok", DurationMS: 3},
		{Kind: progress.ModelDelta, Role: "coder", Turn: 1, Message: "streamed text\nand more "},
	}
	b.ResetTimer()
	for i := range b.N {
		m.Update(jobMsg{id: 1, items: []tea.Msg{evs[i%len(evs)]}})
		_ = m.View()
	}
}

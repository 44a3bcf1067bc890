package agent

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"

	"flow/runtime/editor"
	"flow/runtime/model"
	"flow/runtime/report"
	"flow/runtime/verify"
)

// fakeState is an editor whose freshness snapshot a test changes.
type fakeState struct {
	mu    sync.Mutex
	tick  int64
	dirty bool
	err   error
}

func (f *fakeState) Context(context.Context) (editor.Context, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.err != nil {
		return editor.Context{}, f.err
	}
	c := editor.Context{Snapshot: map[string]any{"a.go": map[string]any{
		"path":    "a.go",
		"buffers": []any{map[string]any{"bufnr": int64(1), "changedtick": f.tick, "modified": false, "loaded": true}},
		"disk":    map[string]any{"exists": true},
	}}}
	if f.dirty {
		c.DirtyBuffers = []any{map[string]any{"path": "b.go", "changedtick": int64(9)}}
	}
	return c, nil
}

func (f *fakeState) set(change func(f *fakeState)) {
	f.mu.Lock()
	defer f.mu.Unlock()
	change(f)
}

// With an editor attached, a change to an observed buffer between
// verification and the end of review makes the verification stale, and so
// do unsaved buffers or an editor that stops answering (doc/design.md §8.5).
func TestEditorStateDuringReview(t *testing.T) {
	tests := []struct {
		name   string
		change func(f *fakeState)
		want   string // "" = verified
	}{
		{"unchanged", func(*fakeState) {}, ""},
		{"buffer changed during review", func(f *fakeState) { f.tick++ }, verify.ReasonEditorStale},
		{"unsaved buffer during review", func(f *fakeState) { f.dirty = true }, verify.ReasonEditorStale},
		{"editor gone during review", func(f *fakeState) { f.err = errors.New("Neovim request timed out") }, "timed out"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := workspace(t, map[string]string{"a.go": "package a; var broken int\n"})
			cfg := testConfig(dir, goLint())
			state := &fakeState{tick: 3}
			steps := editScript(verdict(true, "ok"))
			steps[4].hook = func(model.Request) { state.set(tc.change) } // the reviewer's first turn
			h := newHarness(t, cfg, newScripted(t, steps...))
			h.agent.deps.EditorState = state
			rep := h.run(t, "fix")
			if tc.want == "" {
				if rep.Status != report.StatusOK || !rep.Verified {
					t.Fatalf("Run() = %s (reason %q), want ok", rep.Status, rep.Reason)
				}
				return
			}
			if rep.Verified || rep.Verification.Status != report.StatusStale || !strings.Contains(rep.Verification.Reason, tc.want) {
				t.Errorf("Run() = %s verified=%v, verification %s %q; want stale containing %q",
					rep.Status, rep.Verified, rep.Verification.Status, rep.Verification.Reason, tc.want)
			}
		})
	}
}

// Unsaved buffers when the checks end make the verification stale.
func TestEditorStateDirtyAfterChecks(t *testing.T) {
	dir := workspace(t, map[string]string{"a.go": "package a; var broken int\n"})
	cfg := testConfig(dir, goLint())
	state := &fakeState{dirty: true}
	h := newHarness(t, cfg, newScripted(t, editScript(verdict(true, "ok"))...))
	h.agent.deps.EditorState = state
	rep := h.run(t, "fix")
	if rep.Verified || rep.Verification.Status != report.StatusStale || !strings.Contains(rep.Verification.Reason, "has unsaved changes in the editor") || !strings.Contains(rep.Verification.Reason, "save or discard") {
		t.Errorf("Run() verification = %s %q, want stale: unsaved buffers", rep.Verification.Status, rep.Verification.Reason)
	}
}

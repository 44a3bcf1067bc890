package verify_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"flow/runtime/editor"
	"flow/runtime/report"
	"flow/runtime/verify"
)

// stateSeq answers Context with the next of its results.
type stateSeq struct {
	results []editor.Context
	errs    []error
	calls   int
}

func (s *stateSeq) Context(context.Context) (editor.Context, error) {
	i := min(s.calls, len(s.results)-1)
	s.calls++
	return s.results[i], s.errs[i]
}

// countingChecks records how often it ran.
type countingChecks struct{ runs int }

func (c *countingChecks) Run(context.Context, string) report.CheckReport {
	c.runs++
	return report.CheckReport{Status: report.StatusOK, Verified: true, Checks: []report.CheckResult{{Name: "lint", Status: report.StatusOK}}}
}

func snap(tick int64) map[string]any {
	return map[string]any{"a.go": map[string]any{"path": "a.go",
		"buffers": []any{map[string]any{"bufnr": int64(1), "changedtick": tick}}, "disk": map[string]any{"exists": true}}}
}

func TestEditorChecks(t *testing.T) {
	clean := editor.Context{Snapshot: snap(1)}
	dirty := editor.Context{Snapshot: snap(1), Modified: true}
	moved := editor.Context{Snapshot: snap(2)}
	boom := errors.New("Neovim request timed out")
	tests := []struct {
		name     string
		results  []editor.Context
		errs     []error
		status   string
		reason   string
		wantRuns int
	}{
		{"clean", []editor.Context{clean, clean}, []error{nil, nil}, report.StatusOK, "", 1},
		{"dirty before", []editor.Context{dirty}, []error{nil}, report.StatusStale, verify.ReasonUnsavedBuffers, 0},
		{"probe fails before", []editor.Context{{}}, []error{boom}, report.StatusUnverified, "timed out", 0},
		{"snapshot changed", []editor.Context{clean, moved}, []error{nil, nil}, report.StatusStale, verify.ReasonEditorChanged, 1},
		{"dirty after", []editor.Context{clean, dirty}, []error{nil, nil}, report.StatusStale, verify.ReasonUnsavedBuffers, 1},
		{"probe fails after", []editor.Context{clean, {}}, []error{nil, boom}, report.StatusStale, "timed out", 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			checks := &countingChecks{}
			ec := &verify.EditorChecks{Checks: checks, Editor: &stateSeq{results: tc.results, errs: tc.errs}}
			rep := ec.Run(t.Context(), "")
			if rep.Status != tc.status || !strings.Contains(rep.Reason, tc.reason) || checks.runs != tc.wantRuns {
				t.Errorf("Run() = %s %q after %d runs, want %s %q after %d", rep.Status, rep.Reason, checks.runs, tc.status, tc.reason, tc.wantRuns)
			}
			if tc.status != report.StatusOK && rep.Verified {
				t.Error("a stale or unverified report is verified")
			}
		})
	}
}

func TestEditorUnchanged(t *testing.T) {
	earlier := snap(1)
	for _, tc := range []struct {
		name string
		now  editor.Context
		err  error
		want string
	}{
		{"same", editor.Context{Snapshot: snap(1)}, nil, ""},
		{"buffer changed", editor.Context{Snapshot: snap(2)}, nil, verify.ReasonEditorStale},
		{"dirty", editor.Context{Snapshot: snap(1), DirtyBuffers: []any{map[string]any{"path": "b.go"}}}, nil, verify.ReasonEditorStale},
		{"gone", editor.Context{}, errors.New("x"), verify.ReasonEditorUnavailable},
	} {
		got := verify.EditorUnchanged(t.Context(), &stateSeq{results: []editor.Context{tc.now}, errs: []error{tc.err}}, earlier)
		if tc.want == "" && got != "" || tc.want != "" && !strings.HasPrefix(got, tc.want) {
			t.Errorf("EditorUnchanged(%s) = %q, want %q", tc.name, got, tc.want)
		}
	}
}

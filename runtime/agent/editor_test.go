package agent

import (
	"context"
	"testing"

	"flow/runtime/config"
	"flow/runtime/report"
)

// fakeEditor is editor evidence with fixed results.
type fakeEditor struct{ lint, diag map[string]any }

func (f fakeEditor) Lint(context.Context, string) map[string]any        { return f.lint }
func (f fakeEditor) Diagnostics(context.Context, string) map[string]any { return f.diag }

func TestEditorLintEvidence(t *testing.T) {
	tests := []struct {
		name   string
		editor fakeEditor
		want   string
	}{
		{"completed native lint verifies without a static check", fakeEditor{lint: map[string]any{"status": "ok", "verified": true}}, report.StatusOK},
		{"ok lint without the verified flag does not", fakeEditor{lint: map[string]any{"status": "ok", "verified": false}}, report.StatusUnverified},
		{"error diagnostics veto", fakeEditor{
			lint: map[string]any{"status": "ok", "verified": true},
			diag: map[string]any{"status": "ok", "diagnostics": []any{map[string]any{"severity": float64(1)}}},
		}, report.StatusUnverified},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := workspace(t, map[string]string{"a.go": "package a; var broken int\n"})
			cfg := testConfig(dir, shCheck("tests", config.KindTest, []string{"go"}, "grep -q fixed a.go"))
			h := newHarness(t, cfg, newScripted(t, editScript(verdict(true, "ok"))...))
			h.agent.deps.Editor = tc.editor
			rep := h.run(t, "fix")
			if rep.Status != tc.want {
				t.Fatalf("Run() = %s (reason %q), want %s", rep.Status, rep.Reason, tc.want)
			}
			cov := rep.Verification.Coverage[0]
			if cov.Source != "rose.editor" || cov.Evidence[0]["tool"] != "editor_lint" || cov.Evidence[1]["tool"] != "editor_diagnostics" {
				t.Errorf("coverage = %+v, want editor-sourced evidence", cov)
			}
		})
	}
}

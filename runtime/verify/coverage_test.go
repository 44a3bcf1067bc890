package verify

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"

	"flow/runtime/report"
)

// fakeEditor returns fixed editor results.
type fakeEditor struct {
	lint, diag map[string]any
	calls      []string
}

func (f *fakeEditor) Lint(_ context.Context, p string) map[string]any {
	f.calls = append(f.calls, "lint "+p)
	return f.lint
}

func (f *fakeEditor) Diagnostics(_ context.Context, p string) map[string]any {
	f.calls = append(f.calls, "diagnostics "+p)
	return f.diag
}

func check(name, kind, status string, required bool, filetypes ...string) report.CheckResult {
	return report.CheckResult{Name: name, Source: report.SourceCheck, Kind: kind, Status: status, Required: required, Filetypes: filetypes}
}

func TestCoverageChecks(t *testing.T) {
	tests := []struct {
		name       string
		path       string
		checks     []report.CheckResult
		wantStatus string
		wantChecks []string
	}{
		{"lint by language", "a.go", []report.CheckResult{check("vet", "lint", "ok", true, "go")}, "ok", []string{"vet"}},
		{"typecheck by dotted extension", "a.ts", []report.CheckResult{check("tsc", "typecheck", "ok", true, ".ts")}, "ok", []string{"tsc"}},
		{"diagnostics wildcard", "a.zig", []report.CheckResult{check("all", "diagnostics", "ok", true, "*")}, "ok", []string{"all"}},
		{"case-insensitive filetype", "a.go", []report.CheckResult{check("vet", "LINT", "ok", true, "Go")}, "ok", []string{"vet"}},
		{"unknown extension is its own key", "App.vue", []report.CheckResult{check("vue", "lint", "ok", true, "vue")}, "ok", []string{"vue"}},
		{"test kind never counts", "a.go", []report.CheckResult{check("t", "test", "ok", true, "go")}, "unverified", []string{}},
		{"build kind never counts", "a.go", []report.CheckResult{check("b", "build", "ok", true, "*")}, "unverified", []string{}},
		{"check kind never counts", "a.go", []report.CheckResult{check("c", "check", "ok", true, "*")}, "unverified", []string{}},
		{"optional lint does not count", "a.go", []report.CheckResult{check("vet", "lint", "ok", false, "go")}, "unverified", []string{}},
		{"failing lint does not count", "a.go", []report.CheckResult{check("vet", "lint", "failed", true, "go")}, "unverified", []string{}},
		{"other language", "a.py", []report.CheckResult{check("vet", "lint", "ok", true, "go", ".go")}, "unverified", []string{}},
		{"no extension does not match empty filetype", "Makefile", []report.CheckResult{check("x", "lint", "ok", true, "")}, "unverified", []string{}},
		{"no checks", "a.go", nil, "unverified", []string{}},
		{"two checks", "a.go", []report.CheckResult{check("vet", "lint", "ok", true, "go"), check("tc", "typecheck", "ok", true, "*")}, "ok", []string{"vet", "tc"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := Coverage(t.Context(), []string{tc.path}, tc.checks, nil)
			if len(got) != 1 {
				t.Fatalf("Coverage(%q) returned %d items, want 1", tc.path, len(got))
			}
			if got[0].Status != tc.wantStatus {
				t.Errorf("Coverage(%q).Status = %q, want %q", tc.path, got[0].Status, tc.wantStatus)
			}
			if diff := cmp.Diff(tc.wantChecks, got[0].Checks); diff != "" {
				t.Errorf("Coverage(%q).Checks (-want +got):\n%s", tc.path, diff)
			}
			wantSource := SourceEditor
			if len(tc.wantChecks) > 0 {
				wantSource = report.SourceCheck
			}
			if got[0].Source != wantSource {
				t.Errorf("Coverage(%q).Source = %q, want %q", tc.path, got[0].Source, wantSource)
			}
		})
	}
}

func TestCoverageSkipsDocumentationAndSorts(t *testing.T) {
	got := Coverage(t.Context(), []string{"z.go", "README.md", "a.py", "z.go", "data.json"}, nil, nil)
	var paths []string
	for _, c := range got {
		paths = append(paths, c.Path)
	}
	if diff := cmp.Diff([]string{"a.py", "z.go"}, paths); diff != "" {
		t.Errorf("Coverage paths (-want +got):\n%s", diff)
	}
	want := []map[string]any{
		{"tool": ToolEditorLint, "status": "unavailable"},
		{"tool": ToolEditorDiagnostics, "status": "unavailable"},
	}
	if diff := cmp.Diff(want, got[0].Evidence); diff != "" {
		t.Errorf("Coverage evidence without editor (-want +got):\n%s", diff)
	}
	if got := Coverage(t.Context(), nil, nil, nil); got == nil || len(got) != 0 {
		t.Errorf("Coverage(nil) = %#v, want empty non-nil slice", got)
	}
}

func TestCoverageEditorEvidence(t *testing.T) {
	lintCheck := []report.CheckResult{check("vet", "lint", "ok", true, "go")}
	errDiag := map[string]any{"status": "ok", "diagnostics": []any{map[string]any{"severity": float64(1), "message": "boom"}}}
	tests := []struct {
		name   string
		checks []report.CheckResult
		lint   map[string]any
		diag   map[string]any
		want   string
	}{
		{"verified lint covers", nil, map[string]any{"status": "ok", "verified": true}, nil, "ok"},
		{"lint ok without verified does not cover", nil, map[string]any{"status": "ok", "verified": false}, nil, "unverified"},
		{"lint ok with verified string does not cover", nil, map[string]any{"status": "ok", "verified": "true"}, nil, "unverified"},
		{"clean diagnostics alone never cover", nil, nil, map[string]any{"status": "ok", "diagnostics": []any{}}, "unverified"},
		{"unavailable diagnostics neither help nor veto", nil, map[string]any{"status": "ok", "verified": true}, map[string]any{"status": "unavailable"}, "ok"},
		{"error severity number vetoes check", lintCheck, nil, errDiag, "unverified"},
		{"error severity word vetoes lint", nil, map[string]any{"status": "ok", "verified": true}, map[string]any{"status": "ok", "diagnostics": []any{map[string]any{"severity": "Error"}}}, "unverified"},
		{"warning severity does not veto", lintCheck, nil, map[string]any{"status": "ok", "diagnostics": []any{map[string]any{"severity": float64(2)}}}, "ok"},
		{"error diagnostic inside lint result vetoes", nil, map[string]any{"status": "ok", "verified": true, "diagnostics": []map[string]any{{"severity": 1}}}, nil, "unverified"},
		{"failed diagnostics status vetoes", lintCheck, nil, map[string]any{"status": "failed"}, "unverified"},
		{"stale diagnostics status vetoes", lintCheck, nil, map[string]any{"status": "stale"}, "unverified"},
		{"timeout diagnostics status vetoes", lintCheck, nil, map[string]any{"status": "timeout"}, "unverified"},
		{"failing editor lint vetoes a passing check", lintCheck, map[string]any{"status": "failed"}, nil, "unverified"},
		{"erroring editor lint vetoes a passing check", lintCheck, map[string]any{"status": "error"}, nil, "unverified"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ed := &fakeEditor{lint: tc.lint, diag: tc.diag}
			got := Coverage(t.Context(), []string{"a.go"}, tc.checks, ed)
			if got[0].Status != tc.want {
				t.Errorf("Coverage status = %q, want %q (item %+v)", got[0].Status, tc.want, got[0])
			}
			if diff := cmp.Diff([]string{"lint a.go", "diagnostics a.go"}, ed.calls); diff != "" {
				t.Errorf("editor calls (-want +got):\n%s", diff)
			}
			if n := len(got[0].Evidence); n != 2 {
				t.Fatalf("len(Evidence) = %d, want 2", n)
			}
			if got[0].Evidence[0]["tool"] != ToolEditorLint || got[0].Evidence[1]["tool"] != ToolEditorDiagnostics {
				t.Errorf("Evidence tools = %v, %v, want editor_lint, editor_diagnostics", got[0].Evidence[0]["tool"], got[0].Evidence[1]["tool"])
			}
		})
	}
}

func TestCoverageDoesNotMutateEditorResult(t *testing.T) {
	lint := map[string]any{"status": "ok", "verified": true}
	Coverage(t.Context(), []string{"a.go"}, nil, &fakeEditor{lint: lint})
	if _, ok := lint["tool"]; ok {
		t.Errorf("Coverage added a key to the editor's result map: %v", lint)
	}
}

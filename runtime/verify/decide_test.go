package verify

import (
	"testing"

	"flow/runtime/report"
)

func TestDecide(t *testing.T) {
	okLint := check("vet", "lint", "ok", true, "go")
	okTest := check("test", "test", "ok", true, "*")
	failTest := check("test", "test", "failed", true, "*")
	optFail := check("opt", "lint", "failed", false, "*")
	covered := report.Coverage{Path: "a.go", Language: "go", Status: "ok"}
	gap := report.Coverage{Path: "b.py", Language: "python", Status: "unverified"}
	tests := []struct {
		name         string
		checks       report.CheckReport
		coverage     []report.Coverage
		wantStatus   string
		wantVerified bool
		wantReason   string
	}{
		{
			name:         "all good",
			checks:       report.CheckReport{Status: "ok", Verified: true, Checks: []report.CheckResult{okLint, okTest}},
			coverage:     []report.Coverage{covered},
			wantStatus:   "ok",
			wantVerified: true,
		},
		{
			name:         "optional failure ignored",
			checks:       report.CheckReport{Status: "ok", Verified: true, Checks: []report.CheckResult{okLint, optFail}},
			coverage:     []report.Coverage{covered},
			wantStatus:   "ok",
			wantVerified: true,
		},
		{
			name:       "no edits but no checks",
			checks:     report.CheckReport{Status: "unverified", Checks: nil, Reason: "No checks configured"},
			wantStatus: "unverified",
			wantReason: "No checks configured",
		},
		{
			name:       "runner claims verified without any required check",
			checks:     report.CheckReport{Status: "ok", Verified: true, Checks: []report.CheckResult{check("opt", "lint", "ok", false, "*")}},
			wantStatus: "unverified",
			wantReason: "No required check ran, so nothing verified the workspace: mark at least one [checks.NAME] required = true",
		},
		{
			name:       "runner claims verified with a failing required check",
			checks:     report.CheckReport{Status: "ok", Verified: true, Checks: []report.CheckResult{okLint, failTest}},
			wantStatus: "unverified",
			wantReason: "The required check test failed; its output says why",
		},
		{
			name:       "coverage gap",
			checks:     report.CheckReport{Status: "ok", Verified: true, Checks: []report.CheckResult{okLint}},
			coverage:   []report.Coverage{covered, gap},
			wantStatus: "unverified",
			wantReason: ReasonCoverage + `: no lint check passed on b.py; configure a required lint check for python (kind = "lint") or fix its findings`,
		},
		{
			name:       "failed checks keep status and reason despite a gap",
			checks:     report.CheckReport{Status: "failed", Checks: []report.CheckResult{failTest}, Reason: "required check failed"},
			coverage:   []report.Coverage{gap},
			wantStatus: "failed",
			wantReason: "required check failed",
		},
		{
			name:       "stale check report stays stale",
			checks:     report.CheckReport{Status: "stale", Reason: "save unsaved buffers first"},
			coverage:   []report.Coverage{gap},
			wantStatus: "stale",
			wantReason: "save unsaved buffers first",
		},
		{
			name:       "empty status",
			checks:     report.CheckReport{},
			wantStatus: "unverified",
			wantReason: "No checks are configured, so nothing can verify the workspace: add a [checks.NAME] with required = true to the configuration",
		},
		{
			name:       "error text becomes reason",
			checks:     report.CheckReport{Status: "error", Error: "Runtime busy"},
			wantStatus: "error",
			wantReason: "Runtime busy",
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := Decide(tc.checks, tc.coverage, map[string]string{"a.go": "x"})
			if got.Status != tc.wantStatus || got.Verified != tc.wantVerified || got.Reason != tc.wantReason {
				t.Errorf("Decide() = {%q %v %q}, want {%q %v %q}", got.Status, got.Verified, got.Reason, tc.wantStatus, tc.wantVerified, tc.wantReason)
			}
			if got.Checks == nil || got.Coverage == nil {
				t.Errorf("Decide() has nil checks or coverage: %+v", got)
			}
			if got.Fingerprints["a.go"] != "x" {
				t.Errorf("Decide().Fingerprints = %v, want the given map", got.Fingerprints)
			}
		})
	}
}

func TestMarkStale(t *testing.T) {
	v := report.Verification{Status: "ok", Verified: true}
	MarkStale(&v, ReasonStale)
	if v.Status != "stale" || v.Verified || v.Reason != ReasonStale {
		t.Errorf("MarkStale() = %+v, want stale, unverified, %q", v, ReasonStale)
	}
	MarkStale(nil, "x") // must not panic
}

func TestRequiredPassed(t *testing.T) {
	tests := []struct {
		name   string
		checks []report.CheckResult
		want   bool
	}{
		{"none", nil, false},
		{"only optional", []report.CheckResult{check("a", "lint", "ok", false)}, false},
		{"one required ok", []report.CheckResult{check("a", "test", "ok", true)}, true},
		{"required timeout", []report.CheckResult{check("a", "test", "ok", true), check("b", "test", "timeout", true)}, false},
		{"required unavailable", []report.CheckResult{check("b", "test", "unavailable", true)}, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := RequiredPassed(tc.checks); got != tc.want {
				t.Errorf("RequiredPassed() = %v, want %v", got, tc.want)
			}
		})
	}
}

package report_test

import (
	"regexp"
	"testing"
	"time"

	"flow/runtime/report"
)

// TestNewRunIDShape pins the shape of the one run id users see (reports,
// `flow undo RUN`, the journal's directory names): the UTC start time and
// 8 lowercase hex digits.
func TestNewRunIDShape(t *testing.T) {
	now := time.Date(2026, 1, 2, 15, 4, 5, 0, time.FixedZone("CET", 3600))
	shape := regexp.MustCompile(`^20260102T140405Z-[0-9a-f]{8}$`)
	seen := map[string]bool{}
	for range 50 {
		id := report.NewRunID(now)
		if !shape.MatchString(id) {
			t.Fatalf("NewRunID() = %q, want 20260102T140405Z-xxxxxxxx", id)
		}
		if seen[id] {
			t.Fatalf("NewRunID() repeated %q", id)
		}
		seen[id] = true
	}
}

// TestMarshalSaysEmptyLists: every list member of a report is [] in JSON,
// however the report was built.
func TestMarshalSaysEmptyLists(t *testing.T) {
	for name, tc := range map[string]struct {
		v    any
		want string
	}{
		"run": {report.Run{Status: "busy", Verification: &report.Verification{Coverage: []report.Coverage{{Path: "a.go"}}}},
			`{"status":"busy","verified":false,"task":"","run_id":"","workspace":"","started_at":"","duration_ms":0,"roles":[],"events":[],"changed_files":[],"diffs":[],"checks":[],"verification":{"status":"","verified":false,"checks":[],"reason":"","coverage":[{"path":"a.go","language":"","status":"","source":"","checks":[],"evidence":[]}]},"verification_history":[],"model_calls":0,"tool_calls":0,"cycles":0,"usage":{"prompt_tokens":0,"completion_tokens":0},"summary":""}`},
		"check": {&report.CheckReport{Status: "ok", Checks: []report.CheckResult{{Name: "t"}}},
			`{"status":"ok","verified":false,"checks":[{"name":"t","source":"","required":false,"filetypes":[],"status":"","stdout":"","stdout_truncated":false,"stderr":"","stderr_truncated":false,"duration_ms":0}],"reason":""}`},
		"undo": {report.Undo{Status: "ok"},
			`{"status":"ok","run_id":"","workspace":"","restored":[],"removed":[],"unchanged":[],"conflicts":[],"diffs":[],"already_undone":false,"message":""}`},
	} {
		b, err := report.Marshal(tc.v)
		if err != nil || string(b) != tc.want {
			t.Errorf("%s: Marshal() =\n%s (%v)\nwant\n%s", name, b, err, tc.want)
		}
	}
}

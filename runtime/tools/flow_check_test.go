package tools

import (
	"strings"
	"testing"
	"unicode/utf8"

	"flow/runtime/report"
)

func TestFlowCheck(t *testing.T) {
	one := 1
	failing := report.CheckReport{
		Status: "failed", Verified: false, Reason: "required check test failed",
		Checks: []report.CheckResult{{
			Name: "test", Source: report.SourceCheck, Cmd: []string{"go", "test", "./..."}, Required: true,
			Kind: "test", Filetypes: []string{"go"}, Status: "failed", Returncode: &one,
			Stdout: "--- FAIL: TestX\n", Stderr: "", DurationMS: 12,
		}},
	}
	checks := &fakeChecks{rep: failing}
	r := New(newDisk(t, true, nil), Options{Trusted: true, Checks: checks})
	res, body := call(t, r, "coder", "flow_check", `{"name":"test"}`)
	if res.Status != "failed" || res.Check == nil || res.Check.Status != "failed" || res.Truncated {
		t.Fatalf("flow_check = %+v", res)
	}
	if res.Error != "required check test failed" {
		t.Errorf("flow_check Error = %q, want the report's reason", res.Error)
	}
	want, _ := report.Marshal(failing)
	if res.Content != string(want) {
		t.Errorf("flow_check content =\n%s\nwant the report itself:\n%s", res.Content, want)
	}
	if body["verified"] != false || body["checks"].([]any)[0].(map[string]any)["returncode"] != 1.0 {
		t.Errorf("flow_check body = %v", body)
	}
	call(t, r, "coder", "flow_check", ``)
	if len(checks.names) != 2 || checks.names[0] != "test" || checks.names[1] != "" {
		t.Errorf("checks run = %q, want [test, \"\"]", checks.names)
	}
}

func TestFlowCheckOutputBounded(t *testing.T) {
	rep := report.CheckReport{Status: "ok", Verified: true}
	for _, name := range []string{"lint", "test", "vet"} {
		rep.Checks = append(rep.Checks, report.CheckResult{
			Name: name, Source: report.SourceCheck, Status: "ok", Filetypes: []string{"*"},
			Stdout: strings.Repeat(`"quoted" \path\`+"\n", 1000) + "END-" + name,
			Stderr: strings.Repeat("é", 16000),
		})
	}
	r := New(newDisk(t, true, nil), Options{Trusted: true, Checks: &fakeChecks{rep: rep}})
	res, body := call(t, r, "coder", "flow_check", `{}`)
	if res.Status != "ok" || !res.Truncated || body["truncated"] != true {
		t.Fatalf("flow_check with big output: status %q, Truncated %v", res.Status, res.Truncated)
	}
	if n := utf8.RuneCountInString(res.Content); n > MaxResultChars || n < MaxResultChars/2 {
		t.Errorf("flow_check result is %d chars", n)
	}
	for _, c := range body["checks"].([]any) {
		c := c.(map[string]any)
		// The tail is kept: it holds the error.
		if !strings.HasSuffix(c["stdout"].(string), "END-"+c["name"].(string)) || c["stdout_truncated"] != true || c["stderr_truncated"] != true {
			t.Errorf("check %v: stdout tail or flags lost", c["name"])
		}
	}
	// The untruncated report stays available to the host.
	if len(res.Check.Checks[0].Stderr) != 32000 {
		t.Errorf("Result.Check was truncated too")
	}
}

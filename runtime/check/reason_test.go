package check

import (
	"os"
	"path/filepath"
	"regexp"
	"testing"

	"flow/runtime/config"
	"flow/runtime/report"
)

// TestReasonSentences pins the sentences that tell the user which table of
// the configuration to edit.
func TestReasonSentences(t *testing.T) {
	t.Parallel()
	one := 1
	tests := []struct {
		name string
		rep  report.CheckReport
		want string
	}{
		{
			name: "no checks",
			rep:  report.CheckReport{},
			want: "No checks are configured, so nothing can verify the workspace: add a [checks.NAME] with required = true to the configuration",
		},
		{
			name: "none required",
			rep:  report.CheckReport{Checks: []report.CheckResult{{Name: "vet", Status: report.StatusOK}}},
			want: "No required check ran, so nothing verified the workspace: mark at least one [checks.NAME] required = true",
		},
		{
			name: "missing executable",
			rep: report.CheckReport{Checks: []report.CheckResult{{
				Name: "vet", Required: true, Status: report.StatusUnavailable, Cmd: []string{"golint"},
				Error: `exec: "golint": executable file not found in $PATH`,
			}}},
			want: "The check vet could not start: golint is not installed or not on PATH; install it or change [checks.vet] cmd",
		},
		{
			name: "timeout",
			rep: report.CheckReport{Checks: []report.CheckResult{{
				Name: "vet", Required: true, Status: report.StatusTimeout, Timeout: 2000,
			}}},
			want: "The required check vet timed out after 2s; raise [checks.vet] timeout or make it faster",
		},
		{
			name: "failed",
			rep: report.CheckReport{Checks: []report.CheckResult{{
				Name: "vet", Required: true, Status: report.StatusFailed, Returncode: &one,
			}}},
			want: "The required check vet (exit 1) failed; its output says why",
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			if got := Reason(tc.rep, []string{"vet"}); got != tc.want {
				t.Errorf("Reason(%s) = %q, want %q", tc.name, got, tc.want)
			}
		})
	}
}

// tableRef finds a configuration table a sentence tells the user to edit.
var tableRef = regexp.MustCompile(`\[([a-z_]+)\.([A-Za-z0-9_.-]+)\]`)

// TestReasonTablesParse feeds every table a reason sentence names to the
// configuration loader: a sentence must never point at a table the loader
// refuses (it once said [check.NAME], which the loader answers with "did
// you mean checks?").
func TestReasonTablesParse(t *testing.T) {
	t.Parallel()
	sentences := []string{
		ReasonNoChecks,
		ReasonNoRequired,
		Reason(report.CheckReport{Checks: []report.CheckResult{{
			Name: "vet", Required: true, Status: report.StatusUnavailable, Cmd: []string{"x"},
			Error: "executable file not found",
		}}}, nil),
		Reason(report.CheckReport{Checks: []report.CheckResult{{
			Name: "vet", Required: true, Status: report.StatusTimeout, Timeout: 1000,
		}}}, nil),
	}
	for _, s := range sentences {
		m := tableRef.FindStringSubmatch(s)
		if m == nil {
			t.Errorf("sentence %q names no configuration table", s)
			continue
		}
		name := m[2]
		if name == "NAME" {
			name = "vet"
		}
		dir := t.TempDir()
		file := filepath.Join(dir, "flow.toml")
		toml := "[" + m[1] + "." + name + "]\ncmd = [\"go\", \"vet\", \"./...\"]\nrequired = true\ntimeout = 60000\n"
		if err := os.WriteFile(file, []byte(toml), 0o644); err != nil {
			t.Fatal(err)
		}
		cfg, err := config.Load(config.LoadOptions{ConfigFile: file, Cwd: dir, Getenv: func(string) string { return "" }})
		if err != nil {
			t.Errorf("sentence %q names [%s.%s], which the loader refuses: %v", s, m[1], m[2], err)
			continue
		}
		if len(cfg.Checks) != 1 || cfg.Checks[0].Name != name {
			t.Errorf("sentence %q: loading [%s.%s] gave checks %+v, want the one check %q", s, m[1], name, cfg.Checks, name)
		}
	}
}

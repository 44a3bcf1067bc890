package human

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"flow/runtime/diff"
)

var update = flag.Bool("update", false, "rewrite the golden files")

// The inputs in testdata are real reports printed by flow on the demo
// project (examples/calc with the scripted model and real go vet/go test),
// with the temporary paths and the fake server's port made stable.
func TestGolden(t *testing.T) {
	for _, tc := range []struct{ name, command string }{
		{"run-ok", "run"},
		{"run-diff", "run"},
		{"run-error", "run"},
		{"run-rejected", "run"},
		{"check-fail", "check"},
		{"check-untrusted", "check"},
		{"check-unknown", "check"},
		{"status", "status"},
		{"status-tasks", "status"},
		{"status-onboarding", "status"},
		{"undo", "undo"},
		{"doctor", "doctor"},
	} {
		for _, color := range []bool{false, true} {
			name := tc.name
			if color {
				name += ".color"
			}
			t.Run(name, func(t *testing.T) {
				in := input(t, tc.name)
				var out bytes.Buffer
				if err := Render(&out, tc.command, in, Options{Color: color}); err != nil {
					t.Fatal(err)
				}
				golden := filepath.Join("testdata", name+".golden")
				if *update {
					if err := os.WriteFile(golden, out.Bytes(), 0o644); err != nil {
						t.Fatal(err)
					}
					return
				}
				want, err := os.ReadFile(golden)
				if err != nil {
					t.Fatalf("%v (run with -update to create it)", err)
				}
				if out.String() != string(want) {
					t.Fatalf("%s differs from the golden file (run with -update after checking):\n%s", name, out.String())
				}
				if !color && strings.Contains(out.String(), "\x1b[") {
					t.Fatal("colour codes without Color")
				}
			})
		}
	}
}

// input reads testdata/NAME.json; run-diff is run-ok with the diff the demo
// run made, computed from the demo project's real file.
func input(t *testing.T, name string) []byte {
	t.Helper()
	if name != "run-diff" {
		b, err := os.ReadFile(filepath.Join("testdata", name+".json"))
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	b, err := os.ReadFile(filepath.Join("testdata", "run-ok.json"))
	if err != nil {
		t.Fatal(err)
	}
	before, err := os.ReadFile(filepath.Join("..", "..", "..", "..", "examples", "calc", "calc.go"))
	if err != nil {
		t.Fatal(err)
	}
	after := bytes.Replace(before, []byte("return a - b"), []byte("return a + b"), 1)
	if bytes.Equal(before, after) {
		t.Fatal("examples/calc/calc.go no longer has the demo's bug")
	}
	var r map[string]any
	if err := json.Unmarshal(b, &r); err != nil {
		t.Fatal(err)
	}
	r["diffs"] = []any{diff.File("calc.go", before, after, true, true, 0)}
	out, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func TestFailingCheckTail(t *testing.T) {
	var lines []string
	for i := range 30 {
		lines = append(lines, "line "+string(rune('a'+i%26)))
	}
	rep := map[string]any{"status": "failed", "verified": false, "reason": "the required check test failed (exit 1)",
		"checks": []any{map[string]any{"name": "test", "required": true, "status": "failed", "returncode": 1,
			"stdout": strings.Join(lines, "\n") + "\n", "stderr": "exit status 1\n", "duration_ms": 1200}}}
	b, _ := json.Marshal(rep)
	var out bytes.Buffer
	if err := Render(&out, "check", b, Options{TailLines: 5}); err != nil {
		t.Fatal(err)
	}
	got := out.String()
	for _, want := range []string{
		"✗ not verified · failed\n  the required check test failed (exit 1)\n",
		"✗ test  failed (exit 1)  1.2s",
		"… (last lines of the output)",
		"      line b\n      line c\n      line d\n      exit status 1\n",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("summary lacks %q:\n%s", want, got)
		}
	}
	if strings.Contains(got, "line a\n      line b\n      line c\n      line d\n      line a") {
		t.Errorf("more than the tail was shown:\n%s", got)
	}
}

func TestRenderRejectsUnknownAndBadInput(t *testing.T) {
	if err := Render(&bytes.Buffer{}, "serve", []byte(`{}`), Options{}); err == nil {
		t.Error("an unknown command rendered")
	}
	if err := Render(&bytes.Buffer{}, "run", []byte(`[`), Options{}); err == nil {
		t.Error("broken JSON rendered")
	}
}

// TestVerifiedRunNamesItsEvidence: a verified run's head says what
// verified it; an unverified one names no evidence.
func TestVerifiedRunNamesItsEvidence(t *testing.T) {
	for _, tc := range []struct {
		rep  map[string]any
		want string
	}{
		{map[string]any{"status": "ok", "verified": true, "verification": map[string]any{"evidence": "fail_then_pass"}}, "✓ verified (fail then pass) ·"},
		{map[string]any{"status": "ok", "verified": true, "verification": map[string]any{"evidence": "fixed"}}, "✓ verified (fixed) ·"},
		{map[string]any{"status": "unverified", "verified": false, "reason": "No check shows the change", "verification": map[string]any{"no_evidence": true}}, "not verified ·"},
	} {
		b, _ := json.Marshal(tc.rep)
		var out bytes.Buffer
		if err := Render(&out, "run", b, Options{}); err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(out.String(), tc.want) {
			t.Errorf("summary lacks %q:\n%s", tc.want, out.String())
		}
	}
}

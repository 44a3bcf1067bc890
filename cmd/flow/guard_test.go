package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"flow/internal/test/ollamatest"
)

// These scenarios drive `flow run --trusted` as a subprocess against the
// scripted Ollama server, with real go test / python3 -m unittest /
// node --test checks, and show that a coder cannot make a run verified by
// changing what the checks check.

// Check tables of the three languages: a lint check covering the changed
// files (doc/design.md §8.3) and a test check.
const (
	goChecks = `[checks.vet]
cmd = ["go", "vet", "./..."]
kind = "lint"
filetypes = ["go"]
[checks.test]
cmd = ["go", "test", "./..."]
kind = "test"
filetypes = ["go"]
`
	pyChecks = `[checks.compile]
cmd = ["python3", "-m", "compileall", "-q", "."]
kind = "lint"
filetypes = ["python"]
[checks.test]
cmd = ["python3", "-m", "unittest"]
kind = "test"
filetypes = ["python"]
`
	nodeChecks = `[checks.syntax]
cmd = ["sh", "-c", "for f in *.js; do node --check \"$f\" || exit 1; done"]
kind = "lint"
filetypes = ["javascript"]
[checks.test]
cmd = ["node", "--test"]
kind = "test"
filetypes = ["javascript"]
`
)

// guardConfig writes an operator configuration for ws with one cycle, the
// given checks and extra TOML (agent keys come first, in [agent]).
func guardConfig(t *testing.T, ws, url, agent, checks, extra string) string {
	t.Helper()
	return writeFile(t, t.TempDir(), "ops.toml", `workspace_dir = `+tomlString(ws)+`
[ollama]
base_url = `+tomlString(url)+`
[agent]
planner = "always" # the test scripts a planner turn
max_cycles = 1
`+agent+"\n"+checks+extra)
}

func fileEdit(id, path, old, new string) ollamatest.Turn {
	return ollamatest.Turn{ToolCalls: []ollamatest.Call{call(id, "file_edit", map[string]any{"path": path, "old_string": old, "new_string": new})}}
}

func fileWrite(id, path, content string) ollamatest.Turn {
	return ollamatest.Turn{ToolCalls: []ollamatest.Call{call(id, "file_write", map[string]any{"path": path, "content": content})}}
}

// coderTurns is a coder that makes the given tool-call turns and says so.
func script(coder ...ollamatest.Turn) []ollamatest.Turn {
	turns := []ollamatest.Turn{{Content: "Plan: make the tests pass."}}
	turns = append(turns, coder...)
	// The coder's last word, then a reviewer that approves whatever it
	// sees: the host, not the reviewer, must catch the weakening.
	return append(turns, ollamatest.Turn{Content: "Done."}, ollamatest.Turn{Content: approve})
}

// flowRun runs `flow run --trusted` in ws with the scripted model.
func flowRun(t *testing.T, ws string, env []string, cfg func(url string) string, turns []ollamatest.Turn) (map[string]any, result, *ollamatest.Server) {
	t.Helper()
	srv := ollamatest.New(t, turns...)
	r := runFlow(t, ws, env, "run", "--trusted", "--config", cfg(srv.URL), "make", "the", "tests", "pass")
	return decode(t, r), r, srv
}

// wantUnverified fails unless the run is unverified for a reason that
// contains every want.
func wantUnverified(t *testing.T, m map[string]any, r result, want ...string) {
	t.Helper()
	reason, _ := m["reason"].(string)
	if r.code != 1 || m["status"] != "unverified" || m["verified"] != false {
		t.Fatalf("flow run = %d %v %v (reason %q), want exit 1, unverified\nstderr: %s", r.code, m["status"], m["verified"], reason, r.stderr)
	}
	for _, w := range want {
		if !strings.Contains(reason, w) {
			t.Errorf("reason = %q, want it to contain %q", reason, w)
		}
	}
}

// checkByName returns the run report's check result called name.
func checkByName(t *testing.T, m map[string]any, name string) map[string]any {
	t.Helper()
	checks, _ := m["checks"].([]any)
	for _, c := range checks {
		if c := c.(map[string]any); c["name"] == name {
			return c
		}
	}
	t.Fatalf("report checks = %v, want one called %s", checks, name)
	return nil
}

// calcWithSub is calc's module with a second, passing test of Sub.
func calcWithSub(t *testing.T) string {
	t.Helper()
	ws := calcModule(t)
	writeFile(t, ws, "calc.go", "package calc\n\n// Add returns a + b.\nfunc Add(a, b int) int {\n\treturn a - b\n}\n\n// Sub returns a - b.\nfunc Sub(a, b int) int {\n\treturn a - b\n}\n")
	writeFile(t, ws, "calc_test.go", calcTests(true, true))
	return ws
}

func calcTests(add, sub bool) string {
	s := "package calc\n\nimport \"testing\"\n"
	if add {
		s += "\nfunc TestAdd(t *testing.T) {\n\tif got := Add(2, 3); got != 5 {\n\t\tt.Fatalf(\"Add(2, 3) = %d, want 5\", got)\n\t}\n}\n"
	}
	if sub {
		s += "\nfunc TestSub(t *testing.T) {\n\tif got := Sub(5, 3); got != 2 {\n\t\tt.Fatalf(\"Sub(5, 3) = %d, want 2\", got)\n\t}\n}\n"
	}
	return s
}

func TestGuardChangedExpectedValueIsNotVerified(t *testing.T) {
	t.Parallel()
	ws := calcModule(t)
	env := goEnv(t)
	m, r, srv := flowRun(t, ws, env, func(url string) string { return guardConfig(t, ws, url, "", goChecks, "") },
		script(fileEdit("c1", "calc_test.go", "got != 5", "got != -1")))
	wantUnverified(t, m, r, "calc_test.go", "a value in an existing test line changed", "5 → -1")
	v := m["verification"].(map[string]any)
	weak, _ := v["weakening"].([]any)
	if len(weak) != 1 || weak[0].(map[string]any)["what"] != "expected_changed" {
		t.Errorf("verification.weakening = %v, want one expected_changed finding", weak)
	}
	// The checks really passed: only the guard stopped "verified".
	if c := checkByName(t, m, "test"); c["status"] != "ok" || c["baseline"] != "fixed" {
		t.Errorf("test check = %v/%v, want ok and fixed against the baseline (the weakened test passes)", c["status"], c["baseline"])
	}
	// The host's verification did not pass, so no reviewer was asked:
	// planner, coder ×2, and the scripted verdict is left unused.
	if reqs := srv.Chats(); len(reqs) != 3 {
		t.Fatalf("model calls = %d, want 3 (no reviewer)", len(reqs))
	}
	if r := roleByName(t, m, "reviewer"); r["status"] != "skipped" {
		t.Errorf("reviewer = %v, want skipped", r)
	}
}

func TestGuardDeletedTestIsNotVerified(t *testing.T) {
	t.Parallel()
	ws := calcWithSub(t)
	m, r, _ := flowRun(t, ws, goEnv(t), func(url string) string { return guardConfig(t, ws, url, "", goChecks, "") },
		script(fileWrite("c1", "calc_test.go", calcTests(false, true))))
	wantUnverified(t, m, r, "calc_test.go", "the test TestAdd was removed")
	if c := checkByName(t, m, "test"); c["status"] != "ok" {
		t.Errorf("test check = %v, want ok (the failing test is gone)", c["status"])
	}
}

func TestGuardSkipMarkersAreNotVerified(t *testing.T) {
	t.Parallel()
	t.Run("go t.Skip", func(t *testing.T) {
		t.Parallel()
		ws := calcModule(t)
		m, r, _ := flowRun(t, ws, goEnv(t), func(url string) string { return guardConfig(t, ws, url, "", goChecks, "") },
			script(fileEdit("c1", "calc_test.go", "func TestAdd(t *testing.T) {\n", "func TestAdd(t *testing.T) {\n\tt.Skip(\"flaky\")\n")))
		wantUnverified(t, m, r, "calc_test.go", "a skip marker was added on line 6")
	})
	t.Run("python unittest.skip", func(t *testing.T) {
		t.Parallel()
		if _, err := exec.LookPath("python3"); err != nil {
			t.Skip("python3 not installed")
		}
		ws := pyModule(t)
		m, r, _ := flowRun(t, ws, hermeticEnv(t, "PYTHONDONTWRITEBYTECODE=1"), func(url string) string { return guardConfig(t, ws, url, "", pyChecks, "") },
			script(fileEdit("c1", "test_calc.py", "    def test_add(self):", "    @unittest.skip(\"later\")\n    def test_add(self):")))
		wantUnverified(t, m, r, "test_calc.py", "a skip marker was added")
		if c := checkByName(t, m, "test"); c["status"] != "ok" || c["baseline"] != "fixed" {
			t.Errorf("test check = %v/%v, want the skipped suite ok and fixed", c["status"], c["baseline"])
		}
	})
	t.Run("node it.skip", func(t *testing.T) {
		t.Parallel()
		needNodeBinary(t)
		ws := nodeModule(t)
		m, r, _ := flowRun(t, ws, hermeticEnv(t), func(url string) string { return guardConfig(t, ws, url, "", nodeChecks, "") },
			script(fileEdit("c1", "calc.test.js", "it('adds'", "it.skip('adds'")))
		wantUnverified(t, m, r, "calc.test.js", "a skip marker was added")
		if c := checkByName(t, m, "test"); c["status"] != "ok" {
			t.Errorf("test check = %v, want ok (the failing test is skipped)", c["status"])
		}
	})
}

// needNodeBinary skips without node (fails when FLOW_TEST_NODE=required).
func needNodeBinary(t *testing.T) {
	t.Helper()
	if _, err := exec.LookPath("node"); err != nil {
		if os.Getenv("FLOW_TEST_NODE") == "required" {
			t.Fatal("node is not installed")
		}
		t.Skip("node is not installed")
	}
}

// pyModule writes a Python package whose add subtracts.
func pyModule(t *testing.T) string {
	t.Helper()
	ws := workspace(t)
	writeFile(t, ws, "calc.py", "def add(a, b):\n    return a - b\n")
	writeFile(t, ws, "test_calc.py", "import unittest\n\nimport calc\n\n\nclass CalcTest(unittest.TestCase):\n    def test_add(self):\n        self.assertEqual(calc.add(2, 3), 5)\n\n\nif __name__ == \"__main__\":\n    unittest.main()\n")
	return ws
}

// nodeModule writes a CommonJS module whose add subtracts.
func nodeModule(t *testing.T) string {
	t.Helper()
	ws := workspace(t)
	writeFile(t, ws, "calc.js", "function add(a, b) {\n  return a - b;\n}\n\nmodule.exports = { add };\n")
	writeFile(t, ws, "calc.test.js", "const { it } = require('node:test');\nconst assert = require('node:assert');\nconst { add } = require('./calc');\n\nit('adds', () => {\n  assert.strictEqual(add(2, 3), 5);\n});\n")
	return ws
}

const newAddTest = "\nfunc TestAddNegative(t *testing.T) {\n\tif got := Add(-2, -3); got != -5 {\n\t\tt.Fatalf(\"Add(-2, -3) = %d, want -5\", got)\n\t}\n}\n"

func TestGuardNewTestAndFixIsVerifiedAndFixed(t *testing.T) {
	t.Parallel()
	ws := calcModule(t)
	m, r, _ := flowRun(t, ws, goEnv(t), func(url string) string { return guardConfig(t, ws, url, "", goChecks, "") },
		script(fileEdit("c1", "calc.go", "return a - b", "return a + b"),
			fileWrite("c2", "calc_test.go", calcTests(true, false)+newAddTest)))
	if r.code != 0 || m["status"] != "ok" || m["verified"] != true {
		t.Fatalf("flow run = %d %v (reason %v), want verified\nstderr: %s", r.code, m["status"], m["reason"], r.stderr)
	}
	test := checkByName(t, m, "test")
	if test["baseline"] != "fixed" || test["baseline_status"] != "failed" {
		t.Errorf("test check baseline = %v (was %v), want fixed (was failed)", test["baseline"], test["baseline_status"])
	}
	if vet := checkByName(t, m, "vet"); vet["baseline"] != "unchanged" {
		t.Errorf("vet check baseline = %v, want unchanged", vet["baseline"])
	}
	v := m["verification"].(map[string]any)
	if s, _ := v["baseline"].(string); !strings.Contains(s, "check test was failing before this run and passes now (fixed)") {
		t.Errorf("verification.baseline = %q, want the test named as fixed", s)
	}
	if w, ok := v["weakening"]; ok {
		t.Errorf("verification.weakening = %v, want none: adding a test is never weakening", w)
	}
	base, _ := m["baseline"].([]any)
	if len(base) != 2 || base[1].(map[string]any)["status"] != "failed" {
		t.Errorf("report baseline = %v, want vet and the failing test measured before the edit", base)
	}
}

func TestGuardStillFailingCheckIsPreExisting(t *testing.T) {
	t.Parallel()
	ws := calcWithSub(t)
	// Sub is broken too, so that its test fails before and after the run.
	writeFile(t, ws, "calc.go", "package calc\n\n// Add returns a + b.\nfunc Add(a, b int) int {\n\treturn a - b\n}\n\n// Sub returns a - b.\nfunc Sub(a, b int) int {\n\treturn a * b\n}\n")
	m, r, _ := flowRun(t, ws, goEnv(t), func(url string) string { return guardConfig(t, ws, url, "", goChecks, "") },
		script(fileEdit("c1", "calc.go", "return a - b\n}\n\n// Sub", "return a + b\n}\n\n// Sub")))
	if r.code != 1 || m["status"] != "failed" {
		t.Fatalf("flow run = %d %v, want failed\nstderr: %s", r.code, m["status"], r.stderr)
	}
	test := checkByName(t, m, "test")
	if test["status"] != "failed" || test["baseline"] != "pre-existing" {
		t.Errorf("test check = %v/%v, want failed and pre-existing", test["status"], test["baseline"])
	}
	if reason, _ := m["reason"].(string); reason != "Check test was failing before this run and still fails (pre-existing); test exits 1, its output says why" || m["error"] != reason {
		t.Errorf("reason = %q, want the pre-existing failure named", reason)
	}
}

func TestGuardBaselineOff(t *testing.T) {
	t.Parallel()
	ws := calcModule(t)
	m, r, _ := flowRun(t, ws, goEnv(t), func(url string) string {
		return guardConfig(t, ws, url, "baseline = false", goChecks, "")
	}, script(fileEdit("c1", "calc.go", "return a - b", "return a + b")))
	// Without a baseline no check shows the fix, and the run added no
	// test: the checks pass, but nothing is verified.
	wantUnverified(t, m, r, "No check shows the change", "agent.baseline = false")
	if v := m["verification"].(map[string]any); v["no_evidence"] != true || v["evidence"] != nil {
		t.Errorf("verification evidence = %v, no_evidence = %v; want none, true", v["evidence"], v["no_evidence"])
	}
	if _, ok := m["baseline"]; ok {
		t.Errorf("report baseline = %v, want none with agent.baseline = false", m["baseline"])
	}
	if c := checkByName(t, m, "test"); c["baseline"] != nil {
		t.Errorf("test check baseline = %v, want none", c["baseline"])
	}
}

func TestGuardRequireFailingFirst(t *testing.T) {
	t.Parallel()
	cfg := func(t *testing.T, ws string) func(string) string {
		return func(url string) string {
			return guardConfig(t, ws, url, "", goChecks, "[verify]\nrequire_failing_first = true\n")
		}
	}
	t.Run("a real fix with a new failing test", func(t *testing.T) {
		t.Parallel()
		ws := calcWithSub(t)
		writeFile(t, ws, "calc_test.go", calcTests(false, true)) // Add is untested
		m, r, _ := flowRun(t, ws, goEnv(t), cfg(t, ws),
			script(fileEdit("c1", "calc.go", "return a - b\n}\n\n// Sub", "return a + b\n}\n\n// Sub"),
				fileWrite("c2", "calc_test.go", calcTests(true, true))))
		if r.code != 0 || m["status"] != "ok" {
			t.Fatalf("flow run = %d %v (reason %v), want verified\nstderr: %s", r.code, m["status"], m["reason"], r.stderr)
		}
		ff, _ := m["verification"].(map[string]any)["fail_first"].(map[string]any)
		if ff["status"] != "failed_before" || !strings.Contains(toJSON(t, ff["restored"]), "calc.go") {
			t.Errorf("fail_first = %v, want failed_before with calc.go restored", ff)
		}
	})
	t.Run("python: a real fix with a new failing test", func(t *testing.T) {
		t.Parallel()
		if _, err := exec.LookPath("python3"); err != nil {
			t.Skip("python3 not installed")
		}
		ws := workspace(t)
		writeFile(t, ws, "calc.py", "def add(a, b):\n    return a - b\n\n\ndef sub(a, b):\n    return a - b\n")
		tests := "import unittest\n\nimport calc\n\n\nclass CalcTest(unittest.TestCase):\n    def test_sub(self):\n        self.assertEqual(calc.sub(5, 3), 2)\n"
		writeFile(t, ws, "test_calc.py", tests)
		// The scripted coder edits within the second the baseline's
		// compileall check wrote calc.py's bytecode (compileall writes it
		// whatever PYTHONDONTWRITEBYTECODE says), and Python trusts a cache
		// whose source has the same size and mtime second: the fix changes
		// the size so the cache is never taken for the new source.
		m, r, _ := flowRun(t, ws, hermeticEnv(t, "PYTHONDONTWRITEBYTECODE=1"), func(url string) string {
			return guardConfig(t, ws, url, "", pyChecks, "[verify]\nrequire_failing_first = true\n")
		}, script(fileEdit("c1", "calc.py", "def add(a, b):\n    return a - b", "def add(a, b):\n    return (a + b)"),
			fileWrite("c2", "test_calc.py", tests+"\n    def test_add(self):\n        self.assertEqual(calc.add(2, 3), 5)\n")))
		if r.code != 0 || m["status"] != "ok" {
			t.Fatalf("flow run = %d %v (reason %v), want verified\nstderr: %s", r.code, m["status"], m["reason"], r.stderr)
		}
		ff, _ := m["verification"].(map[string]any)["fail_first"].(map[string]any)
		if ff["status"] != "failed_before" {
			t.Errorf("fail_first = %v, want failed_before", ff)
		}
	})
	t.Run("a new test that passes on the old code", func(t *testing.T) {
		t.Parallel()
		ws := calcWithSub(t)
		writeFile(t, ws, "calc_test.go", calcTests(false, true))
		m, r, _ := flowRun(t, ws, goEnv(t), cfg(t, ws),
			script(fileEdit("c1", "calc.go", "return a - b\n}\n\n// Sub", "return a + b\n}\n\n// Sub"),
				fileWrite("c2", "calc_test.go", calcTests(false, true)+"\nfunc TestSubZero(t *testing.T) {\n\tif got := Sub(3, 0); got != 3 {\n\t\tt.Fatal(got)\n\t}\n}\n")))
		wantUnverified(t, m, r, "calc_test.go", "also pass on the code as it was before the run")
		ff, _ := m["verification"].(map[string]any)["fail_first"].(map[string]any)
		if ff["status"] != "passed_before" {
			t.Errorf("fail_first = %v, want passed_before", ff)
		}
	})
}

func TestGuardAllowTestEditsNeedsFailThenPass(t *testing.T) {
	t.Parallel()
	cfg := func(t *testing.T, ws string) func(string) string {
		return func(url string) string {
			return guardConfig(t, ws, url, "", goChecks, "[verify]\nallow_test_edits = true\n")
		}
	}
	t.Run("test changed with the code", func(t *testing.T) {
		t.Parallel()
		// The task changes what Add means: the test's expected value and
		// the code change together, and the new test fails on the old code.
		ws := calcModule(t)
		writeFile(t, ws, "calc.go", "package calc\n\n// Add returns a + b.\nfunc Add(a, b int) int {\n\treturn a + b\n}\n")
		m, r, _ := flowRun(t, ws, goEnv(t), cfg(t, ws),
			script(fileEdit("c1", "calc.go", "return a + b", "return a + b + 1"),
				fileEdit("c2", "calc_test.go", "got != 5", "got != 6")))
		if r.code != 0 || m["status"] != "ok" {
			t.Fatalf("flow run = %d %v (reason %v), want verified\nstderr: %s", r.code, m["status"], m["reason"], r.stderr)
		}
		v := m["verification"].(map[string]any)
		weak, _ := v["weakening"].([]any)
		if len(weak) != 1 || weak[0].(map[string]any)["excused"] != true {
			t.Errorf("weakening = %v, want the changed value listed and excused by the evidence", weak)
		}
	})
	t.Run("test changed alone", func(t *testing.T) {
		t.Parallel()
		ws := calcModule(t)
		m, r, _ := flowRun(t, ws, goEnv(t), cfg(t, ws),
			script(fileEdit("c1", "calc_test.go", "got != 5", "got != -1")))
		wantUnverified(t, m, r, "calc_test.go", "test edits are allowed only when the changed tests fail on the code as it was before the run")
	})
}

func TestGuardProtectedCheckDefinitions(t *testing.T) {
	t.Parallel()
	ws := calcModule(t)
	writeFile(t, ws, "Makefile", "test:\n\tgo test ./...\n")
	m, r, srv := flowRun(t, ws, goEnv(t), func(url string) string {
		return guardConfig(t, ws, url, "", goChecks, "[verify]\nprotect = [\"Makefile\", \"ci/**\"]\n")
	}, script(fileWrite("c1", "Makefile", "test:\n\ttrue\n"), fileWrite("c2", "ci/lint.sh", "exit 0\n")))
	if got, _ := os.ReadFile(filepath.Join(ws, "Makefile")); string(got) != "test:\n\tgo test ./...\n" {
		t.Errorf("Makefile = %q, want it untouched", got)
	}
	if _, err := os.Stat(filepath.Join(ws, "ci/lint.sh")); !os.IsNotExist(err) {
		t.Errorf("ci/lint.sh was created (stat: %v), want it refused", err)
	}
	for _, id := range []string{"c1", "c2"} {
		if res := toolResultByID(t, srv, id); !strings.Contains(res, "[verify] protect") {
			t.Errorf("tool result %s = %s, want the [verify] protect refusal", id, res)
		}
	}
	if r.code != 1 || len(m["changed_files"].([]any)) != 0 {
		t.Errorf("flow run = %d, changed %v; want nothing changed and not verified", r.code, m["changed_files"])
	}
}

// toJSON renders v as compact JSON.
func toJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// roleByName returns the last report entry of role name.
func roleByName(t *testing.T, m map[string]any, name string) map[string]any {
	t.Helper()
	roles, _ := m["roles"].([]any)
	for i := len(roles) - 1; i >= 0; i-- {
		if r, _ := roles[i].(map[string]any); r["role"] == name {
			return r
		}
	}
	t.Fatalf("report has no %s role: %v", name, roles)
	return nil
}

// TestGuardEvidenceForARefactor: a change whose checks passed before and
// after, with no test that shows it, is not verified and says how to get
// evidence; the same change with --behaviour-preserving (a refactor) is
// verified on "nothing that passed fails", and the report says so.
func TestGuardEvidenceForARefactor(t *testing.T) {
	t.Parallel()
	for _, flag := range []bool{false, true} {
		ws := calcModule(t)
		writeFile(t, ws, "calc.go", "package calc\n\n// Add returns a + b.\nfunc Add(a, b int) int {\n\treturn a + b\n}\n")
		srv := ollamatest.New(t, script(fileEdit("c1", "calc.go", "\treturn a + b", "\tsum := a + b\n\treturn sum"))...)
		args := []string{"run", "--trusted", "--config", guardConfig(t, ws, srv.URL, "", goChecks, "")}
		if flag {
			args = append(args, "--behaviour-preserving")
		}
		r := runFlow(t, ws, goEnv(t), append(args, "name the sum")...)
		m := decode(t, r)
		v := m["verification"].(map[string]any)
		if !flag {
			wantUnverified(t, m, r, "No check shows the change: the required checks passed before this run and pass now", "--behaviour-preserving")
			if v["no_evidence"] != true || roleByName(t, m, "reviewer")["status"] != "skipped" {
				t.Errorf("verification %v, reviewer %v; want no_evidence and no reviewer", v, roleByName(t, m, "reviewer"))
			}
			continue
		}
		if r.code != 0 || m["status"] != "ok" || v["evidence"] != "behaviour_preserving" {
			t.Errorf("with --behaviour-preserving: flow run = %d %v, evidence %v (reason %v); want ok on behaviour_preserving", r.code, m["status"], v["evidence"], m["reason"])
		}
	}
}

package verify_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"flow/bufferfs"
	"flow/runtime/editor"
	"flow/runtime/report"
	"flow/runtime/verify"
)

// runChecks is a check runner that calls during (to change the workspace
// while checks run) and then returns its report.
type runChecks struct {
	rep    report.CheckReport
	during func()
}

func (c *runChecks) Run(context.Context, string) report.CheckReport {
	if c.during != nil {
		c.during()
	}
	return c.rep
}

// editorScript answers Context from a list of states, one a call (the last
// repeats); a state with err set is a failed probe.
type editorScript struct {
	states []editorAt
	calls  int
}

type editorAt struct {
	ctx editor.Context
	err error
}

func (e *editorScript) Context(context.Context) (editor.Context, error) {
	s := e.states[min(e.calls, len(e.states)-1)]
	e.calls++
	return s.ctx, s.err
}

// evidenceFor returns fixed editor lint and diagnostics results.
type evidenceFor struct{ lint, diag map[string]any }

func (e evidenceFor) Lint(context.Context, string) map[string]any        { return e.lint }
func (e evidenceFor) Diagnostics(context.Context, string) map[string]any { return e.diag }

func result(name, kind, status string, required bool, filetypes ...string) report.CheckResult {
	return report.CheckResult{Name: name, Source: report.SourceCheck, Kind: kind, Status: status, Required: required, Filetypes: filetypes}
}

// passed is the report of a runner whose checks all passed.
func passed(checks ...report.CheckResult) report.CheckReport {
	return report.CheckReport{Status: report.StatusOK, Verified: true, Checks: checks}
}

// buffers is an editor state with one observed buffer at changedtick tick.
func buffers(tick int64) editor.Context {
	return editor.Context{Snapshot: map[string]any{"a.go": map[string]any{
		"path":    "a.go",
		"buffers": []any{map[string]any{"bufnr": int64(1), "changedtick": tick, "modified": false, "loaded": true}},
		"disk":    map[string]any{"exists": true, "size": int64(10)},
	}}}
}

func unsaved(c editor.Context) editor.Context {
	c.DirtyBuffers = []any{map[string]any{"path": "b.go", "changedtick": int64(4)}}
	return c
}

// TestGate holds the verification gate to every rule of "verified" in doc/design.md
// §8, one or more rows a rule, through the steps a cycle takes: files as
// the coder left them, Begin, Verify (whose checks may change files),
// review (which may change files), Recheck, Verified.
func TestGate(t *testing.T) {
	vet := result("vet", "lint", report.StatusOK, true, "go")
	unit := result("test", "test", report.StatusOK, true, "*")
	ok := report.Role{Status: report.StatusOK}
	yes, no := true, false
	approved := report.Role{Status: report.StatusOK, Approved: &yes}
	boom := errors.New("Neovim request timed out")
	lintOK := map[string]any{"status": "ok", "verified": true}
	docs := map[string]string{"README.md": "# a\n"} // exempt from coverage (doc/design.md §8.3)

	tests := []struct {
		name     string
		files    map[string]string // the workspace when the coder finished
		changed  []string          // default [a.go]
		checks   *report.CheckReport
		noRunner bool
		setup    func(t *testing.T, dir string) // after files are written
		during   func(t *testing.T, dir string) // while the checks run
		evidence verify.EditorEvidence
		editor   []editorAt                     // editor states, one a probe
		wrap     bool                           // run the checks through EditorChecks
		review   func(t *testing.T, dir string) // while the reviewer runs
		roles    *verify.Roles                  // default: all ok, approved

		wantStatus string // of the verification after Recheck
		wantReason string // contained in its reason
		wantStale  bool   // Recheck made it stale
		want       bool   // Verified
	}{
		{name: "all rules hold", checks: ptr(passed(vet, unit)), wantStatus: "ok", want: true},

		// §8.1: planner and coder finished ok within their budgets.
		{name: "8.1 planner out of budget", checks: ptr(passed(vet)),
			roles:      &verify.Roles{Planner: report.Role{Status: report.StatusUnverified}, Coder: ok, Reviewer: approved},
			wantStatus: "ok"},
		{name: "8.1 planner error", checks: ptr(passed(vet)),
			roles:      &verify.Roles{Planner: report.Role{Status: report.StatusError}, Coder: ok, Reviewer: approved},
			wantStatus: "ok"},
		{name: "8.1 coder out of budget", checks: ptr(passed(vet)),
			roles:      &verify.Roles{Planner: ok, Coder: report.Role{Status: report.StatusUnverified}, Reviewer: approved},
			wantStatus: "ok"},
		{name: "8.1 coder error", checks: ptr(passed(vet)),
			roles:      &verify.Roles{Planner: ok, Coder: report.Role{Status: report.StatusError}, Reviewer: approved},
			wantStatus: "ok"},

		// §8.2: at least one required check ran and every required check passed.
		// A pass over no changed file: checks that passed before say
		// nothing about the task (a model that answers with code).
		{name: "no change is never verified", changed: []string{}, checks: ptr(passed(vet, unit)),
			wantStatus: "unverified", wantReason: verify.ReasonNoChange},
		{name: "8.2 no check runner", noRunner: true, files: docs, changed: []string{"README.md"}, wantStatus: "unverified", wantReason: verify.ReasonNoChecks},
		{name: "8.2 no checks configured", files: docs, changed: []string{"README.md"},
			checks:     &report.CheckReport{Status: report.StatusUnverified, Checks: []report.CheckResult{}, Reason: "No named checks are configured"},
			wantStatus: "unverified", wantReason: "No named checks are configured"},
		{name: "8.2 only optional checks", files: docs, changed: []string{"README.md"}, checks: ptr(passed(result("vet", "lint", "ok", false, "go"))),
			wantStatus: "unverified", wantReason: "No required check ran"},
		{name: "8.2 required check failed",
			checks:     &report.CheckReport{Status: report.StatusFailed, Checks: []report.CheckResult{vet, result("test", "test", "failed", true)}, Reason: "Required check test failed"},
			wantStatus: "failed", wantReason: "Required check test failed"},
		{name: "8.2 required check timed out",
			checks:     &report.CheckReport{Status: report.StatusTimeout, Checks: []report.CheckResult{vet, result("test", "test", "timeout", true)}, Reason: "Required check test timed out"},
			wantStatus: "timeout", wantReason: "timed out"},
		{name: "8.2 required check unavailable",
			checks:     &report.CheckReport{Status: report.StatusUnverified, Checks: []report.CheckResult{vet, result("test", "test", "unavailable", true)}},
			wantStatus: "unverified", wantReason: "The check test is unavailable"},
		{name: "8.2 runner claims ok over a failed required check", checks: ptr(passed(vet, result("test", "test", "failed", true))),
			wantStatus: "unverified", wantReason: "The required check test failed"},
		{name: "8.2 optional failure does not count", checks: ptr(passed(vet, result("style", "lint", "failed", false, "*"))),
			wantStatus: "ok", want: true},

		// §8.3: static coverage of every changed non-documentation file.
		{name: "8.3 a test check is no static analysis", checks: ptr(passed(unit)),
			wantStatus: "unverified", wantReason: verify.ReasonCoverage},
		{name: "8.3 covered by language name", checks: ptr(passed(unit, result("vet", "typecheck", "ok", true, "go"))),
			wantStatus: "ok", want: true},
		{name: "8.3 covered by dotted extension", checks: ptr(passed(result("vet", "diagnostics", "ok", true, ".go"))),
			wantStatus: "ok", want: true},
		{name: "8.3 covered by *", checks: ptr(passed(result("all", "lint", "ok", true, "*"))),
			wantStatus: "ok", want: true},
		{name: "8.3 an optional lint does not cover", checks: ptr(passed(unit, result("vet", "lint", "ok", false, "go"))),
			wantStatus: "unverified", wantReason: verify.ReasonCoverage},
		{name: "8.3 a lint of another language does not cover", files: map[string]string{"a.py": "x = 1\n"}, changed: []string{"a.py"},
			checks: ptr(passed(vet)), wantStatus: "unverified", wantReason: verify.ReasonCoverage},
		{name: "8.3 every changed file needs coverage", files: map[string]string{"a.go": "package a\n", "b.py": "x = 1\n"},
			changed: []string{"a.go", "b.py"}, checks: ptr(passed(vet)), wantStatus: "unverified", wantReason: verify.ReasonCoverage},
		{name: "8.3 a fresh editor lint covers", checks: ptr(passed(unit)), evidence: evidenceFor{lint: lintOK},
			wantStatus: "ok", want: true},
		{name: "8.3 an editor lint without verified does not cover", checks: ptr(passed(unit)),
			evidence:   evidenceFor{lint: map[string]any{"status": "ok"}},
			wantStatus: "unverified", wantReason: verify.ReasonCoverage},
		{name: "8.3 an error diagnostic vetoes a passing lint check", checks: ptr(passed(vet)),
			evidence:   evidenceFor{diag: map[string]any{"status": "ok", "diagnostics": []any{map[string]any{"severity": float64(1), "message": "undefined: x"}}}},
			wantStatus: "unverified", wantReason: verify.ReasonCoverage},
		{name: "8.3 a failed editor lint vetoes", checks: ptr(passed(vet)),
			evidence:   evidenceFor{lint: map[string]any{"status": "failed", "verified": true}},
			wantStatus: "unverified", wantReason: verify.ReasonCoverage},
		{name: "8.3 a stale editor lint vetoes", checks: ptr(passed(vet)),
			evidence:   evidenceFor{lint: map[string]any{"status": "stale"}},
			wantStatus: "unverified", wantReason: verify.ReasonCoverage},
		{name: "8.3 a timed-out editor diagnostics vetoes", checks: ptr(passed(vet)),
			evidence:   evidenceFor{diag: map[string]any{"status": "timeout"}},
			wantStatus: "unverified", wantReason: verify.ReasonCoverage},
		{name: "8.3 an editor error vetoes", checks: ptr(passed(vet)),
			evidence:   evidenceFor{lint: lintOK, diag: map[string]any{"status": "error"}},
			wantStatus: "unverified", wantReason: verify.ReasonCoverage},
		{name: "8.3 cached diagnostics alone never cover", checks: ptr(passed(unit)),
			evidence:   evidenceFor{diag: map[string]any{"status": "ok", "diagnostics": []any{}}},
			wantStatus: "unverified", wantReason: verify.ReasonCoverage},
		{name: "8.3 documentation and data files are exempt",
			files:   map[string]string{"README.md": "x", "a.txt": "x", "b.rst": "x", "c.json": "{}", "d.toml": "", "e.yaml": "", "f.yml": "", "g.lock": "", "h.csv": ""},
			changed: []string{"README.md", "a.txt", "b.rst", "c.json", "d.toml", "e.yaml", "f.yml", "g.lock", "h.csv"},
			checks:  ptr(passed(unit)), wantStatus: "ok", want: true},
		{name: "8.3 an unknown extension is its own key", files: map[string]string{"App.vue": "<template/>"}, changed: []string{"App.vue"},
			checks: ptr(passed(result("vue", "lint", "ok", true, "vue"))), wantStatus: "ok", want: true},
		{name: "8.3 a failed check keeps its status over a gap",
			checks:     &report.CheckReport{Status: report.StatusFailed, Checks: []report.CheckResult{result("test", "test", "failed", true)}, Reason: "Required check test failed"},
			wantStatus: "failed", wantReason: "Required check test failed"},

		// §8.4: the reviewer returned a structured verdict that approves.
		{name: "8.4 reviewer rejected", checks: ptr(passed(vet)),
			roles:      &verify.Roles{Planner: ok, Coder: ok, Reviewer: report.Role{Status: report.StatusOK, Approved: &no}},
			wantStatus: "ok"},
		{name: "8.4 reviewer gave no verdict", checks: ptr(passed(vet)),
			roles:      &verify.Roles{Planner: ok, Coder: ok, Reviewer: report.Role{Status: report.StatusUnverified}},
			wantStatus: "ok"},
		{name: "8.4 reviewer ok without a verdict", checks: ptr(passed(vet)),
			roles:      &verify.Roles{Planner: ok, Coder: ok, Reviewer: ok},
			wantStatus: "ok"},
		{name: "8.4 reviewer error after approving", checks: ptr(passed(vet)),
			roles:      &verify.Roles{Planner: ok, Coder: ok, Reviewer: report.Role{Status: report.StatusError, Approved: &yes}},
			wantStatus: "ok"},
		{name: "8.4 reviewer did not run", checks: ptr(passed(vet)),
			roles:      &verify.Roles{Planner: ok, Coder: ok},
			wantStatus: "ok"},

		// §8.5: nothing changed underneath.
		{name: "8.5 a changed file edited while checks run", checks: ptr(passed(vet)),
			during:     func(t *testing.T, dir string) { write(t, dir, "a.go", "package b\n") },
			wantStatus: "stale", wantReason: verify.ReasonStale, wantStale: true},
		{name: "8.5 a changed file edited during review", checks: ptr(passed(vet)),
			review:     func(t *testing.T, dir string) { write(t, dir, "a.go", "package b\n") },
			wantStatus: "stale", wantReason: verify.ReasonStale, wantStale: true},
		{name: "8.5 rewriting the same bytes is no change", checks: ptr(passed(vet)),
			review:     func(t *testing.T, dir string) { write(t, dir, "a.go", "package a\n") },
			wantStatus: "ok", want: true},
		{name: "8.5 a changed file deleted during review", checks: ptr(passed(vet)),
			review:     func(t *testing.T, dir string) { remove(t, dir, "a.go") },
			wantStatus: "stale", wantReason: verify.ReasonStale, wantStale: true},
		{name: "8.5 a file the coder deleted created during review", files: map[string]string{}, checks: ptr(passed(vet)),
			review:     func(t *testing.T, dir string) { write(t, dir, "a.go", "package a\n") },
			wantStatus: "stale", wantReason: verify.ReasonStale, wantStale: true},
		{name: "8.5 a changed file that cannot be hashed", files: map[string]string{"real.go": "package a\n"},
			setup:      func(t *testing.T, dir string) { symlink(t, dir, "real.go", "a.go") },
			checks:     ptr(passed(vet)),
			wantStatus: "stale", wantReason: verify.ReasonFingerprint},
		{name: "8.5 a changed file replaced by a symlink during review", checks: ptr(passed(vet)),
			review: func(t *testing.T, dir string) {
				write(t, dir, "b.go", "package a\n")
				remove(t, dir, "a.go")
				symlink(t, dir, "b.go", "a.go")
			},
			wantStatus: "stale", wantReason: verify.ReasonFingerprint, wantStale: true},
		{name: "8.5 editor unchanged", checks: ptr(passed(vet)),
			editor:     []editorAt{{ctx: buffers(3)}, {ctx: buffers(3)}},
			wantStatus: "ok", want: true},
		{name: "8.5 editor unchanged around checks", checks: ptr(passed(vet)), wrap: true,
			editor:     []editorAt{{ctx: buffers(3)}, {ctx: buffers(3)}, {ctx: buffers(3)}, {ctx: buffers(3)}},
			wantStatus: "ok", want: true},
		{name: "8.5 unsaved buffers refuse the checks", checks: ptr(passed(vet)), wrap: true,
			editor:     []editorAt{{ctx: unsaved(buffers(3))}},
			wantStatus: "stale", wantReason: "b.go has unsaved changes in the editor, which the checks would not see: save or discard it"},
		{name: "8.5 editor snapshot changed across checks", checks: ptr(passed(vet)), wrap: true,
			editor:     []editorAt{{ctx: buffers(3)}, {ctx: buffers(4)}, {ctx: buffers(4)}, {ctx: buffers(4)}},
			wantStatus: "stale", wantReason: verify.ReasonEditorChanged},
		{name: "8.5 unsaved buffers when the checks end", checks: ptr(passed(vet)),
			editor:     []editorAt{{ctx: unsaved(buffers(3))}},
			wantStatus: "stale", wantReason: "b.go has unsaved changes in the editor, which the checks would not see: save or discard it"},
		{name: "8.5 editor unreachable when the checks end", checks: ptr(passed(vet)),
			editor:     []editorAt{{err: boom}},
			wantStatus: "stale", wantReason: verify.ReasonEditorUnavailable + boom.Error()},
		{name: "8.5 editor buffer changed during review", checks: ptr(passed(vet)),
			editor:     []editorAt{{ctx: buffers(3)}, {ctx: buffers(4)}},
			wantStatus: "stale", wantReason: verify.ReasonEditorStale, wantStale: true},
		{name: "8.5 unsaved buffers after review", checks: ptr(passed(vet)),
			editor:     []editorAt{{ctx: buffers(3)}, {ctx: unsaved(buffers(3))}},
			wantStatus: "stale", wantReason: verify.ReasonEditorStale, wantStale: true},
		{name: "8.5 editor unreachable after review", checks: ptr(passed(vet)),
			editor:     []editorAt{{ctx: buffers(3)}, {err: boom}},
			wantStatus: "stale", wantReason: verify.ReasonEditorUnavailable, wantStale: true},
		{name: "8.5 a file change wins over the editor's", checks: ptr(passed(vet)),
			editor:     []editorAt{{ctx: buffers(3)}, {ctx: buffers(4)}},
			review:     func(t *testing.T, dir string) { write(t, dir, "a.go", "package b\n") },
			wantStatus: "stale", wantReason: verify.ReasonStale, wantStale: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			files := tc.files
			if files == nil {
				files = map[string]string{"a.go": "package a\n"}
			}
			dir, disk := diskWith(t, files)
			if tc.setup != nil {
				tc.setup(t, dir)
			}

			g := verify.Gate{FS: disk, Evidence: tc.evidence}
			var runner verify.CheckRunner
			if !tc.noRunner {
				rc := &runChecks{rep: *tc.checks}
				if tc.during != nil {
					rc.during = func() { tc.during(t, dir) }
				}
				runner = rc
			}
			if tc.editor != nil {
				ed := &editorScript{states: tc.editor}
				g.Editor = ed
				if tc.wrap {
					runner = &verify.EditorChecks{Checks: runner, Editor: ed}
				}
			}
			g.Checks = runner
			changed := tc.changed
			if changed == nil {
				changed = []string{"a.go"}
			}
			roles := verify.Roles{Planner: ok, Coder: ok, Reviewer: approved}
			if tc.roles != nil {
				roles = *tc.roles
			}

			p := g.Begin(t.Context(), changed)
			first := p.Verify(t.Context())
			if tc.review != nil {
				tc.review(t, dir)
			}
			v, stale := p.Recheck(t.Context())

			if stale != tc.wantStale {
				t.Errorf("Recheck() stale = %v, want %v (verification before: %s %q)", stale, tc.wantStale, first.Status, first.Reason)
			}
			if v.Status != tc.wantStatus || !strings.Contains(v.Reason, tc.wantReason) {
				t.Errorf("verification = %s %q, want %s containing %q", v.Status, v.Reason, tc.wantStatus, tc.wantReason)
			}
			if v.Verified != (v.Status == report.StatusOK) {
				t.Errorf("verification = %s with verified %v; only ok is verified", v.Status, v.Verified)
			}
			if tc.wantStatus == "ok" && v.Reason != "" {
				t.Errorf("verified verification has reason %q", v.Reason)
			}
			if got := p.Verified(roles); got != tc.want {
				t.Errorf("Verified(%+v) = %v, want %v (verification %s %q)", roles, got, tc.want, v.Status, v.Reason)
			}
			if !stale && first.Status != v.Status {
				t.Errorf("Recheck() changed the verification from %s to %s without reporting it stale", first.Status, v.Status)
			}
		})
	}
}

// TestGateRecordsFingerprints checks that the verification carries the
// fingerprints taken when the coder finished, before the checks ran.
func TestGateRecordsFingerprints(t *testing.T) {
	dir, disk := diskWith(t, map[string]string{"a.go": "package a\n"})
	rc := &runChecks{rep: passed(result("vet", "lint", "ok", true, "go")), during: func() { write(t, dir, "a.go", "package b\n") }}
	p := verify.Gate{FS: disk, Checks: rc}.Begin(t.Context(), []string{"a.go", "gone.go"})
	v := p.Verify(t.Context())
	want := map[string]string{"a.go": sha256Hex("package a\n"), "gone.go": ""}
	if len(v.Fingerprints) != 2 || v.Fingerprints["a.go"] != want["a.go"] || v.Fingerprints["gone.go"] != "" {
		t.Errorf("Verify().Fingerprints = %v, want %v", v.Fingerprints, want)
	}
}

// TestGateCancelled checks that a cycle cancelled during the checks takes
// no editor snapshot and says so.
func TestGateCancelled(t *testing.T) {
	_, disk := diskWith(t, map[string]string{"a.go": "package a\n"})
	ctx, cancel := context.WithCancel(t.Context())
	ed := &editorScript{states: []editorAt{{ctx: buffers(1)}}}
	rc := &runChecks{rep: report.CheckReport{Status: report.StatusCancelled, Checks: []report.CheckResult{}}, during: cancel}
	p := verify.Gate{FS: disk, Checks: rc, Editor: ed}.Begin(ctx, []string{"a.go"})
	if p.Cancelled() {
		t.Fatal("Cancelled() = true before the checks ran")
	}
	v := p.Verify(ctx)
	if !p.Cancelled() || ed.calls != 0 || v.Verified {
		t.Errorf("after cancelled checks: Cancelled() = %v, editor probed %d times, verified %v; want true, 0, false", p.Cancelled(), ed.calls, v.Verified)
	}
}

func ptr[T any](v T) *T { return &v }

// diskWith returns a workspace holding files and a Disk on it, closed when
// the test ends.
func diskWith(t *testing.T, files map[string]string) (string, *bufferfs.Disk) {
	t.Helper()
	dir := t.TempDir()
	for name, content := range files {
		write(t, dir, name, content)
	}
	disk, err := bufferfs.NewDisk(dir, bufferfs.DiskOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { disk.Close() })
	return dir, disk
}

func write(t *testing.T, dir, name, content string) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func remove(t *testing.T, dir, name string) {
	t.Helper()
	if err := os.Remove(filepath.Join(dir, name)); err != nil {
		t.Fatal(err)
	}
}

func symlink(t *testing.T, dir, target, name string) {
	t.Helper()
	if err := os.Symlink(target, filepath.Join(dir, name)); err != nil {
		t.Fatal(err)
	}
}

func sha256Hex(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:])
}

package verify_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"flow/bufferfs"
	"flow/runtime/report"
	"flow/runtime/verify"
)

func TestCompareBaseline(t *testing.T) {
	t.Parallel()
	base := []report.CheckResult{
		result("vet", "lint", report.StatusOK, true),
		result("test", "test", report.StatusFailed, true),
		result("race", "test", report.StatusFailed, true),
		result("fmt", "lint", report.StatusOK, true),
		result("slow", "test", report.StatusCancelled, true),
	}
	now := []report.CheckResult{
		result("vet", "lint", report.StatusOK, true),
		result("test", "test", report.StatusOK, true),
		result("race", "test", report.StatusTimeout, true),
		result("fmt", "lint", report.StatusFailed, true),
		result("slow", "test", report.StatusOK, true),
		result("new", "test", report.StatusOK, true),
	}
	got := verify.CompareBaseline(now, base)
	want := "check fmt passed before this run and fails now (broken by this run); " +
		"check race was failing before this run and still fails (pre-existing); " +
		"check test was failing before this run and passes now (fixed)"
	if got != want {
		t.Errorf("CompareBaseline() = %q, want %q", got, want)
	}
	outcomes := map[string][2]string{}
	for _, c := range now {
		outcomes[c.Name] = [2]string{c.Baseline, c.BaselineStatus}
	}
	wantOutcomes := map[string][2]string{
		"vet":  {report.BaselineUnchanged, report.StatusOK},
		"test": {report.BaselineFixed, report.StatusFailed},
		"race": {report.BaselinePreExisting, report.StatusFailed},
		"fmt":  {report.BaselineBroken, report.StatusOK},
		"slow": {"", ""}, // cancelled before: nothing to compare with
		"new":  {"", ""}, // not in the baseline
	}
	if diff := cmp.Diff(wantOutcomes, outcomes); diff != "" {
		t.Errorf("baseline outcomes (-want +got):\n%s", diff)
	}
	if s := verify.CompareBaseline(now, nil); s != "" {
		t.Errorf("CompareBaseline(no baseline) = %q, want \"\"", s)
	}
	same := []report.CheckResult{result("vet", "lint", report.StatusOK, true), result("test", "test", report.StatusOK, true)}
	if s := verify.CompareBaseline(same, same); s != "checks vet and test passed before this run and pass now (unchanged)" {
		t.Errorf("CompareBaseline(unchanged) = %q", s)
	}
}

// namedChecks runs nothing and counts the names it was asked for.
type namedChecks struct{ names []string }

func (c *namedChecks) Run(_ context.Context, name string) report.CheckReport {
	c.names = append(c.names, name)
	st := report.StatusOK
	if name == "test" {
		st = report.StatusFailed
	}
	return report.CheckReport{Status: st, Checks: []report.CheckResult{result(name, "test", st, true)}}
}

func TestMeasureBaselineRunsEachNamedCheck(t *testing.T) {
	t.Parallel()
	c := &namedChecks{}
	got := verify.MeasureBaseline(t.Context(), c, []string{"vet", "test"})
	if diff := cmp.Diff([]string{"vet", "test"}, c.names); diff != "" {
		t.Errorf("checks run (-want +got):\n%s", diff)
	}
	if len(got) != 2 || got[0].Status != report.StatusOK || got[1].Status != report.StatusFailed {
		t.Errorf("MeasureBaseline() = %+v, want vet ok and test failed", got)
	}
	if got := verify.MeasureBaseline(t.Context(), nil, []string{"vet"}); got != nil {
		t.Errorf("MeasureBaseline(no runner) = %v, want nil", got)
	}
}

func TestOriginalsKeepTheFirstContent(t *testing.T) {
	t.Parallel()
	o := verify.NewOriginals()
	var passed []string
	refuse := errors.New("journal full")
	hook := o.Hook(func(_ context.Context, path string, _ bufferfs.File, data []byte) error {
		passed = append(passed, path+"="+string(data))
		if string(data) == "refused" {
			return refuse
		}
		return nil
	})
	ctx := t.Context()
	old := bufferfs.File{Info: bufferfs.Info{Path: "a.go", Exists: true}, Data: []byte("v1")}
	if err := hook(ctx, "./a.go", old, []byte("v2")); err != nil {
		t.Fatal(err)
	}
	if err := hook(ctx, "a.go", bufferfs.File{Info: bufferfs.Info{Path: "a.go", Exists: true}, Data: []byte("v2")}, []byte("v3")); err != nil {
		t.Fatal(err)
	}
	if err := hook(ctx, "new.go", bufferfs.File{}, []byte("refused")); !errors.Is(err, refuse) {
		t.Errorf("hook() = %v, want the next hook's error", err)
	}
	if f, ok := o.Original("a.go"); !ok || string(f.Data) != "v1" || !f.Exists {
		t.Errorf("Original(a.go) = %q %v %v, want the content before the first write", f.Data, f.Exists, ok)
	}
	if f, ok := o.Original("new.go"); !ok || f.Exists {
		t.Errorf("Original(new.go) = exists %v, known %v; want known as absent", f.Exists, ok)
	}
	if _, ok := o.Original("other.go"); ok {
		t.Errorf("Original(other.go) known, want unknown: never written")
	}
	if len(passed) != 3 {
		t.Errorf("next hook calls = %v, want all three", passed)
	}
	var nilRec *verify.Originals
	if _, ok := nilRec.Original("a.go"); ok {
		t.Errorf("nil Originals knows a file")
	}
}

// scratchChecks is the test-check runner of the fail-then-pass evidence: it
// fails when the scratch copy's calc.go still holds the bug, and records
// what it saw there.
type scratchChecks struct {
	dir  string
	seen string
	runs int
}

func (s *scratchChecks) Run(context.Context, string) report.CheckReport {
	s.runs++
	b, _ := os.ReadFile(filepath.Join(s.dir, "calc.go"))
	s.seen = string(b)
	st := report.StatusOK
	if strings.Contains(s.seen, "a - b") {
		st = report.StatusFailed
	}
	return report.CheckReport{Status: st, Checks: []report.CheckResult{result("test", "test", st, true)}}
}

const (
	calcBug   = "package calc\n\nfunc Add(a, b int) int { return a - b }\n"
	calcFixed = "package calc\n\nfunc Add(a, b int) int { return a + b }\n"
	calcTest  = "package calc\n\nimport \"testing\"\n\nfunc TestAdd(t *testing.T) {\n\tif Add(2, 3) != 5 {\n\t\tt.Fatal(Add(2, 3))\n\t}\n}\n"
)

// TestGuard runs the gate with a guard over a real workspace: the files as
// the coder left them on disk, their pre-run content in Originals.
func TestGuard(t *testing.T) {
	t.Parallel()
	vet := result("vet", "lint", report.StatusOK, true, "go")
	test := result("test", "test", report.StatusOK, true, "go")
	type file struct{ before, after *string }
	s := func(v string) *string { return &v }
	tests := []struct {
		name   string
		files  map[string]file
		checks report.CheckReport
		guard  verify.Guard
		// knownOnly lists the files Originals knows (nil: all).
		unknown []string

		wantStatus   string
		wantReason   []string // substrings; none means ""
		wantWhat     []string
		wantExcused  bool
		wantFF       string // fail_first status, "" when none
		wantFFRuns   int
		wantRestored string // calc.go content the scratch checks saw
		wantEvidence string // verification.evidence
		wantNoProof  bool   // verification.no_evidence
	}{
		{
			name:       "changed expected value",
			files:      map[string]file{"calc_test.go": {s(calcTest), s(strings.Replace(calcTest, "!= 5", "!= -1", 1))}},
			checks:     passed(vet, test),
			wantStatus: report.StatusUnverified,
			wantReason: []string{"calc_test.go: a value in an existing test line changed on line 6 (5 → -1)", "[verify] allow_test_edits"},
			wantWhat:   []string{"expected_changed"},
		},
		{
			name:       "check configuration loosened, even with test edits allowed",
			files:      map[string]file{".golangci.yml": {s("linters:\n  enable: [errcheck]\n"), s("linters:\n  disable-all: true\n")}},
			checks:     passed(vet, test),
			guard:      verify.Guard{AllowTestEdits: true},
			wantStatus: report.StatusUnverified,
			wantReason: []string{".golangci.yml: the configuration of a check was changed"},
			wantWhat:   []string{"check_config_changed"},
		},
		{
			name:         "new test and a fix: fail-then-pass is the evidence",
			files:        map[string]file{"calc.go": {s(calcBug), s(calcFixed)}, "add_test.go": {nil, s(calcTest)}},
			checks:       passed(vet, test),
			wantStatus:   report.StatusOK,
			wantFF:       report.FailFirstFailedBefore,
			wantFFRuns:   1,
			wantRestored: calcBug,
			wantEvidence: report.EvidenceFailThenPass,
		},
		{
			name:   "a fixed check is the evidence, without a scratch run",
			files:  map[string]file{"calc.go": {s(calcBug), s(calcFixed)}, "add_test.go": {nil, s(calcTest)}},
			checks: passed(vet, test),
			guard: verify.Guard{Baseline: []report.CheckResult{
				result("vet", "lint", report.StatusOK, true), result("test", "test", report.StatusFailed, true),
			}},
			wantStatus:   report.StatusOK,
			wantEvidence: report.EvidenceFixed,
		},
		{
			name:   "no evidence: the checks passed before and the run adds no test",
			files:  map[string]file{"calc.go": {s(calcBug), s(calcFixed)}},
			checks: passed(vet, test),
			guard: verify.Guard{Baseline: []report.CheckResult{
				result("vet", "lint", report.StatusOK, true), result("test", "test", report.StatusOK, true),
			}},
			wantStatus:  report.StatusUnverified,
			wantReason:  []string{"No check shows the change: the required checks passed before this run and pass now", "add a test that fails without the change", "--behaviour-preserving"},
			wantNoProof: true,
		},
		{
			name:        "no evidence: no baseline was measured",
			files:       map[string]file{"calc.go": {s(calcBug), s(calcFixed)}},
			checks:      passed(vet, test),
			wantStatus:  report.StatusUnverified,
			wantReason:  []string{"No check shows the change: no baseline of the checks was measured", "agent.baseline = false"},
			wantNoProof: true,
		},
		{
			name:        "no evidence: the new test passes on the old code",
			files:       map[string]file{"calc.go": {s(calcFixed), s(calcFixed + "\nfunc One() int { return 1 }\n")}, "add_test.go": {nil, s(calcTest)}},
			checks:      passed(vet, test),
			wantStatus:  report.StatusUnverified,
			wantReason:  []string{"No check shows the change: the run's new or changed tests (add_test.go) also pass on the code as it was before the run"},
			wantFF:      report.FailFirstPassedBefore,
			wantFFRuns:  1,
			wantNoProof: true,
		},
		{
			name:   "behaviour preserving: nothing that passed fails",
			files:  map[string]file{"calc.go": {s(calcFixed), s(calcFixed + "\nfunc One() int { return 1 }\n")}},
			checks: passed(vet, test),
			guard: verify.Guard{BehaviourPreserving: true, Baseline: []report.CheckResult{
				result("vet", "lint", report.StatusOK, true), result("test", "test", report.StatusOK, true),
			}},
			wantStatus:   report.StatusOK,
			wantEvidence: report.EvidenceBehaviourPreserving,
		},
		{
			name:       "a function put inside a comment",
			files:      map[string]file{"calc.go": {s(calcFixed), s(calcFixed + "\n/*\nfunc Sub(a, b int) int { return a - b }\n*/\n")}},
			checks:     passed(vet, test),
			wantStatus: report.StatusUnverified,
			wantReason: []string{"The change to calc.go only touches comments, blank lines or whitespace", "make the change in the code itself"},
		},
		{
			name:         "a comment beside a real change",
			files:        map[string]file{"doc.go": {s("package calc\n"), s("// Package calc adds.\npackage calc\n")}, "calc.go": {s(calcBug), s(calcFixed)}},
			checks:       passed(vet, test),
			guard:        verify.Guard{Baseline: []report.CheckResult{result("test", "test", report.StatusFailed, true)}},
			wantStatus:   report.StatusOK,
			wantEvidence: report.EvidenceFixed,
		},
		{
			name:         "a new file of comments is a change",
			files:        map[string]file{"doc.go": {nil, s("// Package calc adds.\npackage calc\n")}},
			checks:       passed(vet, test),
			guard:        verify.Guard{BehaviourPreserving: true},
			wantStatus:   report.StatusOK,
			wantEvidence: report.EvidenceBehaviourPreserving,
		},
		{
			name:       "a failing check keeps its reason and lists the weakening",
			files:      map[string]file{"calc_test.go": {s(calcTest), s("package calc\n")}},
			checks:     report.CheckReport{Status: report.StatusFailed, Checks: []report.CheckResult{vet, result("test", "test", report.StatusFailed, true, "go")}},
			wantStatus: report.StatusFailed,
			wantReason: []string{"The required check test failed"},
			wantWhat:   []string{"test_removed", "assertions_removed"},
		},
		{
			name:         "test edit allowed with fail-then-pass evidence",
			files:        map[string]file{"calc.go": {s(calcBug), s(calcFixed)}, "calc_test.go": {s(calcTest), s(strings.Replace(calcTest, "!= 5", "!= 6", 1))}},
			checks:       passed(vet, test),
			guard:        verify.Guard{AllowTestEdits: true},
			wantStatus:   report.StatusOK,
			wantWhat:     []string{"expected_changed"},
			wantExcused:  true,
			wantFF:       report.FailFirstFailedBefore,
			wantFFRuns:   1,
			wantRestored: calcBug,
			wantEvidence: report.EvidenceFailThenPass,
		},
		{
			name:       "test edit allowed, but the tests pass on the old code",
			files:      map[string]file{"doc.go": {s("package calc\n"), s("package calc // x\n")}, "calc_test.go": {s(calcTest), s(strings.Replace(calcTest, "!= 5", "!= 6", 1))}},
			checks:     passed(vet, test),
			guard:      verify.Guard{AllowTestEdits: true},
			wantStatus: report.StatusUnverified,
			wantReason: []string{"calc_test.go: a value in an existing test line changed", "test edits are allowed only when the changed tests fail on the code as it was before the run", "also pass on the code"},
			wantWhat:   []string{"expected_changed"},
			wantFF:     report.FailFirstPassedBefore,
			wantFFRuns: 1,
		},
		{
			name:         "failing first: a real fix with a new test",
			files:        map[string]file{"calc.go": {s(calcBug), s(calcFixed)}, "add_test.go": {nil, s(calcTest)}},
			checks:       passed(vet, test),
			guard:        verify.Guard{RequireFailingFirst: true},
			wantStatus:   report.StatusOK,
			wantFF:       report.FailFirstFailedBefore,
			wantFFRuns:   1,
			wantRestored: calcBug,
			wantEvidence: report.EvidenceFailThenPass,
		},
		{
			name:       "failing first: the new test passes on the old code",
			files:      map[string]file{"calc.go": {s(calcFixed), s(calcFixed + "\n// Sub is next.\n")}, "add_test.go": {nil, s(calcTest)}},
			checks:     passed(vet, test),
			guard:      verify.Guard{RequireFailingFirst: true},
			wantStatus: report.StatusUnverified,
			wantReason: []string{"The new or changed tests (add_test.go) also pass on the code as it was before the run"},
			wantFF:     report.FailFirstPassedBefore,
			wantFFRuns: 1,
		},
		{
			name:       "failing first: only tests changed",
			files:      map[string]file{"add_test.go": {nil, s(calcTest)}},
			checks:     passed(vet, test),
			guard:      verify.Guard{RequireFailingFirst: true},
			wantStatus: report.StatusUnverified,
			wantReason: []string{"The run changed only tests (add_test.go) and no code"},
			wantFF:     report.FailFirstPassedBefore,
		},
		{
			name:       "failing first: the old content is unknown",
			files:      map[string]file{"calc.go": {s(calcBug), s(calcFixed)}, "add_test.go": {nil, s(calcTest)}},
			unknown:    []string{"calc.go"},
			checks:     passed(vet, test),
			guard:      verify.Guard{RequireFailingFirst: true},
			wantStatus: report.StatusUnverified,
			wantReason: []string{"the content of calc.go before the run is unknown"},
			wantFF:     report.FailFirstError,
		},
		{
			name:       "failing first is not taken when the checks fail",
			files:      map[string]file{"calc.go": {s(calcBug), s(calcFixed)}, "add_test.go": {nil, s(calcTest)}},
			checks:     report.CheckReport{Status: report.StatusFailed, Checks: []report.CheckResult{vet, result("test", "test", report.StatusFailed, true, "go")}},
			guard:      verify.Guard{RequireFailingFirst: true},
			wantStatus: report.StatusFailed,
			wantReason: []string{"The required check test failed"},
		},
		{
			name:   "a broken check is named against the baseline",
			files:  map[string]file{"calc.go": {s(calcFixed), s(calcBug)}},
			checks: report.CheckReport{Status: report.StatusFailed, Checks: []report.CheckResult{vet, result("test", "test", report.StatusFailed, true, "go")}},
			guard: verify.Guard{Baseline: []report.CheckResult{
				result("vet", "lint", report.StatusOK, true), result("test", "test", report.StatusOK, true),
			}},
			wantStatus: report.StatusFailed,
			wantReason: []string{"Check test passed before this run and fails now (broken by this run)"},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			after := map[string]string{}
			var changed []string
			for p, f := range tc.files {
				changed = append(changed, p)
				if f.after != nil {
					after[p] = *f.after
				}
			}
			dir, disk := diskWith(t, after)
			orig := verify.NewOriginals()
			hook := orig.Hook(nil)
			for p, f := range tc.files {
				if contains(tc.unknown, p) {
					continue
				}
				old := bufferfs.File{Info: bufferfs.Info{Path: p}}
				if f.before != nil {
					old.Exists, old.Data = true, []byte(*f.before)
				}
				if err := hook(t.Context(), p, old, nil); err != nil {
					t.Fatal(err)
				}
			}
			sc := &scratchChecks{}
			g := tc.guard
			g.Originals, g.Root = orig, dir
			g.TestChecks = func(d string) verify.CheckRunner { sc.dir = d; return sc }
			gate := verify.Gate{FS: disk, Checks: &runChecks{rep: tc.checks}, Guard: &g}
			v := gate.Begin(t.Context(), sortStrings(changed)).Verify(t.Context())

			if v.Status != tc.wantStatus || v.Verified != (tc.wantStatus == report.StatusOK) {
				t.Errorf("Verify() = %s verified=%v (%q), want %s", v.Status, v.Verified, v.Reason, tc.wantStatus)
			}
			if v.Evidence != tc.wantEvidence || v.NoEvidence != tc.wantNoProof {
				t.Errorf("evidence = %q, no_evidence = %v; want %q, %v", v.Evidence, v.NoEvidence, tc.wantEvidence, tc.wantNoProof)
			}
			if len(tc.wantReason) == 0 && v.Reason != "" {
				t.Errorf("reason = %q, want none", v.Reason)
			}
			for _, w := range tc.wantReason {
				if !strings.Contains(v.Reason, w) {
					t.Errorf("reason = %q, want it to contain %q", v.Reason, w)
				}
			}
			var what []string
			for _, w := range v.Weakening {
				what = append(what, w.What)
				if w.Excused != tc.wantExcused {
					t.Errorf("weakening %s excused = %v, want %v", w.What, w.Excused, tc.wantExcused)
				}
			}
			if diff := cmp.Diff(tc.wantWhat, what); diff != "" {
				t.Errorf("weakening (-want +got):\n%s", diff)
			}
			gotFF := ""
			if v.FailFirst != nil {
				gotFF = v.FailFirst.Status
			}
			if gotFF != tc.wantFF || sc.runs != tc.wantFFRuns {
				t.Errorf("fail_first = %q after %d scratch runs, want %q after %d", gotFF, sc.runs, tc.wantFF, tc.wantFFRuns)
			}
			if tc.wantRestored != "" && sc.seen != tc.wantRestored {
				t.Errorf("scratch calc.go = %q, want the pre-run content %q", sc.seen, tc.wantRestored)
			}
			if sc.dir != "" {
				if _, err := os.Stat(sc.dir); !os.IsNotExist(err) {
					t.Errorf("scratch copy %s still exists (%v), want it removed", sc.dir, err)
				}
			}
			if b, _ := os.ReadFile(filepath.Join(dir, "calc.go")); tc.files["calc.go"].after != nil && string(b) != *tc.files["calc.go"].after {
				t.Errorf("workspace calc.go = %q, want the run's content left alone", b)
			}
		})
	}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func sortStrings(s []string) []string {
	for i := 1; i < len(s); i++ {
		for j := i; j > 0 && s[j] < s[j-1]; j-- {
			s[j], s[j-1] = s[j-1], s[j]
		}
	}
	return s
}

package review

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"flow/bufferfs"
	"flow/runtime/journal"
	"flow/runtime/report"
)

// workspace is a real workspace on disk with a real journal.
type workspace struct {
	t     *testing.T
	root  string
	state string
	disk  *bufferfs.Disk
	store *journal.Store
}

func newWorkspace(t *testing.T, files map[string]string) *workspace {
	t.Helper()
	w := &workspace{t: t, root: t.TempDir(), state: t.TempDir()}
	for p, body := range files {
		full := filepath.Join(w.root, p)
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	w.reopen()
	return w
}

// reopen opens the journal and the disk afresh, as a new process would.
func (w *workspace) reopen() {
	var err error
	w.store, err = journal.Open(w.state, w.root, journal.Options{})
	if err != nil {
		w.t.Fatal(err)
	}
	w.disk, err = bufferfs.NewDisk(w.root, bufferfs.DiskOptions{Trusted: true})
	if err != nil {
		w.t.Fatal(err)
	}
}

// run journals and applies writes as a run's file tools do, then stores
// rep as the run's report.
func (w *workspace) run(id string, writes map[string]string, rep report.Run) {
	w.t.Helper()
	ctx := context.Background()
	r, err := w.store.Begin(id, "task")
	if err != nil {
		w.t.Fatal(err)
	}
	for p, body := range writes {
		old, err := w.disk.Read(ctx, p, 0)
		if errors.Is(err, fs.ErrNotExist) {
			old = bufferfs.File{}
		} else if err != nil {
			w.t.Fatal(err)
		}
		if err := r.BeforeWrite(ctx, p, old, []byte(body)); err != nil {
			w.t.Fatal(err)
		}
		if _, err := w.disk.Write(ctx, p, []byte(body), bufferfs.WriteOptions{}); err != nil {
			w.t.Fatal(err)
		}
	}
	rep.RunID = id
	if rep.Status == "" {
		rep.Status = report.StatusUnverified
	}
	if err := r.Finish(rep); err != nil {
		w.t.Fatal(err)
	}
}

func (w *workspace) read(p string) string {
	w.t.Helper()
	b, err := os.ReadFile(filepath.Join(w.root, p))
	if err != nil {
		w.t.Fatal(err)
	}
	return string(b)
}

func (w *workspace) open(id string) *Review {
	w.t.Helper()
	rv, err := Open(context.Background(), w.store, w.disk, id)
	if err != nil {
		w.t.Fatal(err)
	}
	return rv
}

// numbered returns n lines "line 1" … "line n", with the lines in edit
// replaced.
func numbered(n int, edit map[int]string) string {
	var b strings.Builder
	for i := 1; i <= n; i++ {
		if s, ok := edit[i]; ok {
			b.WriteString(s + "\n")
			continue
		}
		fmt.Fprintf(&b, "line %d\n", i)
	}
	return b.String()
}

// twoFiles is a run that changes two places of a.txt and one of b.txt.
func twoFiles(t *testing.T) *workspace {
	w := newWorkspace(t, map[string]string{"a.txt": numbered(30, nil), "b.txt": numbered(5, nil)})
	w.run("r1", map[string]string{
		"a.txt": numbered(30, map[int]string{3: "THREE", 25: "TWENTY-FIVE"}),
		"b.txt": numbered(5, map[int]string{2: "TWO"}),
	}, report.Run{})
	return w
}

// hunkAt returns the id of the hunk of path whose new side holds want.
func hunkAt(t *testing.T, rep report.ReviewReport, path, want string) report.Hunk {
	t.Helper()
	for _, h := range rep.Hunks {
		if h.Path == path && strings.Contains(h.Text, "+"+want+"\n") {
			return h
		}
	}
	t.Fatalf("no hunk of %s adds %q in %+v", path, want, rep.Hunks)
	return report.Hunk{}
}

func states(rep report.ReviewReport) map[string]string {
	m := map[string]string{}
	for _, h := range rep.Hunks {
		m[h.ID] = h.State
	}
	return m
}

func TestListsHunksWithRanges(t *testing.T) {
	w := twoFiles(t)
	rep := w.open("r1").Report()
	if len(rep.Hunks) != 3 {
		t.Fatalf("want 3 hunks (two in a.txt, one in b.txt), got %d: %+v", len(rep.Hunks), rep.Hunks)
	}
	h := hunkAt(t, rep, "a.txt", "TWENTY-FIVE")
	if h.OldStart != 22 || h.OldLines != 7 || h.NewStart != 22 || h.NewLines != 7 || h.State != report.HunkPending {
		t.Errorf("hunk of line 25: %+v, want -22,7 +22,7 pending", h)
	}
	if !strings.HasPrefix(h.Text, "@@ -22,7 +22,7 @@\n line 22\n") || !strings.Contains(h.Text, "-line 25\n+TWENTY-FIVE\n") {
		t.Errorf("hunk text:\n%s", h.Text)
	}
	if rep.Review.Pending != 3 || rep.Review.Accepted+rep.Review.Rejected != 0 {
		t.Errorf("review record %+v, want 3 pending", rep.Review)
	}
	if rep.Host != report.StatusUnverified || rep.Verified {
		t.Errorf("host verdict %q verified=%v, want the run's unverified", rep.Host, rep.Verified)
	}
}

func TestIDsAreStableAcrossProcesses(t *testing.T) {
	w := twoFiles(t)
	first := w.open("r1").Report()
	w.reopen()
	second := w.open("r1").Report()
	for i := range first.Hunks {
		if first.Hunks[i].ID != second.Hunks[i].ID || len(first.Hunks[i].ID) != 10 {
			t.Errorf("hunk %d: ids %q and %q", i, first.Hunks[i].ID, second.Hunks[i].ID)
		}
	}
	if first.Hunks[0].ID == first.Hunks[1].ID {
		t.Errorf("two hunks share the id %s", first.Hunks[0].ID)
	}
}

func TestRevertOneHunkKeepsTheOthers(t *testing.T) {
	w := twoFiles(t)
	ctx := context.Background()
	rv := w.open("r1")
	h := hunkAt(t, rv.Report(), "a.txt", "TWENTY-FIVE")
	rep, err := rv.Apply(ctx, nil, []string{h.ID})
	if err != nil || rep.Status != report.StatusOK {
		t.Fatalf("revert: %v %+v", err, rep)
	}
	if got, want := w.read("a.txt"), numbered(30, map[int]string{3: "THREE"}); got != want {
		t.Errorf("a.txt after reverting line 25's hunk:\n%s\nwant:\n%s", got, want)
	}
	if got, want := w.read("b.txt"), numbered(5, map[int]string{2: "TWO"}); got != want {
		t.Errorf("b.txt changed by a revert in a.txt:\n%s", got)
	}
	// A new process sees the decision; keeping the rest is recorded.
	w.reopen()
	rv = w.open("r1")
	rep = rv.Report()
	if s := states(rep); s[h.ID] != report.HunkReverted || rep.Review.Rejected != 1 || rep.Review.Pending != 2 {
		t.Fatalf("after a restart: states %v, record %+v", s, rep.Review)
	}
	three := hunkAt(t, rep, "a.txt", "THREE")
	if rep, err = rv.Apply(ctx, []string{three.ID}, nil); err != nil {
		t.Fatal(err)
	}
	w.reopen()
	rep = w.open("r1").Report()
	want := map[string]int{report.HunkKept: 1, report.HunkReverted: 1, report.HunkPending: 1}
	got := map[string]int{}
	for _, s := range states(rep) {
		got[s]++
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("states after a restart %v, want %v", got, want)
	}
	stored, err := w.store.Report("r1")
	if err != nil || stored.Review == nil || stored.Review.Accepted != 1 || stored.Review.Rejected != 1 || stored.Review.Pending != 1 || stored.Review.By != "person" {
		t.Fatalf("the run's record: %v %+v", err, stored)
	}
	if stored.Verified || stored.Status != report.StatusUnverified {
		t.Errorf("a review changed the host's verdict: %+v", stored)
	}
	if !strings.Contains(stored.Review.Summary, "unverified") || !strings.Contains(stored.Review.Summary, "flow check") {
		t.Errorf("summary %q should name the host's verdict and flow check", stored.Review.Summary)
	}
}

func TestRevertRefusesChangedLines(t *testing.T) {
	w := twoFiles(t)
	edited := numbered(30, map[int]string{3: "THREE", 25: "TWENTY-FIVE!"})
	if err := os.WriteFile(filepath.Join(w.root, "a.txt"), []byte(edited), 0o644); err != nil {
		t.Fatal(err)
	}
	rv := w.open("r1")
	h := hunkAt(t, rv.Report(), "a.txt", "TWENTY-FIVE")
	rep, err := rv.Apply(context.Background(), nil, []string{h.ID})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Status != report.StatusConflict || len(rep.Conflicts) != 1 || rep.Conflicts[0].Hunk != h.ID || len(rep.Applied) != 0 {
		t.Fatalf("want one named conflict, got %+v", rep)
	}
	if !strings.Contains(rep.Message, "changed since the run") {
		t.Errorf("message %q", rep.Message)
	}
	if got := w.read("a.txt"); got != edited {
		t.Errorf("a refused revert wrote a.txt:\n%s", got)
	}
	w.reopen()
	if s := states(w.open("r1").Report()); s[h.ID] != report.HunkPending {
		t.Errorf("a refused revert was recorded: %v", s)
	}
}

func TestRevertFindsMovedLines(t *testing.T) {
	w := twoFiles(t)
	// Someone added a line at the top after the run: line 25's hunk moved.
	moved := "new first line\n" + numbered(30, map[int]string{3: "THREE", 25: "TWENTY-FIVE"})
	if err := os.WriteFile(filepath.Join(w.root, "a.txt"), []byte(moved), 0o644); err != nil {
		t.Fatal(err)
	}
	rv := w.open("r1")
	h := hunkAt(t, rv.Report(), "a.txt", "TWENTY-FIVE")
	if rep, err := rv.Apply(context.Background(), nil, []string{h.ID}); err != nil || rep.Status != report.StatusOK {
		t.Fatalf("%v %+v", err, rep)
	}
	if got, want := w.read("a.txt"), "new first line\n"+numbered(30, map[int]string{3: "THREE"}); got != want {
		t.Errorf("a.txt:\n%s\nwant:\n%s", got, want)
	}
}

func TestKeepAfterRevertAppliesAgain(t *testing.T) {
	w := twoFiles(t)
	ctx := context.Background()
	rv := w.open("r1")
	if _, err := rv.Apply(ctx, nil, []string{"a.txt"}); err != nil {
		t.Fatal(err)
	}
	if got := w.read("a.txt"); got != numbered(30, nil) {
		t.Fatalf("reverting the file left:\n%s", got)
	}
	w.reopen()
	rv = w.open("r1")
	rep, err := rv.Apply(ctx, []string{"a.txt"}, nil)
	if err != nil || rep.Status != report.StatusOK || len(rep.Applied) != 2 {
		t.Fatalf("%v %+v", err, rep)
	}
	if got, want := w.read("a.txt"), numbered(30, map[int]string{3: "THREE", 25: "TWENTY-FIVE"}); got != want {
		t.Errorf("re-applied a.txt:\n%s", got)
	}
}

func TestUndoAfterAPartialRevert(t *testing.T) {
	w := twoFiles(t)
	ctx := context.Background()
	rv := w.open("r1")
	h := hunkAt(t, rv.Report(), "a.txt", "THREE")
	if _, err := rv.Apply(ctx, nil, []string{h.ID}); err != nil {
		t.Fatal(err)
	}
	u, err := w.store.Undo(ctx, w.disk, "r1")
	if err != nil || u.Status != report.StatusOK {
		t.Fatalf("undo after a review revert: %v %+v", err, u)
	}
	if w.read("a.txt") != numbered(30, nil) || w.read("b.txt") != numbered(5, nil) {
		t.Errorf("undo left a.txt=%q b.txt=%q", w.read("a.txt"), w.read("b.txt"))
	}
	if _, err := Open(ctx, w.store, w.disk, "r1"); err == nil || !strings.Contains(err.Error(), "undone") {
		t.Errorf("reviewing an undone run: %v", err)
	}
}

func TestCreatedFile(t *testing.T) {
	w := newWorkspace(t, nil)
	w.run("r1", map[string]string{"new.txt": "hello\n"}, report.Run{})
	ctx := context.Background()
	rv := w.open("r1")
	if _, err := rv.Apply(ctx, nil, []string{All}); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(w.root, "new.txt")); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("reverting a created file's only hunk should remove it: %v", err)
	}
	if _, err := rv.Apply(ctx, []string{All}, nil); err != nil {
		t.Fatal(err)
	}
	if got := w.read("new.txt"); got != "hello\n" {
		t.Errorf("keeping it again: %q", got)
	}
}

func TestBadSelectorsWriteNothing(t *testing.T) {
	w := twoFiles(t)
	ctx := context.Background()
	rv := w.open("r1")
	h := rv.Report().Hunks[0]
	var in *InputError
	for _, tc := range []struct {
		keep, revert []string
		want         string
	}{
		{nil, []string{h.ID, "0123456789"}, `no hunk or changed file "0123456789"`},
		{[]string{h.ID}, []string{All}, "both kept and reverted"},
	} {
		_, err := rv.Apply(ctx, tc.keep, tc.revert)
		if !errors.As(err, &in) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Apply(%v, %v): %v, want an input error with %q", tc.keep, tc.revert, err, tc.want)
		}
	}
	if w.read("a.txt") != numbered(30, map[int]string{3: "THREE", 25: "TWENTY-FIVE"}) {
		t.Error("a bad selector wrote a.txt")
	}
	if d, _ := w.store.Decisions("r1"); len(d) != 0 {
		t.Errorf("a bad selector recorded %d decisions", len(d))
	}
}

func TestRunsThatCannotBeReviewed(t *testing.T) {
	w := newWorkspace(t, map[string]string{"a.txt": "a\n"})
	ctx := context.Background()
	var in *InputError
	if _, err := Open(ctx, w.store, w.disk, ""); !errors.As(err, &in) || !strings.Contains(err.Error(), "no run to review") {
		t.Errorf("no run: %v", err)
	}
	w.run("empty", nil, report.Run{})
	if _, err := Open(ctx, w.store, w.disk, "empty"); !errors.As(err, &in) || !strings.Contains(err.Error(), "changed no files") {
		t.Errorf("a run with no change: %v", err)
	}
	if _, err := Open(ctx, w.store, w.disk, "elsewhere"); !errors.As(err, &in) || !strings.Contains(err.Error(), "not in the journal") {
		t.Errorf("a run of another workspace: %v", err)
	}
}

func TestEvidencePerFile(t *testing.T) {
	w := newWorkspace(t, map[string]string{"calc.go": "a\n", "calc_test.go": "t\n", "README": "r\n"})
	w.run("r1", map[string]string{"calc.go": "b\n", "calc_test.go": "u\n", "README": "s\n"}, report.Run{
		Status: report.StatusOK, Verified: true,
		Verification: &report.Verification{Verified: true, Evidence: report.EvidenceFailThenPass,
			FailFirst: &report.FailFirst{Tests: []string{"calc_test.go"}, Restored: []string{"calc.go"}},
			Coverage:  []report.Coverage{{Path: "calc.go", Checks: []string{"go-test"}}}},
	})
	rep := w.open("r1").Report()
	got := map[string]report.HunkEvidence{}
	for _, h := range rep.Hunks {
		got[h.Path] = h.Evidence
	}
	if e := got["calc.go"]; e.Shows != report.EvidenceFailThenPass || len(e.Checks) != 1 || e.Checks[0] != "go-test" {
		t.Errorf("calc.go evidence %+v", e)
	}
	if e := got["README"]; e.Shows != report.ShowsNone || !strings.Contains(e.Sentence, "No check covers") {
		t.Errorf("README evidence %+v", e)
	}
	if !strings.Contains(rep.Review.Summary, "host verified") {
		t.Errorf("summary %q", rep.Review.Summary)
	}
}

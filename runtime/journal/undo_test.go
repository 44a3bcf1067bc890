package journal

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
)

func TestUndoRestoresEditsAndRemovesCreated(t *testing.T) {
	f := newFixture(t, Options{})
	f.put("a.txt", "alpha\n", 0o600)
	f.put("bin/run.sh", "#!/bin/sh\necho hi\n", 0o755)
	f.put("src/main.go", "package main\n", 0o644)
	paths := []string{"a.txt", "bin/run.sh", "src/main.go", "new/dir/created.txt"}
	before := f.snapshot(paths...)

	r := f.begin("run-1")
	f.toolWrite(r, "a.txt", "ALPHA\n")
	f.toolWrite(r, "bin/run.sh", "#!/bin/sh\necho bye\n")
	f.toolWrite(r, "src/main.go", "package main\n\nfunc main() {}\n")
	f.toolWrite(r, "new/dir/created.txt", "fresh\n")
	if err := r.Finish(report.Run{Status: "ok", Task: "edit"}); err != nil {
		t.Fatalf("Finish() = %v", err)
	}
	if after := f.snapshot(paths...); cmp.Equal(after, before) {
		t.Fatal("the run changed nothing; the test is broken")
	}

	rep, err := f.store.Undo(t.Context(), f.disk, "")
	if err != nil {
		t.Fatalf("Undo() error = %v", err)
	}
	want := report.Undo{
		Status:    "ok",
		RunID:     "run-1",
		Workspace: f.store.Root(),
		Restored:  []string{"a.txt", "bin/run.sh", "src/main.go"},
		Removed:   []string{"new/dir/created.txt"},
		Unchanged: []string{},
		Conflicts: []report.Conflict{},
		Message:   "undid run run-1: restored 3 files, removed 1 created file",
	}
	// The diffs show what undo gave back: from the run's content to the old.
	var got []string
	for _, d := range rep.Diffs {
		got = append(got, d.Path+" "+d.Change+" "+d.Diff)
	}
	wantDiffs := []string{
		"a.txt modified --- a/a.txt\n+++ b/a.txt\n@@ -1 +1 @@\n-ALPHA\n+alpha\n",
		"bin/run.sh modified --- a/bin/run.sh\n+++ b/bin/run.sh\n@@ -1,2 +1,2 @@\n #!/bin/sh\n-echo bye\n+echo hi\n",
		"new/dir/created.txt deleted --- a/new/dir/created.txt\n+++ /dev/null\n@@ -1 +0,0 @@\n-fresh\n",
		"src/main.go modified --- a/src/main.go\n+++ b/src/main.go\n@@ -1,3 +1 @@\n package main\n-\n-func main() {}\n",
	}
	if diff := cmp.Diff(wantDiffs, got); diff != "" {
		t.Errorf("Undo() diffs (-want +got):\n%s", diff)
	}
	want.Diffs = rep.Diffs
	if diff := cmp.Diff(want, rep); diff != "" {
		t.Errorf("Undo() mismatch (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(before, f.snapshot(paths...)); diff != "" {
		t.Errorf("files after undo (-before +after):\n%s", diff)
	}

	again, err := f.store.Undo(t.Context(), f.disk, "")
	if err != nil || again.Status != "ok" || !again.AlreadyUndone || again.Message != "run run-1 was already undone" {
		t.Errorf("second Undo() = %+v, %v; want an ok no-op saying the run was already undone", again, err)
	}
	if len(again.Restored)+len(again.Removed)+len(again.Conflicts) != 0 {
		t.Errorf("second Undo() touched files: %+v", again)
	}
	if diff := cmp.Diff(before, f.snapshot(paths...)); diff != "" {
		t.Errorf("files after second undo (-before +after):\n%s", diff)
	}
}

func TestUndoLeavesFilesChangedAfterTheRun(t *testing.T) {
	tests := []struct {
		name   string
		change func(t *testing.T, root string) // the user's change of b.txt
		reason string
	}{
		{"content", func(t *testing.T, root string) {
			putFile(t, root, "b.txt", []byte("user edit\n"), 0o644)
		}, "changed after the run"},
		{"mode", func(t *testing.T, root string) {
			if err := os.Chmod(filepath.Join(root, "b.txt"), 0o600); err != nil {
				t.Fatal(err)
			}
		}, "mode changed after the run"},
		{"deleted", func(t *testing.T, root string) {
			if err := os.Remove(filepath.Join(root, "b.txt")); err != nil {
				t.Fatal(err)
			}
		}, "deleted after the run"},
		{"replaced by a directory", func(t *testing.T, root string) {
			os.Remove(filepath.Join(root, "b.txt"))
			if err := os.Mkdir(filepath.Join(root, "b.txt"), 0o755); err != nil {
				t.Fatal(err)
			}
		}, "cannot examine"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t, Options{})
			f.put("a.txt", "a0\n", 0o644)
			f.put("b.txt", "b0\n", 0o644)
			before := f.snapshot("a.txt", "c.txt")
			r := f.begin("run-1")
			f.toolWrite(r, "a.txt", "a1\n")
			f.toolWrite(r, "b.txt", "b1\n")
			f.toolWrite(r, "c.txt", "c1\n")
			if err := r.Finish(report.Run{Status: "ok"}); err != nil {
				t.Fatal(err)
			}
			tc.change(t, f.root)
			userB := f.snapshot("b.txt")

			rep, err := f.store.Undo(t.Context(), f.disk, "run-1")
			if err != nil || rep.Status != StatusConflict {
				t.Fatalf("Undo() = %+v, %v; want status conflict", rep, err)
			}
			if len(rep.Conflicts) != 1 || rep.Conflicts[0].Path != "b.txt" || !strings.Contains(rep.Conflicts[0].Reason, tc.reason) {
				t.Errorf("Undo().Conflicts = %+v, want b.txt with a reason containing %q", rep.Conflicts, tc.reason)
			}
			if diff := cmp.Diff(userB, f.snapshot("b.txt")); diff != "" {
				t.Errorf("b.txt was touched (-user +after):\n%s", diff)
			}
			if diff := cmp.Diff(before, f.snapshot("a.txt", "c.txt")); diff != "" {
				t.Errorf("other files not restored (-before +after):\n%s", diff)
			}

			// Not marked undone: a second undo sees the same conflict and
			// the restored files as unchanged.
			again, err := f.store.Undo(t.Context(), f.disk, "run-1")
			if err != nil || again.Status != StatusConflict || again.AlreadyUndone {
				t.Fatalf("second Undo() = %+v, %v; want the conflict again", again, err)
			}
			if diff := cmp.Diff([]string{"a.txt", "c.txt"}, again.Unchanged); diff != "" {
				t.Errorf("second Undo().Unchanged (-want +got):\n%s", diff)
			}
		})
	}
}

func TestUndoManyWritesToOneFile(t *testing.T) {
	f := newFixture(t, Options{})
	f.put("a.txt", "v0\n", 0o640)
	before := f.snapshot("a.txt", "x.txt")
	r := f.begin("run-1")
	for _, v := range []string{"v1\n", "v2\n", "v3\n"} {
		f.toolWrite(r, "a.txt", v)
		f.toolWrite(r, "x.txt", "x"+v)
	}
	if err := r.Finish(report.Run{}); err != nil {
		t.Fatal(err)
	}
	rep, err := f.store.Undo(t.Context(), f.disk, "run-1")
	if err != nil || rep.Status != "ok" {
		t.Fatalf("Undo() = %+v, %v; want ok", rep, err)
	}
	if diff := cmp.Diff(before, f.snapshot("a.txt", "x.txt")); diff != "" {
		t.Errorf("files after undo (-before +after):\n%s", diff)
	}
}

// A write that was journalled but never applied (the process died in
// between, or the write failed) is no conflict; nor is an intermediate
// version when the last write never happened.
func TestUndoJournalledWritesThatNeverHappened(t *testing.T) {
	f := newFixture(t, Options{})
	ctx := t.Context()
	f.put("a.txt", "a0\n", 0o644)
	f.put("b.txt", "b0\n", 0o755)
	before := f.snapshot("a.txt", "b.txt", "new.txt")
	r := f.begin("run-1")
	journalOnly := func(path, content string) {
		t.Helper()
		info, err := f.disk.Stat(ctx, path)
		if err != nil {
			t.Fatal(err)
		}
		old := bufferfs.File{Info: info}
		if info.Exists {
			old, _ = f.disk.Read(ctx, path, 0)
		}
		if err := r.BeforeWrite(ctx, path, old, []byte(content)); err != nil {
			t.Fatalf("BeforeWrite(%s) = %v", path, err)
		}
	}
	journalOnly("a.txt", "a1\n")
	journalOnly("new.txt", "n1\n")
	f.toolWrite(r, "b.txt", "b1\n")
	journalOnly("b.txt", "b2\n") // killed before the second write

	rep, err := f.store.Undo(ctx, f.disk, "run-1")
	if err != nil || rep.Status != "ok" {
		t.Fatalf("Undo() = %+v, %v; want ok", rep, err)
	}
	if diff := cmp.Diff([]string{"a.txt", "new.txt"}, rep.Unchanged); diff != "" {
		t.Errorf("Undo().Unchanged (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"b.txt"}, rep.Restored); diff != "" {
		t.Errorf("Undo().Restored (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(before, f.snapshot("a.txt", "b.txt", "new.txt")); diff != "" {
		t.Errorf("files after undo (-before +after):\n%s", diff)
	}
}

func TestUndoOlderRunAfterLaterEdits(t *testing.T) {
	f := newFixture(t, Options{})
	f.put("a.txt", "a0\n", 0o644)
	r1 := f.begin("run-1")
	f.toolWrite(r1, "a.txt", "a1\n")
	r1.Finish(report.Run{})
	r2 := f.begin("run-2")
	f.toolWrite(r2, "a.txt", "a2\n")
	r2.Finish(report.Run{})

	rep, _ := f.store.Undo(t.Context(), f.disk, "run-1")
	if rep.Status != StatusConflict {
		t.Fatalf("Undo(run-1) before undoing run-2 = %+v, want a conflict", rep)
	}
	if got := stateOf(t, f.root, "a.txt").Data; got != "a2\n" {
		t.Fatalf("a.txt = %q, want run-2's content left alone", got)
	}
	if rep, _ := f.store.Undo(t.Context(), f.disk, ""); rep.Status != "ok" || rep.RunID != "run-2" {
		t.Fatalf("Undo() = %+v, want run-2 undone", rep)
	}
	if rep, _ := f.store.Undo(t.Context(), f.disk, "run-1"); rep.Status != "ok" {
		t.Fatalf("Undo(run-1) after undoing run-2 = %+v, want ok", rep)
	}
	if got := stateOf(t, f.root, "a.txt").Data; got != "a0\n" {
		t.Errorf("a.txt = %q, want a0", got)
	}
}

func TestUndoWithoutUsableRun(t *testing.T) {
	f := newFixture(t, Options{})
	tests := []struct {
		name, runID string
		setup       func()
		status      string
		message     string
		wantErr     bool
	}{
		{"no runs", "", func() {}, "unverified", "no run to undo in workspace", false},
		{"unknown run", "nope", func() {}, "error", "run nope is not in the journal (it may have been removed by retention: the last 50 runs and at most 256 MiB are kept)", true},
		{"invalid run id", "../x", func() {}, "error", "invalid run id", true},
		{"run without changes", "", func() {
			r := f.begin("quiet")
			r.Finish(report.Run{})
		}, "ok", "run quiet changed no files; nothing to undo", false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tc.setup()
			rep, err := f.store.Undo(t.Context(), f.disk, tc.runID)
			if rep.Status != tc.status || !strings.Contains(rep.Message, tc.message) || (err != nil) != tc.wantErr {
				t.Errorf("Undo(%q) = %+v, %v; want status %s, message containing %q, error %v", tc.runID, rep, err, tc.status, tc.message, tc.wantErr)
			}
		})
	}
}

// Restoring can fail (here the Disk is read-only); the file is reported and
// the run is not marked undone.
func TestUndoWriteFailure(t *testing.T) {
	f := newFixture(t, Options{})
	f.put("a.txt", "a0\n", 0o644)
	r := f.begin("run-1")
	f.toolWrite(r, "a.txt", "a1\n")
	f.toolWrite(r, "b.txt", "b1\n")
	r.Finish(report.Run{})
	ro := openDisk(t, f.root, false)
	rep, _ := f.store.Undo(t.Context(), ro, "run-1")
	if rep.Status != "error" || len(rep.Conflicts) != 2 || !strings.Contains(rep.Conflicts[0].Reason, "read-only") {
		t.Fatalf("Undo(read-only disk) = %+v, want error naming the read-only refusal", rep)
	}
	if !strings.HasPrefix(rep.Error, "a.txt could not be restored: restoring the old content failed: ") || !strings.Contains(rep.Error, "read-only") {
		t.Errorf("Undo(read-only disk) error = %q, want the first file and its cause", rep.Error)
	}
	rep, err := f.store.Undo(t.Context(), f.disk, "run-1")
	if err != nil || rep.Status != "ok" || len(rep.Restored) != 1 || len(rep.Removed) != 1 {
		t.Fatalf("Undo(trusted disk) = %+v, %v; want ok", rep, err)
	}
}

func TestUndoDamagedBlobIsNotRestored(t *testing.T) {
	f := newFixture(t, Options{})
	f.put("a.txt", "a0 original\n", 0o644)
	r := f.begin("run-1")
	f.toolWrite(r, "a.txt", "a1\n")
	r.Finish(report.Run{})
	// The old content is the first blob; the second is the copy of what
	// the run wrote, kept for reviews.
	blobs, _ := filepath.Glob(filepath.Join(f.store.Dir(), runsDir, "*-run-1", blobsDir, "*"))
	if len(blobs) != 2 || filepath.Base(blobs[0]) != blobName(1) {
		t.Fatalf("blobs = %v, want the old content and the after copy", blobs)
	}
	if err := os.WriteFile(blobs[0], []byte("a0 orig"), 0o600); err != nil {
		t.Fatal(err)
	}
	rep, _ := f.store.Undo(t.Context(), f.disk, "run-1")
	if rep.Status != "error" || len(rep.Conflicts) != 1 || !strings.Contains(rep.Conflicts[0].Reason, "damaged") {
		t.Errorf("Undo() = %+v, want an error for the damaged copy", rep)
	}
	if got := stateOf(t, f.root, "a.txt").Data; got != "a1\n" {
		t.Errorf("a.txt = %q, want it untouched", got)
	}
}

func TestUndoOtherWorkspaceFS(t *testing.T) {
	f := newFixture(t, Options{})
	r := f.begin("run-1")
	f.toolWrite(r, "a.txt", "a1\n")
	r.Finish(report.Run{})
	other := t.TempDir()
	rep, err := f.store.Undo(t.Context(), openDisk(t, other, true), "run-1")
	if err == nil || rep.Status != "error" {
		t.Errorf("Undo(disk of another root) = %+v, %v; want an error", rep, err)
	}
}

func TestUndoCancelled(t *testing.T) {
	f := newFixture(t, Options{})
	r := f.begin("run-1")
	f.toolWrite(r, "a.txt", "a1\n")
	r.Finish(report.Run{})
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	rep, err := f.store.Undo(ctx, f.disk, "run-1")
	if !errors.Is(err, context.Canceled) || rep.Status != "error" {
		t.Errorf("Undo(cancelled) = %+v, %v; want context.Canceled", rep, err)
	}
	if !stateOf(t, f.root, "a.txt").Exists {
		t.Error("a cancelled undo removed a.txt")
	}
}

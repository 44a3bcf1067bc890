package journal

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"flow/runtime/report"
)

func TestRetentionByCount(t *testing.T) {
	f := newFixture(t, Options{MaxRuns: 3})
	for i := 1; i <= 5; i++ {
		r := f.begin(fmt.Sprintf("run-%d", i))
		f.toolWrite(r, fmt.Sprintf("f%d.txt", i), "x")
		if err := r.Finish(report.Run{}); err != nil {
			t.Fatalf("Finish(run-%d) = %v", i, err)
		}
	}
	ids, err := f.store.RunIDs()
	if diff := cmp.Diff([]string{"run-3", "run-4", "run-5"}, ids); diff != "" || err != nil {
		t.Errorf("RunIDs() = %v (-want +got):\n%s", err, diff)
	}
	rep, err := f.store.Undo(t.Context(), f.disk, "run-1")
	wantMsg := "run run-1 was removed from the journal by retention (the last 3 runs and at most 256 MiB are kept); it can no longer be undone"
	if err == nil || rep.Status != "error" || rep.Message != wantMsg {
		t.Errorf("Undo(run-1) = %+v, %v; want error with message %q", rep, err, wantMsg)
	}
	if !stateOf(t, f.root, "f1.txt").Exists {
		t.Error("undo of an evicted run touched its file")
	}
	if rep, _ := f.store.Undo(t.Context(), f.disk, "run-3"); rep.Status != "ok" || len(rep.Removed) != 1 {
		t.Errorf("Undo(run-3) = %+v, want its file removed", rep)
	}
	if matches, _ := filepath.Glob(filepath.Join(f.store.Dir(), runsDir, ".*")); len(matches) != 0 {
		t.Errorf("leftovers in runs/: %v", matches)
	}
}

func TestRetentionBySize(t *testing.T) {
	const blob = 8 << 10
	// Each run keeps the old content and a copy of the new (for reviews):
	// two blobs of 8 KiB, so 40 KiB hold two runs and not three.
	f := newFixture(t, Options{MaxBytes: 40 << 10})
	f.put("big.txt", string(bigContent("v0", blob)), 0o644)
	for i := 1; i <= 4; i++ {
		r := f.begin(fmt.Sprintf("run-%d", i))
		f.toolWrite(r, "big.txt", string(bigContent(fmt.Sprintf("v%d", i), blob)))
		if err := r.Finish(report.Run{}); err != nil {
			t.Fatal(err)
		}
		var total int64
		runs, _ := f.store.listRuns()
		for _, r := range runs {
			total += dirSize(f.store.runPath(r))
		}
		if total > 40<<10 {
			t.Errorf("after run-%d the runs take %d bytes, want at most %d", i, total, 40<<10)
		}
	}
	ids, _ := f.store.RunIDs()
	if diff := cmp.Diff([]string{"run-3", "run-4"}, ids); diff != "" {
		t.Errorf("RunIDs() (-want +got):\n%s", diff)
	}
	rep, _ := f.store.Undo(t.Context(), f.disk, "run-2")
	if !strings.Contains(rep.Message, "removed from the journal by retention") {
		t.Errorf("Undo(run-2).Message = %q, want it to say retention removed it", rep.Message)
	}
}

// The run being recorded is kept even when it alone exceeds the bound.
func TestRetentionKeepsCurrentRun(t *testing.T) {
	f := newFixture(t, Options{MaxBytes: 1024})
	f.put("big.txt", string(bigContent("v0", 4096)), 0o644)
	for i := 1; i <= 2; i++ {
		r := f.begin(fmt.Sprintf("run-%d", i))
		f.toolWrite(r, "big.txt", fmt.Sprintf("v%d", i))
		if err := r.Finish(report.Run{}); err != nil {
			t.Fatal(err)
		}
	}
	ids, _ := f.store.RunIDs()
	if diff := cmp.Diff([]string{"run-2"}, ids); diff != "" {
		t.Errorf("RunIDs() (-want +got):\n%s", diff)
	}
	if rep, _ := f.store.Undo(t.Context(), f.disk, ""); rep.Status != "ok" || len(rep.Restored) != 1 {
		t.Errorf("Undo() = %+v, want run-2 restored", rep)
	}
}

func TestEvictedListIsBounded(t *testing.T) {
	f := newFixture(t, Options{})
	for i := range maxEvicted + 1 {
		if err := f.store.noteEvicted(fmt.Sprintf("r%d", i)); err != nil {
			t.Fatal(err)
		}
	}
	ids, err := f.store.evicted()
	if err != nil || len(ids) != keepEvicted || ids[len(ids)-1] != fmt.Sprintf("r%d", maxEvicted) {
		t.Errorf("evicted() = %d ids ending %v, %v; want the last %d", len(ids), ids[len(ids)-1:], err, keepEvicted)
	}
	if !f.store.wasEvicted(fmt.Sprintf("r%d", maxEvicted)) || f.store.wasEvicted("r0") {
		t.Error("wasEvicted does not follow the trimmed list")
	}
}

package journal

import (
	"bufio"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"strings"
	"testing"
	"time"
)

// TestUndoAfterSIGKILL kills a process in the middle of a run's writes, at
// a random moment, many times. Every file must hold either its content
// before the run or a complete version the run wrote, and undo must restore
// every file exactly, with no conflicts, removing the files the run created.
func TestUndoAfterSIGKILL(t *testing.T) {
	if testing.Short() {
		t.Skip("starts and kills 20 processes")
	}
	const iterations = 20
	var totals [3]int // restored, removed, unchanged
	var lastPerWrite time.Duration
	for it := range iterations {
		t.Run(fmt.Sprint(it), func(t *testing.T) {
			f := newFixture(t, Options{})
			modes := []fs.FileMode{0o644, 0o755, 0o600, 0o640, 0o644, 0o700}
			before := map[string]fileState{}
			for i, p := range crashPaths {
				if i < crashExisting {
					content := fmt.Sprintf("original %d of %s\n", i, p)
					f.put(p, content, modes[i])
				}
				before[p] = stateOf(t, f.root, p)
			}
			runID := fmt.Sprintf("crash-%d", it)
			cmd, out, _ := startHelper(t, "crash", false,
				helperState+"="+f.state, helperRoot+"="+f.root, helperRun+"="+runID)
			// Kill after a random number of complete writes (up to three
			// rounds, so that later writes of a file and created files are
			// covered), plus a random part of the next write.
			lines := bufio.NewReader(out)
			line, err := lines.ReadString('\n')
			if err != nil || strings.TrimSpace(line) != "ready "+runID {
				t.Fatalf("helper said %q, %v; want ready", line, err)
			}
			writes := rand.IntN(3 * len(crashPaths))
			start := time.Now()
			for n := 0; n < writes; n++ {
				if line, err := lines.ReadString('\n'); err != nil {
					t.Fatalf("helper said %q, %v; want wrote", line, err)
				}
			}
			perWrite := 5 * time.Millisecond
			if writes > 0 {
				perWrite = time.Since(start) / time.Duration(writes)
			}
			lastPerWrite = perWrite
			time.Sleep(time.Duration(rand.Int64N(int64(perWrite) + 1)))
			if err := cmd.Process.Kill(); err != nil {
				t.Fatal(err)
			}
			cmd.Wait()

			for i, p := range crashPaths {
				checkWhole(t, f.root, p, i, before[p])
			}

			// A new process: a fresh Store and Disk.
			store, err := Open(f.state, f.root, Options{})
			if err != nil {
				t.Fatal(err)
			}
			lock, err := store.Lock()
			if err != nil {
				t.Fatalf("Lock() after the holder was killed = %v, want the lock", err)
			}
			defer lock.Unlock()
			rep, err := store.Undo(t.Context(), openDisk(t, f.root, true), "")
			if err != nil || rep.Status != "ok" || len(rep.Conflicts) != 0 || rep.RunID != runID {
				t.Fatalf("Undo after SIGKILL = %+v, %v; want status ok for %s with no conflicts", rep, err, runID)
			}
			for _, p := range crashPaths {
				if got := stateOf(t, f.root, p); got != before[p] {
					t.Errorf("%s after undo = %+v, want %+v", p, got, before[p])
				}
			}
			totals[0] += len(rep.Restored)
			totals[1] += len(rep.Removed)
			totals[2] += len(rep.Unchanged)
		})
	}
	t.Logf("over %d kills (last per-write %v): %d files restored, %d removed, %d unchanged", iterations, lastPerWrite, totals[0], totals[1], totals[2])
}

// checkWhole fails unless the file i at path holds its state before the run
// or exactly one complete version written by the crash helper.
func checkWhole(t *testing.T, root, path string, i int, before fileState) {
	t.Helper()
	got := stateOf(t, root, path)
	if got == before {
		return
	}
	if !got.Exists {
		t.Errorf("%s disappeared", path)
		return
	}
	var round, file int
	if _, err := fmt.Sscanf(got.Data, "r%d-f%d ", &round, &file); err != nil || file != i {
		t.Errorf("%s holds neither its old content nor a version the run wrote: %.40q", path, got.Data)
		return
	}
	if want := string(crashContent(round, i)); got.Data != want {
		t.Errorf("%s holds a torn version of round %d (%d bytes, want %d)", path, round, len(got.Data), len(want))
	}
	if before.Exists && got.Mode != before.Mode {
		t.Errorf("%s mode = %v, want %v (writes keep the mode)", path, got.Mode, before.Mode)
	}
}

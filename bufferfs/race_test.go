package bufferfs_test

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"

	"flow/bufferfs"

	"golang.org/x/sys/unix"
)

// TestWriteRaceSymlinkSwap keeps exchanging the directory "sub" with a
// symlink to an outside directory while many writes to sub/f.txt run. Every
// write must either land inside the workspace or be refused; no byte may
// ever reach the outside directory. The test is bounded by the number of
// writes, not by time.
func TestWriteRaceSymlinkSwap(t *testing.T) {
	const writers, perWriter = 4, 250 // 1000 writes per resolve mode, 2000 in all
	forEachMode(t, func(t *testing.T, openat2 bool) {
		base := t.TempDir()
		root, outside := filepath.Join(base, "ws"), filepath.Join(base, "outside")
		must(t, os.MkdirAll(filepath.Join(root, "sub"), 0o755))
		must(t, os.Mkdir(outside, 0o755))
		must(t, os.Symlink(outside, filepath.Join(root, "swap")))
		d := newDisk(t, root, bufferfs.DiskOptions{Trusted: true}, openat2)

		stop := make(chan struct{})
		var swaps, attempts atomic.Int64
		swapped := make(chan struct{})
		go func() {
			defer close(swapped)
			sub, swap := filepath.Join(root, "sub"), filepath.Join(root, "swap")
			for {
				// An atomic exchange: "sub" is always either the real
				// directory or the symlink, never missing, so a write
				// never creates a fresh "sub" of its own.
				seen := attempts.Load()
				if err := unix.Renameat2(unix.AT_FDCWD, sub, unix.AT_FDCWD, swap, unix.RENAME_EXCHANGE); err != nil {
					t.Errorf("exchange sub and swap: %v", err)
					return
				}
				swaps.Add(1)
				// Pace the swaps by write attempts (not by time), so both
				// states are seen: the kernel can otherwise starve the
				// renames behind a stream of failing lookups.
				for attempts.Load() == seen {
					select {
					case <-stop:
						return
					default:
						runtime.Gosched()
					}
				}
			}
		}()

		var okWrites, refused atomic.Int64
		var wg sync.WaitGroup
		for w := range writers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := range perWriter {
					data := fmt.Appendf(nil, "writer %d write %d\n", w, i)
					before := swaps.Load()
					attempts.Add(1)
					_, err := d.Write(t.Context(), "sub/f.txt", data, bufferfs.WriteOptions{})
					switch {
					case err == nil:
						okWrites.Add(1)
					case errors.Is(err, bufferfs.ErrSymlink), errors.Is(err, bufferfs.ErrBusy):
						refused.Add(1)
						// Let the swapper move on before trying again.
						for swaps.Load() == before && !isClosed(swapped) {
							runtime.Gosched()
						}
					default:
						t.Errorf("Write(sub/f.txt) = %v, want success or a symlink refusal", err)
					}
				}
			}()
		}
		wg.Wait()
		close(stop)
		<-swapped
		t.Logf("%d writes landed, %d refused, %d swaps", okWrites.Load(), refused.Load(), swaps.Load())

		if got := dirNames(t, outside); len(got) != 0 {
			t.Fatalf("outside directory holds %v after the race, want it empty", got)
		}
		if okWrites.Load() == 0 {
			t.Errorf("no write succeeded during the race")
		}
		// The real directory is "sub" or "swap" now; it holds the file and
		// no temporary files.
		real := filepath.Join(root, "sub")
		if fi, err := os.Lstat(real); err != nil || fi.Mode()&os.ModeSymlink != 0 {
			real = filepath.Join(root, "swap")
		}
		if names := dirNames(t, real); len(names) != 1 || names[0] != "f.txt" {
			t.Errorf("real directory holds %v, want only f.txt", names)
		}
	})
}

func isClosed(c chan struct{}) bool {
	select {
	case <-c:
		return true
	default:
		return false
	}
}

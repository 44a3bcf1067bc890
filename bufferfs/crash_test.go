package bufferfs_test

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"testing"
	"time"

	"flow/bufferfs"
)

// The crash test re-executes the test binary as a writer process.
const (
	helperEnv     = "FLOW_TEST_HELPER"
	helperRootEnv = "FLOW_TEST_ROOT"
	crashTarget   = "sub/target.txt"
)

var (
	contentA = bytes.Repeat([]byte("a"), 100<<10)
	contentB = bytes.Repeat([]byte("b"), 100<<10)
)

func TestMain(m *testing.M) {
	if os.Getenv(helperEnv) == "writer" {
		os.Exit(writerHelper(os.Getenv(helperRootEnv)))
	}
	code := m.Run()
	removeBenchWorkspace()
	os.Exit(code)
}

// writerHelper writes A and B alternately to crashTarget until killed. It
// prints "ready" after its first write, and gives up after a while so it
// never outlives a test that forgot it.
func writerHelper(root string) int {
	d, err := bufferfs.NewDisk(root, bufferfs.DiskOptions{Trusted: true})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	ctx := context.Background()
	deadline := time.Now().Add(30 * time.Second)
	for i := 0; time.Now().Before(deadline); i++ {
		data := contentA
		if i%2 == 1 {
			data = contentB
		}
		if _, err := d.Write(ctx, crashTarget, data, bufferfs.WriteOptions{}); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		if i == 0 {
			fmt.Println("ready")
		}
	}
	return 0
}

// TestCrashSafety kills a writer process at random moments and checks the
// target always holds one whole version, then that the temporary files the
// killed writers left are recognisable and removed by a later write.
func TestCrashSafety(t *testing.T) {
	root := t.TempDir()
	writeFile(t, filepath.Join(root, crashTarget), string(contentA), 0o644)
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 7))
	const iterations = 50
	deadPid := 0
	for i := range iterations {
		cmd := exec.Command(exe, "-test.run=^$")
		cmd.Env = append(os.Environ(), helperEnv+"=writer", helperRootEnv+"="+root)
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		out, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		var line string
		within(t, "waiting for the writer", func() { line, _ = bufio.NewReader(out).ReadString('\n') })
		if line != "ready\n" {
			cmd.Process.Kill()
			cmd.Wait()
			t.Fatalf("writer helper did not start: %q, stderr %q", line, stderr.String())
		}
		// The delay only picks the moment of the kill; nothing is
		// asserted about time.
		time.Sleep(time.Duration(rng.IntN(20000)) * time.Microsecond)
		cmd.Process.Kill()
		cmd.Wait()
		deadPid = cmd.Process.Pid

		got, err := os.ReadFile(filepath.Join(root, crashTarget))
		if err != nil {
			t.Fatalf("iteration %d: read target: %v", i, err)
		}
		if !bytes.Equal(got, contentA) && !bytes.Equal(got, contentB) {
			t.Fatalf("iteration %d: target holds %d bytes that are neither A nor B (torn write)", i, len(got))
		}
	}

	sub := filepath.Join(root, "sub")
	leftovers := tempFiles(t, sub)
	t.Logf("%d temporary files left by %d killed writers", len(leftovers), iterations)
	for _, name := range leftovers {
		if _, ok := bufferfs.ParseTempName(name); !ok {
			t.Errorf("leftover %q does not have the temporary-file name shape", name)
		}
	}

	// Make the real leftovers look stale (their writers are dead; back-date
	// them past the grace period), and add planted ones for each rule.
	now := time.Now()
	past := func(name string, age time.Duration) {
		p := filepath.Join(sub, name)
		must(t, os.Chtimes(p, now.Add(-age), now.Add(-age)))
	}
	for _, name := range leftovers {
		past(name, bufferfs.DeadTempAge+5*time.Second)
	}
	me := strconv.Itoa(os.Getpid())
	planted := map[string]struct {
		age  time.Duration
		kept bool
	}{
		// A dead writer's temp file, past the grace period: removed.
		bufferfs.TempPrefix + strconv.Itoa(deadPid) + "-00000000000000aa": {bufferfs.DeadTempAge + 5*time.Second, false},
		// A dead writer's temp file within the grace period: kept.
		bufferfs.TempPrefix + strconv.Itoa(deadPid) + "-00000000000000ab": {0, true},
		// A live writer's (ours) old temp file: removed by age.
		bufferfs.TempPrefix + me + "-00000000000000bb": {bufferfs.StaleTempAge + time.Minute, false},
		// A live writer's (ours) temp file: kept, it may be in flight,
		// until it is older than StaleTempAge.
		bufferfs.TempPrefix + me + "-00000000000000cc": {0, true},
		bufferfs.TempPrefix + me + "-00000000000000cd": {bufferfs.DeadTempAge + 5*time.Second, true},
		// Names that only look similar: never touched.
		bufferfs.TempPrefix + "notes.txt":                   {time.Hour, true},
		bufferfs.TempPrefix + me + "-00000000000000dd.x":    {time.Hour, true},
		bufferfs.TempPrefix + "0" + me + "-0000000000000ee": {time.Hour, true},
	}
	for name, p := range planted {
		writeFile(t, filepath.Join(sub, name), "planted", 0o600)
		past(name, p.age)
	}

	d := newDisk(t, root, bufferfs.DiskOptions{Trusted: true}, true)
	if _, err := d.Write(t.Context(), "sub/other.txt", []byte("x"), bufferfs.WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	var want []string
	for name, p := range planted {
		if p.kept {
			want = append(want, name)
		}
	}
	got := dirNames(t, sub)
	want = append(want, "other.txt", "target.txt")
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Errorf("sub after a write = %v, want %v (stale temporary files removed, others kept)", got, want)
	}
}

package journal

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"testing"

	"flow/bufferfs"
)

// Environment of helper processes.
const (
	helperState = "FLOW_JOURNAL_TEST_STATE"
	helperRoot  = "FLOW_JOURNAL_TEST_ROOT"
	helperRun   = "FLOW_JOURNAL_TEST_RUN"
)

// runHelper runs the helper process name and returns its exit code.
func runHelper(name string) int {
	var err error
	switch name {
	case "crash":
		err = helperCrash()
	case "lock":
		err = helperLock()
	case "tasks":
		err = helperTasks()
	default:
		err = fmt.Errorf("unknown helper %q", name)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "helper:", err)
		return 2
	}
	return 0
}

// helperLock takes the workspace lock. It prints "locked <pid>" and holds
// the lock until stdin closes, or prints "busy <holder pid>" and exits.
func helperLock() error {
	store, err := Open(os.Getenv(helperState), os.Getenv(helperRoot), Options{})
	if err != nil {
		return err
	}
	l, err := store.Lock()
	var busy *BusyError
	if errors.As(err, &busy) {
		fmt.Printf("busy %d\n", busy.PID)
		return nil
	}
	if err != nil {
		return err
	}
	fmt.Printf("locked %d\n", os.Getpid())
	io.Copy(io.Discard, os.Stdin)
	return l.Unlock()
}

// Files of the crash test: crashExisting of them exist before the run,
// the others are created by it.
var crashPaths = []string{
	"a.txt", "b.sh", "c/secret.txt", "c/d/e.go", "f.md", "g.json",
	"new/one.txt", "new/two.txt", "new/deep/three.txt", "four.txt",
}

const (
	crashExisting = 6
	crashRounds   = 100000
)

// crashContent is what round writes to file i: deterministic, so the test
// can tell a complete version from a torn one.
func crashContent(round, i int) []byte {
	size := 500 + (round*7919+i*104729)%60000
	return bigContent(fmt.Sprintf("r%d-f%d", round, i), size)
}

// helperCrash journals and writes the crash files round after round, as a
// run would, until it is killed. It prints "ready <run id>" first and
// "wrote <n>" after each write.
func helperCrash() error {
	ctx := context.Background()
	root, runID := os.Getenv(helperRoot), os.Getenv(helperRun)
	store, err := Open(os.Getenv(helperState), root, Options{})
	if err != nil {
		return err
	}
	if _, err := store.Lock(); err != nil {
		return err
	}
	disk, err := bufferfs.NewDisk(root, bufferfs.DiskOptions{Trusted: true})
	if err != nil {
		return err
	}
	run, err := store.Begin(runID, "crash")
	if err != nil {
		return err
	}
	fmt.Printf("ready %s\n", runID)
	n := 0
	for round := 0; round < crashRounds; round++ {
		for i, p := range crashPaths {
			if err := toolWrite(ctx, disk, run.BeforeWrite, p, crashContent(round, i)); err != nil {
				return err
			}
			n++
			fmt.Printf("wrote %d\n", n)
		}
	}
	select {} // wait to be killed
}

// startHelper starts the test binary as helper name with env added.
func startHelper(t *testing.T, name string, stdin bool, env ...string) (*exec.Cmd, io.ReadCloser, io.WriteCloser) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), append([]string{helperEnv + "=" + name}, env...)...)
	cmd.Stderr = os.Stderr
	var in io.WriteCloser
	if stdin {
		var err error
		if in, err = cmd.StdinPipe(); err != nil {
			t.Fatal(err)
		}
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
	})
	return cmd, out, in
}

package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// TestServeSIGTERMWithEOFIsDeterministic: a client that closes stdin and
// sends SIGTERM at once (how Rose stops flow), during a check: every time
// exit 130, "interrupted" on stderr, nothing on stdout after the signal,
// and the check's process gone. 50 rounds, alternating which of the two is
// sent first.
func TestServeSIGTERMWithEOFIsDeterministic(t *testing.T) {
	t.Parallel()
	for i := range 50 {
		p, ws := serveCheck(t, `["sh", "-c", "echo $$ > check.pid; touch started; exec sleep 3172"]`)
		if i%2 == 0 {
			p.stdin.Close()
			p.cmd.Process.Signal(syscall.SIGTERM)
		} else {
			p.cmd.Process.Signal(syscall.SIGTERM)
			p.stdin.Close()
		}
		p.interrupted()
		data, err := os.ReadFile(filepath.Join(ws, "check.pid"))
		if err != nil {
			t.Fatal(err)
		}
		if cmdline, err := os.ReadFile("/proc/" + strings.TrimSpace(string(data)) + "/cmdline"); err == nil && bytes.Equal(cmdline, []byte("sleep\x003172\x00")) {
			t.Errorf("round %d: the check's process outlived flow serve", i)
		}
		if t.Failed() {
			t.Fatalf("failed in round %d", i)
		}
	}
}

package main

import (
	"context"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestStartServer starts the scripted server as -start-server would, waits
// for it to answer, and stops it; a command that exits at once is an error
// that names its log.
func TestStartServer(t *testing.T) {
	dir := t.TempDir()
	fake := filepath.Join(dir, "flow-fake-ollama")
	if out, err := exec.Command("go", "build", "-o", fake, "flow/cmd/flow-fake-ollama").CombinedOutput(); err != nil {
		t.Fatalf("build the scripted server: %v\n%s", err, out)
	}
	script := filepath.Join(dir, "script.json")
	if err := os.WriteFile(script, []byte(`{"models": ["m"]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := strconv.Itoa(l.Addr().(*net.TCPAddr).Port)
	l.Close()
	base := "http://127.0.0.1:" + port
	stop, err := startServer(context.Background(), fake+" -script "+script+" -addr 127.0.0.1:"+port, base, filepath.Join(dir, "server.log"), time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	if !serverAnswers(context.Background(), base) {
		t.Error("the started server does not answer")
	}
	stop()
	if serverAnswers(context.Background(), base) {
		t.Error("the server still answers after stop")
	}
	_, err = startServer(context.Background(), "false", base, filepath.Join(dir, "false.log"), time.Minute)
	if err == nil || !strings.Contains(err.Error(), "exited before it answered") || !strings.Contains(err.Error(), "false.log") {
		t.Errorf("a command that exits: %v, want an error naming its log", err)
	}
}

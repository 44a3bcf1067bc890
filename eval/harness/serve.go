package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"time"
)

// startServer starts the model server of -start-server (a command line,
// split on spaces: "scripts/llamacpp-server.sh serve 8091 16384") in a
// process group of its own, its output in logFile, and waits until
// baseURL's GET /v1/models answers. The returned stop ends the group
// (SIGTERM, then SIGKILL after 10 s) and waits for it.
func startServer(ctx context.Context, command, baseURL, logFile string, ready time.Duration) (stop func(), err error) {
	argv := strings.Fields(command)
	if len(argv) == 0 {
		return nil, fmt.Errorf("-start-server: empty command")
	}
	out, err := os.Create(logFile)
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Stdout, cmd.Stderr, cmd.Stdin = out, out, nil
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		out.Close()
		return nil, fmt.Errorf("-start-server %q: %w", command, err)
	}
	done := make(chan struct{})
	go func() { _ = cmd.Wait(); out.Close(); close(done) }()
	stop = func() {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGTERM)
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
			<-done
		}
	}
	deadline := time.Now().Add(ready)
	for {
		select {
		case <-done:
			return nil, fmt.Errorf("-start-server %q exited before it answered (its log: %s)", command, logFile)
		default:
		}
		if serverAnswers(ctx, baseURL) {
			return stop, nil
		}
		if ctx.Err() != nil || time.Now().After(deadline) {
			stop()
			return nil, fmt.Errorf("-start-server %q: %s/v1/models did not answer within %s (its log: %s)", command, baseURL, ready, logFile)
		}
		time.Sleep(500 * time.Millisecond)
	}
}

// serverAnswers reports whether GET baseURL/v1/models answers 200.
func serverAnswers(ctx context.Context, baseURL string) bool {
	rctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(rctx, "GET", strings.TrimRight(baseURL, "/")+"/v1/models", nil)
	if err != nil {
		return false
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return false
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp.StatusCode == http.StatusOK
}

package check

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"testing"
	"time"

	"flow/runtime/config"
	"flow/runtime/report"
)

// Runner must be usable wherever the check-runner interface is expected.
var _ interface {
	Run(ctx context.Context, name string) report.CheckReport
} = (*Runner)(nil)

// guard bounds every wait in these tests; it is a hang detector, not a
// performance assertion.
const guard = 10 * time.Second

// sh is the argv of a shell script. flow never adds a shell; tests use one
// as the configured command.
func sh(script string) []string {
	return []string{"sh", "-c", script}
}

// required and optional build configured checks with a 10 s timeout.
func required(name string, cmd ...string) config.Check {
	return config.Check{Name: name, Cmd: cmd, Timeout: 10000, Required: true, Kind: config.KindCheck}
}

func optional(name string, cmd ...string) config.Check {
	c := required(name, cmd...)
	c.Required = false
	return c
}

// newRunner returns a trusted runner over a fresh workspace.
func newRunner(t *testing.T, checks ...config.Check) *Runner {
	t.Helper()
	return &Runner{Root: t.TempDir(), Trusted: true, Checks: checks}
}

// runGuarded runs r.RunCheck(ctx, c) and fails the test if it does not
// return within guard.
func runGuarded(t *testing.T, ctx context.Context, r *Runner, c config.Check) report.CheckResult {
	t.Helper()
	done := make(chan report.CheckResult, 1)
	go func() { done <- r.RunCheck(ctx, c) }()
	select {
	case res := <-done:
		return res
	case <-time.After(guard):
		t.Fatalf("RunCheck(%q) did not return within %v", c.Name, guard)
		return report.CheckResult{}
	}
}

// exists reports whether path exists.
func exists(t *testing.T, path string) bool {
	t.Helper()
	_, err := os.Stat(path)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("Stat(%s): %v", path, err)
	}
	return err == nil
}

// waitFor polls until path exists, for at most guard.
func waitFor(t *testing.T, path string) bool {
	t.Helper()
	deadline := time.Now().Add(guard)
	for time.Now().Before(deadline) {
		if exists(t, path) {
			return true
		}
		time.Sleep(20 * time.Millisecond)
	}
	return false
}

// writeFile writes data to root/name with mode perm.
func writeFile(t *testing.T, root, name string, data []byte, perm os.FileMode) string {
	t.Helper()
	p := filepath.Join(root, name)
	if err := os.WriteFile(p, data, perm); err != nil {
		t.Fatal(err)
	}
	return p
}

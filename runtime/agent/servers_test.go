package agent

import (
	"strings"
	"testing"

	"flow/runtime/config"
	"flow/runtime/report"
)

// TestRunRoleWithoutServerClient: a role sent to a server the runtime has
// no client for is refused before any call; its requests never fall back
// to the default server (doc/design.md §7.9).
func TestRunRoleWithoutServerClient(t *testing.T) {
	dir := workspace(t, map[string]string{"a.go": "package a\n"})
	cfg := testConfig(dir)
	cfg.Servers = []config.Server{config.NewServer("gpu", cfg.Ollama)}
	cfg.Roles = []config.Role{{Name: config.RoleReviewer, Server: "gpu"}}
	backend := newScripted(t) // any call is an unexpected one
	rep := newService(t, cfg, backend, t.TempDir()).Run(t.Context(), "task", nil)
	want := `the reviewer's server "gpu" has no client`
	if rep.Status != report.StatusError || !strings.Contains(rep.Error, want) {
		t.Errorf("run = %s %q, want error containing %q", rep.Status, rep.Error, want)
	}
	if n := len(backend.requests()); n != 0 {
		t.Errorf("the default server got %d calls, want none", n)
	}
}

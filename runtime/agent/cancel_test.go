package agent

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"flow/internal/test/ollamatest"
	"flow/runtime/config"
	"flow/runtime/model"
	"flow/runtime/report"
	"flow/runtime/tools"
)

// runAsync starts a run and returns a channel with its report.
func runAsync(ctx context.Context, t *testing.T, h *harness, task string) <-chan report.Run {
	done := make(chan report.Run, 1)
	go func() { done <- h.agent.Run(ctx, task, h.record) }()
	return done
}

// waitFor polls cond until it holds or the deadline passes.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// await returns the run's report, failing if it does not end soon after
// cancellation (the slow step takes 30 s).
func await(t *testing.T, done <-chan report.Run) report.Run {
	t.Helper()
	select {
	case rep := <-done:
		return rep
	case <-time.After(10 * time.Second):
		t.Fatal("run did not stop within 10s of cancellation")
	}
	return report.Run{}
}

func TestCancelDuringSlowModelTurn(t *testing.T) {
	dir := workspace(t, nil)
	cfg := testConfig(dir, goLint())
	srv := ollamatest.New(t, ollamatest.Turn{Content: "late plan", Delay: 30 * time.Second})
	h := newHarness(t, cfg, ollamaBackend(t, srv, cfg))
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	done := runAsync(ctx, t, h, "task")
	waitFor(t, "the model request", func() bool { return len(chatRequests(srv)) > 0 })
	cancel()
	rep := await(t, done)
	if rep.Status != report.StatusCancelled || rep.Error != ReasonCancelled || rep.Reason != ReasonCancelled || rep.Verified {
		t.Errorf("Run() = %s %q, want cancelled", rep.Status, rep.Error)
	}
	if rep.ModelCalls != 1 || len(rep.Roles) != 1 || rep.Roles[0].Status != report.StatusCancelled {
		t.Errorf("model calls %d, roles %v; want 1 call, planner cancelled", rep.ModelCalls, roleStatuses(rep))
	}
}

func TestCancelDuringRunningCheck(t *testing.T) {
	dir := workspace(t, map[string]string{"a.go": "package a\n"})
	slow := shCheck("slow", config.KindLint, []string{"go"}, "echo $$ > check.pid; sleep 30")
	cfg := testConfig(dir, slow)
	cfg.Agent.Baseline = false // cancel the verification's check, not the baseline's
	be := newScripted(t,
		say("plan"),
		do(tc("c1", "file_write", map[string]any{"path": "a.go", "content": "package a; var fixed int\n"})),
		say("done"),
	)
	h := newHarness(t, cfg, be)
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	done := runAsync(ctx, t, h, "task")
	pidFile := filepath.Join(dir, "check.pid")
	var pid int
	waitFor(t, "the check to start", func() bool {
		b, err := os.ReadFile(pidFile)
		if err != nil {
			return false
		}
		pid, err = strconv.Atoi(strings.TrimSpace(string(b)))
		return err == nil
	})
	cancel()
	rep := await(t, done)
	if rep.Status != report.StatusCancelled || rep.Error != ReasonCancelled || rep.Reason != ReasonCancelled {
		t.Errorf("Run() = %s %q, want cancelled", rep.Status, rep.Error)
	}
	if len(rep.ChangedFiles) != 1 || rep.ChangedFiles[0] != "a.go" {
		t.Errorf("ChangedFiles = %v, want the written a.go listed", rep.ChangedFiles)
	}
	if len(rep.Roles) != 2 {
		t.Errorf("roles = %v, want no reviewer after cancellation", roleStatuses(rep))
	}
	if len(rep.Checks) != 1 || rep.Checks[0].Status == report.StatusOK {
		t.Errorf("Checks = %+v, want the interrupted check, not ok", rep.Checks)
	}
	// The check's process group must be gone (allow the kernel a moment to
	// finish tearing it down).
	waitFor(t, "the check's process group to die", func() bool {
		return errors.Is(syscall.Kill(-pid, 0), syscall.ESRCH)
	})
}

func TestCancelledBeforeStart(t *testing.T) {
	dir := workspace(t, nil)
	be := newScripted(t)
	h := newHarness(t, testConfig(dir, goLint()), be)
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	rep := h.runCtx(ctx, t, "task")
	if rep.Status != report.StatusCancelled || rep.ModelCalls != 0 {
		t.Errorf("Run(cancelled ctx) = %s with %d model calls, want cancelled with none", rep.Status, rep.ModelCalls)
	}
}

// panicky is a toolbox that panics on every call.
type panicky struct{ toolbox }

func (panicky) Call(context.Context, string, model.ToolCall) (_ toolsResult) { panic("boom in tool") }

func TestRunNeverPanics(t *testing.T) {
	dir := workspace(t, nil)
	h := newHarness(t, testConfig(dir), newScripted(t, do(tc("p1", "file_list", nil))))
	r := newRegistry(h)
	h.agent.deps.Tools = func(context.Context, tools.Options) (toolbox, error) { return panicky{r}, nil }
	rep := h.run(t, "task")
	if rep.Status != report.StatusError || !strings.Contains(rep.Error, "boom in tool") {
		t.Errorf("Run() = %s %q, want an error report mentioning the panic", rep.Status, rep.Error)
	}
	if len(rep.Roles) != 1 || rep.ModelCalls != 1 {
		t.Errorf("report lost its state: roles %v, model calls %d", roleStatuses(rep), rep.ModelCalls)
	}
}

func TestMissingDependenciesAreErrors(t *testing.T) {
	dir := workspace(t, nil)
	cfg := testConfig(dir)
	rep := newLoop(cfg, loopDeps{}).Run(t.Context(), "task", nil)
	if rep.Status != report.StatusError || rep.Error == "" {
		t.Errorf("Run() without backend = %s %q, want an error", rep.Status, rep.Error)
	}
	rep = newLoop(nil, loopDeps{Backend: newScripted(t)}).Run(t.Context(), "task", nil)
	if rep.Status != report.StatusError || !strings.Contains(rep.Error, "file system") {
		t.Errorf("Run() without FS = %s %q, want an error", rep.Status, rep.Error)
	}
}

func TestConfigIsSnapshotted(t *testing.T) {
	dir := workspace(t, nil)
	cfg := testConfig(dir)
	cfg.Trusted = false
	be := newScripted(t, say("plan"))
	h := newHarness(t, cfg, be)
	cfg.Trusted = true
	cfg.Agent.MaxTaskChars = 1
	cfg.Models.Planner = "changed"
	rep := h.run(t, "a task longer than one character")
	if rep.Status != report.StatusUnverified || rep.Reason != ReasonReadOnly || be.requests()[0].Model == "changed" {
		t.Errorf("Run() = %s %q (model %s); the caller's later config changes leaked in", rep.Status, rep.Reason, be.requests()[0].Model)
	}
}

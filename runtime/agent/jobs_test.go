package agent

import (
	"context"
	"errors"
	"testing"

	"flow/runtime/job"
	"flow/runtime/model"
	"flow/runtime/progress"
	"flow/runtime/report"
	"flow/runtime/tools"
)

// TestStartBusyIsTyped: while a run holds the workspace, starting a run, a
// check or an undo returns a *job.BusyError (errors.Is job.ErrBusy) naming
// the run, and so does SetModel.
func TestStartBusyIsTyped(t *testing.T) {
	dir := workspace(t, map[string]string{"a.go": "package a\n"})
	cfg := testConfig(dir, shCheck("lint", "lint", []string{"go"}, "true"))
	entered, release := make(chan struct{}), make(chan struct{})
	blocking := step{resp: model.Response{Message: model.Message{Role: model.RoleAssistant, Content: "plan"}},
		hook: func(model.Request) { close(entered); <-release }}
	svc := newService(t, cfg, newScripted(t, blocking, say("nothing to do"), say(verdict(true, "ok"))), t.TempDir())

	run, err := svc.StartRun(t.Context(), "task", nil)
	if err != nil {
		t.Fatal(err)
	}
	<-entered
	want := &job.BusyError{Kind: job.KindRun, ID: run.ID}
	check := func(what string, err error) {
		t.Helper()
		var busy *job.BusyError
		if !errors.Is(err, job.ErrBusy) || !errors.As(err, &busy) || busy.Kind != want.Kind || busy.ID != want.ID {
			t.Errorf("%s during a run = %v, want %v", what, err, want)
		}
		if err != nil && err.Error() != want.Error() {
			t.Errorf("%s says %q, want the one busy sentence %q", what, err, want)
		}
	}
	_, err = svc.StartRun(t.Context(), "second", nil)
	check("StartRun", err)
	_, err = svc.StartCheck(t.Context(), "", nil)
	check("StartCheck", err)
	_, err = svc.StartUndo(t.Context(), "")
	check("StartUndo", err)
	check("SetModel", svc.SetModel("other"))
	check("Busy", svc.Busy())
	close(release)
	if rep, _ := run.Result(); rep.Status == report.StatusBusy {
		t.Error("the first run was refused")
	}
}

// TestCancelAllStopsRunAndCheck: CancelAll (:FlowStop, shutdown) stops a
// run blocked in the model and a check blocked in its command; both report
// "cancelled" and the workspace is free afterwards.
func TestCancelAllStopsRunAndCheck(t *testing.T) {
	dir := workspace(t, map[string]string{"a.go": "package a\n"})
	cfg := testConfig(dir, shCheck("slow", "test", []string{"*"}, "echo started; exec sleep 300"))
	entered := make(chan struct{})
	blocking := step{resp: model.Response{Message: model.Message{Role: model.RoleAssistant, Content: "plan"}},
		hook: func(model.Request) { close(entered) }}
	backend := &waitingBackend{scripted: newScripted(t, blocking)}
	svc := newService(t, cfg, backend, t.TempDir())

	run, err := svc.StartRun(t.Context(), "task", nil)
	if err != nil {
		t.Fatal(err)
	}
	<-entered
	if n := svc.CancelAll(); n != 1 {
		t.Errorf("CancelAll() during a run = %d, want 1", n)
	}
	if rep, status := run.Result(); status != report.StatusCancelled || rep.Status != report.StatusCancelled {
		t.Errorf("run after CancelAll = %s, want cancelled", status)
	}

	checkStarted := make(chan struct{}, 1)
	chk, err := svc.StartCheck(t.Context(), "", func(e progress.Event) {
		if e.Kind == progress.CheckStart {
			checkStarted <- struct{}{}
		}
	})
	if err != nil {
		t.Fatalf("StartCheck after the cancelled run = %v, want the workspace free", err)
	}
	<-checkStarted
	if n := svc.CancelAll(); n != 1 {
		t.Errorf("CancelAll() during a check = %d, want 1", n)
	}
	rep, status := chk.Result()
	if c := rep; status == report.StatusOK || c.Verified || len(c.Checks) != 1 || c.Checks[0].Status != report.StatusCancelled {
		t.Errorf("check after CancelAll = %s %+v, want the check cancelled and nothing verified", status, c.Checks)
	}
	if !svc.Wait(t.Context()) || svc.Busy() != nil || svc.CancelAll() != 0 {
		t.Error("jobs still running after CancelAll")
	}
}

// waitingBackend answers its scripted steps, then blocks every further call
// until the call's context ends.
type waitingBackend struct{ scripted *scripted }

func (w *waitingBackend) Chat(ctx context.Context, req model.Request) (model.Response, error) {
	if w.scripted.left() > 0 {
		resp, err := w.scripted.Chat(ctx, req)
		if err == nil {
			<-ctx.Done()
			return model.Response{}, ctx.Err()
		}
		return resp, err
	}
	<-ctx.Done()
	return model.Response{}, ctx.Err()
}

// TestToolboxFailureIsReported: a toolbox that could not be built in full
// (the editor could not list its tools) is reported as a warning event and
// the run goes on with the toolbox it got.
func TestToolboxFailureIsReported(t *testing.T) {
	dir := workspace(t, nil)
	cfg := testConfig(dir)
	cfg.Trusted = false
	h := newHarness(t, cfg, newScripted(t, say("plan: nothing to change")))
	h.agent.deps.Tools = func(ctx context.Context, o tools.Options) (toolbox, error) {
		return tools.New(h.disk, o), errors.New("editor tools unavailable: Neovim request timed out")
	}
	rep := h.run(t, "look")
	if rep.Status != report.StatusUnverified {
		t.Errorf("run = %s %q, want the read-only run to go on", rep.Status, rep.Error)
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, e := range h.events {
		if e.Kind == progress.Warning && e.Message == "editor tools unavailable: Neovim request timed out" {
			if s := progress.Column(e); s != "warning  editor tools unavailable: Neovim request timed out" {
				t.Errorf("warning renders as %q", s)
			}
			return
		}
	}
	t.Errorf("no warning event for the toolbox failure in %d events", len(h.events))
}

package job_test

import (
	"context"
	"errors"
	"testing"

	"flow/runtime/job"
)

// report is the test jobs' report type.
type report struct{ Text string }

// failed is the report of a test job that panicked.
func failed(p any) report { return report{Text: job.PanicMessage("test", p)} }

// blocked is work that waits for its context and reports "cancelled".
func blocked(started chan<- struct{}) job.Work[report] {
	return func(ctx context.Context, _ *job.Job[report]) (report, string) {
		close(started)
		<-ctx.Done()
		return report{"stopped"}, "cancelled"
	}
}

func TestStartBusyCancelAll(t *testing.T) {
	var g job.Gate
	started := make(chan struct{})
	j, err := job.Start(&g, t.Context(), job.KindRun, blocked(started), failed)
	if err != nil || j.ID != 1 || j.Kind != job.KindRun {
		t.Fatalf("Start = %+v, %v; want job 1 of kind run", j, err)
	}
	<-started
	for _, kind := range []string{job.KindRun, job.KindCheck, job.KindUndo} {
		_, err := job.Start(&g, t.Context(), kind, func(context.Context, *job.Job[report]) (report, string) {
			t.Errorf("a %s started while a run was in progress", kind)
			return report{}, ""
		}, failed)
		var busy *job.BusyError
		if !errors.Is(err, job.ErrBusy) || !errors.As(err, &busy) || busy.Kind != job.KindRun || busy.ID != 1 {
			t.Errorf("Start(%s) during a run = %v, want a BusyError naming run 1", kind, err)
		}
	}
	if err := g.Busy(); !errors.Is(err, job.ErrBusy) {
		t.Errorf("Busy() during a run = %v, want ErrBusy", err)
	}
	if n := g.CancelAll(); n != 1 {
		t.Errorf("CancelAll() = %d, want 1", n)
	}
	if rep, status := j.Result(); rep.Text != "stopped" || status != "cancelled" {
		t.Errorf("Result() = %v, %q; want the cancelled report", rep, status)
	}
	if !g.Wait(t.Context()) || g.Current() != nil || g.Busy() != nil || g.CancelAll() != 0 {
		t.Error("the gate is not free after the job returned")
	}
	j2, err := job.Start(&g, t.Context(), job.KindCheck, func(context.Context, *job.Job[int]) (int, string) { return 1, "ok" },
		func(any) int { return 0 })
	if err != nil || j2.ID != 2 {
		t.Fatalf("Start after the run = %+v, %v; want job 2", j2, err)
	}
	if n, status := j2.Result(); status != "ok" || n != 1 {
		t.Errorf("second job = %d %q, want 1 ok", n, status)
	}
	if rep, status := job.Untyped(j2).Outcome(); rep != 1 || status != "ok" {
		t.Errorf("Outcome() = %v %q, want the untyped report 1 ok", rep, status)
	}
}

// TestBusyWording pins the one sentence flow says when it is busy.
func TestBusyWording(t *testing.T) {
	for _, tc := range []struct {
		err  *job.BusyError
		want string
	}{
		{&job.BusyError{Kind: "run", ID: 3}, "busy: a run is already in progress in this flow process; wait for it to finish or stop it"},
		{&job.BusyError{Kind: "check", ID: 1}, "busy: a check is already in progress in this flow process; wait for it to finish or stop it"},
		{&job.BusyError{PID: 4242}, "busy: a job is already in progress in flow process 4242; wait for it to finish or stop it"},
		{&job.BusyError{}, "busy: a job is already in progress in another flow process; wait for it to finish or stop it"},
	} {
		if got := tc.err.Error(); got != tc.want {
			t.Errorf("%+v.Error() =\n%q\nwant\n%q", *tc.err, got, tc.want)
		}
	}
}

func TestLockRefusesBeforeWork(t *testing.T) {
	held := &job.BusyError{PID: 77, Err: errors.New("flock")}
	g := job.Gate{Lock: func() (func(), error) { return nil, held }}
	j0, err := job.Start(&g, t.Context(), job.KindUndo, func(context.Context, *job.Job[report]) (report, string) {
		t.Error("work ran although the lock was refused")
		return report{}, ""
	}, failed)
	if job.Untyped(j0) != nil {
		t.Error("a job that did not start has a handle")
	}
	if !errors.Is(err, job.ErrBusy) || err.Error() != held.Error() {
		t.Errorf("Start with the lock held elsewhere = %v, want the lock's busy error", err)
	}
	if g.Current() != nil {
		t.Error("a refused job kept the slot")
	}
	released := false
	g.Lock = func() (func(), error) { return func() { released = true }, nil }
	j, err := job.Start(&g, t.Context(), job.KindUndo, func(context.Context, *job.Job[report]) (report, string) { return report{}, "ok" }, failed)
	if err != nil {
		t.Fatal(err)
	}
	j.Result()
	g.Wait(t.Context())
	if !released {
		t.Error("the workspace lock was not released when the job ended")
	}
}

func TestPanicBecomesErrorReport(t *testing.T) {
	var g job.Gate
	j, err := job.Start(&g, t.Context(), job.KindRun, func(context.Context, *job.Job[report]) (report, string) { panic("boom") }, failed)
	if err != nil {
		t.Fatal(err)
	}
	rep, status := j.Result()
	if status != "error" || rep.Text != "internal error in test: boom" || j.Panic() != "boom" {
		t.Errorf("panicking job = %v %q (panic %v), want an internal error report", rep, status, j.Panic())
	}
	g.Wait(t.Context())
	if g.Current() != nil {
		t.Error("a panicking job kept the slot")
	}
}

func TestEventsCarryTheJobBeforeStartReturns(t *testing.T) {
	var g job.Gate
	seen := make(chan int64, 1)
	j, err := job.Start(&g, t.Context(), job.KindRun, func(_ context.Context, j *job.Job[report]) (report, string) {
		seen <- j.ID
		return report{}, "ok"
	}, failed)
	if err != nil {
		t.Fatal(err)
	}
	if id := <-seen; id != j.ID {
		t.Errorf("work saw job %d, Start returned job %d", id, j.ID)
	}
}

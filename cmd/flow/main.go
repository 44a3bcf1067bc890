// Command flow runs a bounded planner → coder → reviewer workflow against a
// local model with host-enforced verification. See README.md and doc/design.md.
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"flow/runtime/check"
	"flow/runtime/report"
)

func main() {
	// Before anything can start a process: processes that a check leaves
	// behind become flow's children, to be killed when the check ends.
	if err := check.BecomeSubreaper(); err != nil {
		fmt.Fprintf(os.Stderr, "flow: cannot become a child subreaper (processes a check leaves behind may outlive it): %v\n", err)
	}
	ctx, stop := interruptContext()
	code := run(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

// interruptContext returns a context cancelled by the first SIGINT or
// SIGTERM, with a [report.Interrupt] naming the signal as its cause, so
// that a run or check can tell an interrupt from a client's cancel
// (doc/design.md §6.13). Later signals are swallowed until stop: the
// command finishes its report and exits 130 itself.
func interruptContext() (context.Context, func()) {
	ctx, cancel := context.WithCancelCause(context.Background())
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	done := make(chan struct{})
	go func() {
		select {
		case s := <-sigs:
			cancel(&report.Interrupt{Signal: signalName(s)})
		case <-done:
		}
	}()
	return ctx, func() {
		signal.Stop(sigs)
		close(done)
		cancel(nil)
	}
}

// signalName is the conventional name of the signals flow handles.
func signalName(s os.Signal) string {
	switch s {
	case os.Interrupt:
		return "SIGINT"
	case syscall.SIGTERM:
		return "SIGTERM"
	}
	return s.String()
}
